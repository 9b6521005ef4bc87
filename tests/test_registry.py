"""FactRegistry: write-once, deep copies in and out, type-strict keys, refused bad input."""

from __future__ import annotations

import asyncio
import math

import pytest

from groundplane_otel.errors import FactBoundaryError, UnregisteredFact
from groundplane_otel.facts import Domain, Provenance, Ranking, Table
from groundplane_otel.registry import FactRegistry

HINT = "(drop the cell, or replace it with None, before recording)"


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


def test_provenance_prints_sorted_keys_with_reprs() -> None:
    """Provenance reads like a call: keys sorted, values repr'd, empty parens without args."""
    assert str(Provenance("q", {"b": 2, "a": "x"})) == "q(a='x', b=2)"
    assert str(Provenance("q")) == "q()"


def test_record_ranking_sorts_best_first_and_keeps_tie_order() -> None:
    """Ties keep their input order, so the first-supplied tied name is the winner."""
    reg = FactRegistry()
    ranking = reg.record_ranking("r", [("b", 2), ("a", 3), ("c", 3)], key="pts").value
    assert ranking.names == ("a", "c", "b")
    assert ranking.winner == "a"
    assert ranking.ties == ("a", "c")
    assert ranking.tie_blocks == (("a", "c"), ("b",))
    assert ranking.rank_of("c") == 2  # the 1-based position in the computed order
    assert ranking.competition_rank("c") == 1  # tied names share their competition rank
    assert ranking.rank_of("b") == 3
    assert ranking.rank_of("zzz") is None
    assert ranking.score_of("b") == 2


def test_record_ranking_lower_is_better() -> None:
    """higher_is_better=False puts the smallest score first."""
    reg = FactRegistry()
    ranking = reg.record_ranking("lat", {"a": 120, "b": 80}, key="ms", higher_is_better=False).value
    assert ranking.winner == "b"


@pytest.mark.parametrize(
    ("scores", "message"),
    [
        ({}, "fact 'r': ranking needs at least one (name, score) pair"),
        (
            {"a": True},
            "fact 'r': column 'score', row 'a': score must be a finite int or float, got True",
        ),
        (
            {"a": None},
            "fact 'r': column 'score', row 'a': score must be a finite int or float, got None",
        ),
        (
            {"a": "3"},
            "fact 'r': column 'score', row 'a': score must be a finite int or float, got '3'",
        ),
        (
            {"a": math.nan},
            f"fact 'r': value['a'] is nan; non-finite numbers are refused {HINT}",
        ),
        (
            {"a": -math.inf},
            f"fact 'r': value['a'] is -inf; non-finite numbers are refused {HINT}",
        ),
        ([("a", 1), ("a", 2)], "ranking on 'score': duplicate name 'a'"),
    ],
)
def test_record_ranking_refuses_bad_scores(scores: object, message: str) -> None:
    """Empty input, bools, None, strings, NaN, inf and duplicates are ValueErrors naming the row."""
    with pytest.raises(ValueError) as info:
        FactRegistry().record_ranking("r", scores)  # type: ignore[arg-type]
    assert str(info.value) == message


def test_duplicate_detection_never_conflates_one_true_and_one_point_zero() -> None:
    """1, True and 1.0 are three different names (the reference conflates them)."""
    ranking = FactRegistry().record_ranking("r", [(1, 3), (True, 2), (1.0, 1)]).value
    assert ranking.names == (1, True, 1.0)
    assert ranking.rank_of(True) == 2
    assert ranking.rank_of(1.0) == 3


def test_write_once_names_the_first_provenance() -> None:
    """A second record under one name is refused, naming where the first came from."""
    reg = campaign_registry()
    with pytest.raises(ValueError) as info:
        reg.record("campaign_ctr", 1, tool="other")
    assert str(info.value) == (
        "fact 'campaign_ctr' is write-once and was already recorded from "
        "warehouse.query(table='campaign_daily', window='7d')"
    )


def test_values_and_args_are_deep_copied_in() -> None:
    """Mutating what was passed in never changes the recorded evidence."""
    rows = [{"id": 1, "spend": 10}]
    args = {"filters": ["a"]}
    reg = FactRegistry()
    reg.record_table("t", rows, key="id", tool="sql", args=args)
    rows[0]["spend"] = 999
    args["filters"].append("b")
    assert reg.table("t").row(1)["spend"] == 10
    assert reg.provenance("t").args == {"filters": ["a"]}


def test_values_read_back_are_copies() -> None:
    """Mutating what was read back never changes the recorded evidence."""
    reg = FactRegistry()
    reg.record("cfg", {"threshold": [1, 2]})
    reg.value("cfg")["threshold"].append(3)
    reg.get("cfg").value["threshold"].append(4)
    assert reg.value("cfg") == {"threshold": [1, 2]}


def test_table_defaults_columns_to_union_in_first_seen_order() -> None:
    """Columns default to the union of row keys in first-seen order."""
    table = FactRegistry().record_table("t", [{"id": 1, "a": 1}, {"id": 2, "b": 2}], key="id").value
    assert table.columns == ("id", "a", "b")


@pytest.mark.parametrize(
    ("rows", "error", "message"),
    [
        ([{"x": 1}], ValueError, "fact 't': key column 'id' is not among the columns ['x']"),
        ([{"id": 1}, {"x": 2}], ValueError, "fact 't': row 1 has no key column 'id'"),
        ([{"id": 1}, {"id": 1}], ValueError, "fact 't': duplicate key 1 in column 'id'"),
        ([{"id": 1}, "row"], TypeError, "fact 't': row 1 must be a mapping, got str"),
        (
            [{"id": 1, "v": math.inf}],
            ValueError,
            f"fact 't': row 0['v'] is inf; non-finite numbers are refused {HINT}",
        ),
    ],
)
def test_record_table_refuses_bad_rows(rows: list[object], error: type, message: str) -> None:
    """The key column must exist, be present in every row and unique; cells must be finite."""
    with pytest.raises(error) as info:
        FactRegistry().record_table("t", rows, key="id")  # type: ignore[arg-type]
    assert str(info.value) == message


def test_table_keys_keep_their_type() -> None:
    """101 and "101", 1 and True are distinct keys, and lookups are type-strict."""
    table = (
        FactRegistry()
        .record_table(
            "t",
            [{"id": 101, "v": 1}, {"id": "101", "v": 2}, {"id": True, "v": 3}, {"id": 1, "v": 4}],
            key="id",
        )
        .value
    )
    assert table.row(101)["v"] == 1
    assert table.row("101")["v"] == 2
    assert table.row(True)["v"] == 3
    assert table.row(1)["v"] == 4
    assert table.row(1.0) is None


def test_record_domain_requires_strings() -> None:
    """Domain members must be strings; an empty domain is refused."""
    reg = FactRegistry()
    domain = reg.record_domain("regions", ["north", "harbour"], label="region").value
    assert domain.names == ("harbour", "north")
    assert "north" in domain
    assert len(domain) == 2
    with pytest.raises(TypeError) as info:
        reg.record_domain("ids", ["a", 7])  # type: ignore[list-item]
    assert str(info.value) == "fact 'ids': domain members must be strings, got 7"
    with pytest.raises(ValueError, match="at least one member"):
        reg.record_domain("empty", [])
    with pytest.raises(TypeError, match="not a str"):
        reg.record_domain("s", "north")


def test_unknown_fact_lists_registered_names() -> None:
    """Reading an unknown name raises UnregisteredFact listing what is registered."""
    reg = campaign_registry()
    with pytest.raises(UnregisteredFact) as info:
        reg.get("nope")
    assert str(info.value) == "fact 'nope' is not registered; registered facts: ['campaign_ctr']"
    with pytest.raises(UnregisteredFact) as empty:
        FactRegistry().get("nope")
    assert str(empty.value) == "fact 'nope' is not registered; registry is empty"


def test_typed_accessor_on_wrong_kind_names_the_recorder() -> None:
    """ranking() on a table says to use record_ranking()."""
    reg = FactRegistry()
    reg.record_table("t", [{"id": 1}], key="id")
    with pytest.raises(TypeError) as info:
        reg.ranking("t")
    assert str(info.value) == "fact 't' is a Table, not a Ranking; record it with record_ranking()"


def test_names_contains_len_and_iteration() -> None:
    """The registry answers names(), in and len by name; iterating yields Fact copies."""
    reg = campaign_registry()
    reg.record("n", 3)
    assert reg.names() == ["campaign_ctr", "n"]
    assert "n" in reg
    assert "x" not in reg
    assert len(reg) == 2
    assert [fact.name for fact in reg] == ["campaign_ctr", "n"]


def test_view_is_read_only_and_holds_only_declared_facts() -> None:
    """A boundary view refuses writes and does not see undeclared facts."""
    reg = campaign_registry()
    reg.record("secret", 1)
    view = reg.view(["campaign_ctr"])
    assert view.names() == ["campaign_ctr"]
    with pytest.raises(FactBoundaryError, match="read-only boundary view"):
        view.record("x", 1)
    with pytest.raises(UnregisteredFact):
        view.get("secret")


def test_tool_decorator_records_bound_args_with_defaults_copied_before_call() -> None:
    """Provenance args are the call bound with defaults applied, copied before the call runs."""
    reg = FactRegistry()

    @reg.tool("warehouse.query", fact="rows")
    def query(table: str, filters: list[str], window: str = "7d") -> list[int]:
        filters.append("mutated-by-tool")
        return [1, 2]

    assert query("campaign_daily", ["a"]) == [1, 2]
    fact = reg.get("rows")
    assert fact.value == [1, 2]
    assert fact.provenance.tool == "warehouse.query"
    assert fact.provenance.args == {"table": "campaign_daily", "filters": ["a"], "window": "7d"}


def test_tool_decorator_supports_async_functions_and_callables() -> None:
    """Async functions and objects with an async __call__ are awaited and recorded."""
    reg = FactRegistry()

    @reg.tool("lookup")
    async def lookup(x: int) -> int:
        return x * 2

    class Fetch:
        async def __call__(self, y: int) -> int:
            return y + 1

    fetch = reg.tool("fetch")(Fetch())
    assert asyncio.run(lookup(4)) == 8
    assert asyncio.run(fetch(y=1)) == 2
    assert reg.value("lookup") == 8
    assert reg.provenance("fetch").args == {"y": 1}


def test_record_refuses_nan_anywhere_and_runaway_nesting() -> None:
    """NaN/inf anywhere in a value, and nesting deeper than the limit, never become facts."""
    reg = FactRegistry()
    with pytest.raises(ValueError) as info:
        reg.record("n", {"a": [1, {"b": math.nan}]})
    assert (
        str(info.value) == "fact 'n': value['a'][1]['b'] is nan; non-finite numbers are refused "
        f"{HINT}"
    )
    deep: list[object] = []
    current = deep
    for _ in range(10_000):
        nxt: list[object] = []
        current.append(nxt)
        current = nxt
    with pytest.raises(ValueError, match="nested deeper than 200 levels"):
        reg.record("deep", deep)
    assert reg.names() == []


def test_record_table_value_directly_is_scanned_for_non_finite_cells() -> None:
    """Recording a Table object through record() still refuses a NaN cell."""
    table = Table("id", ({"id": 1, "v": math.nan},), ("id", "v"))
    with pytest.raises(
        ValueError,
        match=r"non-finite numbers are refused \(drop the cell",
    ):
        FactRegistry().record("t", table)


def test_ranking_constructor_refuses_unordered_items() -> None:
    """A Ranking built by hand must already be best-first."""
    with pytest.raises(ValueError, match="not ordered best-first at 'b'"):
        Ranking("s", (("a", 1), ("b", 2)))


def test_to_ranking_on_missing_skip_warns_with_dedicated_class() -> None:
    """on_missing='skip' drops rows lacking the column and warns with SparseColumnWarning."""
    from groundplane_otel.errors import SparseColumnWarning

    table = FactRegistry().record_table("t", [{"id": 1, "v": 2}, {"id": 2}], key="id").value
    with pytest.raises(ValueError, match="column 'v' is missing in row 2"):
        table.to_ranking("v")
    with pytest.warns(SparseColumnWarning, match="missing in 1 row"):
        ranking = table.to_ranking("v", on_missing="skip")
    assert ranking.names == (1,)


def test_domain_is_iterable_sorted() -> None:
    """A Domain iterates its names sorted."""
    assert list(Domain(frozenset({"b", "a"}))) == ["a", "b"]
