"""aggregate_reconciles: a stated aggregate must equal the one recomputed over the Table."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

import pytest

from groundplane_otel.boundary import boundary
from groundplane_otel.checks.aggregate_reconciles import (
    aggregate_reconciles,
    check_aggregate_reconciles,
)
from groundplane_otel.errors import MISSING, UnregisteredFact, UnsupportedClaim
from groundplane_otel.registry import FactRegistry

PROVENANCE = "provenance=warehouse.query(table='campaign_daily', window='7d')"
ROWS: list[dict[str, Any]] = [
    {"id": "north", "region": "EU", "spend": 4000, "rating": 4, "impressions": 1000, "on": 1},
    {"id": "harbour", "region": "EU", "spend": 5000, "rating": 2, "impressions": 3000, "on": True},
    {"id": "delta", "region": "US", "spend": 3400, "rating": 5, "impressions": 100, "on": 1.0},
]


@pytest.fixture
def reg() -> FactRegistry:
    registry = FactRegistry()
    registry.record_table(
        "campaigns",
        ROWS,
        key="id",
        tool="warehouse.query",
        args={"table": "campaign_daily", "window": "7d"},
    )
    registry.record_table(
        "top_campaigns",
        ROWS,
        key="id",
        tool="warehouse.top_k",
        args={"k": 3},
        exhaustive=False,
    )
    return registry


def fails(reg: FactRegistry, output: Mapping[str, Any], **kwargs: Any) -> UnsupportedClaim:
    with pytest.raises(UnsupportedClaim) as info:
        check_aggregate_reconciles(reg, output, **kwargs)
    return info.value


def record(rows: list[dict[str, Any]], **kwargs: Any) -> FactRegistry:
    registry = FactRegistry()
    registry.record_table("t", rows, key="id", tool="db.q", **kwargs)
    return registry


# -- the correct claim passes ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("op", "column", "claim"),
    [
        ("sum", "spend", 12400),
        ("count", None, 3),
        ("count", "spend", 3),
        ("mean", "rating", 11 / 3),
        ("min", "spend", 3400),
        ("max", "spend", 5000),
        ("median", "spend", 4000),
    ],
)
def test_correct_aggregate_passes_for_every_op(
    reg: FactRegistry, op: str, column: str | None, claim: Any
) -> None:
    """Each op recomputed over the whole table accepts the exact value (a mean as nearest float)."""
    check_aggregate_reconciles(reg, {"v": claim}, "campaigns", "v", column=column, op=op)


def test_builder_returns_named_check_with_reference_name(reg: FactRegistry) -> None:
    """The builder's NamedCheck is named like the reference and carries family and facts."""
    check = aggregate_reconciles(fact="campaigns", field="total", column="spend")
    assert check.name == "aggregate_reconciles(fact='campaigns', field='total')"
    assert check.family == "aggregate_reconciles"
    assert check.facts == ("campaigns",)
    assert hash(check) == hash(check)
    check(reg, {"total": 12400})


def test_where_mapping_with_unhashable_value_still_builds_hashable_check() -> None:
    """A where value that is a list does not make the NamedCheck unhashable."""
    check = aggregate_reconciles("t", "n", op="count", where={"tags": ["a"]})
    assert {check: 1}[check] == 1


def test_positional_arguments_follow_the_seed_order(reg: FactRegistry) -> None:
    """fact, field, column, op, where, weight_column, tolerance, rel_tolerance in seed order."""
    check = aggregate_reconciles("campaigns", "m", "rating", "mean", None, "impressions", 0, None)
    check(reg, {"m": 10500 / 4100})


# -- a total that does not sum -------------------------------------------------------------------


def test_total_that_does_not_sum_gives_computed_value_and_offset(reg: FactRegistry) -> None:
    """A wrong sum names the computed total, the rows it covers and the signed offset."""
    claim = fails(reg, {"total": 12890}, fact="campaigns", field="total", column="spend")
    assert str(claim) == (
        "unsupported claim in field 'total': model said 12890, registered facts support 12400 | "
        f"fact='campaigns' | {PROVENANCE} | "
        "computed sum of 'spend' over 3 rows is 12400; the claim is off by +490"
    )
    assert claim.code == "value_mismatch"
    assert (claim.field, claim.claimed, claim.supported) == ("total", 12890, 12400)


@pytest.mark.parametrize(
    ("op", "claim", "supported", "offset"),
    [
        ("min", 4000, 3400, "+600"),
        ("max", 4000, 5000, "-1000"),
        ("median", 4200, 4000, "+200"),
        ("mean", 4000, 12400 / 3, "-133.33333333333334"),
    ],
)
def test_wrong_min_max_median_mean_report_offset(
    reg: FactRegistry, op: str, claim: int, supported: float, offset: str
) -> None:
    """Every op's mismatch says what was computed and by how much the claim is off."""
    error = fails(reg, {"v": claim}, fact="campaigns", field="v", column="spend", op=op)
    assert error.code == "value_mismatch"
    assert error.supported == supported
    assert error.reason.endswith(f"the claim is off by {offset}")
    assert f"computed {op} of 'spend' over 3 rows is" in error.reason


def test_count_off_by_one_names_the_filter(reg: FactRegistry) -> None:
    """A wrong count reports the computed count and the filter it was taken under."""
    error = fails(reg, {"n": 4}, fact="campaigns", field="n", op="count", where={"region": "EU"})
    assert error.code == "value_mismatch"
    assert error.supported == 2
    assert error.reason == "computed count of rows where region='EU' is 2; the claim is off by +2"


# -- count must be an integer ------------------------------------------------------------------


@pytest.mark.parametrize("claim", [3.0, True, "3", None])
def test_count_claim_that_is_not_an_int_fails_not_an_integer(reg: FactRegistry, claim: Any) -> None:
    """A count is only ever an int: 3.0, True and "3" are refused even when they equal it."""
    error = fails(reg, {"n": claim}, fact="campaigns", field="n", op="count")
    assert error.code == "not_an_integer"
    assert error.supported == 3


def test_count_as_float_message(reg: FactRegistry) -> None:
    """The not-an-integer message names the claim's type and the computed count."""
    error = fails(reg, {"n": 2.0}, fact="campaigns", field="n", op="count", where={"region": "EU"})
    assert error.reason == (
        "a count must be an int, got float 2.0; computed count of rows where region='EU' is 2"
    )


@pytest.mark.parametrize("claim", ["12400", True, None, float("nan"), float("inf"), [12400]])
def test_non_number_claim_fails_not_a_number(reg: FactRegistry, claim: Any) -> None:
    """Numeric strings, bools, None, NaN and inf never reconcile with a sum."""
    error = fails(reg, {"t": claim}, fact="campaigns", field="t", column="spend")
    assert error.code == "not_a_number"
    assert error.supported == 12400
    assert "the claim is not a number" in error.reason


def test_numeric_string_claim_message(reg: FactRegistry) -> None:
    """A numeric-looking string is named as a str next to the computed value."""
    error = fails(reg, {"t": "12400"}, fact="campaigns", field="t", column="spend")
    assert error.reason == (
        "the claim is not a number (str); computed sum of 'spend' over 3 rows is 12400"
    )


# -- truncated tables --------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["sum", "count", "mean", "min", "max", "median"])
def test_aggregate_over_truncated_table_fails_for_every_op(reg: FactRegistry, op: str) -> None:
    """A non-exhaustive table refuses every op, even when the claim is right over the rows held."""
    column = None if op == "count" else "spend"
    right = {"sum": 12400, "count": 3, "mean": 12400 / 3, "min": 3400, "max": 5000}
    claim = right.get(op, 4000)
    error = fails(reg, {"v": claim}, fact="top_campaigns", field="v", column=column, op=op)
    assert error.code == "not_exhaustive"
    assert error.supported == "an aggregate over an exhaustive table"
    assert "not exhaustive" in error.reason
    assert "warehouse.top_k" in error.reason


def test_truncated_table_message(reg: FactRegistry) -> None:
    """The not-exhaustive message names the fact, the tool that truncated it and the op."""
    error = fails(reg, {"v": 12400}, fact="top_campaigns", field="v", column="spend")
    assert str(error) == (
        "unsupported claim in field 'v': model said 12400, registered facts support 'an "
        "aggregate over an exhaustive table' | "
        "fact='top_campaigns' | provenance=warehouse.top_k(k=3) | fact 'top_campaigns' is not "
        "exhaustive: warehouse.top_k returned a truncated result set, so no sum over it can be "
        "verified"
    )


# -- filters -----------------------------------------------------------------------------------


def test_filtered_sum_passes(reg: FactRegistry) -> None:
    """where= selects the rows holding the required value."""
    check_aggregate_reconciles(reg, {"t": 9000}, "campaigns", "t", "spend", where={"region": "EU"})


def test_filtered_aggregate_over_whole_table_is_wrong_subset(reg: FactRegistry) -> None:
    """A filtered total quoted over the whole table is diagnosed as the wrong subset."""
    error = fails(
        reg, {"t": 12400}, fact="campaigns", field="t", column="spend", where={"region": "EU"}
    )
    assert str(error) == (
        "unsupported claim in field 't': model said 12400, registered facts support 9000 | "
        f"fact='campaigns' | {PROVENANCE} | computed sum of 'spend' over 2 rows where "
        "region='EU' is 9000; the claim is off by +3400; the claim equals the sum over the "
        "whole table (3 rows: 12400): taken over the wrong subset"
    )
    assert error.code == "wrong_subset"


def test_filtered_aggregate_over_complement_is_wrong_subset(reg: FactRegistry) -> None:
    """A filtered total taken over the rows the filter excludes is the wrong subset too."""
    error = fails(
        reg, {"t": 3400}, fact="campaigns", field="t", column="spend", where={"region": "EU"}
    )
    assert error.code == "wrong_subset"
    assert error.reason.endswith(
        "the claim equals the sum over the rows not matching region='EU' (1 row: 3400): "
        "taken over the wrong subset"
    )


def test_count_over_whole_table_is_wrong_subset(reg: FactRegistry) -> None:
    """A filtered count quoted as the table's row count is the wrong subset."""
    error = fails(reg, {"n": 3}, fact="campaigns", field="n", op="count", where={"region": "US"})
    assert error.code == "wrong_subset"


def test_empty_filter_fails(reg: FactRegistry) -> None:
    """A filter that selects nothing makes any aggregate unverifiable, even a count of 0."""
    error = fails(reg, {"n": 0}, fact="campaigns", field="n", op="count", where={"region": "APAC"})
    assert error.code == "empty_filter"
    assert error.supported == "an aggregate over a non-empty selection"
    assert error.reason == (
        "no row of fact 'campaigns' (3 rows) matches where region='APAC': an aggregate over an "
        "empty selection is not verifiable"
    )


def test_where_true_does_not_select_a_row_holding_1(reg: FactRegistry) -> None:
    """Stricter than the reference: where={'on': True} selects only the row holding True."""
    check_aggregate_reconciles(reg, {"t": 5000}, "campaigns", "t", "spend", where={"on": True})
    check_aggregate_reconciles(reg, {"n": 1}, "campaigns", "n", op="count", where={"on": 1})


def test_where_float_does_not_select_an_int(reg: FactRegistry) -> None:
    """where={'on': 1.0} selects the 1.0 row only, never the 1 or True rows."""
    check_aggregate_reconciles(reg, {"t": 3400}, "campaigns", "t", "spend", where={"on": 1.0})


def test_empty_strict_filter_points_at_the_loosely_equal_value() -> None:
    """When a type-strict filter selects nothing, the reason names the value == would accept."""
    registry = record([{"id": "a", "on": 1, "x": 5}])
    error = fails(registry, {"t": 5}, fact="t", field="t", column="x", where={"on": True})
    assert error.code == "empty_filter"
    assert error.reason.endswith(
        "(row 'a' holds 1 (int) in 'on', which the type-strict filter does not equate with "
        "True (bool))"
    )


def test_loose_hint_skips_cells_the_filter_does_match() -> None:
    """With two filter columns, the hint names the loosely equal cell, not the matching one."""
    registry = record([{"id": "a", "region": "EU", "on": 1, "x": 5}])
    error = fails(
        registry, {"t": 5}, fact="t", field="t", column="x", where={"region": "EU", "on": True}
    )
    assert "holds 1 (int) in 'on'" in error.reason


def test_where_string_does_not_select_an_int_key() -> None:
    """where={'year': '2024'} does not select a row holding the int 2024."""
    registry = record([{"id": 1, "year": 2024, "x": 5}, {"id": 2, "year": "2024", "x": 7}])
    check_aggregate_reconciles(registry, {"t": 7}, "t", "t", "x", where={"year": "2024"})


def test_row_lacking_a_where_column_is_not_selected() -> None:
    """A row without the filter's column does not hold the required value."""
    registry = record([{"id": 1, "g": "a", "x": 5}, {"id": 2, "x": 7}])
    check_aggregate_reconciles(registry, {"t": 5}, "t", "t", "x", where={"g": "a"})


def test_where_with_several_columns_requires_all(reg: FactRegistry) -> None:
    """Every (column, value) pair of where= must hold for a row to be selected."""
    check_aggregate_reconciles(
        reg, {"t": 5000}, "campaigns", "t", "spend", where={"region": "EU", "rating": 2}
    )


def test_where_mapping_is_copied_when_built(reg: FactRegistry) -> None:
    """Mutating the mapping after building does not change what the check selects."""
    where = {"region": "EU"}
    check = aggregate_reconciles("campaigns", "t", "spend", where=where)
    where["region"] = "US"
    check(reg, {"t": 9000})


def test_callable_where_selects_rows(reg: FactRegistry) -> None:
    """A callable predicate(row) -> bool is accepted and named in the reason."""

    def big(row: Mapping[str, Any]) -> bool:
        return bool(row["spend"] > 3500)

    check_aggregate_reconciles(reg, {"t": 9000}, "campaigns", "t", "spend", where=big)
    error = fails(reg, {"t": 9001}, fact="campaigns", field="t", column="spend", where=big)
    assert error.reason.startswith("computed sum of 'spend' over 2 rows where big(row) is 9000")


def test_callable_where_gets_a_read_only_row(reg: FactRegistry) -> None:
    """A predicate cannot change recorded evidence: the row it sees is read-only."""

    def meddle(row: Mapping[str, Any]) -> bool:
        row["spend"] = 0  # type: ignore[index]
        return True

    with pytest.raises(TypeError):
        check_aggregate_reconciles(reg, {"t": 0}, "campaigns", "t", "spend", where=meddle)
    check_aggregate_reconciles(reg, {"t": 12400}, "campaigns", "t", "spend")


def test_callable_where_must_return_a_bool(reg: FactRegistry) -> None:
    """A predicate returning 1 or a string is a developer error naming the predicate and row."""

    def sloppy(row: Mapping[str, Any]) -> Any:
        return 1

    with pytest.raises(TypeError, match=r"where predicate sloppy must return a bool, got 1 "):
        check_aggregate_reconciles(reg, {"t": 0}, "campaigns", "t", "spend", where=sloppy)


# -- weighted means ------------------------------------------------------------------------------


def test_weighted_mean_passes(reg: FactRegistry) -> None:
    """A mean weighted by another column is computed exactly: sum(w*x) / sum(w)."""
    check_aggregate_reconciles(
        reg, {"m": 10500 / 4100}, "campaigns", "m", "rating", "mean", weight_column="impressions"
    )


def test_unweighted_mean_presented_as_weighted_is_diagnosed(reg: FactRegistry) -> None:
    """A claim equal to the plain mean of a weighted-mean check says so."""
    error = fails(
        reg,
        {"m": 11 / 3},
        fact="campaigns",
        field="m",
        column="rating",
        op="mean",
        weight_column="impressions",
    )
    assert str(error) == (
        "unsupported claim in field 'm': model said 3.6666666666666665, registered facts support "
        f"2.5609756097560976 | fact='campaigns' | {PROVENANCE} | computed mean of 'rating' "
        "weighted by 'impressions' over 3 rows is 2.5609756097560976; the claim is off by "
        "+1.105691056910569; the claim equals the unweighted mean (3.6666666666666665): an "
        "unweighted mean given as one weighted by 'impressions'"
    )
    assert error.code == "unweighted_mean"


def test_weighted_mean_over_wrong_subset_is_diagnosed(reg: FactRegistry) -> None:
    """A filtered weighted mean quoted over the whole table is the wrong subset."""
    error = fails(
        reg,
        {"m": 10500 / 4100},
        fact="campaigns",
        field="m",
        column="rating",
        op="mean",
        where={"region": "EU"},
        weight_column="impressions",
    )
    assert error.code == "wrong_subset"
    assert error.supported == 10000 / 4000


@pytest.mark.parametrize("weight", ["3", True, None])
def test_non_number_weight_is_a_data_error(weight: Any) -> None:
    """A weight that is not a number is a ValueError naming fact, column and row."""
    registry = record([{"id": "a", "x": 1, "w": 1}, {"id": "b", "x": 2, "w": weight}])
    with pytest.raises(ValueError, match=r"fact 't': column 'w', row 'b': expected a finite"):
        check_aggregate_reconciles(registry, {"m": 1}, "t", "m", "x", "mean", weight_column="w")


def test_negative_weight_is_a_data_error() -> None:
    """A negative weight is refused: a weighted mean's weights are >= 0."""
    registry = record([{"id": "a", "x": 1, "w": 2}, {"id": "b", "x": 2, "w": -1}])
    with pytest.raises(ValueError, match=r"column 'w', row 'b': a weight must be >= 0, got -1"):
        check_aggregate_reconciles(registry, {"m": 0}, "t", "m", "x", "mean", weight_column="w")


def test_weights_summing_to_zero_are_a_data_error() -> None:
    """All-zero weights leave the weighted mean undefined: a ValueError, not a model failure."""
    registry = record([{"id": "a", "x": 1, "w": 0}, {"id": "b", "x": 2, "w": 0.0}])
    with pytest.raises(ValueError, match=r"weights in column 'w' sum to 0 over the 2 rows"):
        check_aggregate_reconciles(registry, {"m": 1}, "t", "m", "x", "mean", weight_column="w")


# -- partial columns and bad cells ---------------------------------------------------------------


def test_selected_row_without_the_column_is_partial_column() -> None:
    """A selected row lacking the column makes the aggregate unverifiable (model-facing claim)."""
    registry = record([{"id": "a", "x": 1}, {"id": "b"}, {"id": "c"}])
    error = fails(registry, {"t": 1}, fact="t", field="t", column="x")
    assert error.code == "partial_column"
    assert error.supported == "an aggregate over a complete column 'x'"
    assert error.reason == (
        "column 'x' is missing in 2 of 3 rows selected (first 'b'): an aggregate over a partial "
        "column is not verifiable"
    )


def test_partial_column_outside_the_filter_is_fine() -> None:
    """Only selected rows must hold the column."""
    registry = record([{"id": "a", "g": 1, "x": 1}, {"id": "b", "g": 2}])
    check_aggregate_reconciles(registry, {"t": 1}, "t", "t", "x", where={"g": 1})


def test_selected_row_without_the_weight_column_is_partial_column() -> None:
    """The weight column must be complete over the selection too."""
    registry = record([{"id": "a", "x": 1, "w": 1}, {"id": "b", "x": 2}])
    error = fails(registry, {"m": 1}, fact="t", field="m", column="x", op="mean", weight_column="w")
    assert error.code == "partial_column"
    assert "column 'w' is missing in 1 of 2 rows selected" in error.reason


def test_count_with_a_column_requires_it_in_every_selected_row() -> None:
    """count with column= counts rows holding it, so a partial column is refused too."""
    registry = record([{"id": "a", "x": 1}, {"id": "b"}])
    assert fails(registry, {"n": 1}, fact="t", field="n", op="count", column="x").code == (
        "partial_column"
    )


@pytest.mark.parametrize("cell", [True, "4000", None, [1]])
def test_cell_that_is_not_a_number_is_a_data_error_naming_fact_column_row(cell: Any) -> None:
    """Bools, strings and None in an aggregated column are a ValueError, never a model failure."""
    registry = record([{"id": "a", "x": 1}, {"id": "b", "x": cell}])
    with pytest.raises(ValueError, match=r"^fact 't': column 'x', row 'b': expected a finite int"):
        check_aggregate_reconciles(registry, {"t": 1}, "t", "t", "x")


def test_count_does_not_read_cells() -> None:
    """count with column= only needs the column present; its values may be anything."""
    registry = record([{"id": "a", "x": "n/a"}, {"id": "b", "x": None}])
    check_aggregate_reconciles(registry, {"n": 2}, "t", "n", "x", "count")


def test_bad_cell_outside_the_filter_is_not_read() -> None:
    """Cells of unselected rows are not validated (nor used by a wrong-subset diagnosis)."""
    registry = record([{"id": "a", "g": 1, "x": 1}, {"id": "b", "g": 2, "x": "bad"}])
    check_aggregate_reconciles(registry, {"t": 1}, "t", "t", "x", where={"g": 1})
    assert fails(registry, {"t": 2}, fact="t", field="t", column="x", where={"g": 1}).code == (
        "value_mismatch"
    )


# -- exact arithmetic -----------------------------------------------------------------------------


def test_median_of_two_integers_is_an_int() -> None:
    """median([1, 3]) is the int 2, and 2 reconciles exactly."""
    registry = record([{"id": "a", "x": 1}, {"id": "b", "x": 3}])
    error = fails(registry, {"m": 3}, fact="t", field="m", column="x", op="median")
    assert error.supported == 2
    assert type(error.supported) is int
    check_aggregate_reconciles(registry, {"m": 2}, "t", "m", "x", "median")


def test_median_of_even_count_averages_the_middle_pair() -> None:
    """median of [1, 2, 10, 40] is 6, and a median of floats is exact in the decimals they
    print as (0.1 and 0.2: 0.15)."""
    registry = record([{"id": i, "x": x} for i, x in enumerate([40, 1, 10, 2])])
    check_aggregate_reconciles(registry, {"m": 6}, "t", "m", "x", "median")
    floats = record([{"id": i, "x": x} for i, x in enumerate([0.1, 0.2])])
    check_aggregate_reconciles(floats, {"m": 0.15}, "t", "m", "x", "median")


def test_large_integers_lose_nothing() -> None:
    """A sum of 10**30 and 1 is 10**30 + 1 exactly; the float 1e30 (10**30 as it prints) is off
    by one."""
    registry = record([{"id": "a", "x": 10**30}, {"id": "b", "x": 1}])
    check_aggregate_reconciles(registry, {"t": 10**30 + 1}, "t", "t", "x")
    error = fails(registry, {"t": 1e30}, fact="t", field="t", column="x")
    assert error.supported == 10**30 + 1
    assert error.reason.endswith("the claim is off by -1")
    assert fails(registry, {"t": 10**30}, fact="t", field="t", column="x").reason.endswith(
        "the claim is off by -1"
    )


def test_mean_of_large_integers_is_exact() -> None:
    """The mean of 10**30 + 1 and 10**30 + 3 is the int 10**30 + 2."""
    registry = record([{"id": "a", "x": 10**30 + 1}, {"id": "b", "x": 10**30 + 3}])
    check_aggregate_reconciles(registry, {"m": 10**30 + 2}, "t", "m", "x", "mean")


def test_float_sum_adds_the_decimals_the_cells_print_as() -> None:
    """0.1 + 0.2 is 0.3, as the cells print; the binary sum 0.30000000000000004 needs a
    tolerance."""
    registry = record([{"id": "a", "x": 0.1}, {"id": "b", "x": 0.2}])
    check_aggregate_reconciles(registry, {"t": 0.3}, "t", "t", "x")
    error = fails(registry, {"t": 0.30000000000000004}, fact="t", field="t", column="x")
    assert (error.code, error.supported) == ("value_mismatch", 0.3)
    assert error.reason.endswith(
        "computed sum of 'x' over 2 rows is 0.3; the claim is off by +4e-17"
    )
    check_aggregate_reconciles(registry, {"t": 0.30000000000000004}, "t", "t", "x", tolerance=1e-12)


def test_money_total_passes_and_a_cent_off_is_refused() -> None:
    """Two-decimal amounts add up to the total a person writes (491551.22, whose binary sum
    is 491551.22000000003); a cent off is refused with the exact offset."""
    amounts = [277775.77, 213775.45]
    registry = record([{"id": f"r{i}", "x": x} for i, x in enumerate(amounts)])
    assert sum(amounts) != 491551.22  # the binary sum is the neighbour float
    check_aggregate_reconciles(registry, {"t": 491551.22}, "t", "t", "x")
    error = fails(registry, {"t": 491551.23}, fact="t", field="t", column="x")
    assert error.reason == (
        "computed sum of 'x' over 2 rows is 491551.22; the claim is off by +0.01"
    )


def test_a_cent_tolerance_is_exactly_a_cent() -> None:
    """tolerance=0.01 reads as one cent: a claim a cent off passes, one 2 cents off does not
    (in binary, 0.29 against 0.3 is a hair more than 0.01 away)."""
    registry = record([{"id": "a", "x": 0.1}, {"id": "b", "x": 0.2}])
    for claim in (0.29, 0.31):
        check_aggregate_reconciles(registry, {"t": claim}, "t", "t", "x", tolerance=0.01)
    error = fails(registry, {"t": 0.32}, fact="t", field="t", column="x", tolerance=0.01)
    assert error.reason == "computed sum of 'x' over 2 rows is 0.3; the claim is off by +0.02"


def test_unrepresentable_result_is_a_clear_value_error() -> None:
    """A mean beyond the float range that is not an integer is a ValueError, not a crash."""
    registry = record([{"id": "a", "x": 10**400}, {"id": "b", "x": 10**400 + 1}])
    with pytest.raises(
        ValueError, match=r"^fact 't': mean of 'x' over 2 rows is about 1.000000e\+400, which is "
    ):
        check_aggregate_reconciles(registry, {"m": 1}, "t", "m", "x", "mean")


# -- tolerances ---------------------------------------------------------------------------------


def test_absolute_tolerance_accepts_within_and_refuses_beyond(reg: FactRegistry) -> None:
    """tolerance=500 accepts 12890 (off by 490) and refuses 12901."""
    check_aggregate_reconciles(reg, {"t": 12890}, "campaigns", "t", "spend", tolerance=500)
    error = fails(reg, {"t": 12901}, fact="campaigns", field="t", column="spend", tolerance=500)
    assert error.code == "value_mismatch"


def test_relative_tolerance(reg: FactRegistry) -> None:
    """rel_tolerance=0.05 accepts 5% drift; None means exact (not 1e-9)."""
    check_aggregate_reconciles(reg, {"t": 13000}, "campaigns", "t", "spend", rel_tolerance=0.05)
    assert fails(reg, {"t": 12400.000001}, fact="campaigns", field="t", column="spend").code == (
        "value_mismatch"
    )


def test_tolerance_applies_to_diagnoses(reg: FactRegistry) -> None:
    """A claim near the whole-table total is still diagnosed as the wrong subset."""
    error = fails(
        reg,
        {"t": 12401},
        fact="campaigns",
        field="t",
        column="spend",
        where={"region": "EU"},
        tolerance=5,
    )
    assert error.code == "wrong_subset"


# -- missing fields, developer errors -------------------------------------------------------------


def test_missing_field_fails_with_standard_claim(reg: FactRegistry) -> None:
    """An output without the declared field fails as field_missing."""
    error = fails(reg, {"other": 1}, fact="campaigns", field="total", column="spend")
    assert (error.code, error.claimed, error.supported) == ("field_missing", MISSING, "a value")


def test_present_none_is_a_claim_of_none(reg: FactRegistry) -> None:
    """A present None is a (non-number) claim, not a missing field."""
    assert fails(reg, {"t": None}, fact="campaigns", field="t", column="spend").code == (
        "not_a_number"
    )


def test_unregistered_fact_raises(reg: FactRegistry) -> None:
    """An unknown fact name is UnregisteredFact."""
    with pytest.raises(UnregisteredFact):
        check_aggregate_reconciles(reg, {"t": 1}, "nope", "t", "spend")


def test_fact_that_is_not_a_table_is_a_type_error() -> None:
    """A Ranking cannot back an aggregate: TypeError naming record_table()."""
    registry = FactRegistry()
    registry.record_ranking("r", {"a": 1})
    with pytest.raises(TypeError, match=r"record_table\(\)"):
        check_aggregate_reconciles(registry, {"t": 1}, "r", "t", "score")


@pytest.mark.parametrize(
    "kwargs",
    [
        {"column": "nope"},
        {"column": "rating", "op": "mean", "weight_column": "nope"},
        {"column": "spend", "where": {"nope": 1}},
    ],
)
def test_unknown_column_is_a_value_error_naming_fact(
    reg: FactRegistry, kwargs: dict[str, Any]
) -> None:
    """A column, weight column or where column the table lacks is a developer error."""
    with pytest.raises(ValueError, match=r"^fact 'campaigns': unknown column 'nope'; columns:"):
        check_aggregate_reconciles(reg, {"t": 1}, "campaigns", "t", **kwargs)


def test_check_does_not_mutate_recorded_evidence(reg: FactRegistry) -> None:
    """Running passing and failing checks leaves the stored table unchanged."""
    before = copy.deepcopy(reg.peek("campaigns").value.rows)
    check_aggregate_reconciles(reg, {"m": 4000}, "campaigns", "m", "spend", "median")
    fails(reg, {"m": 1}, fact="campaigns", field="m", column="spend", op="median")
    assert reg.peek("campaigns").value.rows == before


def test_report_mode_collects_aggregate_violations(reg: FactRegistry) -> None:
    """Inside a boundary, report() lists the failed aggregate check by name, JSON-safe."""
    checks = [
        aggregate_reconciles("campaigns", "total", "spend"),
        aggregate_reconciles("campaigns", "n", op="count"),
    ]
    with boundary(reg, facts=["campaigns"], checks=checks) as b:
        report = b.report({"total": 1, "n": 3})
    assert report.failed == ("aggregate_reconciles(fact='campaigns', field='total')",)
    assert report.passed == ("aggregate_reconciles(fact='campaigns', field='n')",)
    json.dumps(report.to_dict(), allow_nan=False)


# -- build-time validation ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"fact": ""}, TypeError, "aggregate_reconciles: fact must be a non-empty string, got ''"),
        ({"fact": 1}, TypeError, "fact must be a non-empty string, got 1"),
        ({"field": None}, TypeError, "field must be a non-empty string, got None"),
        ({"column": 3}, TypeError, "column must be a non-empty string or None, got 3"),
        ({"column": ""}, TypeError, "column must be a non-empty string or None, got ''"),
        (
            {"op": "avg"},
            ValueError,
            "op must be one of ['sum', 'count', 'mean', 'min', 'max', 'median'], got 'avg'",
        ),
        ({"op": "sum", "column": None}, ValueError, "op='sum' needs column="),
        ({"op": "median", "column": None}, ValueError, "op='median' needs column="),
        (
            {"weight_column": "w"},
            ValueError,
            "weight_column= applies to op='mean' only, got op='sum'",
        ),
        ({"op": "mean", "weight_column": 5}, TypeError, "weight_column must be a non-empty"),
        ({"where": {1: "a"}}, TypeError, "where keys must be non-empty column names, got 1"),
        ({"where": "region=EU"}, TypeError, "where must be None, a mapping column -> value"),
        ({"where": 3}, TypeError, "where must be None, a mapping column -> value"),
        ({"tolerance": -1}, ValueError, "tolerance must be a finite number >= 0, got -1"),
        ({"tolerance": True}, ValueError, "tolerance must be a finite number >= 0, got True"),
        ({"tolerance": "1"}, ValueError, "tolerance must be a finite number >= 0"),
        ({"tolerance": float("nan")}, ValueError, "tolerance must be a finite number >= 0"),
        ({"rel_tolerance": -0.1}, ValueError, "rel_tolerance must be None or a finite number"),
        ({"rel_tolerance": float("inf")}, ValueError, "rel_tolerance must be None or a finite"),
    ],
)
def test_builder_validates_every_argument_when_built(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    """Each bad argument fails when the check is built, naming the builder and the value."""
    arguments: dict[str, Any] = {"fact": "t", "field": "v", "column": "x", **kwargs}
    with pytest.raises(error) as info:
        aggregate_reconciles(**arguments)
    assert message in str(info.value)
    assert str(info.value).startswith("aggregate_reconciles: ")
    with pytest.raises(error):
        check_aggregate_reconciles(FactRegistry(), {}, **arguments)


def test_count_needs_no_column() -> None:
    """op='count' builds without column=."""
    assert aggregate_reconciles("t", "n", op="count").family == "aggregate_reconciles"


def test_callable_where_is_accepted_at_build() -> None:
    """A callable where= builds (it is validated as callable, not called)."""
    aggregate_reconciles("t", "v", "x", where=lambda row: True)


# -- memoised derivations stay correct ---------------------------------------------------------


def test_memo_keeps_type_strict_filters_apart(reg: FactRegistry) -> None:
    """Checks filtering on 1, True and 1.0 against one fact never share a cached selection."""
    for wanted, total in ((1, 4000), (True, 5000), (1.0, 3400), (1, 4000)):
        check_aggregate_reconciles(
            reg, {"t": total}, "campaigns", "t", "spend", where={"on": wanted}
        )


def test_ops_over_one_column_keep_their_own_results(reg: FactRegistry) -> None:
    """sum, mean and median over the same cached column each give their own value."""
    for _ in range(2):
        for op, value in (("sum", 12400), ("mean", 12400 / 3), ("median", 4000)):
            check_aggregate_reconciles(reg, {"v": value}, "campaigns", "v", "spend", op)


def test_callable_where_is_rerun_on_every_check(reg: FactRegistry) -> None:
    """A predicate is not assumed pure: a changed threshold changes the selection."""
    threshold = {"spend": 4500}

    def above(row: Mapping[str, Any]) -> bool:
        return bool(row["spend"] > threshold["spend"])

    check = aggregate_reconciles("campaigns", "t", "spend", where=above)
    check(reg, {"t": 5000})
    threshold["spend"] = 3500
    check(reg, {"t": 9000})


def test_unhashable_where_value_compares_structurally() -> None:
    """A list-valued filter selects rows holding an equal list, and not a tuple or [True]."""
    registry = record(
        [
            {"id": 1, "tags": ["a", 1], "x": 2},
            {"id": 2, "tags": ("a", 1), "x": 3},
            {"id": 3, "tags": ["a", True], "x": 5},
        ]
    )
    check_aggregate_reconciles(registry, {"t": 2}, "t", "t", "x", where={"tags": ["a", 1]})
