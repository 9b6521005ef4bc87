"""Documents: what one retrieval returned (ids, scores and, when captured, content).

A retrieval is evidence like a tool result: the ``citations_retrieved`` and ``quotes_anchored``
checks read it to decide whether an answer cites what was actually retrieved in this request,
and whether a quoted passage occurs in the document it is attributed to. ``source`` is the data
source (``gen_ai.data_source.id``) when known.

Ids are non-empty strings (an integer id is accepted and kept as its decimal string, since a
citation in text is text); a score is a finite number or None; content is a string or None
(not captured). The same id may appear more than once (several chunks of one document): a
quote is anchored when it occurs in any of them.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Document", "Documents", "documents_from"]


@dataclass(frozen=True, slots=True)
class Document:
    """One retrieved document (or chunk)."""

    id: str
    score: int | float | None = None
    content: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.id, int) and not isinstance(self.id, bool):
            object.__setattr__(self, "id", str(self.id))
        if not isinstance(self.id, str) or not self.id.strip():
            raise TypeError(f"a document id must be a non-empty string, got {_show(self.id)}")
        score = self.score
        if score is not None and (
            isinstance(score, bool)
            or not isinstance(score, (int, float))
            or (isinstance(score, float) and not math.isfinite(score))
        ):
            raise TypeError(
                f"document {_show(self.id)}: score must be a finite number or None, "
                f"got {_show(score)}"
            )
        if self.content is not None and not isinstance(self.content, str):
            raise TypeError(
                f"document {_show(self.id)}: content must be a string or None, "
                f"got {_show(self.content)}"
            )


@dataclass(frozen=True, slots=True)
class Documents:
    """The documents one retrieval returned, in the order it returned them."""

    documents: tuple[Document, ...]
    source: str | None = None
    _derived: dict[Hashable, Any] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        documents = tuple(self.documents)
        for document in documents:
            if not isinstance(document, Document):
                raise TypeError(f"Documents holds Document values, got {_show(document)}")
        if self.source is not None and (not isinstance(self.source, str) or not self.source):
            raise TypeError(f"source must be a non-empty string or None, got {_show(self.source)}")
        object.__setattr__(self, "documents", documents)
        object.__setattr__(self, "_derived", {})

    def __deepcopy__(self, memo: dict[int, Any]) -> Documents:
        # Every part is immutable (strings, numbers, frozen Documents): shared; cache starts empty.
        return Documents(self.documents, self.source)

    @property
    def ids(self) -> tuple[str, ...]:
        """Distinct ids, in retrieval order."""
        return tuple(dict.fromkeys(document.id for document in self.documents))

    def contents(self, doc_id: str) -> tuple[str | None, ...]:
        """The content of every document (chunk) under ``doc_id`` (None: not captured)."""
        return tuple(d.content for d in self.documents if d.id == doc_id)

    def __contains__(self, doc_id: object) -> bool:
        return isinstance(doc_id, str) and any(d.id == doc_id for d in self.documents)

    def __len__(self) -> int:
        return len(self.documents)

    def __iter__(self) -> Iterator[Document]:
        return iter(self.documents)


def documents_from(
    docs: Sequence[Document | Mapping[str, Any]], *, fact: str, source: str | None = None
) -> Documents:
    """Documents built from ``Document`` values or ``{id, score?, content?}`` mappings
    (other keys are ignored, as the GenAI conventions allow extra properties). A malformed
    entry is a TypeError naming the fact and the position."""
    if isinstance(docs, (str, bytes, Mapping)) or not isinstance(docs, Sequence):
        raise TypeError(
            f"fact {fact!r}: documents must be a list of {{id, score, content}} objects, "
            f"got {_show(docs)}"
        )
    built: list[Document] = []
    for position, entry in enumerate(docs):
        try:
            if isinstance(entry, Document):
                built.append(entry)
            elif isinstance(entry, Mapping):
                if "id" not in entry:
                    raise TypeError(f"a document needs an 'id', got keys {sorted(map(str, entry))}")
                built.append(Document(entry["id"], entry.get("score"), entry.get("content")))
            else:
                raise TypeError(f"expected an {{id, score, content}} object, got {_show(entry)}")
        except TypeError as exc:
            raise TypeError(f"fact {fact!r}: document [{position}]: {exc}") from None
    return Documents(tuple(built), source)


def _show(value: object) -> str:
    """``repr(value)``, capped at 200 characters."""
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "…"
