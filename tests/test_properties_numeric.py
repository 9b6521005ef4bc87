"""Laws of the numeric families: the computed claim always passes, every perturbation fails.

The oracles below recompute each aggregate and delta with plain ``Fraction`` arithmetic,
independently of the library's fast dyadic sums.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from groundplane_otel._arithmetic import from_fraction, matches
from groundplane_otel.checks._numbers.sums import exact_dot, exact_sum
from groundplane_otel.checks.aggregate_reconciles import check_aggregate_reconciles
from groundplane_otel.checks.comparison import check_comparison
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.registry import FactRegistry

SETTINGS = settings(max_examples=100, deadline=None)

# Bounded ints and quarter-steps: distinct values give deltas whose nearest floats differ, so a
# perturbation can never round back onto the right answer by accident.
numbers = st.one_of(
    st.integers(-1000, 1000), st.integers(-4000, 4000).map(lambda quarter: quarter / 4)
)
OPS = ("sum", "count", "mean", "min", "max", "median")
KINDS = ("abs", "pct", "ratio", "pp")
DIRECTIONS = ("a_minus_b", "b_minus_a")


def _rows(cells: list[tuple[str, Any, int]]) -> list[dict[str, Any]]:
    return [{"id": i, "g": g, "x": x, "w": w} for i, (g, x, w) in enumerate(cells)]


tables = st.lists(
    st.tuples(st.sampled_from(["a", "b"]), numbers, st.integers(1, 50)), min_size=1, max_size=25
).map(_rows)


def aggregate_oracle(rows: list[dict[str, Any]], op: str, weighted: bool = False) -> Fraction:
    values = [Fraction(row["x"]) for row in rows]
    if op == "count":
        return Fraction(len(rows))
    if op == "sum":
        return sum(values, Fraction(0))
    if op == "mean" and weighted:
        weights = [Fraction(row["w"]) for row in rows]
        return sum((v * w for v, w in zip(values, weights)), Fraction(0)) / sum(weights)
    if op == "mean":
        return sum(values, Fraction(0)) / len(values)
    if op == "min":
        return min(values)
    if op == "max":
        return max(values)
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def recorded(rows: list[dict[str, Any]]) -> FactRegistry:
    registry = FactRegistry()
    registry.record_table("t", rows, key="id", tool="db.q")
    return registry


def aggregate_fails(registry: FactRegistry, claim: Any, **kwargs: Any) -> UnsupportedClaim:
    with pytest.raises(UnsupportedClaim) as info:
        check_aggregate_reconciles(registry, {"v": claim}, "t", "v", **kwargs)
    return info.value


def column_for(op: str) -> str | None:
    return None if op == "count" else "x"


@SETTINGS
@given(rows=tables, op=st.sampled_from(OPS), filtered=st.booleans())
def test_computed_aggregate_always_passes(
    rows: list[dict[str, Any]], op: str, filtered: bool
) -> None:
    """For any table, op and filter, the exactly computed aggregate reconciles."""
    selected = [row for row in rows if row["g"] == "a"] if filtered else rows
    assume(selected)
    where = {"g": "a"} if filtered else None
    claim = from_fraction(aggregate_oracle(selected, op))
    check_aggregate_reconciles(
        recorded(rows), {"v": claim}, "t", "v", column_for(op), op, where=where
    )


@SETTINGS
@given(
    rows=tables,
    op=st.sampled_from(OPS),
    tolerance=st.integers(0, 100),
    sign=st.sampled_from([-1, 1]),
)
def test_aggregate_beyond_tolerance_always_fails(
    rows: list[dict[str, Any]], op: str, tolerance: int, sign: int
) -> None:
    """Any claim further from the computed value than the tolerance fails."""
    exact = aggregate_oracle(rows, op)
    claim = from_fraction(exact + sign * (tolerance + max(1, abs(exact))))
    error = aggregate_fails(
        recorded(rows), claim, column=column_for(op), op=op, tolerance=tolerance
    )
    assert error.supported == from_fraction(exact)


@SETTINGS
@given(rows=tables, op=st.sampled_from(OPS))
def test_aggregate_over_the_wrong_subset_always_fails(rows: list[dict[str, Any]], op: str) -> None:
    """A filtered claim computed over the whole table fails whenever the two values differ."""
    selected = [row for row in rows if row["g"] == "a"]
    assume(selected)
    exact = aggregate_oracle(selected, op)
    whole = from_fraction(aggregate_oracle(rows, op))
    assume(not matches(whole, exact))
    error = aggregate_fails(recorded(rows), whole, column=column_for(op), op=op, where={"g": "a"})
    assert error.code == "wrong_subset"


@SETTINGS
@given(rows=tables)
def test_unweighted_mean_for_a_weighted_one_always_fails(rows: list[dict[str, Any]]) -> None:
    """The plain mean fails a weighted-mean check whenever the two differ, and says so."""
    weighted = aggregate_oracle(rows, "mean", weighted=True)
    plain = from_fraction(aggregate_oracle(rows, "mean"))
    check_aggregate_reconciles(
        recorded(rows), {"v": from_fraction(weighted)}, "t", "v", "x", "mean", weight_column="w"
    )
    assume(not matches(plain, weighted))
    error = aggregate_fails(recorded(rows), plain, column="x", op="mean", weight_column="w")
    assert error.code == "unweighted_mean"


@SETTINGS
@given(rows=tables, offset=st.sampled_from([-1, 1]))
def test_count_must_be_the_exact_int(rows: list[dict[str, Any]], offset: int) -> None:
    """A count off by one fails, and the right count as a float fails as not_an_integer."""
    registry = recorded(rows)
    aggregate_fails(registry, len(rows) + offset, op="count")
    assert aggregate_fails(registry, float(len(rows)), op="count").code == "not_an_integer"


@SETTINGS
@given(flags=st.lists(st.sampled_from([1, True, 1.0, "1"]), min_size=1, max_size=20))
def test_where_selects_only_the_same_type(flags: list[Any]) -> None:
    """A where value selects exactly the rows holding that value with that type."""
    rows = [{"id": position, "f": flag} for position, flag in enumerate(flags)]
    registry = recorded(rows)
    for wanted in (1, True, 1.0, "1"):
        count = sum(1 for flag in flags if type(flag) is type(wanted))
        if count:
            check_aggregate_reconciles(
                registry, {"v": count}, "t", "v", op="count", where={"f": wanted}
            )
        else:
            assert aggregate_fails(registry, 0, op="count", where={"f": wanted}).code == (
                "empty_filter"
            )


any_float = st.floats(allow_nan=False, allow_infinity=False)
any_number = st.one_of(any_float, st.integers(-(10**40), 10**40), numbers)


@SETTINGS
@given(values=st.lists(any_number, max_size=30), data=st.data())
def test_fast_exact_sums_equal_fraction_arithmetic(values: list[Any], data: st.DataObject) -> None:
    """exact_sum and exact_dot agree with Fraction arithmetic, whichever fast path they take."""
    weights = data.draw(
        st.lists(
            st.one_of(st.integers(0, 2**30), any_float.map(abs)),
            min_size=len(values),
            max_size=len(values),
        )
    )
    assert exact_sum(values) == sum(map(Fraction, values), Fraction(0))
    expected = sum((Fraction(v) * Fraction(w) for v, w in zip(values, weights)), Fraction(0))
    assert exact_dot(values, weights) == expected
    small = [w % 1000 for w in weights if isinstance(w, int)]
    floats = [float(v) for v in values if isinstance(v, float)][: len(small)]
    small = small[: len(floats)]
    assert exact_dot(floats, small) == sum(
        (Fraction(v) * w for v, w in zip(floats, small)), Fraction(0)
    )


# -- comparison ------------------------------------------------------------------------------


def delta_oracle(kind: str, left: Any, right: Any) -> Fraction | None:
    lhs, rhs = Fraction(left), Fraction(right)
    if kind == "abs":
        return lhs - rhs
    if kind == "pp":
        return (lhs - rhs) * 100
    if rhs == 0:
        return None
    return (lhs - rhs) / rhs * 100 if kind == "pct" else lhs / rhs


@st.composite
def comparisons(draw: st.DrawFn) -> tuple[dict[str, Any], str, str, str, str, str]:
    names = draw(st.lists(st.sampled_from("abcdefghij"), min_size=3, max_size=8, unique=True))
    scores = {name: draw(numbers) for name in names}
    a, b, other = names[0], names[1], names[2]
    kind = draw(st.sampled_from(KINDS))
    direction = draw(st.sampled_from(DIRECTIONS))
    return scores, a, b, other, kind, direction


def ordered(scores: dict[str, Any], a: str, b: str, direction: str) -> tuple[Any, Any]:
    return (scores[a], scores[b]) if direction == "a_minus_b" else (scores[b], scores[a])


def compare(scores: dict[str, Any], output: dict[str, Any], kind: str, direction: str) -> None:
    registry = FactRegistry()
    registry.record_ranking("r", scores, tool="db.q")
    check_comparison(registry, output, "r", "a", "b", "d", kind=kind, direction=direction)


def compare_fails(
    scores: dict[str, Any], output: dict[str, Any], kind: str, direction: str
) -> UnsupportedClaim:
    with pytest.raises(UnsupportedClaim) as info:
        compare(scores, output, kind, direction)
    return info.value


@SETTINGS
@given(case=comparisons())
def test_computed_delta_always_passes(case: tuple[Any, ...]) -> None:
    """The exactly computed delta passes for every kind and direction with a non-zero base."""
    scores, a, b, _, kind, direction = case
    exact = delta_oracle(kind, *ordered(scores, a, b, direction))
    if exact is None:
        error = compare_fails(scores, {"a": a, "b": b, "d": 0}, kind, direction)
        assert error.code == "zero_base"
        return
    compare(scores, {"a": a, "b": b, "d": from_fraction(exact)}, kind, direction)


@SETTINGS
@given(case=comparisons(), sign=st.sampled_from([-1, 1]))
def test_delta_beyond_tolerance_always_fails(case: tuple[Any, ...], sign: int) -> None:
    """A delta moved by at least 1 (and at least its own size) fails."""
    scores, a, b, _, kind, direction = case
    exact = delta_oracle(kind, *ordered(scores, a, b, direction))
    assume(exact is not None)
    assert exact is not None
    claim = from_fraction(exact + sign * max(1, abs(exact)))
    compare_fails(scores, {"a": a, "b": b, "d": claim}, kind, direction)


@SETTINGS
@given(case=comparisons())
def test_delta_in_the_wrong_direction_always_fails(case: tuple[Any, ...]) -> None:
    """The delta computed in the other direction fails as wrong_direction whenever it differs."""
    scores, a, b, _, kind, direction = case
    left, right = ordered(scores, a, b, direction)
    exact = delta_oracle(kind, left, right)
    reversed_delta = delta_oracle(kind, right, left)
    assume(exact is not None and reversed_delta is not None)
    assert exact is not None
    assert reversed_delta is not None
    claim = from_fraction(reversed_delta)
    assume(not matches(claim, exact))
    error = compare_fails(scores, {"a": a, "b": b, "d": claim}, kind, direction)
    assert error.code == "wrong_direction"


@SETTINGS
@given(case=comparisons())
def test_swapped_entities_always_fail(case: tuple[Any, ...]) -> None:
    """The right delta with a and b exchanged in the output fails whenever the delta changes."""
    scores, a, b, _, kind, direction = case
    exact = delta_oracle(kind, *ordered(scores, a, b, direction))
    swapped = delta_oracle(kind, *ordered(scores, b, a, direction))
    assume(exact is not None and swapped is not None)
    assert exact is not None
    assert swapped is not None
    claim = from_fraction(exact)
    assume(not matches(claim, swapped))
    error = compare_fails(scores, {"a": b, "b": a, "d": claim}, kind, direction)
    assert error.code == "wrong_direction"


@SETTINGS
@given(case=comparisons())
def test_delta_against_another_entity_always_fails(case: tuple[Any, ...]) -> None:
    """Replacing b by another entity whose delta differs fails the claim computed for b."""
    scores, a, b, other, kind, direction = case
    assume(scores[other] != scores[b])
    exact = delta_oracle(kind, *ordered(scores, a, b, direction))
    elsewhere = delta_oracle(kind, *ordered(scores, a, other, direction))
    assume(exact is not None and elsewhere is not None)
    assert exact is not None
    # With pct, two different bases can give the same delta (0 vs 1 and 0 vs -1 are both -100%):
    # then the claim is genuinely supported for the other entity and must pass.
    assume(elsewhere != exact)
    compare_fails(scores, {"a": a, "b": other, "d": from_fraction(exact)}, kind, direction)


@SETTINGS
@given(case=comparisons(), stranger=st.sampled_from(["zz", "A", "a ", 1, True]))
def test_unrecorded_entity_always_fails(case: tuple[Any, ...], stranger: Any) -> None:
    """An entity that is not in the fact fails as unknown_entity, whatever the delta."""
    scores, a, b, _, kind, direction = case
    error = compare_fails(scores, {"a": a, "b": stranger, "d": 0}, kind, direction)
    assert (error.code, error.field) == ("unknown_entity", "b")
