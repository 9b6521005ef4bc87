"""ranking_prefix: the top-k guard, pinned failure class by failure class."""

from __future__ import annotations

import inspect
import math
from typing import Any

import pytest

from groundplane_otel.boundary import boundary
from groundplane_otel.checks.ranking_prefix import check_ranking_prefix, ranking_prefix
from groundplane_otel.errors import (
    MISSING,
    SparseColumnWarning,
    UnregisteredFact,
    UnsupportedClaim,
)
from groundplane_otel.registry import FactRegistry


def campaign_registry() -> FactRegistry:
    """harbour > north > delta > east > west, no ties."""
    reg = FactRegistry()
    reg.record_ranking(
        "campaign_ctr",
        {"north": 0.0412, "harbour": 0.0455, "delta": 0.0301, "east": 0.021, "west": 0.0199},
        key="ctr",
        tool="warehouse.query",
        args={"table": "campaign_daily", "window": "7d"},
    )
    return reg


def tied_registry() -> FactRegistry:
    """a (10) | b, c, d tied at 8 | e (5) | f (1)."""
    reg = FactRegistry()
    reg.record_ranking(
        "scores",
        [("a", 10), ("b", 8), ("c", 8), ("d", 8), ("e", 5), ("f", 1)],
        key="pts",
        tool="league.table",
    )
    return reg


def claim_of(check: Any, reg: FactRegistry, output: dict[str, Any]) -> UnsupportedClaim:
    with pytest.raises(UnsupportedClaim) as info:
        check(reg, output)
    return info.value


PROVENANCE = "warehouse.query(table='campaign_daily', window='7d')"


# -- passing claims, surface ----------------------------------------------------------------


def test_computed_prefix_passes_through_the_boundary() -> None:
    """The computed top 3, best first, passes and submit() returns the output."""
    reg = campaign_registry()
    output = {"top": ["harbour", "north", "delta"]}
    check = ranking_prefix(fact="campaign_ctr", k=3)
    with boundary(reg, facts=["campaign_ctr"], checks=[check]) as b:
        assert b.submit(output) is output


def test_k_none_takes_the_claims_length() -> None:
    """Without k any length of correct prefix passes."""
    check = ranking_prefix("campaign_ctr")
    for k in range(1, 6):
        names = ["harbour", "north", "delta", "east", "west"][:k]
        check(campaign_registry(), {"top": names})


def test_tuple_claim_is_accepted_as_an_ordered_list() -> None:
    """A tuple is an ordered sequence of names like a list (documented choice)."""
    ranking_prefix("campaign_ctr", k=2)(campaign_registry(), {"top": ("harbour", "north")})


def test_twin_raises_the_same_claim_as_the_builder() -> None:
    """check_ranking_prefix(registry, output, ...) runs the same check outside a boundary."""
    reg = campaign_registry()
    output = {"top": ["north", "harbour"]}
    built = claim_of(ranking_prefix("campaign_ctr", k=2), reg, output)
    with pytest.raises(UnsupportedClaim) as info:
        check_ranking_prefix(reg, output, fact="campaign_ctr", k=2)
    assert str(info.value) == str(built)
    check_ranking_prefix(reg, {"top": ["harbour"]}, "campaign_ctr")


def test_named_check_reads_like_the_reference() -> None:
    """The NamedCheck is named ranking_prefix(fact=..., field=...) and tagged for telemetry."""
    check = ranking_prefix(fact="campaign_ctr", k=3)
    assert check.name == "ranking_prefix(fact='campaign_ctr', field='top')"
    assert check.family == "ranking_prefix"
    assert check.facts == ("campaign_ctr",)


def test_signature_keeps_the_seed_keywords_in_order() -> None:
    """Builder and twin take the seed's keywords, fact and field first."""
    keywords = [
        "fact",
        "field",
        "k",
        "ordered",
        "allow_tie_pick",
        "column",
        "higher_is_better",
        "on_missing",
    ]
    assert list(inspect.signature(ranking_prefix).parameters) == keywords
    assert list(inspect.signature(check_ranking_prefix).parameters) == [
        "registry",
        "output",
        *keywords,
    ]


# -- invented order -------------------------------------------------------------------------


def test_invented_order_names_first_differing_position_and_computed_name() -> None:
    """The right names in an invented order fail at the first position that differs."""
    claim = claim_of(
        ranking_prefix("campaign_ctr", k=3),
        campaign_registry(),
        {"top": ["harbour", "delta", "north"]},
    )
    assert claim.code == "order_mismatch"
    assert str(claim) == (
        "unsupported claim in field 'top': model said ['harbour', 'delta', 'north'], registered "
        f"facts support ['harbour', 'north', 'delta'] | fact='campaign_ctr' | "
        f"provenance={PROVENANCE} | position 2 holds 'delta' (ranked #3 at 0.0301); the "
        "computed order on 'ctr' has 'north' (0.0412) there"
    )


def test_reordering_inside_a_tie_block_passes() -> None:
    """Names that share a score may appear in any order among themselves."""
    check = ranking_prefix("scores", k=4)
    for block in (["b", "c", "d"], ["d", "b", "c"], ["c", "d", "b"]):
        check(tied_registry(), {"top": ["a", *block]})


def test_reordering_across_tie_blocks_fails_naming_the_tied_alternatives() -> None:
    """A name moved out of its tie block fails; the reason lists the names allowed there."""
    claim = claim_of(
        ranking_prefix("scores", k=5), tied_registry(), {"top": ["a", "b", "e", "c", "d"]}
    )
    assert claim.code == "order_mismatch"
    assert claim.reason == (
        "position 3 holds 'e' (ranked #5 at 5); the computed order on 'pts' has any of "
        "'b', 'c', 'd' (tied at 8) there"
    )


def test_ordered_false_accepts_any_order_of_the_right_names() -> None:
    """ordered=False compares the claim as a set."""
    check = ranking_prefix("campaign_ctr", k=3, ordered=False)
    check(campaign_registry(), {"top": ["delta", "harbour", "north"]})


# -- interlopers ----------------------------------------------------------------------------


def test_interloper_in_the_last_slot_names_its_real_rank() -> None:
    """A real but lower-ranked name in the last slot fails with where it really ranked."""
    claim = claim_of(
        ranking_prefix("campaign_ctr", k=3),
        campaign_registry(),
        {"top": ["harbour", "north", "east"]},
    )
    assert claim.code == "interloper"
    assert claim.supported == ["harbour", "north", "delta"]
    assert claim.reason == (
        "position 3 holds 'east' (ranked #4 at 0.021), an interloper from outside the top 3 "
        "on 'ctr', which ends with 'delta' (0.0301)"
    )


def test_interloper_is_caught_even_when_unordered() -> None:
    """ordered=False still refuses a name from below the cut."""
    claim = claim_of(
        ranking_prefix("campaign_ctr", k=2, ordered=False),
        campaign_registry(),
        {"top": ["west", "harbour"]},
    )
    assert claim.code == "interloper"
    assert claim.reason.startswith("position 1 holds 'west' (ranked #5 at 0.0199)")


def test_never_ranked_name_is_an_interloper() -> None:
    """A name the ranking never saw is an interloper that was never ranked."""
    claim = claim_of(
        ranking_prefix("campaign_ctr", k=2), campaign_registry(), {"top": ["harbour", "south"]}
    )
    assert claim.code == "interloper"
    assert claim.reason == "position 2 holds 'south', an interloper that was never ranked on 'ctr'"


def test_numeric_looking_string_is_not_the_int_key() -> None:
    """ "1" is not the int key 1 in a top-k: an interloper, with a type-strictness hint."""
    reg = FactRegistry()
    reg.record_ranking("ids", [(1, 30), (2, 20), (3, 10)], key="n")
    claim = claim_of(ranking_prefix("ids", k=2), reg, {"top": ["1", 2]})
    assert claim.code == "interloper"
    assert claim.reason.endswith("; 1 (int) is ranked, and names compare type-strictly")


def test_unhashable_member_is_an_interloper_not_a_type_error() -> None:
    """A nested list in the claim is a model mistake, never a TypeError."""
    claim = claim_of(
        ranking_prefix("campaign_ctr"), campaign_registry(), {"top": ["harbour", ["north"]]}
    )
    assert claim.code == "interloper"


# -- repeats --------------------------------------------------------------------------------


def test_repeated_name_fails_naming_both_positions() -> None:
    """A name listed twice fails as repeated_name with both 1-based positions."""
    claim = claim_of(
        ranking_prefix("campaign_ctr", k=3),
        campaign_registry(),
        {"top": ["harbour", "north", "harbour"]},
    )
    assert claim.code == "repeated_name"
    assert claim.reason == "'harbour' appears at positions 1 and 3; a top 3 names each entity once"


def test_repeats_are_type_strict() -> None:
    """1, True and 1.0 are three different names: no repeat, but True and 1.0 are unranked."""
    reg = FactRegistry()
    reg.record_ranking("ids", [(1, 30), (2, 20), (3, 10)], key="n")
    claim = claim_of(ranking_prefix("ids", k=3), reg, {"top": [1, True, 1.0]})
    assert claim.code == "interloper"
    assert claim.reason.startswith("position 2 holds True")


def test_repeat_of_an_unranked_name_is_reported_as_a_repeat() -> None:
    """Repeats are judged before membership: ['x', 'x'] is a repeat."""
    claim = claim_of(ranking_prefix("campaign_ctr"), campaign_registry(), {"top": ["x", "x"]})
    assert claim.code == "repeated_name"


# -- ties at the cut ------------------------------------------------------------------------


def test_cut_through_a_tie_block_fails() -> None:
    """A top 2 that cuts the b/c/d tie fails as tie_cut, naming the block and its score."""
    claim = claim_of(ranking_prefix("scores", k=2), tied_registry(), {"top": ["a", "b"]})
    assert claim.code == "tie_cut"
    assert claim.supported == ["a", "b", "c", "d"]
    assert str(claim) == (
        "unsupported claim in field 'top': model said ['a', 'b'], registered facts support "
        "['a', 'b', 'c', 'd'] | fact='scores' | provenance=league.table() | the cut at k=2 "
        "falls inside a tie on 'pts': 'b', 'c', 'd' share 8 at positions 2-4, so no top 2 is "
        "unique (k=1 or k=4 keeps the tie whole; allow_tie_pick=True accepts any 1 of them)"
    )


def test_cut_through_a_top_tie_suggests_only_the_whole_block() -> None:
    """When the tie starts at #1 the only tie-respecting cut is after the block."""
    reg = FactRegistry()
    reg.record_ranking("r", [("x", 5), ("y", 5), ("z", 1)], key="s")
    claim = claim_of(ranking_prefix("r"), reg, {"top": ["y"]})
    assert claim.code == "tie_cut"
    assert "(k=2 keeps the tie whole; allow_tie_pick=True accepts any 1 of them)" in claim.reason


def test_allow_tie_pick_accepts_any_names_from_the_cut_block() -> None:
    """With allow_tie_pick every choice of tied names for the remaining slots passes."""
    for ordered in (True, False):
        check = ranking_prefix("scores", k=3, allow_tie_pick=True, ordered=ordered)
        for pick in (["b", "c"], ["d", "b"], ["c", "d"]):
            check(tied_registry(), {"top": ["a", *pick]})


def test_cut_after_a_whole_tie_block_needs_no_tie_pick() -> None:
    """A cut that keeps every tie block whole is unique and passes without allow_tie_pick."""
    ranking_prefix("scores", k=5)(tied_registry(), {"top": ["a", "c", "d", "b", "e"]})


def test_wrong_claim_at_a_tied_cut_gets_its_real_diagnosis() -> None:
    """Stricter: a claim wrong whichever tied names it picked is not blamed on the tie."""
    reg = tied_registry()
    ordered = claim_of(ranking_prefix("scores", k=2), reg, {"top": ["b", "c"]})
    assert ordered.code == "order_mismatch"
    assert ordered.reason == (
        "position 1 holds 'b' (ranked #2 at 8, tied with 'c', 'd'); the computed order on "
        "'pts' has 'a' (10) there"
    )
    unordered = claim_of(ranking_prefix("scores", k=2, ordered=False), reg, {"top": ["c", "b"]})
    assert unordered.code == "interloper"
    assert unordered.reason == (
        "the top 2 on 'pts' leaves out 'a', ranked above the claimed 'c', 'b' (tied at 8, "
        "with room for 1)"
    )
    below = claim_of(ranking_prefix("scores", k=2), reg, {"top": ["a", "e"]})
    assert below.code == "interloper"


def test_wrong_claim_with_allow_tie_pick_still_fails() -> None:
    """allow_tie_pick accepts tied picks only; an omitted leader still fails."""
    check = ranking_prefix("scores", k=2, allow_tie_pick=True, ordered=False)
    assert claim_of(check, tied_registry(), {"top": ["c", "b"]}).code == "interloper"


# -- shape: not a list, length, empty ---------------------------------------------------------


@pytest.mark.parametrize(
    ("claimed", "suffix"),
    [
        ("harbour", "got a str (a bare string is one name, not a ranking)"),
        ({"harbour", "north"}, "got a set"),
        ({"1": "harbour"}, "got a dict"),
        (None, "got a NoneType"),
        (3, "got a int"),
    ],
)
def test_bare_string_and_other_non_lists_fail(claimed: Any, suffix: str) -> None:
    """Only a list (or tuple) is a top-k claim; a bare string, set or mapping is not_a_list."""
    claim = claim_of(ranking_prefix("campaign_ctr", k=2), campaign_registry(), {"top": claimed})
    assert claim.code == "not_a_list"
    assert claim.supported == ["harbour", "north"]
    assert claim.reason == f"expected a list of names, best first; {suffix}"


def test_bare_string_without_k_supports_a_list() -> None:
    """With k=None a non-list claim is told the facts support a list of ranked names."""
    claim = claim_of(ranking_prefix("campaign_ctr"), campaign_registry(), {"top": "harbour"})
    assert claim.supported == "a list of ranked names, best first"


def test_wrong_length_fails_against_k() -> None:
    """A claim shorter or longer than k fails as wrong_length, listing the computed top k."""
    reg = campaign_registry()
    claim = claim_of(ranking_prefix("campaign_ctr", k=3), reg, {"top": ["harbour", "north"]})
    assert claim.code == "wrong_length"
    assert claim.reason == "claimed 2 name(s); the top 3 on 'ctr' is 'harbour', 'north', 'delta'"
    longer = {"top": ["harbour", "north", "delta", "east"]}
    assert claim_of(ranking_prefix("campaign_ctr", k=3), reg, longer).code == "wrong_length"


def test_empty_list_without_k_fails_as_empty() -> None:
    """An empty list names no top-k at all."""
    claim = claim_of(ranking_prefix("campaign_ctr"), campaign_registry(), {"top": []})
    assert claim.code == "empty_list"
    assert (
        claim.reason == "an empty list names no top-k; computed #1 on 'ctr' is 'harbour' (0.0455)"
    )


def test_empty_list_with_k_fails_as_wrong_length() -> None:
    """With k given, an empty list is simply the wrong length."""
    claim = claim_of(ranking_prefix("campaign_ctr", k=1), campaign_registry(), {"top": []})
    assert claim.code == "wrong_length"


def test_length_is_judged_before_repeats() -> None:
    """Evaluation order: a too-long list with a repeat reports its length first."""
    output = {"top": ["harbour", "harbour", "north"]}
    claim = claim_of(ranking_prefix("campaign_ctr", k=2), campaign_registry(), output)
    assert claim.code == "wrong_length"


def test_missing_field_fails_as_missing() -> None:
    """An output without the field fails with supported='a value'."""
    claim = claim_of(ranking_prefix("campaign_ctr"), campaign_registry(), {"best": ["harbour"]})
    assert (claim.field, claim.claimed, claim.supported, claim.code) == (
        "top",
        MISSING,
        "a value",
        "field_missing",
    )


# -- fact kinds and developer mistakes --------------------------------------------------------


def test_table_column_ranking_with_int_keys() -> None:
    """A Table ranked by column= backs the check; lower-is-better reverses the order."""
    reg = FactRegistry()
    reg.record_table(
        "stores",
        [{"id": 101, "lat": 30.0}, {"id": 102, "lat": 12.5}, {"id": 103, "lat": 8.25}],
        key="id",
        tool="db",
    )
    ranking_prefix("stores", k=2, column="lat")(reg, {"top": [101, 102]})
    ranking_prefix("stores", k=2, column="lat", higher_is_better=False)(reg, {"top": [103, 102]})
    claim = claim_of(ranking_prefix("stores", k=2, column="lat"), reg, {"top": ["101", 102]})
    assert claim.code == "interloper"


def test_table_needs_column_and_ranking_refuses_it() -> None:
    """column= is required for a Table and refused for a Ranking (developer mistakes)."""
    reg = campaign_registry()
    reg.record_table("t", [{"id": "a", "v": 1}], key="id")
    with pytest.raises(ValueError, match="pass column="):
        ranking_prefix("t")(reg, {"top": ["a"]})
    with pytest.raises(ValueError, match="Tables only"):
        ranking_prefix("campaign_ctr", column="ctr")(reg, {"top": ["harbour"]})
    with pytest.raises(ValueError, match="higher_is_better"):
        ranking_prefix("campaign_ctr", higher_is_better=False)(reg, {"top": ["harbour"]})


def test_wrong_fact_kind_and_unknown_fact() -> None:
    """A Domain is a TypeError naming the recorders; an unknown fact is UnregisteredFact."""
    reg = FactRegistry()
    reg.record_domain("d", ["a"])
    with pytest.raises(TypeError, match="record_ranking"):
        ranking_prefix("d")(reg, {"top": ["a"]})
    with pytest.raises(UnregisteredFact):
        ranking_prefix("nope")(reg, {"top": ["a"]})


def test_k_larger_than_the_ranking_is_a_developer_error() -> None:
    """A k the ranking cannot fill is a ValueError, not blamed on the model."""
    with pytest.raises(ValueError) as info:
        ranking_prefix("campaign_ctr", k=6)(campaign_registry(), {"top": []})
    assert str(info.value) == (
        "ranking_prefix: k=6 but fact 'campaign_ctr' ranks only 5 name(s) on 'ctr'; "
        "no claim could pass"
    )


def test_sparse_column_raises_or_skips_with_a_warning() -> None:
    """A row lacking the column is a named data error, or skipped with a warning on 'skip'."""
    reg = FactRegistry()
    reg.record_table("t", [{"id": "a", "v": 3}, {"id": "b"}, {"id": "c", "v": 1}], key="id")
    with pytest.raises(ValueError, match="column 'v' is missing in row 'b'"):
        ranking_prefix("t", column="v")(reg, {"top": ["a"]})
    with pytest.warns(SparseColumnWarning):
        ranking_prefix("t", column="v", on_missing="skip")(reg, {"top": ["a", "c"]})


def test_report_mode_collects_the_claim() -> None:
    """report() lists a ranking_prefix violation without raising."""
    reg = campaign_registry()
    check = ranking_prefix("campaign_ctr", k=2)
    with boundary(reg, facts=["campaign_ctr"], checks=[check]) as b:
        report = b.report({"top": ["north", "harbour"]})
    assert report.failed == ("ranking_prefix(fact='campaign_ctr', field='top')",)
    assert report.violations[0].code == "order_mismatch"


def test_check_reads_evidence_without_copying(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checks read stored facts through peek(); the deep-copying accessors are never used."""
    reg = tied_registry()

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("a check copied recorded evidence")

    for accessor in ("get", "value", "ranking", "table"):
        monkeypatch.setattr(FactRegistry, accessor, refuse)
    ranking_prefix("scores", k=4)(reg, {"top": ["a", "d", "c", "b"]})
    claim_of(ranking_prefix("scores", k=2), reg, {"top": ["a", "b"]})


def test_large_tie_block_is_checked_in_linear_time() -> None:
    """10,000 names all tied: reordering passes and runs without quadratic block walks."""
    reg = FactRegistry()
    names = [f"n{i}" for i in range(10_000)]
    reg.record_ranking("flat", [(name, 1) for name in names], key="s")
    ranking_prefix("flat")(reg, {"top": list(reversed(names))})


# -- build-time validation --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"fact": None}, TypeError, "ranking_prefix: fact must be a non-empty string, got None"),
        ({"field": ""}, TypeError, "ranking_prefix: field must be a non-empty string, got ''"),
        ({"k": 0}, ValueError, "ranking_prefix: k must be None or an int >= 1, got 0"),
        ({"k": -2}, ValueError, "ranking_prefix: k must be None or an int >= 1, got -2"),
        ({"k": True}, ValueError, "ranking_prefix: k must be None or an int >= 1, got True"),
        ({"k": 2.0}, ValueError, "ranking_prefix: k must be None or an int >= 1, got 2.0"),
        ({"k": "3"}, ValueError, "ranking_prefix: k must be None or an int >= 1, got '3'"),
        ({"k": math.inf}, ValueError, "ranking_prefix: k must be None or an int >= 1, got inf"),
        ({"ordered": "yes"}, TypeError, "ranking_prefix: ordered must be True or False, got 'yes'"),
        (
            {"allow_tie_pick": None},
            TypeError,
            "ranking_prefix: allow_tie_pick must be True or False, got None",
        ),
        (
            {"column": 5},
            TypeError,
            "ranking_prefix: column must be a non-empty string or None, got 5",
        ),
        (
            {"higher_is_better": 0},
            TypeError,
            "ranking_prefix: higher_is_better must be True, False or None, got 0",
        ),
        (
            {"on_missing": "ignore"},
            ValueError,
            'ranking_prefix: on_missing must be "raise" or "skip", got \'ignore\'',
        ),
    ],
)
def test_every_argument_is_validated_when_built(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    """A bad argument fails when the builder runs (and when the twin runs), naming it."""
    arguments: dict[str, Any] = {"fact": "campaign_ctr", **kwargs}
    with pytest.raises(error) as info:
        ranking_prefix(**arguments)
    assert str(info.value) == message
    with pytest.raises(error):
        check_ranking_prefix(FactRegistry(), {}, **arguments)
