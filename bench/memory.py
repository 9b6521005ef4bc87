"""Memory: 10,000 live per-trace registries, each holding a 100-row fact, then all ended.

Uses the guard's own path when it exists: each trace's tool result (a JSON string, as a tool span
carries it) goes through ``FactCapture`` into the per-trace ``TraceStore`` with its default
limits, and the six checks run once against the trace's read-only view (so what a check derives
from a fact is held too). Without the guard, plain FactRegistry objects record the parsed rows.
tracemalloc reports the peak while every trace is live, the largest allocation sites, and what is
still held once every trace's root span ended (the store must be empty, the memory returned).
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import Section, fmt_bytes
from bench._scenario import FACT, TOOL, TOOL_ARGS, make_output, make_rows, six_checks
from groundplane_otel.registry import FactRegistry

__all__ = ["run"]

ROOT = Path(__file__).resolve().parent.parent


class _Guarded:
    """Per-trace facts through the guard's capture path and store."""

    label = "guard path: FactCapture → TraceStore (otel/), default limits"

    def __init__(self, traces: int, outcomes: Counter[str]) -> None:
        from groundplane_otel.otel._engine.capture import FactCapture, ToolCall
        from groundplane_otel.otel._engine.store import TraceStore
        from groundplane_otel.otel.config import FactSpec, Limits

        def count_fact(kind: str, source: str, outcome: str) -> None:
            outcomes[outcome] += 1

        limits = Limits(max_traces=max(traces, Limits().max_traces))
        self.store = TraceStore(limits, count_fact, lambda delta: None)
        spec = FactSpec(FACT, TOOL, kind="table", key="region", path="rows")
        self.capture = FactCapture((spec,), self.store, None)
        self.call = ToolCall
        self.arguments = json.dumps(TOOL_ARGS)

    def start(self, trace_id: int, result: str) -> FactRegistry:
        self.store.root_started(trace_id, trace_id)
        call = self.call("genai", TOOL, "call_1", self.arguments, result)
        self.capture.capture(call, trace_id, trace_id, trace_id)
        return self.store.view(trace_id, (FACT,)).registry

    def live(self) -> int:
        return len(self.store)

    def end(self, trace_id: int) -> None:
        self.store.root_ended(trace_id, trace_id, trace_id)


class _Plain:
    """Per-trace FactRegistry objects (before the guard's store existed)."""

    label = "FactRegistry per trace (guard store not available)"

    def __init__(self, traces: int, outcomes: Counter[str]) -> None:
        self.registries: dict[int, FactRegistry] = {}
        self.outcomes = outcomes

    def start(self, trace_id: int, result: str) -> FactRegistry:
        registry = FactRegistry()
        rows = json.loads(result)["rows"]
        registry.record_table(FACT, rows, key="region", tool=TOOL, args=TOOL_ARGS)
        self.registries[trace_id] = registry
        self.outcomes["recorded"] += 1
        return registry

    def live(self) -> int:
        return len(self.registries)

    def end(self, trace_id: int) -> None:
        del self.registries[trace_id]


def _backend(traces: int, outcomes: Counter[str]) -> _Guarded | _Plain:
    try:
        return _Guarded(traces, outcomes)
    except ImportError:
        return _Plain(traces, outcomes)


def _top_sites(snapshot: tracemalloc.Snapshot, count: int) -> list[tuple[str, int]]:
    sites = []
    for stat in snapshot.statistics("lineno")[:count]:
        frame = stat.traceback[0]
        name = Path(frame.filename)
        shown = name.relative_to(ROOT) if name.is_relative_to(ROOT) else Path(name.name)
        sites.append((f"{shown}:{frame.lineno}", stat.size))
    return sites


def run(smoke: bool) -> list[Section]:
    traces, rows_per = (200, 10) if smoke else (10_000, 100)
    rows = make_rows(rows_per)
    result = json.dumps({"rows": rows})
    output = make_output(rows)
    checks: list[Callable[[FactRegistry, Any], None]] = list(six_checks())
    outcomes: Counter[str] = Counter()
    backend = _backend(traces, outcomes)

    gc.collect()
    tracemalloc.start()
    before, _ = tracemalloc.get_traced_memory()
    for trace_id in range(1, traces + 1):
        registry = backend.start(trace_id, result)
        for check in checks:
            check(registry, output)
    del registry
    gc.collect()
    live, peak = tracemalloc.get_traced_memory()
    live_count = backend.live()
    sites = _top_sites(tracemalloc.take_snapshot(), 4)
    for trace_id in range(1, traces + 1):
        backend.end(trace_id)
    left_count = backend.live()
    gc.collect()
    after, _ = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    held = live - before
    section = Section(
        key="memory",
        title=f"Memory: {traces:,} live traces x {rows_per}-row fact, then all ended",
        headers=("measure", "value"),
    )
    section.rows.extend(
        [
            ("backend", backend.label),
            ("live traces", f"{live_count:,}"),
            (
                "facts recorded / evicted by the store's bounds",
                f"{outcomes['recorded']:,} / {outcomes['evicted']:,}",
            ),
            ("peak traced memory", fmt_bytes(peak - before)),
            ("held while live", fmt_bytes(held)),
            ("per live trace", fmt_bytes(held / max(live_count, 1))),
            ("JSON tool result per trace", fmt_bytes(len(result))),
            ("traces left after every root ended", f"{left_count:,}"),
            ("still held after all ended", fmt_bytes(after - before)),
            ("returned", f"{100 * (1 - (after - before) / max(held, 1)):.1f} %"),
        ]
    )
    section.notes.append(
        "tracemalloc, in-process; each trace records its own copy of the tool result and runs "
        "the six checks once. What checks derive from a fact (rankings, indices, results) "
        "lives on the fact's value and is freed with it. Largest allocation sites while live: "
        + "; ".join(f"`{site}` {fmt_bytes(size)}" for site, size in sites)
        + "."
    )
    return [section]
