"""superlative: the argmax guard, pinned failure class by failure class."""

from __future__ import annotations

import inspect
import json
import math
import warnings
from typing import Any

import pytest

from groundplane_otel.boundary import boundary
from groundplane_otel.checks.superlative import check_superlative, superlative
from groundplane_otel.errors import (
    MISSING,
    SparseColumnWarning,
    UnregisteredFact,
    UnsupportedClaim,
)
from groundplane_otel.registry import FactRegistry

SEED_PROVENANCE = "warehouse.query(table='campaign_daily', window='7d')"


def campaign_registry() -> FactRegistry:
    reg = FactRegistry()
    reg.record_ranking(
        "campaign_ctr",
        {"north": 0.0412, "harbour": 0.0455, "delta": 0.0301},
        key="ctr",
        tool="warehouse.query",
        args={"table": "campaign_daily", "window": "7d"},
    )
    return reg


def tied_registry() -> FactRegistry:
    reg = FactRegistry()
    reg.record_ranking(
        "sales",
        [("ash", 90), ("birch", 120), ("cedar", 120), ("dogwood", 40)],
        key="units",
        tool="crm.report",
    )
    return reg


def table_registry() -> FactRegistry:
    reg = FactRegistry()
    reg.record_table(
        "stores",
        [
            {"id": 101, "name": "north", "revenue": 88000, "latency": 12.5},
            {"id": 102, "name": "harbour", "revenue": 91000, "latency": 30.0},
            {"id": 103, "name": "delta", "revenue": 47000, "latency": 8.25},
        ],
        key="id",
        tool="db.stores",
    )
    return reg


def claim_of(check: Any, reg: FactRegistry, output: dict[str, Any]) -> UnsupportedClaim:
    with pytest.raises(UnsupportedClaim) as info:
        check(reg, output)
    return info.value


# -- the seed's example ---------------------------------------------------------------------


def test_seed_campaign_ctr_wrong_winner_message_is_exact() -> None:
    """The README's north/harbour/delta example raises with exactly the README's text."""
    reg = campaign_registry()
    with (
        pytest.raises(UnsupportedClaim) as info,
        boundary(reg, facts=["campaign_ctr"], checks=[superlative(fact="campaign_ctr")]) as b,
    ):
        b.submit({"winner": "north"})
    assert str(info.value) == (
        "unsupported claim in field 'winner': model said 'north', registered facts support "
        "'harbour' | fact='campaign_ctr' | "
        "provenance=warehouse.query(table='campaign_daily', window='7d') | "
        "computed argmax on 'ctr' is 'harbour' (0.0455); 'north' ranked #2 at 0.0412"
    )
    assert info.value.code == "wrong_winner"


def test_correct_winner_passes_through_the_boundary() -> None:
    """Naming the computed argmax passes and submit() returns the output unchanged."""
    reg = campaign_registry()
    output = {"winner": "harbour", "ctr": 0.0455}
    check = superlative(fact="campaign_ctr", score_field="ctr")
    with boundary(reg, facts=["campaign_ctr"], checks=[check]) as b:
        assert b.submit(output) is output


def test_twin_raises_the_same_claim_as_the_builder() -> None:
    """check_superlative(registry, output, ...) runs the same check outside a boundary."""
    reg = campaign_registry()
    built = claim_of(superlative("campaign_ctr"), reg, {"winner": "north"})
    with pytest.raises(UnsupportedClaim) as info:
        check_superlative(reg, {"winner": "north"}, fact="campaign_ctr")
    assert str(info.value) == str(built)
    check_superlative(reg, {"winner": "harbour"}, "campaign_ctr")


def test_named_check_reads_like_the_reference() -> None:
    """The NamedCheck is named superlative(fact=..., field=...) and tagged for telemetry."""
    check = superlative(fact="campaign_ctr", winner_field="best")
    assert check.name == "superlative(fact='campaign_ctr', field='best')"
    assert check.family == "superlative"
    assert check.facts == ("campaign_ctr",)
    assert check == superlative(fact="campaign_ctr", winner_field="best")
    assert hash(check) == hash(superlative(fact="campaign_ctr", winner_field="best"))


def test_signature_keeps_the_seed_keywords_in_order() -> None:
    """Builder and twin take the seed's keywords, fact and winner_field first."""
    keywords = [
        "fact",
        "winner_field",
        "score_field",
        "rank_field",
        "tolerance",
        "rel_tolerance",
        "allow_tie_pick",
        "column",
        "higher_is_better",
        "on_missing",
    ]
    assert list(inspect.signature(superlative).parameters) == keywords
    assert list(inspect.signature(check_superlative).parameters) == [
        "registry",
        "output",
        *keywords,
    ]


# -- wrong winner ---------------------------------------------------------------------------


def test_wrong_winner_names_computed_argmax_and_rank() -> None:
    """A wrong pick carries the computed winner as `supported` and the wrong_winner code."""
    claim = claim_of(superlative("campaign_ctr"), campaign_registry(), {"winner": "north"})
    assert (claim.field, claim.claimed, claim.supported) == ("winner", "north", "harbour")
    assert claim.fact == "campaign_ctr"
    assert str(claim.provenance) == SEED_PROVENANCE


def test_wrong_winner_that_is_the_argmin_says_the_direction_looks_reversed() -> None:
    """Picking the worst of three or more hints at a min/max direction flip."""
    claim = claim_of(superlative("campaign_ctr"), campaign_registry(), {"winner": "delta"})
    assert claim.code == "wrong_winner"
    assert claim.reason == (
        "computed argmax on 'ctr' is 'harbour' (0.0455); 'delta' ranked #3 at 0.0301 "
        "(last: the computed argmin, as if lower were better)"
    )


def test_min_max_direction_flip_on_a_lower_is_better_ranking_fails() -> None:
    """On a lower-is-better ranking the largest value is not the winner; the reason says argmin."""
    reg = FactRegistry()
    reg.record_ranking(
        "latency", {"a": 120, "b": 80, "c": 300}, key="p95_ms", tool="apm", higher_is_better=False
    )
    claim = claim_of(superlative("latency"), reg, {"winner": "c"})
    assert claim.supported == "b"
    assert claim.reason == (
        "computed argmin on 'p95_ms' is 'b' (80); 'c' ranked #3 at 300 "
        "(last: the computed argmax, as if higher were better)"
    )
    superlative("latency")(reg, {"winner": "b"})


def test_table_column_lower_is_better_picks_the_argmin() -> None:
    """A Table ranked with higher_is_better=False makes the smallest value the winner."""
    reg = table_registry()
    check = superlative("stores", column="latency", higher_is_better=False)
    check(reg, {"winner": 103})
    claim = claim_of(check, reg, {"winner": 102})
    assert claim.supported == 103
    assert claim.reason.startswith("computed argmin on 'latency' is 103 (8.25); 102 ranked #3")


def test_wrong_winner_tied_with_others_lists_its_block() -> None:
    """A wrong pick that shares its score says whom it is tied with."""
    reg = FactRegistry()
    reg.record_ranking("r", {"a": 9, "b": 5, "c": 5, "d": 1}, key="s")
    claim = claim_of(superlative("r"), reg, {"winner": "c"})
    assert claim.reason == "computed argmax on 's' is 'a' (9); 'c' ranked #2 at 5, tied with 'b'"


# -- never ranked ---------------------------------------------------------------------------


def test_unranked_entity_was_never_ranked() -> None:
    """A name the ranking never saw fails as not_ranked, before any argmax comparison."""
    claim = claim_of(superlative("campaign_ctr"), campaign_registry(), {"winner": "southgate"})
    assert claim.code == "not_ranked"
    assert str(claim) == (
        "unsupported claim in field 'winner': model said 'southgate', registered facts support "
        f"'harbour' | fact='campaign_ctr' | provenance={SEED_PROVENANCE} | computed argmax on "
        "'ctr' is 'harbour' (0.0455); 'southgate' was never ranked"
    )


@pytest.mark.parametrize(
    ("claimed", "hint"),
    [
        ("102", "; 102 (int) is ranked, and names compare type-strictly"),
        (102.0, "; 102 (int) is ranked, and names compare type-strictly"),
    ],
)
def test_numeric_looking_string_is_not_the_int_key(claimed: Any, hint: str) -> None:
    """ "102" and 102.0 are not the int key 102: never ranked, with a type-strictness hint."""
    claim = claim_of(superlative("stores", column="revenue"), table_registry(), {"winner": claimed})
    assert claim.code == "not_ranked"
    assert claim.supported == 102
    assert claim.reason.endswith(f"{claimed!r} was never ranked{hint}")


def test_bool_claim_is_not_the_int_key_one() -> None:
    """True never names the row keyed 1 (1 != True for keys)."""
    reg = FactRegistry()
    reg.record_ranking("r", [(1, 10), (2, 5)], key="s")
    claim = claim_of(superlative("r"), reg, {"winner": True})
    assert claim.code == "not_ranked"
    assert claim.reason.endswith(
        "True was never ranked; 1 (int) is ranked, and names compare type-strictly"
    )


def test_case_drift_is_not_the_ranked_name() -> None:
    """'Harbour' is not 'harbour'; the reason points at the case-sensitive match."""
    claim = claim_of(superlative("campaign_ctr"), campaign_registry(), {"winner": "Harbour"})
    assert claim.code == "not_ranked"
    assert claim.reason.endswith("; 'harbour' is ranked, and names compare case-sensitively")


def test_unhashable_claim_is_never_ranked_not_a_type_error() -> None:
    """A list where a name belongs is a model mistake (not_ranked), never a TypeError."""
    claim = claim_of(superlative("campaign_ctr"), campaign_registry(), {"winner": ["harbour"]})
    assert claim.code == "not_ranked"


def test_none_is_a_claim_of_none() -> None:
    """A present None is claimed as None and fails as never ranked."""
    claim = claim_of(superlative("campaign_ctr"), campaign_registry(), {"winner": None})
    assert claim.claimed is None
    assert claim.code == "not_ranked"


# -- ties -----------------------------------------------------------------------------------


def test_tie_flattened_into_one_winner_fails() -> None:
    """Naming one of two names sharing the top score fails as tie_flattened."""
    claim = claim_of(superlative("sales"), tied_registry(), {"winner": "cedar"})
    assert claim.code == "tie_flattened"
    assert claim.supported == ["birch", "cedar"]
    assert str(claim) == (
        "unsupported claim in field 'winner': model said 'cedar', registered facts support "
        "['birch', 'cedar'] | fact='sales' | provenance=crm.report() | computed argmax on "
        "'units' is a tie between 'birch', 'cedar' (120); naming 'cedar' alone flattens the "
        "tie (pass allow_tie_pick=True to accept any tied name)"
    )


def test_allow_tie_pick_accepts_any_name_in_the_tied_top_block() -> None:
    """With allow_tie_pick every tied leader passes, score and rank fields included."""
    check = superlative("sales", score_field="units", rank_field="rank", allow_tie_pick=True)
    for name in ("birch", "cedar"):
        check(tied_registry(), {"winner": name, "units": 120, "rank": 1})


def test_claim_outside_tied_top_gets_wrong_winner_not_tie_diagnosis() -> None:
    """Stricter than the reference: a pick below a tied top is a wrong winner, not a tie issue."""
    for allow in (False, True):
        check = superlative("sales", allow_tie_pick=allow)
        claim = claim_of(check, tied_registry(), {"winner": "ash"})
        assert claim.code == "wrong_winner"
        assert claim.supported == ["birch", "cedar"]
        assert claim.reason == (
            "computed argmax on 'units' is a tie between 'birch', 'cedar' (120); "
            "'ash' ranked #3 at 90"
        )


# -- score_field ----------------------------------------------------------------------------


def test_invented_score_on_the_right_winner_fails_with_offset() -> None:
    """The right winner with a score nobody computed fails on the score field, off by +N."""
    reg = table_registry()
    check = superlative("stores", score_field="revenue", column="revenue")
    claim = claim_of(check, reg, {"winner": 102, "revenue": 91490})
    assert claim.code == "score_mismatch"
    assert str(claim) == (
        "unsupported claim in field 'revenue': model said 91490, registered facts support 91000 "
        "| fact='stores' | provenance=db.stores() | computed 'revenue' of 102 is 91000; the "
        "claim is off by +490 (exact comparison)"
    )


def test_score_from_another_row_names_its_owner() -> None:
    """Quoting the runner-up's score against the winner says whose score it is."""
    check = superlative("campaign_ctr", score_field="ctr")
    claim = claim_of(check, campaign_registry(), {"winner": "harbour", "ctr": 0.0412})
    assert (claim.field, claim.claimed, claim.supported) == ("ctr", 0.0412, 0.0455)
    assert claim.reason.endswith("; 0.0412 is the score of 'north' (ranked #2)")


def test_score_is_exact_by_default_and_tolerances_loosen_it() -> None:
    """tolerance=0 refuses a rounded score; tolerance and rel_tolerance accept within bounds."""
    reg = campaign_registry()
    output = {"winner": "harbour", "ctr": 0.046}
    assert claim_of(superlative("campaign_ctr", score_field="ctr"), reg, output).code == (
        "score_mismatch"
    )
    superlative("campaign_ctr", score_field="ctr", tolerance=0.0006)(reg, output)
    superlative("campaign_ctr", score_field="ctr", rel_tolerance=0.02)(reg, output)
    claim = claim_of(superlative("campaign_ctr", score_field="ctr", tolerance=1e-4), reg, output)
    assert "(tolerance=0.0001, rel_tolerance=None)" in claim.reason


def test_rel_tolerance_none_is_not_isclose_default() -> None:
    """rel_tolerance=None means 0: a score one ulp-scale off in the 10th digit still fails."""
    reg = FactRegistry()
    reg.record_ranking("r", {"a": 1.0, "b": 0.5}, key="s")
    check = superlative("r", score_field="s")
    claim_of(check, reg, {"winner": "a", "s": 1.0 + 1e-10})
    superlative("r", score_field="s", rel_tolerance=1e-9)(reg, {"winner": "a", "s": 1.0 + 1e-10})


def test_int_score_equal_to_float_score_passes() -> None:
    """An int claim equal to an integral float score is the same number."""
    reg = FactRegistry()
    reg.record_ranking("r", {"a": 3.0, "b": 1.0}, key="s")
    superlative("r", score_field="s")(reg, {"winner": "a", "s": 3})


@pytest.mark.parametrize("score", ["0.0455", True, math.nan, math.inf, None, [0.0455]])
def test_numeric_string_bool_and_nan_scores_are_not_numbers(score: Any) -> None:
    """A numeric-looking string, a bool, NaN, inf or None is never a score: not_a_number."""
    check = superlative("campaign_ctr", score_field="ctr")
    claim = claim_of(check, campaign_registry(), {"winner": "harbour", "ctr": score})
    assert claim.code == "not_a_number"
    assert claim.supported == 0.0455
    assert f"; {score!r} ({type(score).__name__}) is not a finite number" in claim.reason


def test_missing_score_field_fails_as_missing() -> None:
    """A declared score_field the output lacks fails with supported='a value'."""
    check = superlative("campaign_ctr", score_field="ctr")
    claim = claim_of(check, campaign_registry(), {"winner": "harbour"})
    assert (claim.field, claim.claimed, claim.supported) == ("ctr", MISSING, "a value")
    assert claim.code == "field_missing"


# -- rank_field -----------------------------------------------------------------------------


def test_inconsistent_rank_fails() -> None:
    """The right winner with a rank other than 1 fails as rank_mismatch."""
    check = superlative("campaign_ctr", rank_field="rank")
    claim = claim_of(check, campaign_registry(), {"winner": "harbour", "rank": 2})
    assert (claim.field, claim.claimed, claim.supported, claim.code) == (
        "rank",
        2,
        1,
        "rank_mismatch",
    )
    assert claim.reason == (
        "'harbour' is the computed argmax on 'ctr', ranked #1; the claim says #2"
    )
    check(campaign_registry(), {"winner": "harbour", "rank": 1})


@pytest.mark.parametrize("rank", [True, 1.0, "1", None])
def test_rank_must_be_exactly_int_one(rank: Any) -> None:
    """True, 1.0 and "1" are not the rank 1: not_an_integer."""
    check = superlative("campaign_ctr", rank_field="rank")
    claim = claim_of(check, campaign_registry(), {"winner": "harbour", "rank": rank})
    assert claim.code == "not_an_integer"
    assert claim.reason == (
        f"'harbour' is ranked #1 on 'ctr'; a rank is the int 1, and {rank!r} "
        f"({type(rank).__name__}) is not an int"
    )


# -- evaluation order -----------------------------------------------------------------------


def test_winner_is_judged_before_score_and_rank() -> None:
    """A wrong winner with a wrong score and rank reports the winner, the first problem."""
    check = superlative("campaign_ctr", score_field="ctr", rank_field="rank")
    claim = claim_of(check, campaign_registry(), {"winner": "north", "ctr": 1, "rank": 7})
    assert claim.field == "winner"


def test_score_is_judged_before_rank() -> None:
    """With the winner right, the score field is checked before the rank field."""
    check = superlative("campaign_ctr", score_field="ctr", rank_field="rank")
    claim = claim_of(check, campaign_registry(), {"winner": "harbour", "ctr": 1, "rank": 7})
    assert claim.field == "ctr"


def test_missing_winner_field_fails_before_anything_else() -> None:
    """An output without the winner field fails as a missing field (no fact, no provenance)."""
    claim = claim_of(superlative("campaign_ctr"), campaign_registry(), {"best": "harbour"})
    assert str(claim) == (
        "unsupported claim in field 'winner': the output has no such field | the output "
        "declared no field 'winner'"
    )


def test_unregistered_fact_is_reported_before_the_output_is_read() -> None:
    """Resolving the fact comes first: an unknown fact is UnregisteredFact even for bad output."""
    with pytest.raises(UnregisteredFact):
        superlative("nope")(campaign_registry(), {})


# -- fact kinds and developer mistakes ------------------------------------------------------


def test_table_needs_column() -> None:
    """A Table without column= is a developer mistake naming the fact, not a model mistake."""
    with pytest.raises(ValueError, match="fact 'stores' is a Table: pass column="):
        superlative("stores")(table_registry(), {"winner": 102})


def test_table_with_column_ranks_by_that_column() -> None:
    """A Table with column= is ranked by that column; int keys stay ints."""
    reg = table_registry()
    superlative("stores", column="revenue", score_field="revenue")(
        reg, {"winner": 102, "revenue": 91000}
    )


def test_ranking_refuses_column() -> None:
    """column= on a Ranking is a ValueError."""
    with pytest.raises(ValueError, match="column= applies to Tables only"):
        superlative("campaign_ctr", column="ctr")(campaign_registry(), {"winner": "harbour"})


def test_ranking_refuses_a_contradicting_direction() -> None:
    """higher_is_better=False on a higher-is-better Ranking is a ValueError; True is fine."""
    reg = campaign_registry()
    with pytest.raises(ValueError, match="higher_is_better=True"):
        superlative("campaign_ctr", higher_is_better=False)(reg, {"winner": "harbour"})
    superlative("campaign_ctr", higher_is_better=True)(reg, {"winner": "harbour"})


def test_wrong_fact_kind_is_a_type_error() -> None:
    """A Domain (or a plain value) cannot back a superlative: TypeError naming the recorders."""
    reg = FactRegistry()
    reg.record_domain("names", ["a", "b"])
    reg.record("plain", 3)
    for fact in ("names", "plain"):
        with pytest.raises(TypeError, match="record_ranking"):
            superlative(fact)(reg, {"winner": "a"})


def test_row_missing_the_column_is_a_named_data_error() -> None:
    """A row lacking the ranked column raises a ValueError naming fact, column and row."""
    reg = FactRegistry()
    reg.record_table("t", [{"id": "a", "v": 3}, {"id": "b"}], key="id", tool="q")
    with pytest.raises(ValueError, match="fact 't': column 'v' is missing in row 'b'"):
        superlative("t", column="v")(reg, {"winner": "a"})


def test_on_missing_skip_warns_and_ranks_the_rest() -> None:
    """on_missing='skip' drops rows lacking the column with a SparseColumnWarning."""
    reg = FactRegistry()
    reg.record_table("t", [{"id": "a", "v": 3}, {"id": "b"}], key="id", tool="q")
    with pytest.warns(SparseColumnWarning):
        superlative("t", column="v", on_missing="skip")(reg, {"winner": "a"})


def test_bad_recorded_cell_is_a_data_error_not_the_models_fault() -> None:
    """A non-numeric cell in the ranked column is a ValueError naming fact, column and row."""
    reg = FactRegistry()
    reg.record_table("t", [{"id": "a", "v": 3}, {"id": "b", "v": "7"}], key="id")
    with pytest.raises(ValueError, match=r"fact 't': column 'v', row 'b'"):
        superlative("t", column="v")(reg, {"winner": "a"})


def test_report_mode_collects_the_claim_and_developer_errors_propagate() -> None:
    """report() lists a wrong winner without raising, but a misconfigured check still raises."""
    reg = campaign_registry()
    check = superlative("campaign_ctr")
    with boundary(reg, facts=["campaign_ctr"], checks=[check]) as b:
        report = b.report({"winner": "north"})
    assert report.failed == ("superlative(fact='campaign_ctr', field='winner')",)
    assert report.violations[0].code == "wrong_winner"
    bad = superlative("campaign_ctr", column="ctr")
    with (
        pytest.raises(ValueError, match="Tables only"),
        boundary(reg, facts=["campaign_ctr"], checks=[bad]) as b,
    ):
        b.report({"winner": "harbour"})


def test_claim_to_dict_is_strict_json() -> None:
    """UnsupportedClaim.to_dict() of a superlative failure encodes as strict JSON."""
    check = superlative("campaign_ctr", score_field="ctr")
    claim = claim_of(check, campaign_registry(), {"winner": "harbour", "ctr": math.nan})
    json.dumps(claim.to_dict(), allow_nan=False)


def test_check_reads_evidence_without_copying(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checks read stored facts through peek(); the deep-copying accessors are never used."""
    reg = table_registry()

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("a check copied recorded evidence")

    for accessor in ("get", "value", "ranking", "table"):
        monkeypatch.setattr(FactRegistry, accessor, refuse)
    superlative("stores", column="revenue")(reg, {"winner": 102})
    claim_of(superlative("stores", column="revenue"), reg, {"winner": 101})


def test_checking_never_mutates_the_recorded_fact() -> None:
    """The stored ranking is identical (same object, same items) after passing and failing."""
    reg = campaign_registry()
    stored = reg.peek("campaign_ctr")
    before = stored.value.items
    superlative("campaign_ctr")(reg, {"winner": "harbour"})
    claim_of(superlative("campaign_ctr"), reg, {"winner": "north"})
    assert reg.peek("campaign_ctr") is stored
    assert stored.value.items == before


# -- build-time validation ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"fact": ""}, TypeError, "superlative: fact must be a non-empty string, got ''"),
        ({"fact": 3}, TypeError, "superlative: fact must be a non-empty string, got 3"),
        (
            {"winner_field": None},
            TypeError,
            "superlative: winner_field must be a non-empty string, got None",
        ),
        (
            {"score_field": 1},
            TypeError,
            "superlative: score_field must be a non-empty string or None, got 1",
        ),
        (
            {"rank_field": ""},
            TypeError,
            "superlative: rank_field must be a non-empty string or None, got ''",
        ),
        (
            {"score_field": "winner"},
            ValueError,
            "superlative: winner_field, score_field and rank_field must be distinct output "
            "fields, got ['winner', 'winner']",
        ),
        (
            {"tolerance": -1},
            ValueError,
            "superlative: tolerance must be a finite number >= 0, got -1",
        ),
        (
            {"tolerance": True},
            ValueError,
            "superlative: tolerance must be a finite number >= 0, got True",
        ),
        (
            {"tolerance": math.nan},
            ValueError,
            "superlative: tolerance must be a finite number >= 0, got nan",
        ),
        (
            {"rel_tolerance": "0.1"},
            ValueError,
            "superlative: rel_tolerance must be None or a finite number >= 0, got '0.1'",
        ),
        (
            {"rel_tolerance": -0.5},
            ValueError,
            "superlative: rel_tolerance must be None or a finite number >= 0, got -0.5",
        ),
        (
            {"allow_tie_pick": 1},
            TypeError,
            "superlative: allow_tie_pick must be True or False, got 1",
        ),
        (
            {"column": ""},
            TypeError,
            "superlative: column must be a non-empty string or None, got ''",
        ),
        (
            {"higher_is_better": "yes"},
            TypeError,
            "superlative: higher_is_better must be True, False or None, got 'yes'",
        ),
        (
            {"on_missing": "drop"},
            ValueError,
            'superlative: on_missing must be "raise" or "skip", got \'drop\'',
        ),
    ],
)
def test_every_argument_is_validated_when_built(
    kwargs: dict[str, Any], error: type[Exception], message: str
) -> None:
    """A bad argument fails when the builder runs (and when the twin runs), naming it."""
    arguments: dict[str, Any] = {"fact": "campaign_ctr", **kwargs}
    with pytest.raises(error) as info:
        superlative(**arguments)
    assert str(info.value) == message
    with pytest.raises(error):
        check_superlative(FactRegistry(), {}, **arguments)


def test_builder_does_not_touch_the_registry() -> None:
    """Building a check for a fact not recorded yet is fine; only running it resolves the fact."""
    check = superlative("later", score_field="s", rank_field="r", tolerance=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert check.name == "superlative(fact='later', field='winner')"
