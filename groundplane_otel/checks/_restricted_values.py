"""The values of restricted facts, indexed for finding them in an output.

What counts as a value of a fact (the rule ``no_restricted_values`` and telemetry redaction
share): every string and every number anywhere in it — a Table's cells (its key column
included; column names are schema, not values), a Ranking's names and scores, a Domain's
members, a Documents' ids and contents, and everything inside a plain value, its mapping keys
included (a ``{name: score}`` object holds names). Bools and None are not values. A string that
is exactly one number ("4.20") is also that number.

A locator says where a value sits *without* showing it ("row 3, column 'cost'"): findings and
telemetry name the place, never the value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from groundplane_otel._numbers import is_number
from groundplane_otel.checks._prose_numbers import decimal_of, numeric_values_in
from groundplane_otel.checks._text import PhraseIndex, normalize
from groundplane_otel.documents import Documents
from groundplane_otel.facts import Domain, Ranking, Table
from groundplane_otel.registry import FactRegistry

__all__ = ["Leak", "RestrictedIndex", "Where", "restricted_index", "restricted_indexes"]

# A string that may be exactly one number ("4.20", "$1,234.5", "12%", "1.2M"): only these are
# read by the number scanner (a cheap gate: most strings are names).
_NUMBERISH = re.compile(
    r"[-\u2212]?[$\u20ac\u00a3\u00a5]?\s?[\d.,]*\d[\d.,]*"
    r"\s?(?:%|[kKMB]|bn|thousand|million|billion)?"
)


@dataclass(frozen=True, slots=True)
class Where:
    """A restricted value's fact and place (content-free)."""

    fact: str
    locator: str


@dataclass(frozen=True, slots=True)
class Leak:
    """A restricted value found in a text: the original ``[start, end)``, and how it matched."""

    where: Where
    start: int
    end: int
    how: str  # "as text" | "as a number"


def _leaves(value: Any, at: str) -> Iterator[tuple[Any, str]]:
    """(string or number, locator) for everything inside a plain value."""
    if isinstance(value, str) or is_number(value):
        yield value, at or "the value"
    elif isinstance(value, Mapping):
        for position, (key, item) in enumerate(value.items()):
            yield from _leaves(key, f"{at}{{key {position}}}")
            yield from _leaves(item, f"{at}{{value {position}}}")
    elif isinstance(value, (list, tuple, set, frozenset)):
        for position, item in enumerate(value):
            yield from _leaves(item, f"{at}[{position}]")


def _values(value: Any) -> Iterator[tuple[Any, str]]:
    if isinstance(value, Table):
        for row_number, row in enumerate(value.rows):
            for column in value.columns:
                if column in row:
                    where = f"row {row_number}, column {column!r}"
                    yield from _leaves(row[column], where)
    elif isinstance(value, Ranking):
        for position, (name, score) in enumerate(value.items):
            yield from _leaves(name, f"item {position} (name)")
            yield from _leaves(score, f"item {position} (score)")
    elif isinstance(value, Domain):
        for member in value.members:
            yield member, "a member"
    elif isinstance(value, Documents):
        for position, document in enumerate(value.documents):
            yield document.id, f"document {position} (id)"
            if document.content is not None:
                yield document.content, f"document {position} (content)"
    else:
        yield from _leaves(value, "")


class RestrictedIndex:
    """The strings (as phrases) and numbers (by value) of one restricted fact."""

    __slots__ = ("numbers", "phrases")

    def __init__(self, fact: str, value: Any) -> None:
        phrases: list[tuple[str, Where]] = []
        numbers: dict[Decimal, Where] = {}
        for leaf, locator in _values(value):
            where = Where(fact, locator)
            if isinstance(leaf, str):
                phrases.append((leaf, where))
                if not _NUMBERISH.fullmatch(leaf.strip()):
                    continue
                whole = list(numeric_values_in(leaf.strip()))
                if len(whole) == 1 and whole[0].start == 0 and whole[0].end == len(leaf.strip()):
                    numbers.setdefault(whole[0].values[0], where)
            else:
                numbers.setdefault(decimal_of(leaf), where)
        self.phrases: PhraseIndex[Where] = PhraseIndex(phrases)
        self.numbers = numbers

    def number(self, value: int | float) -> Where | None:
        """The restricted value equal to ``value``, if any (bools are never numbers)."""
        return self.numbers.get(decimal_of(value)) if is_number(value) else None

    def in_text(self, text: str, *, decimal: str = ".") -> Leak | None:
        """The first restricted value ``text`` reveals: as a phrase (case-folded, word-bounded,
        whitespace-normalised; also read with hyphenated line breaks joined, and with every
        line break joined), or as a number equal by value."""
        if self.phrases:
            variants = [normalize(text)]
            if "\n" in text or "\r" in text:
                variants.append(normalize(text, join_breaks="hyphen"))
                variants.append(normalize(text, join_breaks="all"))
            for folded in variants:
                for hit in self.phrases.find(folded.text):
                    start, end = folded.span(hit.start, hit.end)
                    return Leak(hit.payload, start, end, "as text")
        if self.numbers:
            for written in numeric_values_in(text, decimal=decimal):
                for candidate in written.values:
                    where = self.numbers.get(candidate)
                    if where is not None:
                        return Leak(where, written.start, written.end, "as a number")
        return None


def restricted_index(fact: str, value: Any) -> RestrictedIndex:
    """The index of one fact's values, kept on the value when it is a typed fact."""
    cache = getattr(value, "_derived", None)
    if isinstance(cache, dict):
        key = ("restricted.index", fact)
        found = cache.get(key)
        if found is None:
            found = cache.setdefault(key, RestrictedIndex(fact, value))
        assert isinstance(found, RestrictedIndex)
        return found
    return RestrictedIndex(fact, value)


def restricted_indexes(registry: FactRegistry) -> list[RestrictedIndex]:
    """One index per restricted fact the registry holds, in recording order."""
    return [
        restricted_index(name, registry.peek(name).value) for name in registry.restricted_names()
    ]
