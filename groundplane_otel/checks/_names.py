"""Recorded names as a membership test, plus the hints a miss deserves ("did you mean …?").

Membership reads the fact's own index (a Domain's frozenset, a Ranking's or a Table's
type-strict key index) in O(1) per name; a passing case-sensitive check builds nothing. The rest
— the case-folded lookup, the listing shown in a failure, the hints — lives on a ``NameIndex``
memoised per fact, each part built in one pass the first time something needs it. Checking N
claims against a 100,000-name domain therefore costs O(N) after at most one O(n) build.

"Did you mean" ranks candidates with ``difflib``. Up to ``_SCAN_LIMIT`` names it ranks them
all; past that it ranks a bounded set — the names next to the claim in sorted order, the names
next to it read backwards (a typo near the start), and the claim with one character deleted or
two neighbours transposed — so a miss against a huge domain costs microseconds, not a scan.
"""

from __future__ import annotations

import difflib
import heapq
import re
from bisect import bisect_left
from collections.abc import Hashable, Iterable
from itertools import islice
from typing import Any

from groundplane_otel._keys import strict_key
from groundplane_otel.checks._memo import derived
from groundplane_otel.checks._resolve import domain_names
from groundplane_otel.facts import Domain, Fact, Ranking, Table
from groundplane_otel.registry import FactRegistry

__all__ = ["SHOWN", "NameIndex", "Names", "is_recorded", "kind_of", "name_index", "names_fact"]

SHOWN = 20
"""A failure lists at most this many recorded names, then ``… (+N more)``."""

_SCAN_LIMIT = 1000
_WINDOW = 50
_BLEND_SPLIT = re.compile(r"[\s_\-/&+,;|]+")

Names = Domain | Ranking | Table


def kind_of(value: object) -> str:
    """``an int``, ``a str``: the type of ``value`` with its article, for reasons."""
    name = type(value).__name__
    return f"{'an' if name[:1] in 'aeiou' else 'a'} {name}"


def names_fact(registry: FactRegistry, fact: str) -> Fact:
    """The stored fact, which must hold names: a Domain, a Ranking or a Table (keys)."""
    stored = registry.peek(fact)
    if not isinstance(stored.value, (Domain, Ranking, Table)):
        domain_names(registry, fact)  # raises the TypeError naming the recorders to use
    return stored


def is_recorded(value: Names, name: Any) -> bool:
    """Type-strict membership in O(1): 101 is not "101", 1 is not True or 1.0."""
    if isinstance(value, Table):
        return value.has_key(name)
    return name in value


def name_index(registry: FactRegistry, fact: str, stored: Fact) -> NameIndex:
    """The memoised NameIndex of ``stored``, the fact ``fact`` read from ``registry``.

    A fact holding no names is the TypeError ``domain_names`` raises (naming the recorders).
    """
    value = stored.value
    if not isinstance(value, (Domain, Ranking, Table)):
        domain_names(registry, fact)
    return derived(value, "names.index", lambda: NameIndex(value))


def _names(value: Names) -> Iterable[Hashable]:
    if isinstance(value, Domain):
        return value.members
    if isinstance(value, Ranking):
        return value.names
    return (row[value.key] for row in value.rows)


class NameIndex:
    """What failure messages and case-insensitive checks need to know about recorded names.

    Each part is computed on first use and kept (recomputing it in a race is harmless).
    """

    __slots__ = ("_folded", "_listing", "_neighbours", "_plain", "count", "value")

    def __init__(self, value: Names) -> None:
        self.value = value
        self.count = len(value.names if isinstance(value, Ranking) else value)
        self._folded: tuple[dict[str, str], dict[str, tuple[str, ...]]] | None = None
        self._listing: list[Hashable] | None = None
        self._plain: tuple[dict[Any, Hashable], dict[str, Hashable]] | None = None
        self._neighbours: tuple[list[str], list[str]] | None = None

    # -- what a failure shows ----------------------------------------------------------------

    def listing(self) -> list[Any]:
        """The first 20 recorded names (a Domain's sorted), then ``… (+N more)``."""
        if self._listing is None:
            value = self.value
            if isinstance(value, Domain):
                self._listing = list(heapq.nsmallest(SHOWN, value.members))
            else:
                self._listing = list(islice(_names(value), SHOWN))
        shown: list[Any] = list(self._listing)
        if self.count > len(shown):
            shown.append(f"… (+{self.count - len(shown)} more)")
        return shown

    # -- case-insensitive lookup -------------------------------------------------------------

    def folded_match(self, claim: str) -> tuple[str, ...]:
        """Recorded strings equal to ``claim`` ignoring case (``str.casefold``)."""
        first, collisions = self._fold()
        key = claim.casefold()
        if key in collisions:
            return collisions[key]
        found = first.get(key)
        return () if found is None else (found,)

    def _fold(self) -> tuple[dict[str, str], dict[str, tuple[str, ...]]]:
        if self._folded is None:
            strings = [name for name in _names(self.value) if isinstance(name, str)]
            first = dict(zip(map(str.casefold, reversed(strings)), reversed(strings), strict=True))
            collisions: dict[str, tuple[str, ...]] = {}
            if len(first) < len(strings):  # "Harbour" and "harbour" both recorded: keep both
                grouped: dict[str, list[str]] = {}
                for name in strings:
                    grouped.setdefault(name.casefold(), []).append(name)
                ordered = sorted if isinstance(self.value, Domain) else tuple  # sets: no order
                collisions = {
                    key: tuple(ordered(group)) for key, group in grouped.items() if len(group) > 1
                }
            self._folded = (first, collisions)
        return self._folded

    # -- hints -------------------------------------------------------------------------------

    def hint(self, claim: Any, *, case_sensitive: bool = True, case_option: bool = False) -> str:
        """Why a claim that is not recorded probably missed, or "" when nothing is close.

        ``case_option`` mentions ``case_sensitive=False`` when only the case differs (for the
        checks that take that option).
        """
        typed = self._type_hint(claim)
        if typed or not isinstance(claim, str):
            return typed
        if case_sensitive:
            same = self.folded_match(claim)
            if same:
                option = "; case_sensitive=False ignores case" if case_option else ""
                return (
                    f"did you mean {same[0]!r}? only the case differs "
                    f"(names compare case-sensitively{option})"
                )
        blended = self._blended(claim, case_sensitive)
        close = self._closest(claim)
        if blended:
            names = " and ".join(repr(name) for name in blended[:3])
            return f"it blends recorded names {names}; did you mean {close or blended[-1]!r}?"
        return f"did you mean {close!r}?" if close else ""

    def _type_hint(self, claim: Any) -> str:
        """``'101' is a str, but the recorded name is the int 101`` — names are type-strict."""
        plain, by_text = self._loose()
        try:
            candidate = plain.get(claim)
        except TypeError:  # an unhashable claim (a list, a dict) loosely equals nothing
            return ""
        if candidate is None and isinstance(claim, str):
            candidate = by_text.get(claim.strip())
        elif candidate is None:
            text = str(claim)
            candidate = text if text in self.folded_match(text) else None
        if candidate is None or strict_key(candidate) == strict_key(claim):
            return ""
        return (
            f"{claim!r} is {kind_of(claim)}, but the recorded name is the "
            f"{type(candidate).__name__} {candidate!r} (names compare type-strictly)"
        )

    def _loose(self) -> tuple[dict[Any, Hashable], dict[str, Hashable]]:
        """Plain-equality lookups: 1.0 and True find 1; "101" finds 101 (non-str names only)."""
        if self._plain is None:
            if isinstance(self.value, Domain):  # all strings: only by_text-style hints apply
                self._plain = ({}, {})
            else:
                others = [name for name in _names(self.value) if not isinstance(name, str)]
                self._plain = (
                    dict(zip(reversed(others), reversed(others), strict=True)),
                    {str(name): name for name in reversed(others)},
                )
        return self._plain

    def _blended(self, claim: str, case_sensitive: bool) -> list[str]:
        """Recorded names that appear as separate words of ``claim`` ("north harbour")."""
        found: list[str] = []
        for part in _BLEND_SPLIT.split(claim.strip()):
            matches = self.folded_match(part)
            if case_sensitive:
                matches = tuple(name for name in matches if name == part)
            if matches and matches[0] not in found:
                found.append(matches[0])
        return found if len(found) >= 2 else []

    def _closest(self, claim: str) -> str | None:
        """The recorded string closest to ``claim`` by ``difflib`` ratio (cutoff 0.6), if any."""
        first, _ = self._fold()
        key = claim.casefold()
        pool: Iterable[str] = first if len(first) <= _SCAN_LIMIT else self._candidates(key)
        close = difflib.get_close_matches(key, list(pool), n=1)
        return self.folded_match(close[0])[0] if close else None

    def _candidates(self, key: str) -> set[str]:
        """A bounded pool of likely intended names for ``key`` in a large set of names."""
        first, _ = self._fold()
        if self._neighbours is None:
            self._neighbours = (sorted(first), sorted(name[::-1] for name in first))
        forward, backward = self._neighbours
        pool: set[str] = set()
        at = bisect_left(forward, key)
        pool.update(forward[max(0, at - _WINDOW) : at + _WINDOW])
        at = bisect_left(backward, key[::-1])
        pool.update(name[::-1] for name in backward[max(0, at - _WINDOW) : at + _WINDOW])
        for position in range(len(key)):
            deleted = key[:position] + key[position + 1 :]
            if deleted in first:
                pool.add(deleted)
            swapped = key[:position] + key[position + 1 : position + 2] + key[position]
            swapped += key[position + 2 :]
            if swapped in first:
                pool.add(swapped)
        return pool
