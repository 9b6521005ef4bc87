"""superlative: the argmax guard — "best X" must name the computed winner and quote its score.

Evaluation order (it decides which message a user sees): resolve the ranking → the claimed name
must be ranked → a claim inside a tied top block fails as a flattened tie unless
``allow_tie_pick`` → the claim must be the argmax → ``score_field`` must match the claimed
name's score → ``rank_field`` must be exactly the int 1.

Stricter than the reference: a claim *outside* a tied top block gets the wrong-winner
diagnosis (where it really ranked), not the tie one; every argument is validated when built.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass
from functools import partial
from typing import Any

from groundplane_otel._arithmetic import is_number, matches, validate_tolerances
from groundplane_otel._claims import deferred_reason
from groundplane_otel.checks._base import Answer, NamedCheck, describe, field_value, require_json
from groundplane_otel.checks._ranked import (
    extreme,
    near_miss,
    offset,
    quote_names,
    require_bool,
    require_name,
    score_owner,
    standing,
)
from groundplane_otel.checks._resolve import resolve_ranking, validate_ranking_args
from groundplane_otel.checks._twin import twin
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.facts import Fact, OnMissing, Ranking
from groundplane_otel.registry import FactRegistry

__all__ = ["check_superlative", "superlative"]

_BUILDER = "superlative"


@dataclass(frozen=True, slots=True)
class _Superlative:
    """The validated configuration of one superlative check; calling it runs the check."""

    fact: str
    winner_field: str = "winner"
    score_field: str | None = None
    rank_field: str | None = None
    tolerance: int | float = 0
    rel_tolerance: int | float | None = None
    allow_tie_pick: bool = False
    column: str | None = None
    higher_is_better: bool | None = None
    on_missing: OnMissing = "raise"

    def __post_init__(self) -> None:
        require_name(_BUILDER, "fact", self.fact)
        require_name(_BUILDER, "winner_field", self.winner_field)
        require_name(_BUILDER, "score_field", self.score_field, optional=True)
        require_name(_BUILDER, "rank_field", self.rank_field, optional=True)
        fields = [f for f in (self.winner_field, self.score_field, self.rank_field) if f]
        if len(set(fields)) != len(fields):
            raise ValueError(
                f"{_BUILDER}: winner_field, score_field and rank_field must be distinct "
                f"output fields, got {fields!r}"
            )
        validate_tolerances(self.tolerance, self.rel_tolerance, where=_BUILDER)
        require_bool(_BUILDER, "allow_tie_pick", self.allow_tie_pick)
        validate_ranking_args(_BUILDER, self.column, self.higher_is_better, self.on_missing)

    def __call__(self, registry: FactRegistry, output: Answer) -> None:
        if isinstance(output, str):  # ``require_json`` only to raise: a call less per answer
            output = require_json(_BUILDER, output)
        ranking, stored = resolve_ranking(
            registry, self.fact, self.column, self.higher_is_better, self.on_missing
        )
        field = self.winner_field  # ``field_value`` only for a missing field: a call less
        claimed = output[field] if field in output else field_value(output, field)
        position = self._check_winner(ranking, stored, claimed)
        if self.score_field is not None:
            score = field_value(output, self.score_field)
            self._check_score(ranking, stored, self.score_field, position, score)
        if self.rank_field is not None:
            rank = field_value(output, self.rank_field)
            self._check_rank(ranking, stored, self.rank_field, claimed, rank)

    def _fail(
        self,
        stored: Fact,
        field: str,
        claimed: Any,
        supported: Any,
        *,
        reason: str | None,
        code: str,
    ) -> UnsupportedClaim:
        return UnsupportedClaim(
            field,
            claimed,
            supported,
            fact=self.fact,
            provenance=stored.provenance,
            reason=reason,
            code=code,
        )

    def _check_winner(self, ranking: Ranking, stored: Fact, claimed: Any) -> int:
        """The claimed name's position, once it is known to be an acceptable winner."""
        _, top_end = ranking.block_of(0)
        position = ranking.find(claimed)
        if position is not None and position < top_end and (top_end == 1 or self.allow_tie_pick):
            return position
        # Failing from here on: the reason spells out what was computed, when it is read
        # (``deferred_reason``: a guard that only counts the failure never formats it).
        supported: Any = list(ranking.names[:top_end]) if top_end > 1 else ranking.winner
        if position is None:
            code = "not_ranked"
        elif position < top_end:
            code = "tie_flattened"
        else:
            code = "wrong_winner"
        claim = self._fail(stored, self.winner_field, claimed, supported, reason=None, code=code)
        raise deferred_reason(claim, partial(_winner_reason, ranking, claimed, position, top_end))

    def _check_score(
        self, ranking: Ranking, stored: Fact, field: str, position: int, claimed: Any
    ) -> None:
        name, computed = ranking.names[position], ranking.scores[position]
        if matches(claimed, computed, self.tolerance, self.rel_tolerance):
            return
        where = f"computed {ranking.key!r} of {name!r} is {computed!r}"
        if not is_number(claimed):
            reason = (
                f"{where}; {claimed!r} ({type(claimed).__name__}) is not a finite number "
                "(bools and numeric-looking strings never are)"
            )
            code = "not_a_number"
        else:
            reason = (
                f"{where}; the claim is off by {offset(claimed, computed)}"
                f"{self._tolerance_note()}{score_owner(ranking, claimed, name)}"
            )
            code = "score_mismatch"
        raise self._fail(stored, field, claimed, computed, reason=reason, code=code)

    def _check_rank(
        self, ranking: Ranking, stored: Fact, field: str, name: Hashable, claimed: Any
    ) -> None:
        if type(claimed) is int and claimed == 1:
            return
        if type(claimed) is int:
            reason = (
                f"{name!r} is the computed {extreme(ranking)} on {ranking.key!r}, ranked #1; "
                f"the claim says #{claimed}"
            )
            code = "rank_mismatch"
        else:
            reason = (
                f"{name!r} is ranked #1 on {ranking.key!r}; a rank is the int 1, and "
                f"{claimed!r} ({type(claimed).__name__}) is not an int"
            )
            code = "not_an_integer"
        raise self._fail(stored, field, claimed, 1, reason=reason, code=code)

    def _tolerance_note(self) -> str:
        if not self.tolerance and not self.rel_tolerance:
            return " (exact comparison)"
        return f" (tolerance={self.tolerance!r}, rel_tolerance={self.rel_tolerance!r})"


def _winner_reason(ranking: Ranking, claimed: Any, position: int | None, top_end: int) -> str:
    """Why ``claimed`` (at ``position``, None: never ranked) is no acceptable winner of a
    ranking whose tied top block ends at ``top_end``."""
    best = f"computed {extreme(ranking)} on {ranking.key!r} is "
    if top_end > 1:
        best += f"a tie between {quote_names(ranking.names[:top_end])} ({ranking.winning_score!r})"
    else:
        best += f"{ranking.winner!r} ({ranking.winning_score!r})"
    if position is None:
        return f"{best}; {claimed!r} was never ranked{near_miss(ranking, claimed)}"
    if position < top_end:
        return (
            f"{best}; naming {claimed!r} alone flattens the tie "
            "(pass allow_tie_pick=True to accept any tied name)"
        )
    # Stricter than the reference: below a tied top this is a wrong winner, not a tie.
    return f"{best}; {standing(ranking, claimed)}{_flip_hint(ranking, position)}"


def _flip_hint(ranking: Ranking, position: int) -> str:
    """When the claim is the worst of three or more, it is the best the other way round."""
    if len(ranking.names) < 3 or ranking.block_of(position)[1] != len(ranking.names):
        return ""
    other = "argmin" if ranking.higher_is_better else "argmax"
    better = "lower" if ranking.higher_is_better else "higher"
    return f" (last: the computed {other}, as if {better} were better)"


def superlative(
    fact: str,
    winner_field: str = "winner",
    score_field: str | None = None,
    rank_field: str | None = None,
    tolerance: int | float = 0,
    rel_tolerance: int | float | None = None,
    allow_tie_pick: bool = False,
    column: str | None = None,
    higher_is_better: bool | None = None,
    on_missing: OnMissing = "raise",
) -> NamedCheck:
    """The argmax guard: ``output[winner_field]`` must be the computed best of ``fact``.

    ``fact`` is a Ranking, or a Table ranked by ``column=`` (``higher_is_better`` defaults to
    True there; on a Ranking it may only repeat the recorded direction). ``score_field`` must
    equal the winner's score within ``tolerance``/``rel_tolerance`` (exact by default);
    ``rank_field`` must be the int 1. A tied top fails unless ``allow_tie_pick``, which then
    accepts any name in the tied block. Arguments are validated here, not at check time.
    """
    spec = _Superlative(
        fact,
        winner_field,
        score_field=score_field,
        rank_field=rank_field,
        tolerance=tolerance,
        rel_tolerance=rel_tolerance,
        allow_tie_pick=allow_tie_pick,
        column=column,
        higher_is_better=higher_is_better,
        on_missing=on_missing,
    )
    return NamedCheck(
        describe(_BUILDER, fact=fact, field=winner_field), spec, family=_BUILDER, facts=(fact,)
    )


check_superlative = twin(superlative)
