"""Laws of superlative and ranking_prefix over random rankings (Hypothesis).

For any valid ranking the computed answer passes, and each single perturbation of it (another
entity, a score beyond tolerance, another row's score, a swapped order, an interloper, a
repeat, the wrong direction) fails with the code naming that mistake.
"""

from __future__ import annotations

from collections.abc import Hashable
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from groundplane_otel._keys import strict_key
from groundplane_otel.checks.ranking_prefix import ranking_prefix
from groundplane_otel.checks.superlative import superlative
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.facts import Ranking
from groundplane_otel.registry import FactRegistry

SETTINGS = settings(max_examples=100, deadline=None)

names_st = st.lists(
    st.one_of(
        st.text(alphabet="abcxyz", min_size=1, max_size=3),
        st.integers(-20, 20),
        st.booleans(),
    ),
    min_size=1,
    max_size=10,
    unique_by=strict_key,
)
# Few distinct values, so ties are common; floats and ints mix (1 and 1.0 tie).
score_st = st.one_of(
    st.integers(-3, 3),
    st.sampled_from([0.5, 1.0, 2.25, -1.5]),
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
)


@st.composite
def recorded(draw: st.DrawFn) -> tuple[FactRegistry, Ranking, dict[str, Any]]:
    """A registry holding one random fact, as a Ranking or a Table column, and check kwargs."""
    names = draw(names_st)
    scores = draw(st.lists(score_st, min_size=len(names), max_size=len(names)))
    higher = draw(st.booleans())
    reg = FactRegistry()
    if draw(st.booleans()):
        ranking = reg.record_ranking(
            "f", list(zip(names, scores, strict=True)), key="s", higher_is_better=higher
        ).value
        kwargs: dict[str, Any] = {}
    else:
        rows = [{"id": name, "s": score} for name, score in zip(names, scores, strict=True)]
        reg.record_table("f", rows, key="id")
        kwargs = {"column": "s", "higher_is_better": higher}
        ranking = reg.peek("f").value.ranking("s", higher)
    return reg, ranking, kwargs


def code_of(check: Any, reg: FactRegistry, output: dict[str, Any]) -> str | None:
    """None when the check passes, else the failure's reason code."""
    try:
        check(reg, output)
    except UnsupportedClaim as claim:
        return claim.code
    return None


def top_block(ranking: Ranking) -> list[Hashable]:
    return [name for name, score in ranking.items if score == ranking.winning_score]


# -- superlative ------------------------------------------------------------------------------


@SETTINGS
@given(recorded(), st.booleans())
def test_every_ranked_name_passes_exactly_when_it_is_an_acceptable_winner(
    case: tuple[FactRegistry, Ranking, dict[str, Any]], allow: bool
) -> None:
    """The argmax passes; a tied leader passes only with allow_tie_pick; anyone else fails."""
    reg, ranking, kwargs = case
    check = superlative("f", allow_tie_pick=allow, **kwargs)
    tied = top_block(ranking)
    for name in ranking.names:
        code = code_of(check, reg, {"winner": name})
        leader = any(strict_key(name) == strict_key(t) for t in tied)
        if not leader:
            assert code == "wrong_winner"
        elif len(tied) == 1 or allow:
            assert code is None
        else:
            assert code == "tie_flattened"


@SETTINGS
@given(recorded(), st.one_of(st.text(max_size=3), st.integers(), st.floats(), st.none()))
def test_a_name_never_ranked_always_fails(
    case: tuple[FactRegistry, Ranking, dict[str, Any]], name: Any
) -> None:
    """Any claim outside the ranking (type-strictly) fails as not_ranked."""
    reg, ranking, kwargs = case
    assume(name not in ranking)
    assert code_of(superlative("f", allow_tie_pick=True, **kwargs), reg, {"winner": name}) == (
        "not_ranked"
    )


@SETTINGS
@given(recorded(), st.floats(1e-6, 1e3))
def test_score_passes_exactly_and_fails_beyond_tolerance(
    case: tuple[FactRegistry, Ranking, dict[str, Any]], excess: float
) -> None:
    """The winner's score passes; the score plus more than the tolerance fails."""
    reg, ranking, kwargs = case
    winner, score = ranking.items[0]
    exact = superlative("f", score_field="v", allow_tie_pick=True, **kwargs)
    assert code_of(exact, reg, {"winner": winner, "v": score}) is None
    tolerance = 0.5
    loose = superlative("f", score_field="v", tolerance=tolerance, allow_tie_pick=True, **kwargs)
    assert code_of(loose, reg, {"winner": winner, "v": score + tolerance / 2}) is None
    off = score + tolerance + excess + abs(score) * 1e-9
    assume(Fraction(off) - Fraction(score) > Fraction(tolerance))
    assert code_of(loose, reg, {"winner": winner, "v": off}) == "score_mismatch"


@SETTINGS
@given(recorded())
def test_another_rows_score_fails(case: tuple[FactRegistry, Ranking, dict[str, Any]]) -> None:
    """Quoting any differently-scored entity's score against the winner fails."""
    reg, ranking, kwargs = case
    winner, score = ranking.items[0]
    check = superlative("f", score_field="v", allow_tie_pick=True, **kwargs)
    for _, other in ranking.items:
        if other != score:
            assert code_of(check, reg, {"winner": winner, "v": other}) == "score_mismatch"


@SETTINGS
@given(recorded())
def test_wrong_direction_winner_fails(case: tuple[FactRegistry, Ranking, dict[str, Any]]) -> None:
    """The best under the opposite direction is never the winner (unless all scores tie)."""
    reg, ranking, kwargs = case
    worst = ranking.items[-1]
    assume(worst[1] != ranking.winning_score)
    check = superlative("f", allow_tie_pick=True, **kwargs)
    assert code_of(check, reg, {"winner": worst[0]}) == "wrong_winner"


@SETTINGS
@given(recorded(), st.sampled_from([2, 0, True, 1.0, "1"]))
def test_rank_other_than_int_one_fails(
    case: tuple[FactRegistry, Ranking, dict[str, Any]], rank: Any
) -> None:
    """rank 1 passes for the winner; 2, 0, True, 1.0 and "1" fail."""
    reg, ranking, kwargs = case
    check = superlative("f", rank_field="r", allow_tie_pick=True, **kwargs)
    assert code_of(check, reg, {"winner": ranking.winner, "r": 1}) is None
    assert code_of(check, reg, {"winner": ranking.winner, "r": rank}) in (
        "rank_mismatch",
        "not_an_integer",
    )


# -- ranking_prefix -------------------------------------------------------------------------


def cut_splits_a_tie(ranking: Ranking, k: int) -> bool:
    return k < len(ranking.items) and ranking.items[k][1] == ranking.items[k - 1][1]


@SETTINGS
@given(recorded(), st.data())
def test_computed_prefix_passes_unless_the_cut_splits_a_tie(
    case: tuple[FactRegistry, Ranking, dict[str, Any]], data: st.DataObject
) -> None:
    """The computed top k passes; a cut inside a tie block fails unless allow_tie_pick."""
    reg, ranking, kwargs = case
    k = data.draw(st.integers(1, len(ranking.items)))
    top = list(ranking.names[:k])
    for given_k in (k, None):
        strict = ranking_prefix("f", k=given_k, **kwargs)
        picked = ranking_prefix("f", k=given_k, allow_tie_pick=True, **kwargs)
        assert code_of(picked, reg, {"top": top}) is None
        expected = "tie_cut" if cut_splits_a_tie(ranking, k) else None
        assert code_of(strict, reg, {"top": top}) == expected


@SETTINGS
@given(recorded(), st.data())
def test_permuting_within_tie_blocks_passes_and_any_order_passes_unordered(
    case: tuple[FactRegistry, Ranking, dict[str, Any]], data: st.DataObject
) -> None:
    """Shuffling names inside each tie block keeps an ordered claim valid; unordered, any order."""
    reg, ranking, kwargs = case
    k = data.draw(st.integers(1, len(ranking.items)))
    shuffled: list[Hashable] = []
    for block in ranking.tie_blocks:
        shuffled.extend(data.draw(st.permutations(list(block))))
    claim = shuffled[:k]
    # Cutting a shuffled block picks arbitrary tied names: only allow_tie_pick accepts that.
    check = ranking_prefix("f", k=k, allow_tie_pick=True, **kwargs)
    assert code_of(check, reg, {"top": claim}) is None
    any_order = data.draw(st.permutations(list(ranking.names[:k])))
    unordered = ranking_prefix("f", k=k, ordered=False, allow_tie_pick=True, **kwargs)
    assert code_of(unordered, reg, {"top": any_order}) is None


@SETTINGS
@given(recorded(), st.data())
def test_swapping_names_from_different_blocks_fails_as_order_mismatch(
    case: tuple[FactRegistry, Ranking, dict[str, Any]], data: st.DataObject
) -> None:
    """Swapping two differently-scored names inside the prefix is an invented order."""
    reg, ranking, kwargs = case
    n = len(ranking.items)
    assume(n >= 2)
    k = data.draw(st.integers(2, n))
    i = data.draw(st.integers(0, k - 2))
    j = data.draw(st.integers(i + 1, k - 1))
    assume(ranking.items[i][1] != ranking.items[j][1])
    claim = list(ranking.names[:k])
    claim[i], claim[j] = claim[j], claim[i]
    check = ranking_prefix("f", k=k, allow_tie_pick=True, **kwargs)
    assert code_of(check, reg, {"top": claim}) == "order_mismatch"


@SETTINGS
@given(recorded(), st.data())
def test_an_interloper_from_below_the_cut_always_fails(
    case: tuple[FactRegistry, Ranking, dict[str, Any]], data: st.DataObject
) -> None:
    """Replacing a prefix name with one scored below the k-th score fails as an interloper."""
    reg, ranking, kwargs = case
    n = len(ranking.items)
    k = data.draw(st.integers(1, n))
    cut_score = ranking.items[k - 1][1]
    below = [name for name, score in ranking.items[k:] if score != cut_score]
    assume(below)
    claim = list(ranking.names[:k])
    claim[data.draw(st.integers(0, k - 1))] = data.draw(st.sampled_from(below))
    for ordered in (True, False):
        check = ranking_prefix("f", k=k, ordered=ordered, allow_tie_pick=True, **kwargs)
        assert code_of(check, reg, {"top": claim}) == "interloper"


@SETTINGS
@given(recorded(), st.data(), st.text(alphabet="QRS", min_size=1, max_size=3))
def test_an_unranked_name_always_fails(
    case: tuple[FactRegistry, Ranking, dict[str, Any]], data: st.DataObject, stranger: str
) -> None:
    """Replacing a prefix name with a name never ranked fails as an interloper."""
    reg, ranking, kwargs = case
    k = data.draw(st.integers(1, len(ranking.items)))
    claim = list(ranking.names[:k])
    claim[data.draw(st.integers(0, k - 1))] = stranger
    check = ranking_prefix("f", k=k, allow_tie_pick=True, **kwargs)
    assert code_of(check, reg, {"top": claim}) == "interloper"


@SETTINGS
@given(recorded(), st.data())
def test_a_repeated_name_always_fails(
    case: tuple[FactRegistry, Ranking, dict[str, Any]], data: st.DataObject
) -> None:
    """Overwriting one prefix slot with another prefix name fails as repeated_name."""
    reg, ranking, kwargs = case
    n = len(ranking.items)
    assume(n >= 2)
    k = data.draw(st.integers(2, n))
    i = data.draw(st.integers(0, k - 1))
    j = data.draw(st.integers(0, k - 1).filter(lambda x: x != i))
    claim = list(ranking.names[:k])
    claim[j] = claim[i]
    for ordered in (True, False):
        check = ranking_prefix("f", k=k, ordered=ordered, allow_tie_pick=True, **kwargs)
        assert code_of(check, reg, {"top": claim}) == "repeated_name"


@SETTINGS
@given(recorded(), st.data())
def test_dropping_a_name_fails_against_a_fixed_k(
    case: tuple[FactRegistry, Ranking, dict[str, Any]], data: st.DataObject
) -> None:
    """A claim one name short of k fails as wrong_length."""
    reg, ranking, kwargs = case
    k = data.draw(st.integers(1, len(ranking.items)))
    check = ranking_prefix("f", k=k, allow_tie_pick=True, **kwargs)
    assert code_of(check, reg, {"top": list(ranking.names[: k - 1])}) == "wrong_length"


@SETTINGS
@given(recorded(), st.data())
def test_reversed_direction_prefix_fails(
    case: tuple[FactRegistry, Ranking, dict[str, Any]], data: st.DataObject
) -> None:
    """The bottom k read as a top k fails whenever it is not also a valid top k."""
    reg, ranking, kwargs = case
    n = len(ranking.items)
    k = data.draw(st.integers(1, n))
    bottom = list(reversed(ranking.names))[:k]
    # Worst-first differs from a valid best-first prefix once a score below the top appears.
    assume(any(score != ranking.winning_score for _, score in ranking.items))
    check = ranking_prefix("f", k=k, allow_tie_pick=True, **kwargs)
    assert code_of(check, reg, {"top": bottom}) in ("interloper", "order_mismatch")


@pytest.mark.parametrize("k", [1, 2, 3])
def test_tie_pick_law_on_a_fixed_example(k: int) -> None:
    """Anchors the property file: with a 3-way tie at the top every k-subset passes."""
    reg = FactRegistry()
    reg.record_ranking("f", [("a", 1), ("b", 1), ("c", 1)], key="s")
    check = ranking_prefix("f", k=k, allow_tie_pick=True)
    assert code_of(check, reg, {"top": ["c", "a", "b"][:k]}) is None
