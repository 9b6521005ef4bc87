"""Recorded names as a membership test, plus the hints a miss deserves ("did you mean …?").

Membership itself reads the fact's own index (a Domain's frozenset, a Ranking's or a Table's
type-strict key index) in O(1) per name. Everything else — the case-folded lookup, the listing
shown in a failure, the hints — is a ``NameIndex`` built in one pass the first time a fact needs
it and memoised per fact, so checking N claims against a 100,000-name domain costs O(N).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from groundplane_otel._keys import strict_key
from groundplane_otel.checks._memo import derived
from groundplane_otel.checks._resolve import domain_names
from groundplane_otel.facts import Domain, Fact, Ranking, Table
from groundplane_otel.registry import FactRegistry

__all__ = ["SHOWN", "NameIndex", "is_recorded", "kind_of", "name_index", "names_fact"]

SHOWN = 20
"""A failure lists at most this many recorded names, then ``… (+N more)``."""

_SCAN_LIMIT = 5000
"""Above this many names, "did you mean" only considers names sharing the claim's first letter."""

_BLEND_SPLIT = re.compile(r"[\s_\-/&+,;|]+")


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


def is_recorded(value: Domain | Ranking | Table, name: Any) -> bool:
    """Type-strict membership in O(1): 101 is not "101", 1 is not True or 1.0."""
    if isinstance(value, Table):
        return value.has_key(name)
    return name in value


@dataclass(frozen=True, slots=True)
class NameIndex:
    """What a failure message and a case-insensitive check need to know about recorded names."""

    count: int
    shown: tuple[Hashable, ...]
    folded: Mapping[str, tuple[str, ...]]
    plain: Mapping[Any, Hashable]
    by_text: Mapping[str, Hashable]
    by_initial: Mapping[str, tuple[str, ...]]
    strings: tuple[str, ...]

    def listing(self) -> list[Any]:
        """The recorded names a failure reports: the first 20, then ``… (+N more)``."""
        shown: list[Any] = list(self.shown)
        if self.count > len(shown):
            shown.append(f"… (+{self.count - len(shown)} more)")
        return shown

    def folded_match(self, claim: str) -> tuple[str, ...]:
        """Recorded strings equal to ``claim`` ignoring case (``str.casefold``)."""
        return self.folded.get(claim.casefold(), ())

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
        close = self._closest(claim, case_sensitive)
        if blended:
            names = " and ".join(repr(name) for name in blended[:3])
            suggestion = close or blended[-1]
            return f"it blends recorded names {names}; did you mean {suggestion!r}?"
        return f"did you mean {close!r}?" if close else ""

    def _type_hint(self, claim: Any) -> str:
        """``'101' is a str; the recorded name is the int 101`` — names are type-strict."""
        candidate: Hashable | None = None
        try:
            candidate = self.plain.get(claim)
        except TypeError:  # an unhashable claim (a list, a dict) loosely equals nothing
            return ""
        if candidate is None and isinstance(claim, str):
            candidate = self.by_text.get(claim.strip())
        elif candidate is None and not isinstance(claim, str):
            text = str(claim)
            found = text in self.folded.get(text.casefold(), ())
            candidate = text if found else None
        if candidate is None or strict_key(candidate) == strict_key(claim):
            return ""
        return (
            f"{claim!r} is {kind_of(claim)}, but the recorded name is the "
            f"{type(candidate).__name__} {candidate!r} (names compare type-strictly)"
        )

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

    def _closest(self, claim: str, case_sensitive: bool) -> str | None:
        """The closest recorded string by ``difflib`` ratio (cutoff 0.6), if any."""
        pool: Sequence[str] = self.strings
        if len(pool) > _SCAN_LIMIT:
            pool = self.by_initial.get(claim[:1].casefold(), ())
        if case_sensitive:
            close = difflib.get_close_matches(claim, pool, n=1)
            return close[0] if close else None
        by_fold = {name.casefold(): name for name in pool}
        close = difflib.get_close_matches(claim.casefold(), list(by_fold), n=1)
        return by_fold[close[0]] if close else None


def name_index(registry: FactRegistry, fact: str, stored: Fact) -> NameIndex:
    """The memoised NameIndex of ``stored`` (a Domain, Ranking or Table fact)."""
    return derived(stored, "names.index", lambda: _build(domain_names(registry, fact)[0]))


def _build(names: Sequence[Hashable]) -> NameIndex:
    folded: dict[str, list[str]] = {}
    plain: dict[Any, Hashable] = {}
    by_text: dict[str, Hashable] = {}
    by_initial: dict[str, list[str]] = {}
    strings: list[str] = []
    for name in names:
        plain.setdefault(name, name)
        if isinstance(name, str):
            strings.append(name)
            folded.setdefault(name.casefold(), []).append(name)
            by_initial.setdefault(name[:1].casefold(), []).append(name)
        else:
            by_text.setdefault(str(name), name)
    return NameIndex(
        count=len(names),
        shown=tuple(names[:SHOWN]),
        folded={key: tuple(value) for key, value in folded.items()},
        plain=plain,
        by_text=by_text,
        by_initial={key: tuple(value) for key, value in by_initial.items()},
        strings=tuple(strings),
    )
