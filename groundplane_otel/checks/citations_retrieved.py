"""citations_retrieved: every citation in the output names a document retrieved in this request.

Citations are read from ``fields`` (each holds a document id or a list of ids) and from the
citation markers of ``text_fields`` (prose) in a declared syntax (``marker``, a regex with one
group; default ``[doc-id]``, several ids as ``[doc-1, doc-7]``). Ids compare exactly (after
stripping surrounding spaces; an integer in a field is read as its decimal string). Each must
be an id of an approved document: a Documents fact the check lists (``documents``), or by
default every Documents fact the boundary sees, restricted ones excepted — citing a restricted
document is its own failure (``citation_restricted``), and its id is never repeated.
``min_citations=1`` also requires at least one citation per answer.

The whole answer: ``text_fields=["*"]`` reads the markers of the whole answer — the output may
then be a ``str`` (the whole answer text, reported as field ``*``) or a mapping (every string
in it, each under its path). ``fields``, and any named text field, read a JSON answer: a
``str`` output is then a TypeError.

It catches a fabricated source id, a source retrieved for another request or in an earlier
session, a document the model remembers from training, and an answer with no source at all.

Evaluation order: the approved documents (none is a ValueError, a misconfigured boundary) →
declared fields present → each citation, in order (fields first, then text fields) →
``min_citations``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from groundplane_otel.checks._base import Answer, NamedCheck, describe, field_value
from groundplane_otel.checks._cited import (
    DEFAULT_MARKER,
    Cited,
    Evidence,
    cap,
    citations_in,
    cited_value,
    compile_marker,
    evidence,
    require_documents_arg,
    restricted_holder,
)
from groundplane_otel.checks._output_text import (
    reads_whole_answer,
    require_fields,
    texts_of,
    whole_or_fields,
)
from groundplane_otel.checks._twin import twin
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.registry import FactRegistry

__all__ = ["check_citations_retrieved", "citations_retrieved"]

_BUILDER = "citations_retrieved"


@dataclass(frozen=True, slots=True)
class _CitationsRetrieved:
    fields: tuple[str, ...] | None
    text_fields: tuple[str, ...] | None
    marker: str
    documents: tuple[str, ...] | None
    min_citations: int

    def __call__(self, registry: FactRegistry, output: Answer) -> None:
        if not reads_whole_answer(self.fields, self.text_fields):
            whole_or_fields(_BUILDER, 'text_fields=["*"]', output)
        known = evidence(_BUILDER, registry, self.documents)
        count = 0
        for cited in self._citations(output):
            self._check(registry, known, cited)
            count += 1
        if count < self.min_citations:
            where = list((self.fields or ()) + (self.text_fields or ()))
            stored = known.first
            raise UnsupportedClaim(
                where[0] if len(where) == 1 else "<output>",
                count,
                f"at least {self.min_citations} citation(s)",
                fact=stored.name,
                provenance=stored.provenance,
                reason=f"the answer cites {count} retrieved document(s) in {where}; "
                f"at least {self.min_citations} required",
                code="no_citation",
            )

    def _citations(self, output: Answer) -> list[Cited]:
        found: list[Cited] = []
        for name in self.fields or ():
            value = field_value(whole_or_fields(_BUILDER, 'text_fields=["*"]', output), name)
            items = value if isinstance(value, list) else [value]
            for position, item in enumerate(items):
                label = name if not isinstance(value, list) else f"{name}[{position}]"
                doc_id = cited_value(item)
                if doc_id is None:
                    raise UnsupportedClaim(
                        label,
                        item,
                        "a document id",
                        reason=f"a citation must be a document id (a string), got {cap(item)}",
                        code="citation_not_retrieved",
                    )
                found.append(Cited(doc_id, label))
        pattern = compile_marker(_BUILDER, self.marker)
        for field_name in self.text_fields or ():
            for name, text in texts_of(output, field_name):
                found.extend(citations_in(text, pattern, name))
        return found

    def _check(self, registry: FactRegistry, known: Evidence, cited: Cited) -> None:
        if known.find(cited.doc_id) is not None:
            return
        where = "" if cited.span is None else f" (characters {cited.span[0]}-{cited.span[1]})"
        holder = restricted_holder(registry, known, cited.doc_id)
        stored = known.first
        if holder is not None:
            raise UnsupportedClaim(
                cited.label,
                "<withheld>",
                "an approved document",
                fact=holder,
                provenance=registry.peek(holder).provenance,
                reason=f"a citation{where} names a document of restricted fact {holder!r}",
                code="citation_restricted",
            )
        raise UnsupportedClaim(
            cited.label,
            cited.doc_id,
            known.listing(),
            fact=stored.name,
            provenance=stored.provenance,
            reason=f"{cap(cited.doc_id)}{where} was not retrieved in this request"
            f"{known.hint(cited.doc_id)}",
            code="citation_not_retrieved",
        )


def _spec(
    fields: object, text_fields: object, marker: object, documents: object, min_citations: object
) -> _CitationsRetrieved:
    chosen = require_fields(_BUILDER, "fields", fields, optional=True)
    prose = require_fields(_BUILDER, "text_fields", text_fields, optional=True, whole=True)
    if chosen is None and prose is None:
        raise ValueError(
            f"{_BUILDER}: give fields (citation ids) and/or text_fields (prose with citation "
            "markers); both are None"
        )
    compile_marker(_BUILDER, marker)
    listed = require_documents_arg(_BUILDER, documents)
    if isinstance(min_citations, bool) or not isinstance(min_citations, int) or min_citations < 0:
        raise ValueError(f"{_BUILDER}: min_citations must be an int >= 0, got {cap(min_citations)}")
    assert isinstance(marker, str)
    return _CitationsRetrieved(chosen, prose, marker, listed, min_citations)


def citations_retrieved(
    fields: Sequence[str] | None = None,
    *,
    text_fields: Sequence[str] | None = None,
    marker: str = DEFAULT_MARKER,
    documents: Sequence[str] | None = None,
    min_citations: int = 0,
) -> NamedCheck:
    """Every citation in ``fields`` / the markers of ``text_fields`` names a retrieved document.

    ``text_fields=["*"]`` reads the whole answer (a ``str`` output, or every string of a
    mapping). See the module docstring for the rules. Arguments are validated here.
    """
    spec = _spec(fields, text_fields, marker, documents, min_citations)
    name = describe(
        _BUILDER,
        fields=None if spec.fields is None else list(spec.fields),
        text_fields=None if spec.text_fields is None else list(spec.text_fields),
    )
    text = reads_whole_answer(spec.fields, spec.text_fields)
    return NamedCheck(name, spec, family=_BUILDER, facts=spec.documents or (), text=text)


check_citations_retrieved = twin(citations_retrieved)
