"""comparison: a claimed delta between two entities must equal the one computed in code."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any

import pytest

from groundplane_otel.boundary import boundary
from groundplane_otel.checks.comparison import check_comparison, comparison
from groundplane_otel.errors import MISSING, UnregisteredFact, UnsupportedClaim
from groundplane_otel.registry import FactRegistry

SPEND = {"north": 1200, "harbour": 1000, "delta": 750, "idle": 0}
SHARES: list[dict[str, Any]] = [
    {"id": "north", "share": 0.25, "note": "x"},
    {"id": "harbour", "share": 0.125, "note": "y"},
    {"id": "gap"},
    {"id": "odd", "share": "0.5"},
]
PROVENANCE = "provenance=warehouse.query(window='7d')"


@pytest.fixture
def reg() -> FactRegistry:
    registry = FactRegistry()
    registry.record_ranking(
        "spend", SPEND, key="spend", tool="warehouse.query", args={"window": "7d"}
    )
    registry.record_table("shares", SHARES, key="id", tool="warehouse.shares")
    registry.record_domain("regions", ["EU", "US"])
    return registry


def out(a: Any, b: Any, d: Any) -> dict[str, Any]:
    return {"a": a, "b": b, "d": d}


def run(reg: FactRegistry, output: Mapping[str, Any], fact: str = "spend", **kw: Any) -> None:
    check_comparison(reg, output, fact, "a", "b", "d", **kw)


def fails(
    reg: FactRegistry, output: Mapping[str, Any], fact: str = "spend", **kw: Any
) -> UnsupportedClaim:
    with pytest.raises(UnsupportedClaim) as info:
        run(reg, output, fact, **kw)
    return info.value


# -- the correct delta passes -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "direction", "delta"),
    [
        ("abs", "a_minus_b", 200),
        ("abs", "b_minus_a", -200),
        ("pct", "a_minus_b", 20),
        ("pct", "b_minus_a", -16.666666666666668),
        ("ratio", "a_minus_b", 1.2),
        ("ratio", "b_minus_a", 0.8333333333333334),
        ("pp", "a_minus_b", 20000),
        ("pp", "b_minus_a", -20000),
    ],
)
def test_correct_delta_passes_for_every_kind_and_direction(
    reg: FactRegistry, kind: str, direction: str, delta: float
) -> None:
    """abs L-R, pct (L-R)/R*100, ratio L/R, pp (L-R)*100, with L, R in direction order."""
    run(reg, out("north", "harbour", delta), kind=kind, direction=direction)


@pytest.mark.parametrize(
    ("kind", "delta"), [("abs", 0.125), ("pct", 100), ("ratio", 2), ("pp", 12.5)]
)
def test_table_column_backs_a_comparison(reg: FactRegistry, kind: str, delta: float) -> None:
    """A Table row is found by key and its column= value compared."""
    run(reg, out("north", "harbour", delta), "shares", column="share", kind=kind)


def test_builder_returns_named_check_with_reference_name(reg: FactRegistry) -> None:
    """The NamedCheck is named comparison(fact=..., delta_field=...) and carries family/facts."""
    check = comparison(fact="spend", a_field="a", b_field="b", delta_field="d")
    assert check.name == "comparison(fact='spend', delta_field='d')"
    assert check.family == "comparison"
    assert check.facts == ("spend",)
    assert {check: 1}[check] == 1
    check(reg, out("north", "harbour", 200))


def test_positional_arguments_follow_the_seed_order(reg: FactRegistry) -> None:
    """fact, a_field, b_field, delta_field, column, kind, direction, tolerance, rel_tolerance."""
    comparison("spend", "a", "b", "d", None, "pct", "b_minus_a", 0, 0.01)(
        reg, out("north", "harbour", -16.67)
    )


# -- the mismatch and the convention the claim does match --------------------------------------


def test_wrong_delta_names_computed_value_and_offset(reg: FactRegistry) -> None:
    """A delta matching no convention reports the formula, both values and the offset."""
    error = fails(reg, out("north", "harbour", 250))
    assert str(error) == (
        "unsupported claim in field 'd': model said 250, registered facts support 200 | "
        f"fact='spend' | {PROVENANCE} | computed abs 'north' - 'harbour' on 'spend' is 200 with "
        "'north' at 1200 and 'harbour' at 1000; the claim is off by +50"
    )
    assert error.code == "value_mismatch"
    assert (error.field, error.claimed, error.supported) == ("d", 250, 200)


def test_wrong_sign_matches_the_other_direction(reg: FactRegistry) -> None:
    """An abs delta with the sign flipped is diagnosed as the other direction."""
    error = fails(reg, out("north", "harbour", -200))
    assert str(error) == (
        "unsupported claim in field 'd': model said -200, registered facts support 200 | "
        f"fact='spend' | {PROVENANCE} | computed abs 'north' - 'harbour' on 'spend' is 200 with "
        "'north' at 1200 and 'harbour' at 1000; the claim is off by -400; the claim matches the "
        "delta in the other direction (b_minus_a): the sign is flipped, or 'north' and "
        "'harbour' are swapped"
    )
    assert error.code == "wrong_direction"


def test_claim_in_a_minus_b_under_b_minus_a_names_a_minus_b(reg: FactRegistry) -> None:
    """With direction='b_minus_a', a claim computed a minus b names a_minus_b as its match."""
    error = fails(reg, out("north", "harbour", 200), direction="b_minus_a")
    assert error.code == "wrong_direction"
    assert "the claim matches the delta in the other direction (a_minus_b)" in error.reason


def test_entities_swapped_is_diagnosed(reg: FactRegistry) -> None:
    """'north beat harbour by 20%' written with a and b exchanged matches the reversed delta."""
    error = fails(reg, out("harbour", "north", 20), kind="pct")
    assert error.code == "wrong_direction"
    assert error.supported == -16.666666666666668
    assert error.reason.endswith(
        "the claim matches the delta in the other direction (b_minus_a): 'north' measured "
        "against 'harbour': the two entities are swapped"
    )


def test_pct_with_flipped_sign_keeps_the_base(reg: FactRegistry) -> None:
    """-20% for a +20% change (same base) is a sign error, distinct from swapped entities."""
    error = fails(reg, out("north", "harbour", -20), kind="pct")
    assert error.code == "wrong_direction"
    assert error.reason.endswith(
        "the claim is the pct with its sign flipped (the base 'harbour' is right)"
    )


def test_percent_where_percentage_points_were_meant(reg: FactRegistry) -> None:
    """A pct change quoted for a pp check says 'matches pct, not pp'."""
    error = fails(reg, out("north", "harbour", 100), "shares", column="share", kind="pp")
    assert error.code == "wrong_kind"
    assert error.supported == 12.5
    assert error.reason.endswith(
        "the claim matches pct, not pp: it is the percent change given as percentage points"
    )


def test_percentage_points_where_percent_was_meant(reg: FactRegistry) -> None:
    """Percentage points quoted for a pct check say 'matches pp, not pct'."""
    error = fails(reg, out("north", "harbour", 12.5), "shares", column="share", kind="pct")
    assert error.code == "wrong_kind"
    assert "the claim matches pp, not pct" in error.reason


def test_ratio_quoted_as_a_difference(reg: FactRegistry) -> None:
    """1.2 for an abs delta of 200 is the ratio given as a difference."""
    error = fails(reg, out("north", "harbour", 1.2))
    assert error.code == "wrong_kind"
    assert error.reason.endswith(
        "the claim matches ratio, not abs: it is the ratio given as a difference"
    )


def test_difference_quoted_as_a_ratio(reg: FactRegistry) -> None:
    """200 for a ratio of 1.2 is the difference given as a ratio."""
    error = fails(reg, out("north", "harbour", 200), kind="ratio")
    assert error.code == "wrong_kind"
    assert "the claim matches abs, not ratio: it is the difference given as a ratio" in (
        error.reason
    )


def test_other_kind_in_the_other_direction(reg: FactRegistry) -> None:
    """A reversed ratio quoted for a pct check names both the kind and the direction."""
    error = fails(reg, out("north", "harbour", 0.8333333333333334), kind="pct")
    assert error.code == "wrong_kind"
    assert error.reason.endswith(
        "the claim matches ratio in the other direction (b_minus_a), not pct: it is the ratio "
        "given as a percent change"
    )


def test_reversed_direction_is_tried_before_other_kinds() -> None:
    """A claim fitting both the reversed delta and another kind gets the direction diagnosis."""
    registry = FactRegistry()
    registry.record_ranking("r", {"x": 0.5, "y": 1})
    # abs x - y = -0.5; reversed abs y - x = 0.5; ratio x / y = 0.5 as well.
    error = fails(registry, out("x", "y", 0.5), "r")
    assert error.code == "wrong_direction"


def test_other_kinds_are_tried_before_other_kinds_reversed() -> None:
    """A claim fitting the ratio both ways is reported as the ratio in the stated direction."""
    registry = FactRegistry()
    registry.record_ranking("r", {"x": 2, "y": -2})
    # ratio x / y = -1 and reversed ratio y / x = -1.
    error = fails(registry, out("x", "y", -1), "r")
    assert error.code == "wrong_kind"
    assert error.reason.endswith(
        "the claim matches ratio, not abs: it is the ratio given as a difference"
    )


# -- entities --------------------------------------------------------------------------------


def test_same_entity_on_both_sides_fails(reg: FactRegistry) -> None:
    """Comparing an entity with itself is refused whatever the delta."""
    error = fails(reg, out("north", "north", 0))
    assert str(error) == (
        "unsupported claim in field 'b': model said 'north', registered facts support 'two "
        f"different entities' | fact='spend' | {PROVENANCE} | 'a' and 'b' both name 'north': "
        "a comparison needs two different entities"
    )
    assert error.code == "same_entity"


def test_same_entity_is_type_strict() -> None:
    """1 and True are different claims: not the same entity, and True is not recorded."""
    registry = FactRegistry()
    registry.record_ranking("r", {1: 5, 2: 3})
    error = fails(registry, out(1, True, 2), "r")
    assert (error.code, error.field, error.claimed) == ("unknown_entity", "b", True)


def test_unknown_entity_is_named_with_a_suggestion(reg: FactRegistry) -> None:
    """An entity not in the fact fails on its own field, with the recorded names and a hint."""
    error = fails(reg, out("nort", "harbour", 200))
    assert str(error) == (
        "unsupported claim in field 'a': model said 'nort', registered facts support "
        f"['north', 'harbour', 'delta', 'idle'] | fact='spend' | {PROVENANCE} | 'nort' is not "
        "in fact 'spend' (4 names); did you mean 'north'?"
    )
    assert error.code == "unknown_entity"


def test_unknown_entity_on_b_side(reg: FactRegistry) -> None:
    """The b entity is checked too."""
    error = fails(reg, out("north", "south", 200))
    assert (error.code, error.field, error.claimed) == ("unknown_entity", "b", "south")


def test_numeric_string_does_not_find_an_int_key() -> None:
    """'101' is not the recorded 101; the reason says the types differ."""
    registry = FactRegistry()
    registry.record_table("t", [{"id": 101, "v": 5}, {"id": 102, "v": 3}], key="id")
    error = fails(registry, out("101", 102, 2), "t", column="v")
    assert error.code == "unknown_entity"
    assert "the recorded name is the int 101" in error.reason
    run(registry, out(101, 102, 2), "t", column="v")


def test_unhashable_entity_is_unknown(reg: FactRegistry) -> None:
    """A list as an entity is simply not recorded (no TypeError)."""
    assert fails(reg, out(["north"], "harbour", 200)).code == "unknown_entity"


# -- zero base -----------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["pct", "ratio"])
@pytest.mark.parametrize("claim", [0, 100, float("inf"), "n/a"])
def test_zero_base_is_not_verifiable_whatever_the_claim(
    reg: FactRegistry, kind: str, claim: Any
) -> None:
    """A pct or ratio against a zero base fails as zero_base, even for a non-number claim."""
    error = fails(reg, out("north", "idle", claim), kind=kind)
    assert error.code == "zero_base"
    assert error.supported == f"a {kind} against a non-zero base"


def test_zero_base_message(reg: FactRegistry) -> None:
    """The zero-base reason names the base and the formula."""
    error = fails(reg, out("north", "idle", 0), kind="pct")
    assert error.reason == (
        "the base 'idle' is 0 on 'spend', so pct ('north' - 'idle') / 'idle' * 100 is undefined: "
        "the claim cannot be verified whatever it says"
    )


def test_zero_base_depends_on_direction(reg: FactRegistry) -> None:
    """With b_minus_a the base is a: idle vs north is a -100% change."""
    run(reg, out("north", "idle", -100), kind="pct", direction="b_minus_a")


def test_zero_value_is_fine_for_abs_and_pp(reg: FactRegistry) -> None:
    """abs and pp have no base."""
    run(reg, out("north", "idle", 1200))
    run(reg, out("north", "idle", 120000), kind="pp")


# -- claim types, exactness, tolerances -----------------------------------------------------------


@pytest.mark.parametrize("claim", ["200", "20%", True, None, float("nan"), float("-inf")])
def test_delta_that_is_not_a_number_fails(reg: FactRegistry, claim: Any) -> None:
    """Strings, bools, None and non-finite floats are never a delta."""
    error = fails(reg, out("north", "harbour", claim))
    assert error.code == "not_a_number"
    assert error.supported == 200


def test_numeric_string_delta_message(reg: FactRegistry) -> None:
    """A delta written as "20%" is not a number; the reason still shows the computed delta."""
    error = fails(reg, out("north", "harbour", "20%"), kind="pct")
    assert error.reason == (
        "the claim is not a number (str); computed pct ('north' - 'harbour') / 'harbour' * 100 "
        "on 'spend' is 20 with 'north' at 1200 and 'harbour' at 1000"
    )


def test_large_integers_lose_nothing() -> None:
    """10**30 + 1 minus 10**30 is exactly 1; the float 1e30 is not 10**30."""
    registry = FactRegistry()
    registry.record_ranking("r", {"x": 10**30 + 1, "y": 10**30, "z": 1e30})
    run(registry, out("x", "y", 1), "r")
    assert fails(registry, out("x", "z", 1), "r").supported == 1 - 19884624838656


def test_float_deltas_are_exact_so_rounded_claims_need_a_tolerance() -> None:
    """0.0455 - 0.0412 in pp is computed on the floats' exact values; 0.43 needs tolerance."""
    registry = FactRegistry()
    registry.record_ranking("r", {"harbour": 0.0455, "north": 0.0412})
    assert fails(registry, out("harbour", "north", 0.43), "r", kind="pp").code == ("value_mismatch")
    run(registry, out("harbour", "north", 0.43), "r", kind="pp", tolerance=1e-9)


def test_unrepresentable_delta_is_a_clear_value_error() -> None:
    """A ratio beyond the float range that is not an integer is a ValueError."""
    registry = FactRegistry()
    registry.record_ranking("r", {"x": 10**400 + 1, "y": 2})
    with pytest.raises(
        ValueError, match=r"^fact 'r': ratio 'x' / 'y' is about 5.000000e\+399, which is beyond"
    ):
        run(registry, out("x", "y", 1), "r", kind="ratio")


def test_tolerances(reg: FactRegistry) -> None:
    """tolerance is absolute, rel_tolerance relative; both default to exact."""
    run(reg, out("north", "harbour", 19.9), kind="pct", tolerance=0.2)
    run(reg, out("north", "harbour", 19.9), kind="pct", rel_tolerance=0.01)
    assert fails(reg, out("north", "harbour", 19.9), kind="pct").code == "value_mismatch"


# -- missing fields and developer errors ---------------------------------------------------------


@pytest.mark.parametrize("missing", ["a", "b", "d"])
def test_missing_field_fails(reg: FactRegistry, missing: str) -> None:
    """Each of the three declared fields must be present."""
    output = out("north", "harbour", 200)
    del output[missing]
    error = fails(reg, output)
    assert (error.code, error.field, error.claimed) == ("field_missing", missing, MISSING)


def test_table_without_column_is_a_value_error(reg: FactRegistry) -> None:
    """A Table needs column= to know which value to compare."""
    with pytest.raises(ValueError, match=r"fact 'shares' is a Table: pass column="):
        run(reg, out("north", "harbour", 1), "shares")


def test_ranking_with_column_is_a_value_error(reg: FactRegistry) -> None:
    """column= applies to Tables only."""
    with pytest.raises(ValueError, match=r"fact 'spend' is a Ranking on 'spend'; column="):
        run(reg, out("north", "harbour", 200), column="spend")


def test_unknown_table_column_is_a_value_error(reg: FactRegistry) -> None:
    """A column the table does not have is named with the columns it does have."""
    with pytest.raises(ValueError, match=r"fact 'shares': unknown column 'ctr'; columns: \["):
        run(reg, out("north", "harbour", 1), "shares", column="ctr")


def test_row_missing_the_column_is_a_data_error_naming_the_row(reg: FactRegistry) -> None:
    """Stricter than the reference: a row lacking the column is a named ValueError."""
    with pytest.raises(ValueError, match=r"fact 'shares': row 'gap' has no column 'share'"):
        run(reg, out("north", "gap", 1), "shares", column="share")


def test_non_number_cell_is_a_data_error_naming_fact_column_row(reg: FactRegistry) -> None:
    """A numeric string in the compared column is a ValueError, not the model's fault."""
    with pytest.raises(ValueError, match=r"fact 'shares': column 'share', row 'odd': expected"):
        run(reg, out("north", "odd", 1), "shares", column="share")


def test_domain_fact_is_a_type_error(reg: FactRegistry) -> None:
    """A Domain has no values to compare: TypeError naming the recorders."""
    with pytest.raises(TypeError, match=r"record_ranking\(\).*record_table\(\)"):
        run(reg, out("EU", "US", 1), "regions")


def test_unregistered_fact(reg: FactRegistry) -> None:
    """An unknown fact is UnregisteredFact."""
    with pytest.raises(UnregisteredFact):
        run(reg, out("north", "harbour", 1), "nope")


def test_check_does_not_mutate_recorded_evidence(reg: FactRegistry) -> None:
    """Passing and failing checks leave the stored facts unchanged."""
    before = copy.deepcopy(reg.peek("shares").value.rows)
    run(reg, out("north", "harbour", 2), "shares", column="share", kind="ratio")
    fails(reg, out("north", "harbour", 3), "shares", column="share", kind="ratio")
    assert reg.peek("shares").value.rows == before


def test_report_mode_collects_comparison_violations(reg: FactRegistry) -> None:
    """report() lists the failed comparison by name and stays strict-JSON safe."""
    checks = [
        comparison("spend", "a", "b", "d"),
        comparison("spend", "a", "b", "p", kind="pct"),
    ]
    with boundary(reg, facts=["spend"], checks=checks) as b:
        report = b.report({"a": "north", "b": "harbour", "d": -200, "p": 20})
    assert report.failed == ("comparison(fact='spend', delta_field='d')",)
    assert report.passed == ("comparison(fact='spend', delta_field='p')",)
    json.dumps(report.to_dict(), allow_nan=False)


# -- build-time validation --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"fact": ""}, TypeError, "comparison: fact must be a non-empty string, got ''"),
        ({"a_field": 1}, TypeError, "a_field must be a non-empty string, got 1"),
        ({"b_field": None}, TypeError, "b_field must be a non-empty string, got None"),
        ({"delta_field": ""}, TypeError, "delta_field must be a non-empty string, got ''"),
        ({"column": 0}, TypeError, "column must be a non-empty string or None, got 0"),
        (
            {"b_field": "a"},
            ValueError,
            "a_field, b_field and delta_field must be three different fields, got 'a', 'a', 'd'",
        ),
        ({"delta_field": "b"}, ValueError, "must be three different fields"),
        (
            {"kind": "percent"},
            ValueError,
            "kind must be one of ['abs', 'pct', 'ratio', 'pp'], got 'percent'",
        ),
        (
            {"direction": "a-b"},
            ValueError,
            "direction must be one of ['a_minus_b', 'b_minus_a'], got 'a-b'",
        ),
        ({"tolerance": -0.5}, ValueError, "tolerance must be a finite number >= 0, got -0.5"),
        ({"tolerance": None}, ValueError, "tolerance must be a finite number >= 0, got None"),
        ({"rel_tolerance": True}, ValueError, "rel_tolerance must be None or a finite number"),
        ({"rel_tolerance": float("nan")}, ValueError, "rel_tolerance must be None or a finite"),
    ],
)
def test_builder_validates_every_argument_when_built(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    """Each bad argument fails when built, naming the builder and echoing the value."""
    arguments: dict[str, Any] = {
        "fact": "r",
        "a_field": "a",
        "b_field": "b",
        "delta_field": "d",
        **kwargs,
    }
    with pytest.raises(error) as info:
        comparison(**arguments)
    assert str(info.value).startswith("comparison: ")
    assert message in str(info.value)
    with pytest.raises(error):
        check_comparison(FactRegistry(), {}, **arguments)
