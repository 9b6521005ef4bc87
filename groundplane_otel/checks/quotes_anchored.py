"""quotes_anchored: a passage quoted from a document occurs in that document's content.

Groundwright's "anchor", applied to answers: the quote is the anchor, the cited document the
source. Quotes are read from ``field`` (a list of ``{id_key: doc id, quote_key: passage}``
objects, or one such object) and from ``text_fields`` (prose), where a quoted passage
directly followed by a citation marker (``marker``, default ``[doc-id]``) is attributed to the
document(s) the marker names. Quotation marks (``_quotes``): double ("…", “…”) and single
(U+2018 … U+2019, '…'; an apostrophe inside a word stays in the passage), unless
``single_quotes=False``. An unmarked quotation is not an anchor and is not checked by default;
with ``unmarked="retrieved"``, one of at least four words (double or typographic single
quotes) must occur in some approved retrieved document (``quote_not_in_source`` otherwise).

Rules: the document must be approved (as for ``citations_retrieved``); its content must have
been captured (``content_missing`` otherwise: an anchor that cannot be verified does not
pass); the quote, whitespace-normalised (runs of spaces and line breaks are one space), must
occur in the whitespace-normalised content of one of the documents (chunks) under the cited
id — exactly otherwise: case, punctuation and wording count. One typographic allowance: a
final ``.``, ``,``, ``;`` or ``:`` inside the closing quote mark may be absent from the source.
When the passage occurs in another retrieved document, the finding says which
(``quote_misattributed``); otherwise it is ``quote_not_in_source``.

The whole answer: ``text_fields=["*"]`` reads the quotes of the whole answer — the output may
then be a ``str`` (the whole answer text, reported as field ``*``) or a mapping (every string
in it, each under its path). ``field``, and any named text field, read a JSON answer: a
``str`` output is then a TypeError.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, Literal, get_args

from groundplane_otel.checks._base import (
    Answer,
    NamedCheck,
    describe,
    field_value,
    require_name,
)
from groundplane_otel.checks._cited import (
    DEFAULT_MARKER,
    Evidence,
    cap,
    citations_in,
    cited_value,
    compile_marker,
    evidence,
    require_documents_arg,
)
from groundplane_otel.checks._output_text import (
    reads_whole_answer,
    require_fields,
    texts_of,
    whole_or_fields,
)
from groundplane_otel.checks._quotes import quotations
from groundplane_otel.checks._text import squeeze
from groundplane_otel.checks._twin import twin
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.registry import FactRegistry

__all__ = ["check_quotes_anchored", "quotes_anchored"]

_BUILDER = "quotes_anchored"
_TRAILING = ".,;:"
Unmarked = Literal["skip", "retrieved"]
UNMARKED_WORDS: Final = 4
"""An unmarked quotation shorter than this is a scare quote or a term, never checked."""


@dataclass(frozen=True, slots=True)
class _Quote:
    label: str
    doc_ids: tuple[str, ...]
    passage: str


@dataclass(frozen=True, slots=True)
class _QuotesAnchored:
    field: str | None
    text_fields: tuple[str, ...] | None
    marker: str
    documents: tuple[str, ...] | None
    id_key: str
    quote_key: str
    single_quotes: bool = True
    unmarked: Unmarked = "skip"

    def __call__(self, registry: FactRegistry, output: Answer) -> None:
        if not reads_whole_answer(self.field, self.text_fields):
            whole_or_fields(_BUILDER, 'text_fields=["*"]', output)
        known = evidence(_BUILDER, registry, self.documents)
        for quote in self._quotes(output):
            self._check(known, quote)

    def _quotes(self, output: Answer) -> Iterator[_Quote]:
        if self.field is not None:
            fields = whole_or_fields(_BUILDER, 'text_fields=["*"]', output)
            value = field_value(fields, self.field)
            items = value if isinstance(value, list) else [value]
            for position, item in enumerate(items):
                label = self.field if not isinstance(value, list) else f"{self.field}[{position}]"
                doc_id = cited_value(item.get(self.id_key)) if isinstance(item, Mapping) else None
                passage = item.get(self.quote_key) if isinstance(item, Mapping) else None
                if doc_id is None or not isinstance(passage, str):
                    raise UnsupportedClaim(
                        label,
                        item,
                        f"an object with {self.id_key!r} (a document id) and {self.quote_key!r} "
                        "(a string)",
                        reason=f"a quote must name its document and passage, got {cap(item)}",
                        code="field_missing",
                    )
                yield _Quote(label, (doc_id,), passage)
        pattern = compile_marker(_BUILDER, self.marker)
        for field_name in self.text_fields or ():
            for name, text in texts_of(output, field_name):
                yield from self._quoted(text, pattern, name)

    def _quoted(self, text: str, pattern: re.Pattern[str], name: str) -> Iterator[_Quote]:
        """The anchors of ``text``: marked quotations, and unmarked ones when declared."""

        def cited(text: str, after: int) -> tuple[str, ...]:
            while after < len(text) and text[after] in " \t":
                after += 1
            marker = pattern.match(text, after)
            if marker is None:
                return ()
            return tuple(c.doc_id for c in citations_in(marker.group(0), pattern, name))

        for found in quotations(text, cited, single=self.single_quotes):
            if found.ids:
                yield _Quote(name, found.ids, found.passage)
            elif self.unmarked == "retrieved" and found.words >= UNMARKED_WORDS:
                yield _Quote(name, (), found.passage)  # a quotation not attributed: any source

    def _check(self, known: Evidence, quote: _Quote) -> None:
        passage = squeeze(quote.passage)
        if not passage:
            return
        candidates = _variants(passage)
        if not quote.doc_ids:
            _unattributed(known, quote, passage, candidates)
            return
        missing: list[str] = []
        for doc_id in quote.doc_ids:
            held = known.find(doc_id)
            if held is None:
                raise _claim(
                    known, quote, doc_id, f"{cap(doc_id)} was not retrieved in this request",
                    "citation_not_retrieved",
                )  # fmt: skip
            documents = held[1]
            contents = [c for c in documents.contents(doc_id) if c is not None]
            if not contents:
                missing.append(doc_id)
                continue
            if any(v in squeeze(c) for c in contents for v in candidates):
                return
        if missing and len(missing) == len(quote.doc_ids):
            raise _claim(
                known, quote, missing[0],
                f"the content of {cap(missing[0])} was not captured, so the quote cannot be "
                "verified (capture retrieval content, or record it with record_documents)",
                "content_missing",
            )  # fmt: skip
        elsewhere = _holder(known, candidates, quote.doc_ids)
        cited = ", ".join(map(repr, quote.doc_ids))
        if elsewhere is not None:
            raise _claim(
                known, quote, quote.doc_ids[0],
                f"the quoted passage is not in {cited} but occurs in {elsewhere!r}",
                "quote_misattributed",
            )  # fmt: skip
        raise _claim(
            known, quote, quote.doc_ids[0],
            f"the quoted passage ({len(passage)} characters) does not occur in {cited} "
            "(whitespace-normalised, exact otherwise)",
            "quote_not_in_source",
        )  # fmt: skip


def _unattributed(
    known: Evidence, quote: _Quote, passage: str, candidates: tuple[str, ...]
) -> None:
    """An unmarked quotation must occur in some approved document (``unmarked="retrieved"``)."""
    if _holder(known, candidates, ()) is not None:
        return
    captured = any(d.content is not None for _, docs in known.approved for d in docs.documents)
    if not captured:
        raise _claim(
            known, quote, "",
            "no retrieved document's content was captured, so the unmarked quote cannot be "
            "verified (capture retrieval content, or record it with record_documents)",
            "content_missing",
        )  # fmt: skip
    raise _claim(
        known, quote, "",
        f"the quoted passage ({len(passage)} characters) has no citation marker and occurs in "
        "no retrieved document (whitespace-normalised, exact otherwise)",
        "quote_not_in_source",
    )  # fmt: skip


def _variants(passage: str) -> tuple[str, ...]:
    if len(passage) > 1 and passage[-1] in _TRAILING:
        return passage, passage[:-1].rstrip()
    return (passage,)


def _holder(known: Evidence, candidates: tuple[str, ...], skip: tuple[str, ...]) -> str | None:
    for _, documents in known.approved:
        for document in documents.documents:
            if document.id in skip or document.content is None:
                continue
            content = squeeze(document.content)
            if any(v in content for v in candidates):
                return document.id
    return None


def _claim(known: Evidence, quote: _Quote, doc_id: str, reason: str, code: str) -> UnsupportedClaim:
    held = known.find(doc_id)
    stored = held[0] if held is not None else known.first
    return UnsupportedClaim(
        quote.label,
        quote.passage,
        f"a passage of {doc_id!r}" if held is not None else known.listing(),
        fact=stored.name,
        provenance=stored.provenance,
        reason=reason,
        code=code,
    )


def _spec(
    field: object,
    text_fields: object,
    marker: object,
    documents: object,
    id_key: object,
    quote_key: object,
    single_quotes: object = True,
    unmarked: object = "skip",
) -> _QuotesAnchored:
    require_name(_BUILDER, "field", field, optional=True)
    prose = require_fields(_BUILDER, "text_fields", text_fields, optional=True, whole=True)
    if field is None and prose is None:
        raise ValueError(
            f"{_BUILDER}: give field (a list of {{id, quote}} objects) and/or text_fields "
            "(prose with quoted passages followed by citation markers); both are None"
        )
    compile_marker(_BUILDER, marker)
    require_name(_BUILDER, "id_key", id_key)
    require_name(_BUILDER, "quote_key", quote_key)
    if id_key == quote_key:
        raise ValueError(f"{_BUILDER}: id_key and quote_key must differ, both are {id_key!r}")
    listed = require_documents_arg(_BUILDER, documents)
    if not isinstance(single_quotes, bool):
        raise TypeError(f"{_BUILDER}: single_quotes must be True or False, got {single_quotes!r}")
    if unmarked not in get_args(Unmarked):
        raise ValueError(f'{_BUILDER}: unmarked must be "skip" or "retrieved", got {unmarked!r}')
    assert isinstance(marker, str)
    assert isinstance(id_key, str)
    assert isinstance(quote_key, str)
    assert field is None or isinstance(field, str)
    return _QuotesAnchored(
        field,
        prose,
        marker,
        listed,
        id_key,
        quote_key,
        single_quotes,
        unmarked,  # type: ignore[arg-type]
    )


def quotes_anchored(
    field: str | None = None,
    *,
    text_fields: Sequence[str] | None = None,
    marker: str = DEFAULT_MARKER,
    documents: Sequence[str] | None = None,
    id_key: str = "id",
    quote_key: str = "quote",
    single_quotes: bool = True,
    unmarked: Unmarked = "skip",
) -> NamedCheck:
    """Every quoted passage in ``field`` / ``text_fields`` occurs in the document it cites.

    ``text_fields=["*"]`` reads the whole answer (a ``str`` output, or every string of a
    mapping). ``single_quotes`` reads typographic and ASCII single quotes too;
    ``unmarked="retrieved"`` checks quotations without a marker against every approved
    document. See the module docstring for the rules. Arguments are validated here.
    """
    spec = _spec(field, text_fields, marker, documents, id_key, quote_key, single_quotes, unmarked)
    name = describe(
        _BUILDER,
        field=field,
        text_fields=None if spec.text_fields is None else list(spec.text_fields),
    )
    text = reads_whole_answer(spec.field, spec.text_fields)
    return NamedCheck(name, spec, family=_BUILDER, facts=spec.documents or (), text=text)


check_quotes_anchored = twin(quotes_anchored)
