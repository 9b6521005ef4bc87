"""Memory: 10,000 live per-trace registries, each holding a 100-row fact, then all ended.

Uses the guard's per-trace store (``groundplane_otel.otel.store.TraceStore``) when it exists,
else plain FactRegistry objects. Each trace records its own parsed JSON payload (fresh objects,
as a tool span's result would be) and is checked once (so what a check derives from the fact is
held too). tracemalloc reports the peak while all traces are live, then the memory still held
after every trace's root span ended (the registry must be empty, the memory returned).
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections import Counter
from typing import Any

from bench import Section, fmt_bytes
from bench._scenario import FACT, TOOL, TOOL_ARGS, make_rows
from groundplane_otel.checks.superlative import superlative
from groundplane_otel.registry import FactRegistry

__all__ = ["run"]


def _store_backend(traces: int, outcomes: Counter[str]) -> tuple[str, Any] | None:
    try:
        from groundplane_otel.otel.config import Limits
        from groundplane_otel.otel.store import TraceStore
    except ImportError:
        return None
    limits = Limits(max_traces=max(traces, Limits().max_traces))  # default byte bounds

    def count_fact(kind: str, source: str, outcome: str) -> None:
        outcomes[outcome] += 1

    store = TraceStore(limits, count_fact, lambda delta: None)
    return "TraceStore (otel/store.py), default byte limits", store


def run(smoke: bool) -> list[Section]:
    traces, rows_per = (200, 10) if smoke else (10_000, 100)
    payload = json.dumps(make_rows(rows_per))
    check = superlative(FACT, "winner", column="ctr")
    winner = max(json.loads(payload), key=lambda row: row["ctr"])["region"]
    output = {"winner": winner}
    outcomes: Counter[str] = Counter()
    backend = _store_backend(traces, outcomes)

    gc.collect()
    tracemalloc.start()
    tracemalloc.reset_peak()
    before, _ = tracemalloc.get_traced_memory()
    if backend is not None:
        label, store = backend
        for trace_id in range(1, traces + 1):
            store.root_started(trace_id)
            registry = store.registry(trace_id)
            registry.record_table(
                FACT, json.loads(payload), key="region", tool=TOOL, args=TOOL_ARGS
            )
            check(registry, output)
        live_count = len(store)
    else:
        label = "FactRegistry (guard store not available yet)"
        registries: dict[int, FactRegistry] = {}
        for trace_id in range(1, traces + 1):
            registry = FactRegistry()
            registry.record_table(
                FACT, json.loads(payload), key="region", tool=TOOL, args=TOOL_ARGS
            )
            check(registry, output)
            registries[trace_id] = registry
        live_count = len(registries)
    gc.collect()
    live, peak = tracemalloc.get_traced_memory()
    if backend is not None:
        for trace_id in range(1, traces + 1):
            store.root_ended(trace_id)
        left_count = len(store)
    else:
        registries.clear()
        left_count = len(registries)
    del registry
    gc.collect()
    after, _ = tracemalloc.get_traced_memory()
    from groundplane_otel.checks import _memo

    _memo.clear()
    gc.collect()
    after_memo, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    section = Section(
        key="memory",
        title=f"Memory: {traces:,} live traces x {rows_per}-row fact, then all ended",
        headers=("measure", "value"),
    )
    section.rows.extend(
        [
            ("backend", label),
            ("live traces (registries)", f"{live_count:,}"),
            (
                "facts recorded / evicted by the store's bounds",
                f"{outcomes['recorded']:,} / {outcomes['evicted']:,}",
            ),
            ("peak traced memory", fmt_bytes(peak - before)),
            ("held while live", fmt_bytes(live - before)),
            ("per live trace", fmt_bytes((live - before) / traces)),
            ("JSON payload per trace", fmt_bytes(len(payload))),
            ("traces left after every root ended", f"{left_count:,}"),
            ("still held after all ended", fmt_bytes(after - before)),
            ("still held after clearing the check memo", fmt_bytes(after_memo - before)),
            ("returned", f"{100 * (1 - (after - before) / max(live - before, 1)):.1f} %"),
        ]
    )
    section.notes.append(
        "tracemalloc, in-process; each trace records json.loads of its own payload (fresh "
        "objects) and runs one superlative check. 'still held after all ended' includes the "
        "bounded check memo (checks/_memo.py, at most 128 facts)."
    )
    return [section]
