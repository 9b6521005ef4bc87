"""Typed fact values and the Provenance that says where they came from.

Values are frozen. What a fact implies (a table's key index, its ranking per column, what checks
derive from it) is computed once and kept on the value itself, in a private ``_derived`` dict,
so checks read recorded evidence without copying it and the cache dies with the value.
``Ranking`` lives in ``ranking.py`` and ``Table`` in ``table.py``; both are re-exported here.

The public constructors validate everything. Values the library builds from data it has already
validated go through private ``_trusted`` constructors that skip re-validation.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any

from groundplane_otel._provenance import Provenance
from groundplane_otel.documents import Document, Documents
from groundplane_otel.ranking import OnMissing, Ranking, ranking_from_scores
from groundplane_otel.table import Table

__all__ = [
    "DEFAULT_LABEL",
    "Document",
    "Documents",
    "Domain",
    "Fact",
    "OnMissing",
    "Provenance",
    "Ranking",
    "Table",
    "ranking_from_scores",
]

_STR = frozenset({str})
DEFAULT_LABEL = "entity"
"""What a Domain's members name when nobody said: ``record_domain(label=)``'s default."""


@dataclass(frozen=True, slots=True)
class Fact:
    """A recorded value under a name, with its provenance."""

    name: str
    value: Any
    provenance: Provenance

    @property
    def type_name(self) -> str:
        """The value's type name: ``Ranking``, ``Table``, ``Domain``, ``dict``, ``int`` …"""
        return type(self.value).__name__


@dataclass(frozen=True, slots=True)
class Domain:
    """A closed set of names (strings)."""

    members: frozenset[str]
    label: str | None = DEFAULT_LABEL
    _derived: dict[Hashable, Any] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        members = frozenset(self.members)
        if not set(map(type, members)) <= _STR:  # one C-speed pass; the loop names a non-str
            for member in members:
                if not isinstance(member, str):
                    raise TypeError(f"domain members must be strings, got {member!r}")
        if not members:
            raise ValueError("a domain needs at least one member")
        object.__setattr__(self, "members", members)
        if self.label is None:  # an explicit None reads as "nobody said"
            object.__setattr__(self, "label", DEFAULT_LABEL)
        elif not isinstance(self.label, str):
            raise TypeError(f"a domain label must be a string, got {self.label!r}")
        object.__setattr__(self, "_derived", {})

    def __deepcopy__(self, memo: dict[int, Any]) -> Domain:
        # Members are strings in a frozenset: immutable, so shared; the cache starts empty.
        domain = object.__new__(Domain)
        object.__setattr__(domain, "members", self.members)
        object.__setattr__(domain, "label", self.label)
        object.__setattr__(domain, "_derived", {})
        return domain

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self.members))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.members

    def __len__(self) -> int:
        return len(self.members)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)
