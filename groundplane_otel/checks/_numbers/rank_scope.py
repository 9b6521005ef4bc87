"""What a text's rank claims are read against: Rankings, and the numeric columns of Tables.

A Ranking has one order (its key), read whenever a claim names none of another measure. A
Table has one order per numeric column, so a claim is read against a column only when it
names that column ("second on revenue", "the lowest margin", "top 3 by orders"), by its name
or a declared alias (``aliases={"visits": ["traffic", "busiest"]}``); a claim naming no column
stays unread. A column is ranked highest first (an ordinal, "top N", "No. 1" and "last" count
from its highest value), ties as ``Ranking.competition_rank`` (a tie block spans its ranks); it
is ranked only when every row holds a finite number in it, and only in a Table recorded
exhaustive (the rows of a truncated result are not all the rows).

An alias that is one word ending in ``est`` is a superlative of its column ("the busiest
store" is the highest ``visits``); written ``"cheapest:lowest"`` it counts from the lowest.
"""

from __future__ import annotations

import re
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, Literal

from groundplane_otel._arithmetic import is_number
from groundplane_otel.checks._memo import derived
from groundplane_otel.checks._text import PhraseIndex
from groundplane_otel.facts import Fact, Ranking, Table

__all__ = ["Aliases", "RankScope", "Ranked", "Source", "declared_aliases", "words"]

Aliases = tuple[tuple[str, tuple[str, ...]], ...]
"""Validated aliases: (column or fact name, its alias phrases in lower case)."""

_WORD = re.compile(r"[a-z]+")
_ALIAS = re.compile(r"[a-z][a-z ]*[a-z]|[a-z]")
_NAMES = "numbers_recorded.rank_names"
_COLUMN = "numbers_recorded.rank_column"
_SUFFIX: Final[dict[str, Literal["high", "low"]]] = {"highest": "high", "lowest": "low"}


@lru_cache(maxsize=1024)
def words(name: str) -> frozenset[str]:
    """The words of a name (``avg_handle_time`` → avg, handle, time), each also without a
    plural ``s`` (``orders`` names ``order``). Kept per name: every text checked (each
    sentence of a streamed answer) asks again for the same columns' words."""
    found = _WORD.findall(name.lower())
    return frozenset(found) | frozenset(w[:-1] for w in found if len(w) > 3 and w.endswith("s"))


@dataclass(frozen=True, slots=True)
class Ranked:
    """One order a rank claim may be about: a Ranking, or a numeric column of a Table."""

    fact: str
    key: str
    key_words: frozenset[str]
    source: Ranking | Table
    named_only: bool  # a Table column: read only when a claim names it

    def ranking(self) -> Ranking | None:
        if isinstance(self.source, Ranking):
            return self.source
        return column_ranking(self.source, self.key, self.fact)


@dataclass(frozen=True, slots=True)
class Source:
    """Entity names found once for every order they are ranked in."""

    names: PhraseIndex[Hashable]
    orders: tuple[int, ...]  # positions in ``RankScope.rankings``


@dataclass(frozen=True, slots=True)
class RankScope:
    """The orders a text's rank claims are read against, and the superlative aliases."""

    rankings: tuple[Ranked, ...]
    sources: tuple[Source, ...]
    superlatives: tuple[tuple[str, Literal["high", "low"]], ...] = ()

    @classmethod
    def of(
        cls, facts: Sequence[Fact], aliases: Aliases = (), text: str | None = None
    ) -> RankScope | None:
        """None when nothing in scope can be ranked. With ``text``, a Table's columns are kept
        only when the text mentions one of their words (a claim must name its column)."""
        declared = dict(aliases)
        rankings: list[Ranked] = []
        sources: list[Source] = []
        lowered = text.lower() if text is not None else None
        for fact in facts:
            value = fact.value
            if isinstance(value, Ranking):
                said = _alias_words(declared, value.key, fact.name)
                sources.append(Source(_ranking_names(value), (len(rankings),)))
                key_words = words(value.key) | words(fact.name) | said
                rankings.append(Ranked(fact.name, value.key, key_words, value, False))
            elif isinstance(value, Table) and value.exhaustive:
                orders: list[int] = []
                for column in value.columns:
                    if column == value.key:
                        continue
                    key_words = words(column) | _alias_words(declared, column)
                    if lowered is not None and not any(word in lowered for word in key_words):
                        continue
                    orders.append(len(rankings))
                    rankings.append(Ranked(fact.name, column, key_words, value, True))
                if orders:
                    sources.append(Source(_table_names(value), tuple(orders)))
        if not rankings:
            return None
        superlatives = tuple(
            (phrase.partition(":")[0], _SUFFIX.get(phrase.partition(":")[2], "high"))
            for _, phrases in aliases
            for phrase in phrases
            if _superlative(phrase)
        )
        return cls(tuple(rankings), tuple(sources), superlatives)


def _superlative(phrase: str) -> bool:
    word = phrase.partition(":")[0]
    return " " not in word and word.endswith("est")


def _alias_words(declared: Mapping[str, tuple[str, ...]], *names: str) -> frozenset[str]:
    found: set[str] = set()
    for name in names:
        for phrase in declared.get(name, ()):
            found |= words(phrase.partition(":")[0])
    return frozenset(found)


def _ranking_names(ranking: Ranking) -> PhraseIndex[Hashable]:
    return derived(
        ranking,
        _NAMES,
        lambda: PhraseIndex((name, name) for name in ranking.names if isinstance(name, str)),
    )


def _table_names(table: Table) -> PhraseIndex[Hashable]:
    return derived(
        table,
        _NAMES,
        lambda: PhraseIndex((key, key) for key in table.keys if isinstance(key, str)),
    )


def column_ranking(table: Table, column: str, fact: str) -> Ranking | None:
    """The column ranked highest first; None unless every row holds a finite number in it."""

    def build() -> Ranking | None:
        if not all(is_number(row.get(column)) for row in table.rows):
            return None
        return table.ranking(column, True, fact=fact)

    return derived(table, (_COLUMN, column), build)


def declared_aliases(builder: str, aliases: object) -> Aliases:
    """Build-time check of ``aliases``: a mapping of a column or fact name to a list of words
    or short phrases (letters and spaces; a superlative may end in ``:highest`` or
    ``:lowest``)."""
    if aliases is None:
        return ()
    if not isinstance(aliases, Mapping):
        raise TypeError(
            f"{builder}: aliases must be a mapping of column to a list of words, got {aliases!r}"
        )
    found: list[tuple[str, tuple[str, ...]]] = []
    for name, phrases in aliases.items():
        if not isinstance(name, str) or not name:
            raise TypeError(f"{builder}: aliases keys must be column or fact names, got {name!r}")
        if isinstance(phrases, str) or not isinstance(phrases, Sequence) or not phrases:
            raise TypeError(
                f"{builder}: aliases[{name!r}] must be a non-empty list of words, got {phrases!r}"
            )
        kept: list[str] = []
        for phrase in phrases:
            text = phrase.strip().lower() if isinstance(phrase, str) else None
            word, _, suffix = (text or "").partition(":")
            if text is None or not _ALIAS.fullmatch(word) or (suffix and suffix not in _SUFFIX):
                raise ValueError(
                    f"{builder}: aliases[{name!r}] must list words (letters and spaces; a "
                    f'superlative may end in ":highest" or ":lowest"), got {phrase!r}'
                )
            if suffix and not _superlative(text):
                raise ValueError(
                    f"{builder}: aliases[{name!r}]: {phrase!r} is not one word ending in "
                    '"est"; only a superlative alias may say ":highest" or ":lowest"'
                )
            kept.append(text)
        found.append((name, tuple(kept)))
    return tuple(found)
