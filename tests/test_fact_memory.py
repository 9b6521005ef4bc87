"""What checks derive from a fact lives on the fact's value: built once, freed with the fact.

Nothing global holds a recorded fact. A per-trace registry that is dropped takes its tables,
their rankings and indices, and everything checks derived from them, with it; while it lives,
repeated checks reuse what the first one built.
"""

from __future__ import annotations

import gc
import tracemalloc
import weakref
from typing import Any

import pytest

from groundplane_otel.checks import aggregate_reconciles as aggregate_module
from groundplane_otel.checks import row_integrity as row_module
from groundplane_otel.checks.aggregate_reconciles import aggregate_reconciles
from groundplane_otel.checks.entities_recorded import entities_recorded
from groundplane_otel.checks.ranking_prefix import ranking_prefix
from groundplane_otel.checks.row_integrity import row_integrity
from groundplane_otel.checks.superlative import superlative
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.facts import Table
from groundplane_otel.registry import FactRegistry


class Marker:
    """A cell value that can be weakly referenced: alive exactly while its table is."""

    def __init__(self, label: str) -> None:
        self.label = label

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Marker) and other.label == self.label

    __hash__ = None  # type: ignore[assignment]


def _rows(count: int) -> list[dict[str, Any]]:
    return [
        {"id": f"r{i:05d}", "spend": (i * 7919) % 10_007, "ctr": (i * 31 % 997) / 1000}
        for i in range(count)
    ]


def _check_everything(reg: FactRegistry, rows: list[dict[str, Any]]) -> None:
    """Run checks that derive something from the fact (sum, ranking, name and value indices)."""
    aggregate_reconciles("t", "total", "spend")(reg, {"total": sum(r["spend"] for r in rows)})
    best = max(rows, key=lambda r: r["ctr"])
    superlative("t", "winner", column="ctr")(reg, {"winner": best["id"]})
    with pytest.raises(UnsupportedClaim):  # a miss builds the name index and the value index
        entities_recorded(["who"], "t")(reg, {"who": "nobody"})
    with pytest.raises(UnsupportedClaim):
        row_integrity("t", "id", ["spend"])(reg, {"id": rows[0]["id"], "spend": -1})


def test_a_dropped_registry_frees_its_facts_and_everything_derived_from_them() -> None:
    """After the checks ran, nothing but the registry keeps the recorded table alive."""
    rows = _rows(50)
    rows[0]["marker"] = Marker("evidence")
    reg = FactRegistry()
    reg.record_table("t", rows, key="id")
    stored = reg.peek("t").value
    marker = weakref.ref(stored.rows[0]["marker"])
    _check_everything(reg, rows)
    assert stored._derived  # the checks did derive and keep something
    del reg, stored
    gc.collect()
    assert marker() is None


def test_memory_of_ended_traces_is_returned() -> None:
    """150 per-trace registries of 2,000 rows each, checked and dropped, leave nothing behind.

    The former global memo pinned the 128 most recently used facts: about 113 MiB here.
    """
    rows = _rows(2_000)
    total = sum(row["spend"] for row in rows)
    check = aggregate_reconciles("t", "total", "spend")
    FactRegistry().record_table("t", rows, key="id")  # warms process-wide caches (positions)
    gc.collect()
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        for _ in range(150):
            reg = FactRegistry()
            reg.record_table("t", rows, key="id")
            check(reg, {"total": total})
        one_trace, _ = tracemalloc.get_traced_memory()
        del reg
        gc.collect()
        after, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert one_trace - before > 256 * 1024  # a live trace does hold its table
    assert after - before < 64 * 1024


def test_repeated_checks_reuse_what_the_first_one_derived(monkeypatch: pytest.MonkeyPatch) -> None:
    """One cell read, one ranking, one value index per fact, however often a check runs."""
    calls: dict[str, int] = {"cells": 0, "ranking": 0, "index": 0}
    real_cells, real_ranking, real_index = (
        aggregate_module._read_cells,
        Table._build_ranking,
        row_module._index,
    )

    def counting(name: str, real: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(aggregate_module, "_read_cells", counting("cells", real_cells))
    monkeypatch.setattr(Table, "_build_ranking", counting("ranking", real_ranking))
    monkeypatch.setattr(row_module, "_index", counting("index", real_index))
    rows = _rows(200)
    registries = [FactRegistry(), FactRegistry()]
    for reg in registries:
        reg.record_table("t", rows, key="id")
    top3 = [row["id"] for row in sorted(rows, key=lambda r: r["ctr"], reverse=True)[:3]]
    for reg in registries:
        for _ in range(5):
            _check_everything(reg, rows)
            ranking_prefix("t", "top", k=3, column="ctr")(reg, {"top": top3})
    assert calls == {"cells": 2, "ranking": 2, "index": 2}  # once per fact, not per check


def test_a_failing_check_against_a_cached_result_still_explains_itself() -> None:
    """The cached result only lets a correct claim through early; a wrong one gets the full
    diagnosis, every time."""
    reg = FactRegistry()
    rows = _rows(20)
    reg.record_table("t", rows, key="id")
    check = aggregate_reconciles("t", "total", "spend")
    total = sum(row["spend"] for row in rows)
    check(reg, {"total": total})
    for _ in range(2):
        with pytest.raises(UnsupportedClaim) as info:
            check(reg, {"total": total + 1})
        assert info.value.code == "value_mismatch"
        assert "off by +1" in info.value.reason
    check(reg, {"total": float(total)})  # an exactly equal float passes, cached or not
    with pytest.raises(UnsupportedClaim) as info:
        aggregate_reconciles("t", "n", op="count")(reg, {"n": 20.0})
    assert info.value.code == "not_an_integer"
    aggregate_reconciles("t", "n", op="count")(reg, {"n": 20})
    with pytest.raises(UnsupportedClaim) as info:
        aggregate_reconciles("t", "n", op="count")(reg, {"n": 20.0})
    assert info.value.code == "not_an_integer"
