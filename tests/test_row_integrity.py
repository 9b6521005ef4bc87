"""row_integrity: resolve the named row, then read every other field off that one row."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from groundplane_otel.boundary import boundary
from groundplane_otel.checks import row_integrity as row_module
from groundplane_otel.checks.row_integrity import check_row_integrity, row_integrity
from groundplane_otel.errors import MISSING, UnregisteredFact, UnsupportedClaim
from groundplane_otel.registry import FactRegistry

PROVENANCE = "warehouse.query(table='campaign_daily', window='7d')"


def campaigns_registry(*, exhaustive: bool = True) -> FactRegistry:
    reg = FactRegistry()
    reg.record_table(
        "campaigns",
        [
            {"campaign": "north", "spend": 88000, "clicks": 900, "ctr": 0.0412, "region": "emea"},
            {
                "campaign": "harbour",
                "spend": 91500,
                "clicks": 1200,
                "ctr": 0.0455,
                "region": "apac",
            },
            {"campaign": "delta", "spend": 47000, "clicks": 88000, "ctr": 0.0301, "region": "emea"},
        ],
        key="campaign",
        tool="warehouse.query",
        args={"table": "campaign_daily", "window": "7d"},
        exhaustive=exhaustive,
    )
    return reg


def stores_registry() -> FactRegistry:
    reg = FactRegistry()
    reg.record_table(
        "stores",
        [
            {"id": 101, "revenue": 88000, "open": True, "manager": None},
            {"id": 102, "revenue": 91000, "open": False, "manager": "ana"},
            {"id": 1, "revenue": 5, "open": True},
        ],
        key="id",
        tool="db.stores",
    )
    return reg


def claim_of(check: Any, reg: FactRegistry, output: dict[str, Any]) -> UnsupportedClaim:
    with pytest.raises(UnsupportedClaim) as info:
        check(reg, output)
    return info.value


# -- passing claims ---------------------------------------------------------------------------


def test_values_read_off_the_named_row_pass() -> None:
    """Every mapped field equal to the named row's cell passes, through a boundary too."""
    reg = campaigns_registry()
    output = {"campaign": "harbour", "spend": 91500, "clicks": 1200, "ctr": 0.0455}
    check = row_integrity(fact="campaigns", key_field="campaign")
    with boundary(reg, facts=["campaigns"], checks=[check]) as b:
        assert b.submit(output) is output


def test_named_check_reads_like_the_reference() -> None:
    """The NamedCheck is named row_integrity(fact=..., key_field=...) and tagged."""
    check = row_integrity("campaigns", "campaign", {"cost": "spend"})
    assert check.name == "row_integrity(fact='campaigns', key_field='campaign')"
    assert check.family == "row_integrity"
    assert check.facts == ("campaigns",)
    assert hash(check) == hash(row_integrity("campaigns", "campaign", {"cost": "spend"}))


def test_signature_keeps_the_seed_keywords_in_order() -> None:
    """Builder and twin take fact, key_field, fields, tolerance, rel_tolerance."""
    keywords = ["fact", "key_field", "fields", "tolerance", "rel_tolerance"]
    assert list(inspect.signature(row_integrity).parameters) == keywords
    assert list(inspect.signature(check_row_integrity).parameters) == [
        "registry",
        "output",
        *keywords,
    ]


def test_twin_raises_the_same_claim_as_the_builder() -> None:
    """check_row_integrity runs the same check outside a boundary."""
    reg = campaigns_registry()
    output = {"campaign": "harbour", "spend": 88000}
    built = claim_of(row_integrity("campaigns", "campaign"), reg, output)
    with pytest.raises(UnsupportedClaim) as info:
        check_row_integrity(reg, output, fact="campaigns", key_field="campaign")
    assert str(info.value) == str(built)
    check_row_integrity(reg, {"campaign": "north", "spend": 88000}, "campaigns", "campaign")


# -- attribute swap ---------------------------------------------------------------------------


def test_swapped_value_names_the_row_it_really_belongs_to() -> None:
    """The right row with a neighbour's spend fails as swapped_value, naming the neighbour."""
    claim = claim_of(
        row_integrity("campaigns", "campaign"),
        campaigns_registry(),
        {"campaign": "harbour", "spend": 88000},
    )
    assert str(claim) == (
        "unsupported claim in field 'spend': model said 88000, registered facts support 91500 | "
        f"fact='campaigns' | provenance={PROVENANCE} | "
        "row 'harbour' has spend=91500; 88000 belongs to row 'north'"
    )
    assert (claim.field, claim.claimed, claim.supported, claim.code) == (
        "spend",
        88000,
        91500,
        "swapped_value",
    )


def test_swapped_value_held_by_several_rows_lists_them_all() -> None:
    """A value two other rows share names both rows."""
    claim = claim_of(
        row_integrity("campaigns", "campaign"),
        campaigns_registry(),
        {"campaign": "harbour", "region": "emea"},
    )
    assert (
        claim.reason == "row 'harbour' has region='apac'; 'emea' belongs to rows 'north', 'delta'"
    )
    assert claim.code == "swapped_value"


def test_value_from_another_column_of_the_same_row_is_a_swap_too() -> None:
    """delta's clicks quoted as its spend: the reason says which column the value came from."""
    claim = claim_of(
        row_integrity("campaigns", "campaign", {"spend": "spend"}),
        campaigns_registry(),
        {"campaign": "delta", "spend": 88000},
    )
    # 88000 is also north's spend: the other row wins, it is the likelier swap.
    assert claim.reason == "row 'delta' has spend=47000; 88000 belongs to row 'north'"
    claim = claim_of(
        row_integrity("campaigns", "campaign", {"spend": "spend"}),
        campaigns_registry(),
        {"campaign": "harbour", "spend": 1200},
    )
    assert claim.reason == "row 'harbour' has spend=91500; 1200 is that row's clicks, not its spend"
    assert claim.code == "swapped_value"


def test_swapped_value_is_found_within_the_tolerance() -> None:
    """With tolerance=500, 88100 still belongs to north (88000) and is named as a swap."""
    claim = claim_of(
        row_integrity("campaigns", "campaign", tolerance=500),
        campaigns_registry(),
        {"campaign": "harbour", "spend": 88100},
    )
    assert claim.reason == "row 'harbour' has spend=91500; 88100 belongs to row 'north'"


def test_swapped_value_is_found_within_a_relative_tolerance() -> None:
    """rel_tolerance=0.01 finds north's 0.0412 for a claimed 0.0410."""
    claim = claim_of(
        row_integrity("campaigns", "campaign", rel_tolerance=0.01),
        campaigns_registry(),
        {"campaign": "harbour", "ctr": 0.041},
    )
    assert claim.reason == "row 'harbour' has ctr=0.0455; 0.041 belongs to row 'north'"


# -- wrong values -----------------------------------------------------------------------------


def test_invented_number_reports_the_signed_offset() -> None:
    """A number no row holds is value_mismatch, off by a signed amount."""
    claim = claim_of(
        row_integrity("campaigns", "campaign"),
        campaigns_registry(),
        {"campaign": "harbour", "spend": 91990},
    )
    assert str(claim) == (
        "unsupported claim in field 'spend': model said 91990, registered facts support 91500 | "
        f"fact='campaigns' | provenance={PROVENANCE} | "
        "row 'harbour' has spend=91500; the claim is off by +490 (exact comparison)"
    )
    assert claim.code == "value_mismatch"


def test_tolerance_accepts_within_and_rejects_beyond() -> None:
    """tolerance is absolute and inclusive; one past it fails and names the tolerances."""
    reg = campaigns_registry()
    check = row_integrity("campaigns", "campaign", tolerance=10)
    check(reg, {"campaign": "harbour", "spend": 91510})
    claim = claim_of(check, reg, {"campaign": "harbour", "spend": 91511})
    assert claim.reason == (
        "row 'harbour' has spend=91500; the claim is off by +11 (tolerance=10, rel_tolerance=None)"
    )


def test_relative_tolerance_accepts_within_and_rejects_beyond() -> None:
    """rel_tolerance compares against the larger magnitude, exactly."""
    reg = campaigns_registry()
    check = row_integrity("campaigns", "campaign", rel_tolerance=0.01)
    check(reg, {"campaign": "harbour", "spend": 92400})
    assert claim_of(check, reg, {"campaign": "harbour", "spend": 92500}).code == "value_mismatch"


def test_exact_by_default_even_for_a_tiny_float_drift() -> None:
    """0.0455 + 1e-12 is not 0.0455 when no tolerance is declared."""
    claim = claim_of(
        row_integrity("campaigns", "campaign"),
        campaigns_registry(),
        {"campaign": "harbour", "ctr": 0.0455 + 1e-12},
    )
    assert claim.code == "value_mismatch"


def test_int_claim_matches_an_equal_float_cell_by_value() -> None:
    """Numbers compare by exact value: 91500.0 is the cell 91500."""
    row_integrity("campaigns", "campaign")(
        campaigns_registry(), {"campaign": "harbour", "spend": 91500.0}
    )


def test_large_integers_are_compared_exactly() -> None:
    """2**63 + 1 is not the float 2**63, which Python's float equality would blur."""
    reg = FactRegistry()
    reg.record_table("big", [{"k": "a", "n": 2**63 + 1}], key="k")
    check = row_integrity("big", "k")
    check(reg, {"k": "a", "n": 2**63 + 1})
    assert claim_of(check, reg, {"k": "a", "n": float(2**63)}).code == "value_mismatch"


def test_numeric_string_never_matches_a_number() -> None:
    """'91500' is not 91500; the reason says the types differ."""
    claim = claim_of(
        row_integrity("campaigns", "campaign"),
        campaigns_registry(),
        {"campaign": "harbour", "spend": "91500"},
    )
    assert claim.reason == (
        "row 'harbour' has spend=91500; the claim is a str, the cell an int "
        "(values compare type-strictly; numeric-looking strings are never numbers)"
    )


def test_bool_never_matches_a_number_and_a_number_never_matches_a_bool() -> None:
    """True is not the cell 1, and 1 is not the cell True."""
    reg = FactRegistry()
    reg.record_table(
        "t", [{"k": "a", "n": 1, "flag": True}, {"k": "b", "n": 2, "flag": False}], key="k"
    )
    claim = claim_of(row_integrity("t", "k", ["n"]), reg, {"k": "b", "n": True})
    assert claim.reason == (
        "row 'b' has n=2; the claim is a bool, the cell an int "
        "(values compare type-strictly; numeric-looking strings are never numbers)"
    )
    assert claim.code == "value_mismatch"
    assert claim_of(row_integrity("t", "k"), reg, {"k": "b", "flag": 0}).code == "value_mismatch"
    row_integrity("t", "k")(reg, {"k": "a", "n": 1, "flag": True})


def test_bool_quoted_for_a_number_is_traced_to_the_bool_column_it_came_from() -> None:
    """True in the number field of a row whose flag is True is named as that column's value."""
    reg = FactRegistry()
    reg.record_table("t", [{"k": "a", "n": 1, "flag": True}], key="k")
    claim = claim_of(row_integrity("t", "k"), reg, {"k": "a", "n": True})
    assert claim.reason == "row 'a' has n=1; True is that row's flag, not its n"
    assert claim.code == "swapped_value"


def test_nan_and_inf_never_match() -> None:
    """A non-finite claim matches no cell, whatever the tolerance."""
    check = row_integrity("campaigns", "campaign", tolerance=1e9)
    for bad in (float("nan"), float("inf")):
        claim = claim_of(check, campaigns_registry(), {"campaign": "harbour", "spend": bad})
        assert claim.code == "value_mismatch"


def test_non_numeric_cells_compare_type_strictly() -> None:
    """Strings compare exactly (case included); None is a value that only None matches."""
    reg = stores_registry()
    check = row_integrity("stores", "id")
    check(reg, {"id": 101, "manager": None, "open": True})
    assert claim_of(check, reg, {"id": 102, "manager": "Ana"}).code == "value_mismatch"
    claim = claim_of(check, reg, {"id": 102, "manager": None})
    assert claim.reason == "row 102 has manager='ana'; None belongs to row 101"


# -- the row itself ---------------------------------------------------------------------------


def test_unknown_key_fails_as_row_not_found() -> None:
    """A name no row has fails before any field is compared, with the closest key."""
    claim = claim_of(
        row_integrity("campaigns", "campaign"),
        campaigns_registry(),
        {"campaign": "harbor", "spend": 91500},
    )
    assert str(claim) == (
        "unsupported claim in field 'campaign': model said 'harbor', registered facts support "
        f"['north', 'harbour', 'delta'] | fact='campaigns' | provenance={PROVENANCE} | "
        "no row has campaign='harbor' (3 rows, keys compare type-strictly); "
        "did you mean 'harbour'?"
    )
    assert claim.code == "row_not_found"


def test_row_key_is_type_strict() -> None:
    """'101' does not find the row 101, and True does not find the row 1."""
    check = row_integrity("stores", "id")
    claim = claim_of(check, stores_registry(), {"id": "101", "revenue": 88000})
    assert claim.code == "row_not_found"
    assert claim.reason.endswith(
        "'101' is a str, but the recorded name is the int 101 (names compare type-strictly)"
    )
    assert claim_of(check, stores_registry(), {"id": True, "revenue": 5}).code == "row_not_found"


def test_row_not_found_in_a_truncated_table_says_it_may_exist() -> None:
    """On a non-exhaustive table the reason warns that the row may lie beyond the cut."""
    claim = claim_of(
        row_integrity("campaigns", "campaign"),
        campaigns_registry(exhaustive=False),
        {"campaign": "westgate"},
    )
    assert claim.reason.endswith(
        "; the table is not exhaustive (a truncated result), so the row may exist"
    )


def test_unhashable_key_claim_fails_as_row_not_found() -> None:
    """A list where a key belongs finds no row and raises no TypeError."""
    claim = claim_of(row_integrity("stores", "id"), stores_registry(), {"id": [101]})
    assert claim.code == "row_not_found"


# -- missing fields ---------------------------------------------------------------------------


def test_missing_key_field_fails_as_field_missing() -> None:
    """Without the key field no row can be resolved: the standard missing claim."""
    claim = claim_of(row_integrity("campaigns", "campaign"), campaigns_registry(), {"spend": 1})
    assert (claim.field, claim.claimed, claim.supported, claim.code) == (
        "campaign",
        MISSING,
        "a value",
        "field_missing",
    )


def test_explicitly_mapped_field_absent_from_the_output_fails_as_field_missing() -> None:
    """A field named in fields= must be present."""
    claim = claim_of(
        row_integrity("campaigns", "campaign", {"cost": "spend"}),
        campaigns_registry(),
        {"campaign": "north"},
    )
    assert (claim.field, claim.code) == ("cost", "field_missing")


# -- which fields are compared ------------------------------------------------------------------


def test_default_compares_every_output_field_that_is_a_column_except_the_key() -> None:
    """fields=None: 'note' (no column) is ignored, omitted columns are not required."""
    reg = campaigns_registry()
    check = row_integrity("campaigns", "campaign")
    check(reg, {"campaign": "north", "note": "anything", "clicks": 900})
    assert claim_of(check, reg, {"campaign": "north", "clicks": 1200}).field == "clicks"


def test_explicit_mapping_reads_a_differently_named_column() -> None:
    """fields={'cost': 'spend'} compares output['cost'] with the row's spend, and only that."""
    reg = campaigns_registry()
    check = row_integrity("campaigns", "campaign", {"cost": "spend"})
    check(reg, {"campaign": "north", "cost": 88000, "clicks": -1})
    claim = claim_of(check, reg, {"campaign": "north", "cost": 91500})
    assert (claim.field, claim.supported) == ("cost", 88000)
    assert claim.reason == "row 'north' has spend=88000; 91500 belongs to row 'harbour'"


def test_a_list_of_fields_maps_each_name_to_itself() -> None:
    """fields=['spend'] means {'spend': 'spend'}: required and compared."""
    reg = campaigns_registry()
    check = row_integrity("campaigns", "campaign", ["spend"])
    check(reg, {"campaign": "north", "spend": 88000})
    assert claim_of(check, reg, {"campaign": "north"}).code == "field_missing"


# -- data and developer mistakes --------------------------------------------------------------


def test_row_lacking_a_column_is_a_named_value_error_never_a_key_error() -> None:
    """Row 1 has no 'manager': a ValueError naming fact, row and column, not blamed on the model."""
    with pytest.raises(ValueError) as info:
        row_integrity("stores", "id", ["manager"])(stores_registry(), {"id": 1, "manager": None})
    assert not isinstance(info.value, (KeyError, UnsupportedClaim))
    assert str(info.value) == (
        "row_integrity: fact 'stores': row 1 has no column 'manager' (compared with field "
        "'manager'); the recorded row is incomplete, so this claim cannot be checked"
    )


def test_row_lacking_a_column_selected_by_default_is_a_value_error_too() -> None:
    """With fields=None, a column the table has but this row lacks is still a data error."""
    with pytest.raises(ValueError, match=r"row 1 has no column 'manager'"):
        row_integrity("stores", "id")(stores_registry(), {"id": 1, "manager": "ana"})


def test_mapping_to_an_unknown_column_is_a_value_error_naming_it() -> None:
    """A misconfigured column fails before the output is read."""
    with pytest.raises(ValueError) as info:
        row_integrity("campaigns", "campaign", {"cost": "spnd"})(campaigns_registry(), {})
    assert str(info.value) == (
        "row_integrity: fact 'campaigns' has no column 'spnd' (mapped from field 'cost'); "
        "columns: ['campaign', 'spend', 'clicks', 'ctr', 'region']"
    )


def test_non_table_fact_is_a_type_error_naming_the_recorder() -> None:
    """A Ranking has no rows: TypeError pointing at record_table()."""
    reg = FactRegistry()
    reg.record_ranking("r", {"a": 1})
    with pytest.raises(TypeError, match=r"needs a Table \(record_table\(\)\)"):
        row_integrity("r", "k")(reg, {"k": "a"})


def test_unregistered_fact_raises_unregistered_fact() -> None:
    """Reading a fact the registry does not hold is UnregisteredFact."""
    with pytest.raises(UnregisteredFact):
        row_integrity("nope", "k")(FactRegistry(), {"k": 1})


# -- build-time validation --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"fact": ""}, TypeError, "fact must be a non-empty string, got ''"),
        ({"fact": 3}, TypeError, "fact must be a non-empty string, got 3"),
        ({"key_field": None}, TypeError, "key_field must be a non-empty string, got None"),
        ({"fields": "spend"}, TypeError, "fields must be None, a mapping of output field"),
        ({"fields": 3}, TypeError, "fields must be None, a mapping of output field"),
        ({"fields": {}}, ValueError, "fields must not be empty (pass None to compare"),
        ({"fields": []}, ValueError, "fields must not be empty (pass None to compare"),
        ({"fields": {"a": 1}}, TypeError, "the column mapped from 'a' must be a non-empty"),
        ({"fields": {1: "a"}}, TypeError, "every output field in fields must be a non-empty"),
        ({"fields": ["a", ""]}, TypeError, "every output field in fields must be a non-empty"),
        ({"fields": {"id": "id"}}, ValueError, "key_field 'id' names the row; it cannot also"),
        ({"tolerance": -1}, ValueError, "tolerance must be a finite number >= 0, got -1"),
        ({"tolerance": True}, ValueError, "tolerance must be a finite number >= 0, got True"),
        ({"tolerance": float("nan")}, ValueError, "tolerance must be a finite number >= 0"),
        ({"tolerance": "1"}, ValueError, "tolerance must be a finite number >= 0, got '1'"),
        ({"rel_tolerance": -0.1}, ValueError, "rel_tolerance must be None or a finite number"),
        ({"rel_tolerance": float("inf")}, ValueError, "rel_tolerance must be None or a finite"),
    ],
)
def test_every_argument_is_validated_when_built(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    """Builder and twin refuse a bad argument before any output is checked."""
    arguments: dict[str, Any] = {"fact": "stores", "key_field": "id", **kwargs}
    with pytest.raises(error) as info:
        row_integrity(**arguments)
    assert str(info.value).startswith(f"row_integrity: {message}")
    with pytest.raises(error):
        check_row_integrity(stores_registry(), {"id": 101}, **arguments)


# -- evidence is read once, never changed --------------------------------------------------------


def test_checks_do_not_mutate_the_recorded_table() -> None:
    """Passing and failing checks leave every recorded row as it was."""
    reg = campaigns_registry()
    before = reg.value("campaigns")
    row_integrity("campaigns", "campaign")(reg, {"campaign": "north", "spend": 88000})
    claim_of(row_integrity("campaigns", "campaign"), reg, {"campaign": "north", "spend": 1})
    assert reg.value("campaigns") == before


def test_value_index_is_built_once_per_fact_and_column(monkeypatch: pytest.MonkeyPatch) -> None:
    """Repeated mismatches on one column reuse one value→rows index."""
    built: list[str] = []
    real_index = row_module._index

    def counting_index(table: Any, column: str) -> Any:
        built.append(column)
        return real_index(table, column)

    monkeypatch.setattr(row_module, "_index", counting_index)
    reg = campaigns_registry()
    check = row_integrity("campaigns", "campaign")
    for _ in range(3):
        claim_of(check, reg, {"campaign": "harbour", "spend": 88000})
        claim_of(check, reg, {"campaign": "harbour", "clicks": 900})
    check(reg, {"campaign": "north", "spend": 88000})
    assert built == ["spend", "clicks"]


def test_report_mode_collects_the_row_violation() -> None:
    """b.report() lists the failed row_integrity check and never raises for it."""
    reg = campaigns_registry()
    with boundary(reg, facts=["campaigns"], checks=[row_integrity("campaigns", "campaign")]) as b:
        report = b.report({"campaign": "harbour", "spend": 88000})
    assert report.failed == ("row_integrity(fact='campaigns', key_field='campaign')",)
    assert report.violations[0].code == "swapped_value"
