"""A groundplane user can switch imports: every name and keyword of the seed's API table exists."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import pytest

import groundplane_otel as gp

BUILDERS: dict[str, tuple[str, ...]] = {
    "superlative": (
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
    ),
    "field_matches_fact": ("field", "fact"),
    "ranking_prefix": (
        "fact",
        "field",
        "k",
        "ordered",
        "allow_tie_pick",
        "column",
        "higher_is_better",
        "on_missing",
    ),
    "aggregate_reconciles": (
        "fact",
        "field",
        "column",
        "op",
        "where",
        "weight_column",
        "tolerance",
        "rel_tolerance",
    ),
    "entities_recorded": ("fields", "fact", "path", "allow_empty", "case_sensitive"),
    "row_integrity": ("fact", "key_field", "fields", "tolerance", "rel_tolerance"),
    "comparison": (
        "fact",
        "a_field",
        "b_field",
        "delta_field",
        "column",
        "kind",
        "direction",
        "tolerance",
        "rel_tolerance",
    ),
}

METHODS: dict[str, tuple[str, ...]] = {
    "record": ("name", "value", "tool", "args"),
    "record_ranking": ("name", "scores", "key", "tool", "higher_is_better"),
    "record_table": ("name", "rows", "key", "tool", "columns", "exhaustive"),
    "record_domain": ("name", "members", "tool", "label"),
    "tool": ("name", "fact"),
}


def parameters(fn: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(fn).parameters)


@pytest.mark.parametrize(("builder", "keywords"), sorted(BUILDERS.items()))
def test_builder_and_twin_take_the_seed_keywords(builder: str, keywords: tuple[str, ...]) -> None:
    """Each builder accepts the seed's keywords; its check_ twin takes (registry, output, same)."""
    build = getattr(gp, builder)
    twin = getattr(gp, f"check_{builder}")
    assert set(keywords) <= set(parameters(build))
    twin_params = parameters(twin)
    assert twin_params[:2] == ["registry", "output"]
    assert set(keywords) <= set(twin_params[2:])


@pytest.mark.parametrize(("method", "keywords"), sorted(METHODS.items()))
def test_registry_methods_take_the_seed_keywords(method: str, keywords: tuple[str, ...]) -> None:
    """FactRegistry's recorders keep the seed's parameter names."""
    assert set(keywords) <= set(parameters(getattr(gp.FactRegistry, method)))


def test_boundary_and_report_surface() -> None:
    """boundary(reg, facts=, checks=, require_output=, mode=) and Report's members exist."""
    assert parameters(gp.boundary)[:5] == ["registry", "facts", "checks", "require_output", "mode"]
    for member in ("violations", "passed", "failed", "ok", "to_dict", "to_text"):
        assert hasattr(gp.Report(), member)
    for member in ("submit", "report", "facts", "validate"):
        assert callable(getattr(gp.Boundary, member))


def test_error_hierarchy() -> None:
    """UnsupportedClaim, ClaimsUnsupported and UnregisteredFact are FactBoundaryErrors."""
    for error in (gp.UnsupportedClaim, gp.ClaimsUnsupported, gp.UnregisteredFact):
        assert issubclass(error, gp.FactBoundaryError)
    assert issubclass(gp.SparseColumnWarning, UserWarning)


def test_every_public_name_is_exported() -> None:
    """__all__ lists exactly what the module exposes, and each name resolves."""
    for name in gp.__all__:
        assert getattr(gp, name) is not None


# -- the surface a switching user relies on (issue 11) -----------------------------------------


def _campaigns() -> gp.FactRegistry:
    registry = gp.FactRegistry()
    registry.record_ranking(
        "campaign_ctr", {"north": 0.0412, "harbour": 0.0455}, key="ctr", tool="warehouse.query"
    )
    registry.record("window", {"days": [1, 7]}, tool="clock")
    registry.record("secret", "not for this boundary")
    return registry


def test_boundary_facts_is_a_plain_dict_of_copies_in_declaration_order() -> None:
    """b.facts() is what the seed hands the model: {name: deep copy of value}, declared order."""
    registry = _campaigns()
    with gp.boundary(registry, facts=["window", "campaign_ctr"], require_output=False) as b:
        facts = b.facts()
        assert type(facts) is dict
        assert list(facts) == ["window", "campaign_ctr"]
        assert facts["window"] == {"days": [1, 7]}
        assert isinstance(facts["campaign_ctr"], gp.Ranking)
        facts["window"]["days"].append(30)
        assert b.facts()["window"] == {"days": [1, 7]}
        assert b.registry.read_only
        assert b.registry.names() == ["window", "campaign_ctr"]


def test_boundary_exposes_permitted_require_output_mode_and_named_checks() -> None:
    """Boundary(registry, permitted, checks, *, require_output=True, mode="first") works alone."""
    assert parameters(gp.Boundary)[:3] == ["registry", "permitted", "checks"]
    signature = inspect.signature(gp.Boundary)
    assert signature.parameters["require_output"].kind is inspect.Parameter.KEYWORD_ONLY
    assert signature.parameters["require_output"].default is True
    assert signature.parameters["mode"].default == "first"

    def plain(registry: gp.FactRegistry, output: Any) -> None:
        """A plain callable check."""

    built = gp.superlative(fact="campaign_ctr")
    entered = gp.Boundary(_campaigns(), ["campaign_ctr"], [built, plain])
    assert entered.permitted == ("campaign_ctr",)
    assert (entered.require_output, entered.mode) == (True, "first")
    assert entered.checks == (built, gp.NamedCheck("plain", plain))
    assert all(isinstance(check, gp.NamedCheck) for check in entered.checks)
    assert entered.submit({"winner": "harbour"}) == {"winner": "harbour"}
    with pytest.raises(gp.UnregisteredFact):
        gp.Boundary(_campaigns(), ["missing"], [])


def test_boundary_declaration_is_exported_with_the_reference_defaults() -> None:
    """BoundaryDeclaration defaults require_output=True and mode="first"."""
    declaration = gp.BoundaryDeclaration(_campaigns(), ["campaign_ctr"])
    assert (declaration.require_output, declaration.mode) == (True, "first")
    assert isinstance(gp.boundary(_campaigns()), gp.BoundaryDeclaration)


def test_iterating_a_registry_yields_fact_copies_in_recording_order() -> None:
    """for fact in registry: Facts (name, value, provenance), copies; a view holds only its own."""
    registry = _campaigns()
    facts = list(registry)
    assert [fact.name for fact in facts] == ["campaign_ctr", "window", "secret"]
    assert all(isinstance(fact, gp.Fact) for fact in facts)
    facts[1].value["days"].clear()
    assert registry.value("window") == {"days": [1, 7]}
    assert str(facts[0].provenance) == "warehouse.query()"
    with gp.boundary(registry, facts=["window"], require_output=False) as b:
        assert [fact.name for fact in b.registry] == ["window"]


def test_as_type_returns_a_copy_or_names_the_recorder_for_each_wanted_type() -> None:
    """as_type(name, *types): a copy on a match, a TypeError naming fact, type, wanted types
    and recorders otherwise, UnregisteredFact for an unknown name; ranking() is as_type."""
    registry = _campaigns()
    ranking = registry.as_type("campaign_ctr", gp.Table, gp.Ranking)
    assert ranking == registry.peek("campaign_ctr").value
    assert ranking is not registry.peek("campaign_ctr").value
    assert registry.as_type("window", dict) == {"days": [1, 7]}
    with pytest.raises(TypeError) as info:
        registry.as_type("window", gp.Ranking, gp.Table)
    assert str(info.value) == (
        "fact 'window' is a dict, not a Ranking or a Table; record a Ranking with "
        "record_ranking(), or a Table with record_table()"
    )
    with pytest.raises(TypeError) as info:
        registry.table("campaign_ctr")
    assert str(info.value) == (
        "fact 'campaign_ctr' is a Ranking, not a Table; record it with record_table()"
    )
    with pytest.raises(gp.UnregisteredFact):
        registry.as_type("nope", dict)


def test_recorders_return_the_recorded_fact() -> None:
    """record_ranking / record_table / record_domain return the Fact, with type_name."""
    registry = gp.FactRegistry()
    ranking = registry.record_ranking("r", {"a": 1}, tool="t", args={"k": 1})
    table = registry.record_table("t", [{"id": 1}], key="id")
    domain = registry.record_domain("d", ["a"])
    value = registry.record("v", 3)
    assert [fact.type_name for fact in (ranking, table, domain, value)] == [
        "Ranking",
        "Table",
        "Domain",
        "int",
    ]
    assert (ranking.name, str(ranking.provenance)) == ("r", "t(k=1)")
    assert ranking.value == registry.peek("r").value
    assert ranking.value is not registry.peek("r").value


def test_record_table_takes_any_iterable_of_mapping_rows() -> None:
    """A generator of rows, and rows that are any Mapping (a read-only proxy here), work."""
    from types import MappingProxyType

    registry = gp.FactRegistry()
    rows = (MappingProxyType({"id": i, "v": i * 2}) for i in range(3))
    fact = registry.record_table("t", rows, key="id")
    assert fact.value.keys == (0, 1, 2)
    assert registry.table("t").row(2) == {"id": 2, "v": 4}
    with pytest.raises(TypeError, match="rows must be an iterable of mappings, got dict"):
        registry.record_table("u", {"id": 1}, key="id")  # type: ignore[arg-type]


def test_domains_are_labelled_entity_by_default() -> None:
    """record_domain(label=) and Domain.label default to "entity"."""
    registry = gp.FactRegistry()
    assert registry.record_domain("d", ["a"]).value.label == "entity"
    assert gp.Domain(frozenset({"a"})).label == "entity"
    assert registry.record_domain("e", ["a"], label="region").value.label == "region"


def test_rank_of_is_the_position_and_unknown_or_unhashable_names_are_none() -> None:
    """rank_of is the 1-based position (ties keep input order); competition_rank shares ties;
    rank_of and score_of give None for a name that cannot be ranked; Table.row gives None."""
    registry = gp.FactRegistry()
    ranking = registry.record_ranking("r", [("a", 5), ("b", 5), ("c", 1)]).value
    assert [ranking.rank_of(name) for name in "abc"] == [1, 2, 3]
    assert [ranking.competition_rank(name) for name in "abc"] == [1, 1, 3]
    for name in ("zzz", ["a"], {"a": 1}):
        assert ranking.rank_of(name) is None
        assert ranking.score_of(name) is None
    table = registry.record_table("t", [{"id": 1}], key="id").value
    assert table.row(2) is None
    assert table.row([1]) is None  # type: ignore[arg-type]


def test_an_unknown_column_is_both_a_key_error_and_a_value_error() -> None:
    """A column a check or to_ranking names that the table lacks: one class, readable str()."""
    registry = gp.FactRegistry()
    table = registry.record_table("t", [{"id": "a", "v": 1}], key="id").value
    calls: list[Callable[[], Any]] = [
        lambda: table.to_ranking("nope"),
        lambda: table.column("nope"),
        lambda: gp.check_aggregate_reconciles(registry, {"x": 1}, "t", "x", "nope"),
        lambda: gp.check_superlative(registry, {"winner": "a"}, "t", column="nope"),
        lambda: gp.check_row_integrity(registry, {"id": "a", "x": 1}, "t", "id", {"x": "nope"}),
        lambda: gp.check_comparison(registry, {"a": "a", "b": "a", "d": 0}, "t", "a", "b", "d",
                                    column="nope"),
    ]  # fmt: skip
    for call in calls:
        with pytest.raises(gp.UnknownColumn) as info:
            call()
        assert isinstance(info.value, KeyError)
        assert isinstance(info.value, ValueError)
        assert "'nope'" in str(info.value)
        assert not str(info.value).startswith('"')  # the message, not a KeyError's repr


def test_paths_accept_a_sequence_of_keys_and_default_to_the_root() -> None:
    """entities_recorded(path=) and field_matches_fact(path=) take keys as well as "a.b";
    () is the root; a step the output lacks is a missing field named by the steps so far."""
    assert inspect.signature(gp.entities_recorded).parameters["path"].default == ()
    assert inspect.signature(gp.field_matches_fact).parameters["path"].default == ()
    registry = gp.FactRegistry()
    registry.record_domain("regions", ["north", "harbour"])
    registry.record("report", {"totals": {"q3": 12}, "by": {1: "north"}})
    output = {"summary": {"best": "north"}}
    gp.check_entities_recorded(registry, output, ["best"], "regions", path=("summary",))
    gp.check_entities_recorded(registry, {"best": "north"}, ["best"], "regions", path=())
    with pytest.raises(gp.UnsupportedClaim) as info:
        gp.check_entities_recorded(registry, output, ["best"], "regions", path=["summary", "x"])
    assert (info.value.field, info.value.to_dict()["claimed"]) == ("summary.x", None)
    with pytest.raises(gp.UnsupportedClaim) as info:
        gp.check_entities_recorded(registry, {"other": 1}, ["best"], "regions", path=("a", "b"))
    assert info.value.field == "a"
    gp.check_field_matches_fact(registry, {"n": 12}, "n", "report", path=("totals", "q3"))
    gp.check_field_matches_fact(registry, {"n": "north"}, "n", "report", path=["by", 1])
    gp.check_field_matches_fact(registry, {"n": 12}, "n", "report", path="totals.q3")


def test_an_empty_where_means_no_filter() -> None:
    """aggregate_reconciles(where={}) aggregates every row, as where=None does."""
    registry = gp.FactRegistry()
    registry.record_table("t", [{"id": 1, "v": 2}, {"id": 2, "v": 3}], key="id")
    gp.check_aggregate_reconciles(registry, {"s": 5}, "t", "s", "v", where={})
    gp.check_aggregate_reconciles(registry, {"n": 2}, "t", "n", op="count", where={})


def test_a_tuple_claim_is_a_sequence_of_names_unless_the_keys_are_tuples() -> None:
    """A pydantic tuple[str, ...] field dumps as a tuple: its members are checked one by one;
    against composite (tuple) keys a tuple is one name."""
    registry = gp.FactRegistry()
    registry.record_domain("regions", ["north", "harbour"])
    registry.record_table("pairs", [{"id": ("eu", 1)}, {"id": ("us", 2)}], key="id")
    gp.check_entities_recorded(registry, {"r": ("north", "harbour")}, ["r"], "regions")
    with pytest.raises(gp.UnsupportedClaim) as info:
        gp.check_entities_recorded(registry, {"r": ("north", "nrth")}, ["r"], "regions")
    assert info.value.claimed == "nrth"
    gp.check_entities_recorded(registry, {"p": ("eu", 1)}, ["p"], "pairs")
    gp.check_entities_recorded(registry, {"p": [("eu", 1), ("us", 2)]}, ["p"], "pairs")


def test_a_negative_weight_is_still_refused() -> None:
    """A deliberate divergence (docs/checks.md): a negative weight in a weighted mean is a
    ValueError."""
    registry = gp.FactRegistry()
    registry.record_table("t", [{"id": "a", "v": 1, "w": 2}, {"id": "b", "v": 3, "w": -1}], "id")
    with pytest.raises(ValueError) as info:
        gp.check_aggregate_reconciles(registry, {"m": 1}, "t", "m", "v", "mean", weight_column="w")
    assert str(info.value) == "fact 't': column 'w', row 'b': a weight must be >= 0, got -1"


def test_unsupported_claim_fields_read_like_the_reference() -> None:
    """reason defaults to None; a missing field is claimed None in to_dict(); supported is a
    short description where nothing numeric is supported; provenance renders as tool(arg=…)."""
    claim = gp.UnsupportedClaim("f", 1, 2)
    assert claim.reason is None
    assert claim.to_dict()["reason"] is None
    assert str(claim) == "unsupported claim in field 'f': model said 1, registered facts support 2"
    registry = gp.FactRegistry()
    registry.record_table("t", [{"id": "a", "v": 1}], key="id", tool="db.q", args={"k": 3},
                          exhaustive=False)  # fmt: skip
    registry.record_ranking("r", {"x": 1, "y": 0}, tool="db.r")
    with pytest.raises(gp.UnsupportedClaim) as info:
        gp.check_superlative(registry, {}, "r")
    assert info.value.to_dict()["claimed"] is None
    supported = []
    for call in (
        lambda: gp.check_aggregate_reconciles(registry, {"s": 1}, "t", "s", "v"),
        lambda: gp.check_comparison(registry, {"a": "x", "b": "x", "d": 0}, "r", "a", "b", "d"),
        lambda: gp.check_comparison(registry, {"a": "x", "b": "y", "d": 0}, "r", "a", "b", "d",
                                    kind="pct"),
    ):  # fmt: skip
        with pytest.raises(gp.UnsupportedClaim) as info:
            call()
        supported.append(info.value.supported)
    assert supported == [
        "an aggregate over an exhaustive table",
        "two different entities",
        "a pct against a non-zero base",
    ]
    assert info.value.to_dict()["provenance"] == "db.r()"
    assert isinstance(info.value.provenance, gp.Provenance)
    assert str(gp.UnregisteredFact("x", None)) == "fact 'x' is not registered; registry is empty"


def test_every_report_is_truthy() -> None:
    """A failing Report is still truthy (as groundplane's is): read .ok."""
    failing = gp.Report(violations=(gp.UnsupportedClaim("f", 1, 2),), failed=("c",))
    assert failing
    assert not failing.ok
    assert gp.Report()


def test_the_reference_module_layout_is_importable() -> None:
    """registry.SparseColumnWarning, boundary.NamedCheck/Check and the check modules by the
    reference's names, so `from groundplane.ordering import ranking_prefix` keeps working."""
    import importlib

    from groundplane_otel.boundary import Check, NamedCheck
    from groundplane_otel.checks import check_superlative, field_matches_fact, superlative
    from groundplane_otel.registry import SparseColumnWarning

    assert SparseColumnWarning is gp.SparseColumnWarning
    assert (Check, NamedCheck) == (gp.Check, gp.NamedCheck)
    assert (superlative, check_superlative) == (gp.superlative, gp.check_superlative)
    assert field_matches_fact is gp.field_matches_fact
    modules = {
        "ordering": ("ranking_prefix", "check_ranking_prefix"),
        "aggregates": ("aggregate_reconciles", "check_aggregate_reconciles"),
        "entities": ("entities_recorded", "check_entities_recorded"),
        "rows": ("row_integrity", "check_row_integrity"),
        "comparison": ("comparison", "check_comparison"),
        "checks": ("superlative", "check_superlative", "field_matches_fact"),
    }
    for module, names in modules.items():
        imported = importlib.import_module(f"groundplane_otel.{module}")
        for name in names:
            assert getattr(imported, name) is getattr(gp, name), (module, name)
    assert callable(gp.comparison)  # the builder, not the module of the same name
    assert gp.comparison is importlib.import_module("groundplane_otel.comparison").comparison


def test_adapter_signatures_match_the_reference() -> None:
    """guarded_node(facts=(), checks=()) defaults; the MCP helpers take parse_json=True."""
    from groundplane_otel.adapters import langgraph, mcp

    node = inspect.signature(langgraph.guarded_node).parameters
    assert (node["facts"].default, node["checks"].default) == ((), ())
    for helper in (mcp.payload_of, mcp.record_result, mcp.call_and_record):
        assert inspect.signature(helper).parameters["parse_json"].default is True


def test_non_finite_numbers_are_refused_with_a_hint_to_drop_or_replace_the_cell() -> None:
    """A deliberate divergence (docs/checks.md): NaN/inf never become facts; the error says
    what to do."""
    with pytest.raises(ValueError) as info:
        gp.FactRegistry().record_table("t", [{"id": "a", "v": float("nan")}], key="id")
    assert str(info.value) == (
        "fact 't': row 0['v'] is nan; non-finite numbers are refused (drop the cell, or "
        "replace it with None, before recording)"
    )
