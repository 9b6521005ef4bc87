"""ranking_prefix: the top-k guard — a claimed top-k must be the computed prefix of a ranking.

Evaluation order (it decides which message a user sees): resolve the ranking (and check that
it has at least ``k`` names) → the claim must be a list (a tuple is accepted too: both are
ordered sequences; a bare string, a set or a mapping is not) → of length ``k`` (``k=None``: the
claim's own length, and an empty list fails) → without repeats →
every name ranked → nobody from beyond the cut → ``ordered=True``: each position holds a name
from the tie block computed there; ``ordered=False``: nobody computed above the cut is left
out → a cut at ``k`` inside a tie block fails unless ``allow_tie_pick``.

Stricter than the reference: the tie diagnosis is given only when the tie is the claim's sole
problem; a claim that is wrong whichever tied names it picked gets the diagnosis of its real
mistake. Repeats compare type-strictly (``1``, ``True`` and ``1.0`` are three names).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Any, cast

from groundplane_otel._keys import strict_key
from groundplane_otel.checks._base import Answer, NamedCheck, describe, field_value, require_json
from groundplane_otel.checks._ranked import (
    near_miss,
    place,
    quote_names,
    require_bool,
    require_name,
)
from groundplane_otel.checks._resolve import resolve_ranking, validate_ranking_args
from groundplane_otel.checks._twin import twin
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.facts import Fact, OnMissing, Ranking
from groundplane_otel.registry import FactRegistry

__all__ = ["check_ranking_prefix", "ranking_prefix"]

_BUILDER = "ranking_prefix"
_ANY_LIST = "a list of ranked names, best first"


@dataclass(frozen=True, slots=True)
class _RankingPrefix:
    """The validated configuration of one ranking_prefix check; calling it runs the check."""

    fact: str
    field: str = "top"
    k: int | None = None
    ordered: bool = True
    allow_tie_pick: bool = False
    column: str | None = None
    higher_is_better: bool | None = None
    on_missing: OnMissing = "raise"

    def __post_init__(self) -> None:
        require_name(_BUILDER, "fact", self.fact)
        require_name(_BUILDER, "field", self.field)
        if self.k is not None and (type(self.k) is not int or self.k < 1):
            raise ValueError(f"{_BUILDER}: k must be None or an int >= 1, got {self.k!r}")
        require_bool(_BUILDER, "ordered", self.ordered)
        require_bool(_BUILDER, "allow_tie_pick", self.allow_tie_pick)
        validate_ranking_args(_BUILDER, self.column, self.higher_is_better, self.on_missing)

    def __call__(self, registry: FactRegistry, output: Answer) -> None:
        output = require_json(_BUILDER, output)
        ranking, stored = resolve_ranking(
            registry, self.fact, self.column, self.higher_is_better, self.on_missing
        )
        if self.k is not None and self.k > len(ranking.names):
            raise ValueError(
                f"{_BUILDER}: k={self.k} but fact {self.fact!r} ranks only "
                f"{len(ranking.names)} name(s) on {ranking.key!r}; no claim could pass"
            )
        claimed = field_value(output, self.field)
        if self._passes(ranking, claimed):
            return
        run = _Run(self, ranking, stored, claimed)
        if not isinstance(claimed, (list, tuple)):
            what = " (a bare string is one name, not a ranking)" if isinstance(claimed, str) else ""
            raise run.fail(
                f"expected a list of names, best first; got a {type(claimed).__name__}{what}",
                "not_a_list",
            )
        if not claimed and self.k is None:
            first, score = ranking.winner, ranking.winning_score
            raise run.fail(
                f"an empty list names no top-k; computed #1 on {ranking.key!r} is "
                f"{first!r} ({score!r})",
                "empty_list",
            )
        k = run.k
        if len(claimed) != k:
            raise run.fail(
                f"claimed {len(claimed)} name(s); the top {k} on {ranking.key!r} is "
                f"{quote_names(run.supported())}",
                "wrong_length",
            )
        positions = run.locate(claimed)
        cut_start, cut_end = ranking.block_of(k - 1)
        run.check_cut(claimed, positions, cut_end)
        if self.ordered:
            run.check_order(claimed, positions)
        else:
            run.check_members(claimed, positions, cut_start)
        if cut_end > k and not self.allow_tie_pick:
            raise run.tie_cut(cut_start, cut_end)

    def _passes(self, ranking: Ranking, claimed: Any) -> bool:
        """The common case, a correct claim, in a few steps; False lets the full evaluation
        below judge the claim and explain what is wrong with it."""
        if type(claimed) is not list and type(claimed) is not tuple:
            return False
        k = len(claimed)
        if not k or (self.k is not None and k != self.k):
            return False
        found = [ranking.find(name) for name in claimed]
        if None in found or len(set(found)) != k:
            return False  # an unranked or repeated name
        positions = cast("list[int]", found)
        cut_start, cut_end = ranking.block_of(k - 1)
        if max(positions) >= cut_end or (cut_end > k and not self.allow_tie_pick):
            return False
        if self.ordered:  # slot i holds a name scoring what position i scores (ties permute)
            scores = ranking.scores
            return tuple([scores[position] for position in positions]) == scores[:k]
        return len({position for position in positions if position < cut_start}) == cut_start


class _Run:
    """One evaluation of a ranking_prefix check against one output."""

    __slots__ = ("claimed", "k", "ranking", "spec", "stored")

    def __init__(self, spec: _RankingPrefix, ranking: Ranking, stored: Fact, claimed: Any) -> None:
        self.spec = spec
        self.ranking = ranking
        self.stored = stored
        self.claimed = claimed
        if spec.k is not None:
            self.k = spec.k
        elif isinstance(claimed, (list, tuple)):
            self.k = len(claimed)
        else:
            self.k = 0

    def supported(self) -> Any:
        """What the facts support: the computed top k (or, with k unknown, any list of names)."""
        return list(self.ranking.names[: self.k]) if self.k else _ANY_LIST

    def fail(self, reason: str, code: str, supported: Any = None) -> UnsupportedClaim:
        return UnsupportedClaim(
            self.spec.field,
            self.claimed,
            self.supported() if supported is None else supported,
            fact=self.spec.fact,
            provenance=self.stored.provenance,
            reason=reason,
            code=code,
        )

    def locate(self, claimed: Sequence[Any]) -> list[int]:
        """Each claimed name's position in the ranking, after two checks in this order.

        No name twice (type-strict: 1, True and 1.0 are three names; two ranked names repeat
        exactly when they share a position), then every name ranked (an unranked name is an
        interloper). One index lookup per name.
        """
        ranking = self.ranking
        found = [ranking.find(name) for name in claimed]  # None: unranked (or unhashable)
        if None not in found and len(set(found)) == len(found):
            return cast("list[int]", found)  # every name ranked, none twice: the common case
        seen: dict[Hashable, int] = {}
        for slot, (name, position) in enumerate(zip(claimed, found, strict=True)):
            try:
                token = ("ranked", position) if position is not None else strict_key(name)
                first = seen.setdefault(token, slot)
            except TypeError:  # an unhashable name cannot repeat a name; it is unranked anyway
                continue
            if first != slot:
                raise self.fail(
                    f"{name!r} appears at positions {first + 1} and {slot + 1}; "
                    f"a top {self.k} names each entity once",
                    "repeated_name",
                )
        positions: list[int] = []
        for slot, (name, position) in enumerate(zip(claimed, found, strict=True)):
            if position is None:
                raise self.fail(
                    f"position {slot + 1} holds {name!r}, an interloper that was never ranked "
                    f"on {ranking.key!r}{near_miss(ranking, name)}",
                    "interloper",
                )
            positions.append(position)
        return positions

    def check_cut(self, claimed: Sequence[Any], positions: Sequence[int], cut_end: int) -> None:
        """Nobody ranked below the cut (or below the tie block the cut falls in) may appear."""
        for slot, position in enumerate(positions):
            if position >= cut_end:
                last, score = self.ranking.names[self.k - 1], self.ranking.scores[self.k - 1]
                raise self.fail(
                    f"position {slot + 1} holds {claimed[slot]!r} (ranked "
                    f"{place(self.ranking, claimed[slot])}), an interloper from outside the "
                    f"top {self.k} on {self.ranking.key!r}, which ends with {last!r} ({score!r})",
                    "interloper",
                )

    def check_order(self, claimed: Sequence[Any], positions: Sequence[int]) -> None:
        """Slot i must hold a name from the tie block computed at position i (ties permute)."""
        ranking = self.ranking
        scores = ranking.scores
        for slot, position in enumerate(positions):
            # Scores are sorted, so an equal score means the same tie block: O(1) per slot.
            if scores[position] == scores[slot]:
                continue
            name = claimed[slot]
            start, end = ranking.block_of(slot)
            if end - start == 1:
                expected = f"{ranking.names[slot]!r} ({scores[slot]!r})"
            else:
                block = list(ranking.names[start:end])
                expected = f"any of {quote_names(block)} (tied at {scores[start]!r})"
            raise self.fail(
                f"position {slot + 1} holds {name!r} (ranked {place(ranking, name)}); the "
                f"computed order "
                f"on {ranking.key!r} has {expected} there",
                "order_mismatch",
            )

    def check_members(
        self, claimed: Sequence[Any], positions: Sequence[int], cut_start: int
    ) -> None:
        """Unordered: everything ranked above the tie block the cut falls in must be claimed.

        With no repeats and nobody from beyond the cut, a name can only be missing when the
        claim spends more slots on that tie block than it has room for.
        """
        taken = {position for position in positions if position < cut_start}
        if len(taken) == cut_start:
            return
        names, scores = self.ranking.names, self.ranking.scores
        missing = [names[position] for position in range(cut_start) if position not in taken]
        extra = [name for name, at in zip(claimed, positions, strict=True) if at >= cut_start]
        raise self.fail(
            f"the top {self.k} on {self.ranking.key!r} leaves out {quote_names(missing)}, "
            f"ranked above the claimed {quote_names(extra)} (tied at {scores[cut_start]!r}, "
            f"with room for {self.k - cut_start})",
            "interloper",
        )

    def tie_cut(self, cut_start: int, cut_end: int) -> UnsupportedClaim:
        """The claim is right but for the tie: no top k is unique when k splits a tie block."""
        names, scores = self.ranking.names, self.ranking.scores
        block = list(names[cut_start:cut_end])
        whole = list(names[:cut_end])
        other_cut = f"k={cut_start} or k={cut_end}" if cut_start else f"k={cut_end}"
        return self.fail(
            f"the cut at k={self.k} falls inside a tie on {self.ranking.key!r}: "
            f"{quote_names(block)} share {scores[cut_start]!r} at positions "
            f"{cut_start + 1}-{cut_end}, so no top {self.k} is unique ({other_cut} keeps the "
            f"tie whole; allow_tie_pick=True accepts any {self.k - cut_start} of them)",
            "tie_cut",
            supported=whole,
        )


def ranking_prefix(
    fact: str,
    field: str = "top",
    k: int | None = None,
    ordered: bool = True,
    allow_tie_pick: bool = False,
    column: str | None = None,
    higher_is_better: bool | None = None,
    on_missing: OnMissing = "raise",
) -> NamedCheck:
    """Top-k guard: ``output[field]`` must be the computed first ``k`` names of ``fact``.

    The claim is a list (a tuple is accepted too: both are ordered sequences of names; a bare
    string, a set or a mapping is not). ``k=None`` takes the claim's own length as k.
    ``ordered=True`` lets names permute only within a tie block; ``ordered=False`` compares the
    names as a set. A cut at k through a block of tied scores fails unless ``allow_tie_pick``,
    which accepts any of the tied names for the remaining slots. ``fact`` is a Ranking, or a
    Table ranked by ``column=``. Arguments are validated here, not at check time.
    """
    spec = _RankingPrefix(
        fact,
        field,
        k=k,
        ordered=ordered,
        allow_tie_pick=allow_tie_pick,
        column=column,
        higher_is_better=higher_is_better,
        on_missing=on_missing,
    )
    return NamedCheck(
        describe(_BUILDER, fact=fact, field=field), spec, family=_BUILDER, facts=(fact,)
    )


check_ranking_prefix = twin(ranking_prefix)
