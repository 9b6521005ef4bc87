"""Judging a rank claim: the ranks an entity holds in an order, and the receipt when none of
the orders a claim may be about (a Ranking, or a Table column the claim names) supports it."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Final

from groundplane_otel.checks._memo import derived
from groundplane_otel.checks._numbers.rank_receipt import Direction, RankReceipt
from groundplane_otel.checks._numbers.rank_scope import Ranked, RankScope
from groundplane_otel.checks._numbers.rank_words import GENERIC
from groundplane_otel.facts import Ranking

__all__ = ["Claim", "held", "judge"]

_SORTED: Final = "numbers_recorded.rank_scores"


@dataclass(frozen=True, slots=True)
class Claim:
    """One rank claim read in a text (spans are in the folded, marked text)."""

    start: int  # folded span of the rank phrase
    end: int
    rank: int
    direction: Direction
    within: bool
    names: tuple[tuple[int, int], ...]  # folded spans of the entities it is about
    measure: tuple[str, ...]  # words naming what is ranked: "highest MARGIN", "first IN Q3"
    evaluative: bool = False  # "best", "worst": which way is better a Table column never says


def _ascending(ranking: Ranking) -> list[int | float]:
    return derived(ranking, _SORTED, lambda: sorted(ranking.scores))


def held(ranking: Ranking, name: Hashable, direction: Direction) -> tuple[int, int]:
    """The 1-based ranks ``name`` holds counted in ``direction`` (a tie block spans several)."""
    score = ranking.score_of(name)
    assert score is not None
    scores = _ascending(ranking)
    below, up_to = bisect.bisect_left(scores, score), bisect.bisect_right(scores, score)
    if direction in ("best", "worst"):
        better = ranking.higher_is_better == (direction == "best")
        direction = "high" if better else "low"
    if direction == "high":
        return len(scores) - up_to + 1, len(scores) - below
    return below + 1, up_to


def _holds(ranking: Ranking, name: Hashable, claim: Claim) -> tuple[bool, int, int]:
    low, high = held(ranking, name, claim.direction)
    if claim.within:
        return low <= claim.rank, low, high
    return low <= claim.rank <= high, low, high


def _names_it(word: str, key_words: frozenset[str]) -> bool:
    return word in key_words or (len(word) > 3 and word.endswith("s") and word[:-1] in key_words)


def _about(ranked: Ranked, claim: Claim) -> bool:
    """Whether the claim may be about this order: a Ranking unless the claim names another
    measure or period ("the highest margin", "first in Q3"); a Table column only when the
    claim names it, and not by "best"/"worst" (which way is better a column does not say)."""
    measure = claim.measure
    if not all(word in GENERIC or _names_it(word, ranked.key_words) for word in measure):
        return False
    if not ranked.named_only:
        return True
    return not claim.evaluative and any(_names_it(word, ranked.key_words) for word in measure)


def judge(
    scope: RankScope,
    claim: Claim,
    named: list[tuple[int, Any]],
    span: Callable[[int, int], tuple[int, int]],
    text: str,
    where: str,
) -> RankReceipt | None:
    """None when some order the claim may be about supports it; else the first one's
    receipt (naming the Ranking's key or the Table's column)."""
    failed: RankReceipt | None = None
    for position, name in named:
        ranked = scope.rankings[position]
        if not _about(ranked, claim) or (ranking := ranked.ranking()) is None:
            continue
        holds, low, high = _holds(ranking, name, claim)
        if holds:
            return None
        if failed is None:
            start, end = span(claim.start, claim.end)
            failed = RankReceipt(
                text[start:end],
                start,
                end,
                Decimal(claim.rank),
                "rank_outside_top" if claim.within else "rank_mismatch",
                where,
                nearest=low,
                fact=ranked.fact,
                row=name,
                column=ranked.key,
                low=low,
                high=high,
                direction=_counted(claim.direction) if ranked.named_only else claim.direction,
                within=claim.within,
            )
    return failed


def _counted(direction: Direction) -> Direction:
    """How a Table column's ranks are counted: from its highest value (or its lowest)."""
    return {"best": "high", "worst": "low"}.get(direction, direction)  # type: ignore[return-value]
