"""entities_recorded: every name the model uses must be recorded, pinned failure class by class."""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest

from groundplane_otel.boundary import boundary
from groundplane_otel.checks import _names
from groundplane_otel.checks.entities_recorded import check_entities_recorded, entities_recorded
from groundplane_otel.errors import MISSING, UnregisteredFact, UnsupportedClaim
from groundplane_otel.registry import FactRegistry

REGIONS = ["north", "harbour", "delta"]


def regions_registry() -> FactRegistry:
    reg = FactRegistry()
    reg.record_domain("regions", REGIONS, tool="crm.list_regions", args={"active": True})
    return reg


def accounts_registry() -> FactRegistry:
    reg = FactRegistry()
    reg.record_table(
        "accounts",
        [{"id": 101, "owner": "ana"}, {"id": 102, "owner": "bo"}, {"id": 1, "owner": "cy"}],
        key="id",
        tool="db.accounts",
        args={"page": 2},
    )
    reg.record_table(
        "accounts_page_1",
        [{"id": 7, "owner": "dee"}, {"id": 8, "owner": "eli"}],
        key="id",
        tool="db.accounts",
        args={"page": 1},
    )
    return reg


def claim_of(check: Any, reg: FactRegistry, output: dict[str, Any]) -> UnsupportedClaim:
    with pytest.raises(UnsupportedClaim) as info:
        check(reg, output)
    return info.value


# -- passing claims ---------------------------------------------------------------------------


def test_recorded_names_pass_from_a_domain_a_ranking_and_a_table_key_column() -> None:
    """A Domain's members, a Ranking's names and a Table's keys are all recorded names."""
    reg = regions_registry()
    reg.record_ranking("ctr", {"north": 0.04, "harbour": 0.05}, key="ctr")
    reg.record_table("stores", [{"id": 101}, {"id": 102}], key="id")
    entities_recorded(["winner", "others"], "regions")(
        reg, {"winner": "harbour", "others": ["north", "delta"]}
    )
    entities_recorded(["winner"], "ctr")(reg, {"winner": "north"})
    entities_recorded(["ids"], "stores")(reg, {"ids": [102, 101]})


def test_passing_output_goes_through_a_boundary_unchanged() -> None:
    """Inside a boundary, an output naming only recorded entities is returned as submitted."""
    reg = regions_registry()
    output = {"regions": ["north", "delta"]}
    check = entities_recorded(fields=["regions"], fact="regions")
    with boundary(reg, facts=["regions"], checks=[check]) as b:
        assert b.submit(output) is output


def test_named_check_reads_like_the_reference() -> None:
    """The NamedCheck is named entities_recorded(fact=..., fields=[...]) and tagged."""
    check = entities_recorded(("a", "b"), "regions", path="summary")
    assert check.name == "entities_recorded(fact='regions', fields=['a', 'b'])"
    assert check.family == "entities_recorded"
    assert check.facts == ("regions",)
    assert hash(check) == hash(entities_recorded(("a", "b"), "regions", path="summary"))


def test_signature_keeps_the_seed_keywords_in_order() -> None:
    """Builder and twin take fields, fact, path, allow_empty, case_sensitive (the seed's order)."""
    keywords = ["fields", "fact", "path", "allow_empty", "case_sensitive"]
    assert list(inspect.signature(entities_recorded).parameters) == keywords
    assert list(inspect.signature(check_entities_recorded).parameters) == [
        "registry",
        "output",
        *keywords,
    ]


def test_twin_raises_the_same_claim_as_the_builder() -> None:
    """check_entities_recorded runs the same check outside a boundary."""
    reg = regions_registry()
    built = claim_of(entities_recorded(["r"], "regions"), reg, {"r": "south"})
    with pytest.raises(UnsupportedClaim) as info:
        check_entities_recorded(reg, {"r": "south"}, fields=["r"], fact="regions")
    assert str(info.value) == str(built)
    check_entities_recorded(reg, {"r": "north"}, ["r"], "regions")


# -- blended names ----------------------------------------------------------------------------


def test_blended_name_fails_with_did_you_mean() -> None:
    """'north harbour' merges two real names: unknown_entity, naming both and the closest."""
    claim = claim_of(
        entities_recorded(["regions"], "regions"),
        regions_registry(),
        {"regions": ["north", "north harbour"]},
    )
    assert str(claim) == (
        "unsupported claim in field 'regions': model said 'north harbour', registered facts "
        "support ['delta', 'harbour', 'north'] | fact='regions' | "
        "provenance=crm.list_regions(active=True) | 'north harbour' at 'regions.1' is not among "
        "the 3 recorded names; it blends recorded names 'north' and 'harbour'; "
        "did you mean 'harbour'?"
    )
    assert claim.code == "unknown_entity"


def test_blended_name_without_a_separator_still_gets_a_suggestion() -> None:
    """'northharbour' is not split into words, but difflib still offers the closest name."""
    claim = claim_of(entities_recorded(["r"], "regions"), regions_registry(), {"r": "harbourdelta"})
    assert claim.reason.endswith("did you mean 'harbour'?")


def test_typo_gets_did_you_mean_the_closest_name() -> None:
    """A near-miss spelling names the closest recorded name."""
    claim = claim_of(entities_recorded(["r"], "regions"), regions_registry(), {"r": "hrbour"})
    assert claim.reason == "'hrbour' is not among the 3 recorded names; did you mean 'harbour'?"


def test_invented_name_far_from_every_recorded_name_gets_no_suggestion() -> None:
    """Nothing close means no guess: the reason states the miss and stops."""
    claim = claim_of(entities_recorded(["r"], "regions"), regions_registry(), {"r": "zzzzqx"})
    assert claim.reason == "'zzzzqx' is not among the 3 recorded names"


# -- case drift -------------------------------------------------------------------------------


def test_case_drift_fails_when_case_sensitive() -> None:
    """'Harbour' is not 'harbour' by default; the reason says only the case differs."""
    claim = claim_of(entities_recorded(["r"], "regions"), regions_registry(), {"r": "Harbour"})
    assert (claim.field, claim.claimed, claim.code) == ("r", "Harbour", "unknown_entity")
    assert claim.reason == (
        "'Harbour' is not among the 3 recorded names; did you mean 'harbour'? only the case "
        "differs (names compare case-sensitively; case_sensitive=False ignores case)"
    )


def test_case_insensitive_accepts_case_drift() -> None:
    """case_sensitive=False casefolds strings, so 'HARBOUR' and 'Straße'/'STRASSE' pass."""
    reg = regions_registry()
    reg.record_domain("streets", ["Straße"])
    check_entities_recorded(
        reg, {"r": ["HARBOUR", "North"]}, ["r"], "regions", case_sensitive=False
    )
    check_entities_recorded(reg, {"s": "STRASSE"}, ["s"], "streets", case_sensitive=False)


def test_names_differing_only_in_case_are_both_kept() -> None:
    """With 'Harbour' and 'harbour' recorded, each passes as itself and 'HARBOUR' suggests one."""
    reg = FactRegistry()
    reg.record_domain("ports", ["harbour", "Harbour", "delta"])
    check_entities_recorded(reg, {"p": ["harbour", "Harbour"]}, ["p"], "ports")
    claim = claim_of(entities_recorded(["p"], "ports"), reg, {"p": "HARBOUR"})
    assert claim.reason.startswith(
        "'HARBOUR' is not among the 3 recorded names; did you mean 'Harbour'? only the case"
    )
    check_entities_recorded(reg, {"p": "HARBOUR"}, ["p"], "ports", case_sensitive=False)


def test_ranking_names_are_listed_best_first() -> None:
    """A failure against a Ranking lists its names in ranked order."""
    reg = FactRegistry()
    reg.record_ranking("ctr", {"north": 0.0412, "harbour": 0.0455, "delta": 0.0301}, key="ctr")
    claim = claim_of(entities_recorded(["w"], "ctr"), reg, {"w": "south"})
    assert claim.supported == ["harbour", "north", "delta"]


def test_case_insensitive_still_rejects_unknown_names() -> None:
    """Ignoring case does not ignore spelling; the reason says case was ignored."""
    claim = claim_of(
        entities_recorded(["r"], "regions", case_sensitive=False),
        regions_registry(),
        {"r": "HARBOR"},
    )
    assert claim.reason == (
        "'HARBOR' is not among the 3 recorded names, ignoring case; did you mean 'harbour'?"
    )


def test_case_insensitive_keeps_ints_type_strict() -> None:
    """Casefolding applies to strings only: '101' never matches the int key 101."""
    claim = claim_of(
        entities_recorded(["ids"], "accounts", case_sensitive=False),
        accounts_registry(),
        {"ids": ["101"]},
    )
    assert (claim.claimed, claim.code) == ("101", "unknown_entity")


# -- leaked ids and type-strict keys -----------------------------------------------------------


def test_leaked_id_from_an_earlier_tool_call_fails_as_unknown_entity() -> None:
    """An id from page 1 is real, but not in the fact this output may use (page 2)."""
    claim = claim_of(entities_recorded(["ids"], "accounts"), accounts_registry(), {"ids": [101, 7]})
    assert str(claim) == (
        "unsupported claim in field 'ids': model said 7, registered facts support "
        "[101, 102, 1] | fact='accounts' | provenance=db.accounts(page=2) | "
        "7 at 'ids.1' is not among the 3 recorded names"
    )
    assert claim.code == "unknown_entity"


def test_numeric_string_never_matches_an_int_key() -> None:
    """'101' is not 101: the reason says the recorded name is the int."""
    claim = claim_of(entities_recorded(["id"], "accounts"), accounts_registry(), {"id": "101"})
    assert claim.reason == (
        "'101' is not among the 3 recorded names; '101' is a str, but the recorded name is "
        "the int 101 (names compare type-strictly)"
    )


def test_int_never_matches_a_numeric_string_name() -> None:
    """101 is not the recorded string '101'."""
    reg = FactRegistry()
    reg.record_domain("codes", ["101", "102"])
    claim = claim_of(entities_recorded(["c"], "codes"), reg, {"c": 101})
    assert claim.reason == (
        "101 is not among the 2 recorded names; 101 is an int, but the recorded name is the "
        "str '101' (names compare type-strictly)"
    )


@pytest.mark.parametrize("claimed", [True, 1.0])
def test_bool_and_float_never_match_an_int_key(claimed: Any) -> None:
    """True and 1.0 equal 1 in Python, but never as recorded names."""
    claim = claim_of(entities_recorded(["id"], "accounts"), accounts_registry(), {"id": claimed})
    assert claim.claimed is claimed
    assert claim.code == "unknown_entity"
    assert "but the recorded name is the int 1 (names compare type-strictly)" in claim.reason


def test_unhashable_and_none_claims_fail_without_crashing() -> None:
    """A dict, a nested list or None in place of a name is an unknown entity, not a TypeError."""
    check = entities_recorded(["r"], "regions")
    reg = regions_registry()
    for claimed in ({"name": "north"}, ["north"], None):
        claim = claim_of(check, reg, {"r": [claimed]})
        assert (claim.claimed, claim.code) == (claimed, "unknown_entity")


def test_tuple_is_one_composite_name() -> None:
    """A tuple claim is looked up as one (composite) key; a list of its parts is two names."""
    reg = FactRegistry()
    reg.record_table("pairs", [{"k": ("eu", 1)}, {"k": ("us", 2)}], key="k")
    entities_recorded(["k"], "pairs")(reg, {"k": ("eu", 1)})
    claim = claim_of(entities_recorded(["k"], "pairs"), reg, {"k": ["eu", 1]})
    assert claim.claimed == "eu"


# -- lists ------------------------------------------------------------------------------------


def test_empty_list_fails_as_a_none_qualified_claim() -> None:
    """[] claims that none qualified; without allow_empty that is an unsupported claim."""
    claim = claim_of(entities_recorded(["top"], "regions"), regions_registry(), {"top": []})
    assert str(claim) == (
        "unsupported claim in field 'top': model said [], registered facts support "
        "['delta', 'harbour', 'north'] | fact='regions' | "
        "provenance=crm.list_regions(active=True) | an empty list claims none qualified, but 3 "
        "names are recorded; pass allow_empty=True if an empty answer is valid here"
    )
    assert claim.code == "empty_list"


def test_empty_list_passes_with_allow_empty() -> None:
    """allow_empty=True accepts [] as a legitimate 'none qualified' answer."""
    entities_recorded(["top"], "regions", allow_empty=True)(regions_registry(), {"top": []})


def test_list_members_are_checked_in_order_and_the_first_miss_is_reported() -> None:
    """Each member is checked; the first unknown one (by position) is the claim."""
    claim = claim_of(
        entities_recorded(["top"], "regions"),
        regions_registry(),
        {"top": ["delta", "south", "west"]},
    )
    assert claim.claimed == "south"
    assert "'south' at 'top.1'" in claim.reason


def test_fields_are_checked_in_the_declared_order() -> None:
    """With two bad fields, the first declared one is reported."""
    claim = claim_of(
        entities_recorded(["b", "a"], "regions"), regions_registry(), {"a": "x", "b": "y"}
    )
    assert claim.field == "b"


def test_more_than_20_recorded_names_are_listed_as_the_first_20_plus_more() -> None:
    """A failure against 25 names lists the first 20 (sorted for a Domain) and '… (+5 more)'."""
    reg = FactRegistry()
    names = [f"n{i:02d}" for i in range(25)]
    reg.record_domain("many", list(reversed(names)))
    claim = claim_of(entities_recorded(["x"], "many"), reg, {"x": "zz"})
    assert claim.supported == [*names[:20], "… (+5 more)"]
    assert json.dumps(claim.to_dict()["supported"], ensure_ascii=False).endswith('"… (+5 more)"]')


def test_exactly_20_names_are_listed_without_a_more_marker() -> None:
    """Twenty recorded names are listed in full."""
    reg = FactRegistry()
    reg.record_domain("twenty", [f"n{i:02d}" for i in range(20)])
    claim = claim_of(entities_recorded(["x"], "twenty"), reg, {"x": "zz"})
    assert len(claim.supported) == 20
    assert claim.supported[-1] == "n19"


# -- missing fields ---------------------------------------------------------------------------


def test_missing_field_fails_with_the_standard_missing_claim() -> None:
    """An absent declared field is field_missing: MISSING claimed, 'a value' supported."""
    claim = claim_of(entities_recorded(["a", "b"], "regions"), regions_registry(), {"a": "north"})
    assert (claim.field, claim.claimed, claim.supported) == ("b", MISSING, "a value")
    assert (claim.code, claim.fact, claim.provenance) == ("field_missing", None, None)
    assert claim.reason == "the output declared no field 'b'"


def test_present_none_is_a_claim_of_none() -> None:
    """None is not 'missing': it is a claimed name that was never recorded."""
    claim = claim_of(entities_recorded(["a"], "regions"), regions_registry(), {"a": None})
    assert (claim.claimed, claim.code) == (None, "unknown_entity")


# -- path= walks into the output --------------------------------------------------------------


def test_path_walks_into_the_output_to_the_object_holding_the_fields() -> None:
    """path='summary' reads summary.winner and summary.others; the field is labelled with it."""
    check = entities_recorded(["winner", "others"], "regions", path="summary")
    reg = regions_registry()
    check(reg, {"summary": {"winner": "north", "others": ["delta"]}})
    claim = claim_of(check, reg, {"summary": {"winner": "north", "others": ["nrth"]}})
    assert claim.field == "summary.others"
    assert claim.reason == (
        "'nrth' at 'summary.others.0' is not among the 3 recorded names; did you mean 'north'?"
    )


def test_path_ending_on_a_list_fans_out_over_every_element() -> None:
    """path='summary.entities' with fields=['name'] checks each entity's name."""
    check = entities_recorded(["name"], "regions", path="summary.entities")
    reg = regions_registry()
    check(reg, {"summary": {"entities": [{"name": "north", "ctr": 1}, {"name": "delta"}]}})
    claim = claim_of(
        check, reg, {"summary": {"entities": [{"name": "north"}, {"name": "north harbour"}]}}
    )
    assert (claim.field, claim.claimed) == ("summary.entities.name", "north harbour")
    assert claim.reason.startswith("'north harbour' at 'summary.entities.1.name' is not among")


def test_path_may_index_into_a_list() -> None:
    """A numeric segment picks one element: path='pages.0'."""
    check = entities_recorded(["r"], "regions", path="pages.0")
    reg = regions_registry()
    check(reg, {"pages": [{"r": "north"}, {"r": "bogus"}]})
    assert claim_of(check, reg, {"pages": [{"r": "bogus"}]}).claimed == "bogus"


def test_path_missing_from_the_output_fails_as_field_missing() -> None:
    """A path the output does not have is the model's structure failing, not a crash."""
    check = entities_recorded(["name"], "regions", path="summary.entities")
    claim = claim_of(check, regions_registry(), {"summary": {"entity": []}})
    assert str(claim) == (
        "unsupported claim in field 'summary.entities': the output has no such field | the "
        "output declared nothing at path 'summary.entities' "
        "(no 'entities' under 'summary', a dict)"
    )
    assert claim.code == "field_missing"
    top = claim_of(check, regions_registry(), {"other": 1})
    assert top.field == "summary"  # the steps walked so far, up to the one the output lacks
    assert (
        top.reason == "the output declared nothing at path 'summary.entities' (no field 'summary')"
    )


def test_path_element_lacking_the_field_fails_as_field_missing() -> None:
    """One fanned-out element without the field is a missing field at that element."""
    check = entities_recorded(["name"], "regions", path="items")
    claim = claim_of(check, regions_registry(), {"items": [{"name": "north"}, {"nm": "delta"}]})
    assert (claim.field, claim.claimed, claim.code) == ("items.name", MISSING, "field_missing")
    assert claim.reason == "the output declared no field 'name' at 'items.1'"


def test_path_element_that_is_not_an_object_fails_as_field_missing() -> None:
    """A bare string where an object was expected cannot hold the field."""
    check = entities_recorded(["name"], "regions", path="items")
    claim = claim_of(check, regions_registry(), {"items": ["north"]})
    assert (claim.field, claim.claimed, claim.code) == ("items.name", "north", "field_missing")
    assert claim.reason == "'items.0' is a str, not an object holding field 'name'"


def test_path_ending_on_an_empty_list_fails_unless_allow_empty() -> None:
    """No elements means no names: the none-qualified rule applies to the fan-out too."""
    check = entities_recorded(["name"], "regions", path="items")
    claim = claim_of(check, regions_registry(), {"items": []})
    assert (claim.field, claim.code) == ("items", "empty_list")
    entities_recorded(["name"], "regions", path="items", allow_empty=True)(
        regions_registry(), {"items": []}
    )


# -- developer mistakes -----------------------------------------------------------------------


def test_fact_holding_no_names_is_a_type_error_naming_the_recorders() -> None:
    """A plain value cannot back a membership check: TypeError, not a blamed model."""
    reg = FactRegistry()
    reg.record("total", 12)
    with pytest.raises(TypeError, match=r"fact 'total' is a int; entity checks need a Domain"):
        entities_recorded(["a"], "total")(reg, {"a": "x"})


def test_unregistered_fact_raises_unregistered_fact() -> None:
    """Reading a fact the registry does not hold is UnregisteredFact."""
    with pytest.raises(UnregisteredFact):
        entities_recorded(["a"], "nope")(regions_registry(), {"a": "north"})


# -- build-time validation --------------------------------------------------------------------


def test_bare_string_fields_is_a_type_error_at_build() -> None:
    """fields='winner' would be checked letter by letter; it is refused with a fix."""
    with pytest.raises(TypeError) as info:
        entities_recorded("winner", "regions")  # type: ignore[arg-type]
    assert str(info.value) == (
        "entities_recorded: fields must be a list of output field names, not a single string "
        "(did you mean fields=['winner']?)"
    )


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"fields": None}, TypeError, "fields must be a list of output field names, got None"),
        ({"fields": 3}, TypeError, "fields must be a list of output field names, got 3"),
        ({"fields": []}, ValueError, "fields must name at least one output field, got []"),
        ({"fields": ["a", ""]}, TypeError, "every entry of fields must be a non-empty string"),
        ({"fields": ["a", 1]}, TypeError, "every entry of fields must be a non-empty string"),
        ({"fields": ["a", "a"]}, ValueError, "fields must not repeat a field, got ['a', 'a']"),
        ({"fact": ""}, TypeError, "fact must be a non-empty string, got ''"),
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
        ({"path": "a..b"}, ValueError, "path must be dotted names or list indices"),
        ({"path": ".a"}, ValueError, "path must be dotted names or list indices"),
        ({"allow_empty": 1}, TypeError, "allow_empty must be True or False, got 1"),
        ({"case_sensitive": "no"}, TypeError, "case_sensitive must be True or False, got 'no'"),
    ],
)
def test_every_argument_is_validated_when_built(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    """Builder and twin refuse a bad argument before any output is checked."""
    arguments: dict[str, Any] = {"fields": ["a"], "fact": "regions", **kwargs}
    with pytest.raises(error) as info:
        entities_recorded(**arguments)
    assert str(info.value).startswith(f"entities_recorded: {message}")
    with pytest.raises(error):
        check_entities_recorded(regions_registry(), {"a": "north"}, **arguments)


def test_builder_does_not_touch_the_registry() -> None:
    """Building a check for a fact not yet recorded is fine; only running it reads the fact."""
    check = entities_recorded(["a"], "later")
    reg = FactRegistry()
    reg.record_domain("later", ["x"])
    check(reg, {"a": "x"})


# -- evidence is read, never copied or changed -------------------------------------------------


def test_checks_do_not_mutate_the_recorded_fact() -> None:
    """Passing and failing checks leave the recorded names exactly as recorded."""
    reg = accounts_registry()
    before = reg.value("accounts")
    entities_recorded(["ids"], "accounts")(reg, {"ids": [101, 102]})
    claim_of(entities_recorded(["ids"], "accounts", case_sensitive=False), reg, {"ids": ["x"]})
    assert reg.value("accounts") == before


def test_name_index_is_built_once_per_fact_not_per_call(monkeypatch: pytest.MonkeyPatch) -> None:
    """A 100,000-name domain: passing checks scan nothing; misses and casefolding scan once."""
    scans: list[str] = []
    real_names = _names._names

    def counting_names(value: Any) -> Any:
        scans.append(type(value).__name__)
        return real_names(value)

    monkeypatch.setattr(_names, "_names", counting_names)
    reg = FactRegistry()
    reg.record_domain("big", [f"name{i}" for i in range(100_000)])
    claims = [f"name{i}" for i in range(0, 100_000, 997)]
    for _ in range(3):
        check_entities_recorded(reg, {"n": claims}, ["n"], "big")
    assert scans == []

    def misses() -> None:
        check_entities_recorded(reg, {"n": ["NAME5"]}, ["n"], "big", case_sensitive=False)
        claim_of(entities_recorded(["n"], "big"), reg, {"n": "name5x"})

    misses()
    first_round = list(scans)
    assert first_round
    for _ in range(3):
        misses()
    assert scans == first_round


def test_large_domain_miss_still_suggests_a_name_sharing_the_first_letter() -> None:
    """Past 1,000 names the suggestion ranks a bounded candidate set, and still finds it."""
    reg = FactRegistry()
    reg.record_domain("big", [f"{chr(97 + i % 26)}item{i}" for i in range(10_000)])
    claim = claim_of(entities_recorded(["n"], "big"), reg, {"n": "bitem27x"})
    assert claim.reason.endswith("did you mean 'bitem27'?")


def test_report_mode_collects_the_entity_violation_with_the_others() -> None:
    """b.report() lists the failed entities check by name and never raises for it."""
    reg = regions_registry()
    checks = [entities_recorded(["a"], "regions"), entities_recorded(["b"], "regions")]
    with boundary(reg, facts=["regions"], checks=checks) as b:
        report = b.report({"a": "north", "b": "Delta"})
    assert report.failed == ("entities_recorded(fact='regions', fields=['b'])",)
    assert report.passed == ("entities_recorded(fact='regions', fields=['a'])",)
    assert report.violations[0].code == "unknown_entity"
