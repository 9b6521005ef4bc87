"""field_matches_fact: an output field equals a registered value, structurally and type-strictly."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from groundplane_otel.boundary import boundary
from groundplane_otel.checks.field_matches_fact import check_field_matches_fact, field_matches_fact
from groundplane_otel.errors import MISSING, UnregisteredFact, UnsupportedClaim
from groundplane_otel.registry import FactRegistry

REPORT = {
    "q3": 1250,
    "regions": ["north", "harbour"],
    "window": (7, "d"),
    "by_id": {101: "north", 102: "harbour"},
    "audited": True,
    "rate": 0.5,
    "owner": None,
}


def report_registry() -> FactRegistry:
    reg = FactRegistry()
    reg.record("report", REPORT, tool="finance.report", args={"quarter": "q3"})
    reg.record("headcount", 42, tool="hr.count")
    return reg


def claim_of(check: Any, reg: FactRegistry, output: dict[str, Any]) -> UnsupportedClaim:
    with pytest.raises(UnsupportedClaim) as info:
        check(reg, output)
    return info.value


# -- passing claims ---------------------------------------------------------------------------


def test_equal_values_pass_scalar_and_nested() -> None:
    """A scalar, a list and a whole nested mapping equal to the recorded value all pass."""
    reg = report_registry()
    field_matches_fact("n", "headcount")(reg, {"n": 42})
    field_matches_fact("r", "report", path="regions")(reg, {"r": ["north", "harbour"]})
    field_matches_fact("all", "report")(reg, {"all": dict(REPORT)})


def test_passing_output_goes_through_a_boundary_unchanged() -> None:
    """Inside a boundary, a matching output is returned as submitted."""
    reg = report_registry()
    output = {"n": 42}
    with boundary(reg, facts=["headcount"], checks=[field_matches_fact("n", "headcount")]) as b:
        assert b.submit(output) is output


def test_named_check_reads_like_the_reference() -> None:
    """The NamedCheck is named field_matches_fact(fact=..., field=...), fact first."""
    check = field_matches_fact(field="n", fact="headcount")
    assert check.name == "field_matches_fact(fact='headcount', field='n')"
    assert check.family == "field_matches_fact"
    assert check.facts == ("headcount",)
    assert hash(check) == hash(field_matches_fact(field="n", fact="headcount"))


def test_signature_keeps_the_seed_keywords_in_order() -> None:
    """Builder and twin take field, fact, then path."""
    assert list(inspect.signature(field_matches_fact).parameters) == ["field", "fact", "path"]
    assert list(inspect.signature(check_field_matches_fact).parameters) == [
        "registry",
        "output",
        "field",
        "fact",
        "path",
    ]


def test_twin_raises_the_same_claim_as_the_builder() -> None:
    """check_field_matches_fact runs the same check outside a boundary."""
    reg = report_registry()
    built = claim_of(field_matches_fact("n", "headcount"), reg, {"n": 41})
    with pytest.raises(UnsupportedClaim) as info:
        check_field_matches_fact(reg, {"n": 41}, field="n", fact="headcount")
    assert str(info.value) == str(built)
    check_field_matches_fact(reg, {"n": 42}, "n", "headcount")


# -- wrong values -----------------------------------------------------------------------------


def test_wrong_number_fails_with_the_offset() -> None:
    """A number that is not the recorded one is value_mismatch, off by a signed amount."""
    claim = claim_of(field_matches_fact("n", "headcount"), report_registry(), {"n": 45})
    assert str(claim) == (
        "unsupported claim in field 'n': model said 45, registered facts support 42 | "
        "fact='headcount' | provenance=hr.count() | "
        "the recorded value differs: 45 is off by +3 from 42"
    )
    assert (claim.field, claim.claimed, claim.supported, claim.code) == (
        "n",
        45,
        42,
        "value_mismatch",
    )


def test_bool_is_not_a_number_either_way() -> None:
    """1 is not True and True is not 1."""
    reg = report_registry()
    claim = claim_of(field_matches_fact("a", "report", path="audited"), reg, {"a": 1})
    assert claim.reason == (
        "the fact's 'audited' differs: the model wrote an int (1), the fact holds a bool "
        "(True) (a bool is never a number)"
    )
    assert claim_of(field_matches_fact("n", "headcount"), reg, {"n": True}).code == (
        "value_mismatch"
    )


def test_int_and_float_of_equal_value_match() -> None:
    """42.0 equals the recorded int 42: numbers compare by value, as in every numeric check."""
    field_matches_fact("n", "headcount")(report_registry(), {"n": 42.0})
    claim = claim_of(field_matches_fact("n", "headcount"), report_registry(), {"n": 42.5})
    assert claim.reason == "the recorded value differs: 42.5 is off by +0.5 from 42"


def test_numeric_string_never_equals_a_number() -> None:
    """'42' is not 42."""
    claim = claim_of(field_matches_fact("n", "headcount"), report_registry(), {"n": "42"})
    assert claim.reason.endswith("(numeric-looking strings are never numbers)")


def test_list_is_not_a_tuple_recorded_as_a_tuple() -> None:
    """The fact keeps the tuple it was recorded with; a JSON list never equals it."""
    claim = claim_of(
        field_matches_fact("w", "report", path="window"), report_registry(), {"w": [7, "d"]}
    )
    assert claim.reason == (
        "the fact's 'window' differs: the model wrote a list ([7, 'd']), the fact holds a "
        "tuple ((7, 'd')) (lists are not tuples; record JSON-shaped facts as lists)"
    )


def test_mapping_keys_compare_type_strictly() -> None:
    """{'101': …} is not {101: …}: the reason names the missing and the unrecorded keys."""
    claim = claim_of(
        field_matches_fact("m", "report", path="by_id"),
        report_registry(),
        {"m": {"101": "north", 102: "harbour"}},
    )
    assert claim.reason == (
        "the fact's 'by_id' differs: the output lacks key(s) 101; has unrecorded key(s) '101' "
        "(keys compare type-strictly)"
    )


def test_nested_difference_names_its_location() -> None:
    """The first differing leaf is located: at [1] in a list, at ['q3'] in a mapping."""
    reg = report_registry()
    claim = claim_of(
        field_matches_fact("r", "report", path="regions"), reg, {"r": ["north", "harbor"]}
    )
    assert claim.reason == "the fact's 'regions' differs: at [1]: 'harbor' is not 'harbour'"
    changed = {**REPORT, "q3": 1300}
    claim = claim_of(field_matches_fact("all", "report"), reg, {"all": changed})
    assert claim.reason == "the recorded value differs: at ['q3']: 1300 is off by +50 from 1250"


def test_list_of_another_length_says_so() -> None:
    """A list with an extra name differs in length."""
    claim = claim_of(
        field_matches_fact("r", "report", path="regions"),
        report_registry(),
        {"r": ["north", "harbour", "delta"]},
    )
    assert claim.reason == "the fact's 'regions' differs: 3 items, the fact has 2"


def test_none_is_a_value_only_none_matches() -> None:
    """A recorded None matches None; 'None' and 0 do not."""
    reg = report_registry()
    check = field_matches_fact("o", "report", path="owner")
    check(reg, {"o": None})
    assert claim_of(check, reg, {"o": "None"}).code == "value_mismatch"
    assert claim_of(check, reg, {"o": 0}).code == "value_mismatch"


def test_nan_never_matches() -> None:
    """A NaN claim equals nothing, not even a float field."""
    claim = claim_of(
        field_matches_fact("r", "report", path="rate"), report_registry(), {"r": float("nan")}
    )
    assert claim.code == "value_mismatch"


# -- path= walks into the fact ----------------------------------------------------------------


def test_path_walks_into_the_fact_not_the_output() -> None:
    """path='regions.1' picks the recorded value; the output field is read as is."""
    reg = report_registry()
    check = field_matches_fact("best", "report", path="regions.1")
    check(reg, {"best": "harbour"})
    claim = claim_of(check, reg, {"best": "north"})
    assert claim.supported == "harbour"
    assert claim.reason == "the fact's 'regions.1' differs: 'north' is not 'harbour'"


def test_path_missing_from_the_fact_is_a_value_error_naming_fact_and_path() -> None:
    """A path the fact lacks is a misconfigured check: ValueError, never blamed on the model."""
    reg = report_registry()
    with pytest.raises(ValueError) as info:
        field_matches_fact("x", "report", path="q4")(reg, {"x": 1})
    assert not isinstance(info.value, UnsupportedClaim)
    assert str(info.value) == (
        "field_matches_fact: fact 'report' has no path 'q4' (no 'q4' under the value, a mapping "
        "with keys 'q3', 'regions', 'window', 'by_id', 'audited', 'rate', 'owner')"
    )
    with pytest.raises(ValueError) as info:
        field_matches_fact("x", "report", path="regions.5")(reg, {"x": 1})
    assert str(info.value) == (
        "field_matches_fact: fact 'report' has no path 'regions.5' "
        "(no '5' under 'regions', a list of 2)"
    )
    with pytest.raises(ValueError, match=r"has no path 'q3.x' \(no 'x' under 'q3', an int\)$"):
        field_matches_fact("x", "report", path="q3.x")(reg, {"x": 1})


def test_missing_path_is_reported_even_when_the_field_is_missing_too() -> None:
    """The developer mistake surfaces first: the path is resolved before the output is read."""
    with pytest.raises(ValueError, match="has no path"):
        field_matches_fact("x", "report", path="nope")(report_registry(), {})


# -- missing fields and developer mistakes ----------------------------------------------------


def test_missing_field_fails_with_the_standard_missing_claim() -> None:
    """An absent field is field_missing with MISSING claimed and 'a value' supported."""
    claim = claim_of(field_matches_fact("n", "headcount"), report_registry(), {})
    assert (claim.field, claim.claimed, claim.supported, claim.code) == (
        "n",
        MISSING,
        "a value",
        "field_missing",
    )


def test_typed_fact_is_a_type_error_pointing_at_the_right_check() -> None:
    """A Ranking, Table or Domain is not a plain value: TypeError, not a blamed model."""
    reg = FactRegistry()
    reg.record_domain("d", ["a"])
    with pytest.raises(TypeError) as info:
        field_matches_fact("x", "d")(reg, {"x": "a"})
    assert str(info.value) == (
        "field_matches_fact: fact 'd' is a Domain; this check compares a plain value recorded "
        "with record() (use superlative, row_integrity, aggregate_reconciles or "
        "entities_recorded for typed facts)"
    )


def test_unregistered_fact_raises_unregistered_fact() -> None:
    """Reading a fact the registry does not hold is UnregisteredFact."""
    with pytest.raises(UnregisteredFact):
        field_matches_fact("x", "nope")(FactRegistry(), {"x": 1})


# -- build-time validation --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"field": ""}, TypeError, "field must be a non-empty string, got ''"),
        ({"field": 3}, TypeError, "field must be a non-empty string, got 3"),
        ({"fact": None}, TypeError, "fact must be a non-empty string, got None"),
        (
            {"path": ""},
            TypeError,
            "path must be a dotted string, a sequence of keys, or () for the root, got ''",
        ),
        (
            {"path": 3},
            TypeError,
            "path must be a dotted string, a sequence of keys, or () for the root, got 3",
        ),
        ({"path": [["a"]]}, TypeError, "every step of path must be a hashable key, got ['a']"),
        ({"path": "a."}, ValueError, "path must be dotted keys or list indices"),
    ],
)
def test_every_argument_is_validated_when_built(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    """Builder and twin refuse a bad argument before any output is checked."""
    arguments: dict[str, Any] = {"field": "n", "fact": "headcount", **kwargs}
    with pytest.raises(error) as info:
        field_matches_fact(**arguments)
    assert str(info.value).startswith(f"field_matches_fact: {message}")
    with pytest.raises(error):
        check_field_matches_fact(report_registry(), {"n": 42}, **arguments)


def test_checks_do_not_mutate_the_recorded_value() -> None:
    """A passing and a failing check leave the recorded value as it was."""
    reg = report_registry()
    field_matches_fact("all", "report")(reg, {"all": dict(REPORT)})
    claim_of(field_matches_fact("r", "report", path="regions"), reg, {"r": []})
    assert reg.value("report") == REPORT
