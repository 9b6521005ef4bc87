"""What the citation checks share: the retrieved documents a check may accept, and citation
markers in text.

Approved documents are the Documents facts the check lists (or, by default, every Documents
fact the boundary sees) that are not restricted. A citation marker is a regular expression
with exactly one group, the cited id(s); a group holding several ids separates them with
commas or semicolons ("[doc-1, doc-7]"). The default syntax is ``[doc-id]``, skipping
markdown links ("[text](url)").
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from groundplane_otel.checks._base import require_name
from groundplane_otel.documents import Documents
from groundplane_otel.facts import Fact
from groundplane_otel.registry import FactRegistry

__all__ = [
    "DEFAULT_MARKER",
    "Cited",
    "Evidence",
    "cap",
    "citations_in",
    "compile_marker",
    "evidence",
    "require_documents_arg",
]

DEFAULT_MARKER = r"\[([^\[\]\n]+)\](?!\()"
_SPLIT = re.compile(r"\s*[,;]\s*")
SHOWN = 20


def cap(value: object) -> str:
    """``repr(value)`` capped at 200 characters."""
    text = repr(value)
    return text if len(text) <= 200 else text[:200] + "…"


def compile_marker(builder: str, marker: object) -> re.Pattern[str]:
    """Build-time: the citation marker regex, which must compile and have exactly one group."""
    if not isinstance(marker, str) or not marker:
        raise TypeError(f"{builder}: marker must be a non-empty regex string, got {cap(marker)}")
    try:
        pattern = re.compile(marker)
    except re.error as exc:
        raise ValueError(
            f"{builder}: marker is not a valid regex ({exc}), got {cap(marker)}"
        ) from None
    if pattern.groups != 1:
        raise ValueError(
            f"{builder}: marker must have exactly one group (the cited id), "
            f"got {pattern.groups} in {cap(marker)}"
        )
    return pattern


def require_documents_arg(builder: str, documents: object) -> tuple[str, ...] | None:
    if documents is None:
        return None
    if isinstance(documents, (str, bytes)) or not isinstance(documents, Sequence) or not documents:
        raise TypeError(
            f"{builder}: documents must be a non-empty list of fact names or None, "
            f"got {cap(documents)}"
        )
    for name in documents:
        require_name(builder, "every entry of documents", name)
    return tuple(documents)


@dataclass(frozen=True, slots=True)
class Cited:
    """One cited id and where: the field label and, in text, the character span."""

    doc_id: str
    label: str
    span: tuple[int, int] | None = None


def citations_in(text: str, pattern: re.Pattern[str], label: str) -> Iterator[Cited]:
    """Every id the markers in ``text`` cite, in order."""
    for match in pattern.finditer(text):
        for doc_id in _SPLIT.split(match.group(1).strip()):
            if doc_id:
                yield Cited(doc_id, label, match.span())


def cited_value(value: Any) -> str | None:
    """A citation held in a field: a string id (an int is read as its decimal string)."""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return None


class Evidence:
    """The approved documents of one evaluation, and the restricted ones (to name, not show)."""

    __slots__ = ("approved", "restricted")

    def __init__(self, approved: list[tuple[Fact, Documents]], restricted: set[str]) -> None:
        self.approved = approved
        self.restricted = restricted

    def find(self, doc_id: str) -> tuple[Fact, Documents] | None:
        for stored, documents in self.approved:
            if doc_id in documents:
                return stored, documents
        return None

    @property
    def first(self) -> Fact:
        return self.approved[0][0]

    def listing(self) -> list[str]:
        ids = [doc_id for _, documents in self.approved for doc_id in documents.ids]
        shown = ids[:SHOWN]
        return shown + ([f"… (+{len(ids) - SHOWN} more)"] if len(ids) > SHOWN else [])

    def hint(self, doc_id: str) -> str:
        ids = [known for _, documents in self.approved for known in documents.ids]
        close = difflib.get_close_matches(doc_id, ids[:1000], n=1, cutoff=0.75)
        return f"; did you mean {close[0]!r}?" if close else ""


def evidence(builder: str, registry: FactRegistry, facts: tuple[str, ...] | None) -> Evidence:
    """The Documents facts a citation check accepts (see the module docstring)."""
    names = registry.names() if facts is None else list(facts)
    approved: list[tuple[Fact, Documents]] = []
    restricted: set[str] = set()
    for name in names:
        stored = registry.peek(name)
        if not isinstance(stored.value, Documents):
            if facts is None:
                continue
            raise TypeError(
                f"{builder}: fact {name!r} is not retrieved documents; record it with "
                "record_documents() (or declare `kind: documents` in the policy)"
            )
        if registry.is_restricted(name):
            restricted.add(name)
        else:
            approved.append((stored, stored.value))
    if not approved:
        raise ValueError(
            f"{builder}: no (unrestricted) retrieved documents are visible to this check; "
            "record them with record_documents() or capture a retrieval span, and list the "
            "fact in the boundary's facts"
        )
    return Evidence(approved, restricted)


def restricted_holder(registry: FactRegistry, evidence: Evidence, doc_id: str) -> str | None:
    """The restricted Documents fact holding ``doc_id``, if any."""
    for name in sorted(evidence.restricted):
        value = registry.peek(name).value
        if isinstance(value, Documents) and doc_id in value:
            return name
    return None
