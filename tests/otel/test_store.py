"""Per-trace registries: isolation, write-once conflicts, bounds (traces, TTL, facts, bytes) with
every drop counted, and the trace dropped when its local root span ends."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from otel_harness import SALES_ROWS, Harness, answer, sales_config

from groundplane_otel.checks.row_integrity import row_integrity
from groundplane_otel.errors import FactBoundaryError
from groundplane_otel.facts import Provenance
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec
from groundplane_otel.otel._engine.store import TraceStore, estimate_size
from groundplane_otel.otel.config import Limits

PROVENANCE = Provenance("tool")


class Recorder:
    """Collects what the store counts, and the live-trace gauge."""

    def __init__(self) -> None:
        self.facts: Counter[tuple[str, str, str]] = Counter()
        self.traces = 0

    def fact(self, kind: str, source: str, outcome: str) -> None:
        self.facts[(kind, source, outcome)] += 1

    def trace(self, delta: int) -> None:
        self.traces += delta


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def make(**limits: int | float) -> tuple[TraceStore, Recorder, Clock]:
    recorder, clock = Recorder(), Clock()
    store = TraceStore(Limits(**limits), recorder.fact, recorder.trace, clock)  # type: ignore[arg-type]
    return store, recorder, clock


def put(
    store: TraceStore,
    trace_id: int,
    name: str,
    value: object,
    size: int | None = 10,
    bound: int | None = None,
) -> str:
    if bound is not None:
        size = None
    return store.record(
        trace_id, name, value, source="genai", provenance=PROVENANCE, size=size, bound=bound
    )


class TestIsolationAndConflicts:
    def test_a_fact_of_one_trace_is_invisible_in_another(self) -> None:
        """Trace B never sees trace A's facts."""
        store, _, _ = make()
        put(store, 1, "sales", {"EU": 10})
        assert "sales" in store.view(1, ("sales",)).registry
        assert "sales" not in store.view(2, ("sales",)).registry

    def test_same_result_twice_is_fine_and_not_counted_twice(self) -> None:
        """Recording an equal value again is a no-op."""
        store, recorder, _ = make()
        assert [put(store, 1, "s", {"EU": 10}), put(store, 1, "s", {"EU": 10})] == [
            "recorded",
            "duplicate",
        ]
        assert recorder.facts == Counter({("value", "genai", "recorded"): 1})

    def test_different_result_is_a_conflict_that_withdraws_the_fact(self) -> None:
        """A second, different result poisons the name: the fact is withdrawn, conflict counted."""
        store, recorder, _ = make()
        put(store, 1, "s", {"EU": 10})
        assert put(store, 1, "s", {"EU": 11}) == "conflict"
        assert put(store, 1, "s", {"EU": 10}) == "conflict"
        view = store.view(1, ("s",))
        assert ("s" in view.registry, dict(view.problems)) == (False, {"s": "conflict"})
        assert recorder.facts[("value", "genai", "conflict")] == 2

    def test_types_matter_in_conflicts(self) -> None:
        """1 and True are different results."""
        store, _, _ = make()
        put(store, 1, "s", [1])
        assert put(store, 1, "s", [True]) == "conflict"

    def test_a_problem_then_a_good_result_stays_poisoned(self) -> None:
        """After a truncated result, a later good one cannot be compared: conflict."""
        store, recorder, _ = make()
        store.problem(1, "s", "truncated", kind="table", source="genai")
        assert put(store, 1, "s", [1]) == "conflict"
        assert dict(store.view(1, ("s",)).problems) == {"s": "conflict"}
        assert recorder.facts[("table", "genai", "truncated")] == 1


class TestBounds:
    def test_facts_per_trace(self) -> None:
        """Past max_facts_per_trace a result is rejected and counted."""
        store, recorder, _ = make(max_facts_per_trace=2)
        outcomes = [put(store, 1, name, 1) for name in ("a", "b", "c")]
        assert outcomes == ["recorded", "recorded", "rejected"]
        assert recorder.facts[("value", "genai", "rejected")] == 1
        assert dict(store.view(1, ("c",)).problems) == {"c": "rejected"}

    def test_bytes_per_trace(self) -> None:
        """A result that would take a trace past max_trace_bytes is rejected."""
        store, _, _ = make(max_trace_bytes=100)
        assert [put(store, 1, "a", 1, size=60), put(store, 1, "b", 2, size=60)] == [
            "recorded",
            "rejected",
        ]

    def test_total_bytes_evict_the_least_recently_used_trace(self) -> None:
        """Past max_total_bytes the oldest trace is evicted and its facts counted evicted."""
        store, recorder, _ = make(max_total_bytes=100)
        put(store, 1, "a", 1, size=60)
        put(store, 2, "a", 1, size=60)
        assert "a" not in store.view(1, ("a",)).registry
        assert recorder.facts[("value", "genai", "evicted")] == 1
        assert (len(store), recorder.traces) == (1, 1)

    def test_a_bound_is_charged_until_a_limit_binds_then_the_value_is_measured(self) -> None:
        """A fact charged an upper bound (its JSON text's) keeps it while the limits are far;
        when a bound would cross max_trace_bytes the request's facts are measured, and the
        result is admitted on what they retain."""
        store, _, _ = make(max_trace_bytes=10_000)
        small, big = ["x" * 1_000], ["y" * 5_000]
        assert put(store, 1, "a", small, bound=6_000) == "recorded"
        assert store._total_bytes == 6_000
        assert put(store, 1, "b", big, bound=9_000) == "recorded"  # 6,000 + 5,000 > 10,000
        assert store._total_bytes == estimate_size(small) + estimate_size(big) < 10_000

    def test_a_bound_over_max_total_bytes_evicts_nothing_when_the_values_fit(self) -> None:
        """Bounds alone never evict: the live facts are measured first."""
        store, recorder, _ = make(max_total_bytes=10_000, max_trace_bytes=10_000)
        for trace_id in (1, 2, 3):
            store.record(
                trace_id, "a", ["x" * 1_000], source="genai", provenance=PROVENANCE, bound=6_000
            )
        assert (len(store), recorder.facts[("value", "genai", "evicted")]) == (3, 0)
        assert store.measured_total() == store._total_bytes < 10_000

    def test_max_traces_evicts_lru(self) -> None:
        """The least recently used trace goes first; touching a trace keeps it."""
        store, recorder, _ = make(max_traces=2)
        put(store, 1, "a", 1)
        put(store, 2, "a", 1)
        store.view(1, ("a",))  # touch trace 1
        put(store, 3, "a", 1)
        assert ["a" in store.view(t, ("a",)).registry for t in (1, 2, 3)] == [True, False, True]
        assert recorder.facts[("value", "genai", "evicted")] == 1

    def test_ttl_expires_idle_traces(self) -> None:
        """A trace idle longer than ttl_seconds is evicted when new state is created."""
        store, recorder, clock = make(ttl_seconds=10)
        put(store, 1, "a", 1)
        clock.now = 11
        put(store, 2, "a", 1)
        assert len(store) == 1
        assert recorder.facts[("value", "genai", "evicted")] == 1


class TestLifecycle:
    def test_local_root_end_drops_without_counting_eviction(self) -> None:
        """The request goes when its local root ends; that is not an eviction."""
        store, recorder, _ = make()
        request = store.root_started(1, 100)
        assert request == 1
        put(store, request, "a", 1)
        assert store.root_ended(1, 100, request) is True
        assert (len(store), recorder.traces) == (0, 0)
        assert recorder.facts[("value", "genai", "evicted")] == 0

    def test_two_local_roots_of_one_trace_are_two_requests(self) -> None:
        """A second live local root of a trace is its own request: facts are never shared,
        and each request's facts go when its own root ends."""
        store, _, _ = make()
        first = store.root_started(1, 100)
        second = store.root_started(1, 200)
        assert (first, second) == (1, (1, 200))
        assert store.shared == {1}
        put(store, first, "a", 1)
        put(store, second, "a", 2)  # the same fact name: no conflict across requests
        assert store.view(first, ("a",)).registry.value("a") == 1
        assert store.view(second, ("a",)).registry.value("a") == 2
        assert store.root_ended(1, 100, first) is False
        assert len(store) == 1
        assert store.root_ended(1, 200, second) is True
        assert (len(store), store.shared, store.spans) == (0, set(), {})

    def test_a_trace_keeps_its_only_root_as_a_span_id_and_a_list_from_a_second_one(
        self,
    ) -> None:
        """One live root is stored as its span id; a second makes the entry a list, which the
        roots leave in any order (the last one removes the trace)."""
        store, _, _ = make()
        assert store.root_started(1, 100) == 1
        assert store.roots == {1: 100}
        second, third = store.root_started(1, 200), store.root_started(1, 300)
        assert (second, third) == ((1, 200), (1, 300))
        assert store.roots == {1: [100, 200, 300]}
        assert store.root_ended(1, 200, second) is False
        assert store.root_ended(1, 100, 1) is False
        assert store.roots == {1: [300]}
        assert store.root_ended(1, 300, third) is True
        assert (store.roots, store.shared) == ({}, set())

    def test_a_pruned_root_ending_leaves_the_live_one_alone(self) -> None:
        """A root whose entry was pruned ends without taking the trace's live root with it."""
        store, _, _ = make(max_traces=1)
        for trace_id in range(1, 6):  # 4 * max_traces entries kept: trace 1 goes
            store.root_started(trace_id, 100 + trace_id)
        assert 1 not in store.roots
        assert store.root_started(1, 900) == 1  # a new live root of trace 1
        assert store.root_ended(1, 101, 1) is False  # the pruned one
        assert store.roots[1] == 900

    def test_spans_of_a_shared_trace_map_to_their_request_bounded(self) -> None:
        """In a shared trace each span maps to its request; the map is bounded."""
        store, _, _ = make(max_traces=1)
        store.root_started(1, 100)
        second = store.root_started(1, 200)
        for span_id in range(300, 330):
            store.span_started(span_id, second)
        assert len(store.spans) == 16  # 16 * max_traces
        assert store.span_request(1, 329) == second
        assert store.span_request(1, 100) == 1  # the first request: not mapped
        assert store.span_request(2, 329) == 2  # another trace is not shared


class TestTraceRegistry:
    def test_recording_in_code_goes_through_the_rules(self) -> None:
        """The trace registry is writable; a conflicting record raises, a duplicate does not."""
        store, recorder, _ = make()
        registry = store.registry(1)
        registry.record_ranking("r", {"EU": 10, "US": 7}, tool="t")
        registry.record_ranking("r", {"EU": 10, "US": 7}, tool="t")
        with pytest.raises(ValueError, match="conflict"):
            registry.record_ranking("r", {"EU": 1, "US": 7}, tool="t")
        assert recorder.facts[("ranking", "code", "recorded")] == 1

    def test_views_are_read_only(self) -> None:
        """A boundary's view cannot record."""
        store, _, _ = make()
        put(store, 1, "a", 1)
        with pytest.raises(FactBoundaryError):
            store.view(1, ("a",)).registry.record("b", 2)


def test_sdk_traces_are_dropped_and_the_gauge_returns_to_zero(otel: Harness) -> None:
    """Through the SDK: after the local root ends, no trace is live and the gauge reads 0."""
    guard = otel.install()
    for _ in range(3):
        with otel.agent():
            otel.tool(SALES_ROWS)
            otel.chat(answer({"winner": "EU"}))
    assert len(guard.processor.engine.store) == 0
    assert otel.metrics()["groundplane.traces.active"] == [({}, 0)]


def table_config() -> Any:
    """Table fact ``accounts`` (rows keyed by ``id``) from tool ``crm``, guarding ``analyst``."""
    fact = FactSpec("accounts", "crm", kind="table", key="id", path="rows")
    boundary = BoundarySpec(
        "answer",
        ("accounts",),
        (row_integrity("accounts", "id", ["active"]),),
        match=MatchSpec(agent_name="analyst"),
        report_mode="first",
    )
    return GuardConfig((fact,), (boundary,))


@pytest.mark.parametrize(
    ("config", "tool", "first", "second", "claim"),
    [
        (
            "table",
            "crm",
            {"rows": [{"id": "a", "active": 1}]},
            {"rows": [{"id": "a", "active": True}]},
            {"id": "a", "active": 1},
        ),
        (
            "ranking",
            "top_sales",
            {"rows": [{"region": 1, "total": 10}, {"region": "US", "total": 7}]},
            {"rows": [{"region": True, "total": 10}, {"region": "US", "total": 7}]},
            {"winner": 1},
        ),
        (
            "ranking-score",
            "top_sales",
            {"rows": [{"region": "EU", "total": 10}, {"region": "US", "total": 7}]},
            {"rows": [{"region": "EU", "total": 10.0}, {"region": "US", "total": 7}]},
            {"winner": "EU"},
        ),
    ],
)
def test_a_second_result_differing_only_in_type_is_a_conflict(
    otel: Harness, config: str, tool: str, first: Any, second: Any, claim: Any
) -> None:
    """Two tool spans in one trace whose results differ only by ``1`` vs ``true`` (a table cell,
    a ranking's name) or ``10`` vs ``10.0`` (a score): a conflict, so the answer fails closed
    (fact_conflict) instead of being checked against either; the same result twice passes."""
    guard = otel.install(table_config() if config == "table" else sales_config(report_mode="first"))

    def run(second_result: Any) -> str | None:
        try:
            with otel.agent():
                otel.tool(first, name=tool, call_id="call_1")
                otel.tool(second_result, name=tool, call_id="call_2")
                otel.chat(answer(claim))
        except FactBoundaryError as error:
            return getattr(error, "code", type(error).__name__)
        return None

    assert run(first) is None  # the very same result twice: one fact, checked, passes
    assert run(second) == "fact_conflict"
    kind = "table" if config == "table" else "ranking"
    outcomes = {
        attrs["groundplane.fact.outcome"]: value
        for attrs, value in otel.metrics()["groundplane.facts"]
        if attrs["groundplane.fact.kind"] == kind
    }
    assert outcomes == {"recorded": 2, "conflict": 1}
    assert guard.processor.internal_errors == 0
