"""Memory accounting: what the store counts against ``max_trace_bytes``/``max_total_bytes``.

A fact captured from JSON text is charged an upper bound from the text's size (``text_bound``,
again per result checks cache on it) while the limits are far; when a bound would cross a
limit the store measures, and measured figures are within 2x of what tracemalloc sees (row
tables, many tiny objects, long strings; captured from spans, recorded in code, and what checks
cache on a fact). So the limits are real caps — 1 MiB of ``[{},{},...]`` is not 1 MiB — and
nothing is evicted or refused on a bound alone."""

from __future__ import annotations

import gc
import json
import tracemalloc
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Tracer

from groundplane_otel.checks.aggregate_reconciles import aggregate_reconciles
from groundplane_otel.checks.entities_recorded import entities_recorded
from groundplane_otel.checks.row_integrity import row_integrity
from groundplane_otel.checks.superlative import superlative
from groundplane_otel.otel import (
    BoundarySpec,
    FactSpec,
    Guard,
    GuardConfig,
    Limits,
    MatchSpec,
    install,
    submit_output,
    tool,
    trace_registry,
)
from groundplane_otel.otel._engine.sizing import text_bound

ROWS = [
    {"id": f"r{i:05d}", "spend": (i * 7919) % 10_007, "ctr": i / 7_919, "region": f"zone-{i % 50}"}
    for i in range(4_000)
]
TINY = [{} for _ in range(150_000)]  # ~450 KB of JSON text, ~11 MiB of dicts
LONG = {"docs": ["x" * 400_000 + str(i) for i in range(8)]}  # long strings: ~1:1
SHAPES: dict[str, tuple[Any, FactSpec]] = {
    "row-table": ({"rows": ROWS}, FactSpec("t", "crm", kind="table", key="id", path="rows")),
    "tiny-objects": (TINY, FactSpec("t", "crm")),
    "long-strings": (LONG, FactSpec("t", "crm")),
}


class Pipeline:
    """Real SDK providers with no span exporter (an exporter would hold every tool result's
    text), and the guard installed on them."""

    def __init__(
        self, facts: tuple[FactSpec, ...], limits: Limits, boundary: dict[str, Any] | None
    ) -> None:
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.tracer_provider = TracerProvider()
        self.tracer: Tracer = self.tracer_provider.get_tracer("app")
        boundaries = (
            (BoundarySpec(match=MatchSpec(operation_name="chat"), **boundary),) if boundary else ()
        )
        self.guard: Guard = install(
            GuardConfig(facts, boundaries, "observe", limits=limits),
            tracer_provider=self.tracer_provider,
            meter_provider=self.meter_provider,
            raise_internal_errors=True,
        )

    @property
    def accounted(self) -> int:
        return self.guard.processor.engine.store._total_bytes

    @property
    def measured(self) -> int:
        return self.guard.processor.engine.store.measured_total()

    def tool_span(self, result: str) -> None:
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "crm",
            "gen_ai.tool.call.result": result,
        }
        with self.tracer.start_as_current_span("execute_tool crm", attributes=attributes):
            pass

    def close(self) -> None:
        self.guard.uninstall()
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()


@pytest.fixture
def pipelines() -> Iterator[Callable[..., Pipeline]]:
    made: list[Pipeline] = []

    def make(
        facts: tuple[FactSpec, ...] = (),
        limits: Limits | None = None,
        boundary: dict[str, Any] | None = None,
    ) -> Pipeline:
        made.append(Pipeline(facts, limits or Limits(), boundary))
        return made[-1]

    yield make
    for pipeline in made:
        pipeline.close()


def held(step: Callable[[], None]) -> int:
    """Bytes still allocated after ``step`` (tracemalloc), garbage collected first."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        step()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def assert_within_2x(accounted: int, actual: int) -> None:
    """The accounted figure is at least half and at most twice what is really retained."""
    assert actual > 100_000  # big enough for the ratio to mean something
    assert 0.5 <= accounted / actual <= 2.0, (accounted, actual, accounted / actual)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_fact_captured_from_a_tool_span_is_accounted_at_what_it_retains(
    pipelines: Callable[..., Pipeline], shape: str
) -> None:
    """A tool span's JSON result, parsed and stored: charged its text bound (no less than it
    retains) unless that would cross ``max_trace_bytes`` (then measured at once), and measured
    within 2x of tracemalloc."""
    payload, spec = SHAPES[shape]
    pipeline = pipelines((spec,))
    text = json.dumps(payload)
    with pipeline.tracer.start_as_current_span("request", context=Context()):
        actual = held(lambda: pipeline.tool_span(text))
        assert "t" in trace_registry(guard=pipeline.guard)
        bound = text_bound(len(text))
        if bound <= Limits().max_trace_bytes:
            assert pipeline.accounted == bound >= actual
        else:
            assert pipeline.accounted == pipeline.measured
        assert_within_2x(pipeline.measured, actual)


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_a_fact_recorded_in_code_is_accounted_at_what_it_retains(
    pipelines: Callable[..., Pipeline], shape: str
) -> None:
    """A value recorded through the trace's registry (a copy the store owns, built fresh in
    the step and dropped by the caller: strings are shared, not copied): within 2x."""
    payload, spec = SHAPES[shape]
    pipeline = pipelines()
    text = json.dumps(payload)
    with pipeline.tracer.start_as_current_span("request", context=Context()):
        registry = trace_registry(guard=pipeline.guard)

        def record() -> None:
            fresh = json.loads(text)
            if spec.kind == "table":
                registry.record_table("t", fresh["rows"], key="id")
            else:
                registry.record("t", fresh, tool="crm")

        actual = held(record)
        assert_within_2x(pipeline.accounted, actual)


def test_a_decorated_tools_result_is_accounted_at_what_it_retains(
    pipelines: Callable[..., Pipeline],
) -> None:
    """``@tool`` results (Guard.record_fact, typed by a FactSpec): within 2x."""
    pipeline = pipelines((SHAPES["row-table"][1],))

    text = json.dumps({"rows": ROWS})

    @tool("crm", guard=pipeline.guard)
    def crm() -> dict[str, Any]:
        return json.loads(text)  # type: ignore[no-any-return]

    with pipeline.tracer.start_as_current_span("request", context=Context()):
        actual = held(lambda: crm() and None)
        assert_within_2x(pipeline.accounted, actual)


def test_what_checks_cache_on_a_fact_is_accounted_too(pipelines: Callable[..., Pipeline]) -> None:
    """Checks that derive indices and rankings from a table cache them on it (about as much
    again as the table): the store's charge grows with them (a text bound per cached result,
    never less than they retain) and, measured, by what they retain within 2x."""
    checks = (
        aggregate_reconciles("t", "total", "spend"),
        superlative("t", "winner", column="ctr"),
        entities_recorded(["who"], "t"),
        row_integrity("t", "id", ["spend", "region"]),
    )
    boundary = {"name": "answer", "facts": ("t",), "checks": checks}
    pipeline = pipelines((SHAPES["row-table"][1],), boundary=boundary)
    output = {
        "total": 1,
        "winner": ROWS[0]["id"],
        "who": "nobody",
        "id": ROWS[5]["id"],
        "spend": -1,
    }

    def check() -> None:
        with pipeline.tracer.start_as_current_span(
            "chat m", attributes={"gen_ai.operation.name": "chat"}
        ):
            submit_output(output, guard=pipeline.guard)

    for measured in (False, True):  # the first trace creates the metric series: not measured
        with pipeline.tracer.start_as_current_span("request", context=Context()):
            pipeline.tool_span(json.dumps({"rows": ROWS}))
            charged, recorded = pipeline.accounted, pipeline.measured
            if not measured:
                check()
                continue
            actual = held(check)
            assert pipeline.accounted - recorded >= actual  # the bound, for the caches too
            assert_within_2x(pipeline.measured - recorded, actual)
            assert charged > recorded
    assert pipeline.guard.processor.internal_errors == 0


def test_max_trace_bytes_refuses_tiny_objects_by_what_they_retain(
    pipelines: Callable[..., Pipeline],
) -> None:
    """450 KB of ``[{},{},...]`` text retains ~11 MiB: refused under a 4 MiB trace cap (it was
    accepted when the cap counted JSON text), and the check that needs it fails closed."""
    pipeline = pipelines((FactSpec("t", "crm"),), Limits(max_trace_bytes=4 * 1024 * 1024))
    text = json.dumps(TINY)
    assert len(text) < 1024 * 1024
    with pipeline.tracer.start_as_current_span("request", context=Context()):
        pipeline.tool_span(text)
        assert "t" not in trace_registry(guard=pipeline.guard)
        trace_id = trace.get_current_span().get_span_context().trace_id
        view = pipeline.guard.processor.engine.store.view(trace_id, ("t",))
        assert view.problems == {"t": "rejected"}
    assert pipeline.accounted == 0


def test_max_total_bytes_caps_what_live_traces_really_hold(
    pipelines: Callable[..., Pipeline],
) -> None:
    """Twelve live traces, each holding a row table of ~3 MiB (400 KB of text), under a 12 MiB
    total cap: the oldest are evicted, the accounted total never exceeds the cap, and what the
    process really holds stays within 2x of it."""
    cap = 12 * 1024 * 1024
    spec = SHAPES["row-table"][1]
    pipeline = pipelines((spec,), Limits(max_total_bytes=cap, max_trace_bytes=cap))
    text = json.dumps({"rows": ROWS})
    roots: list[Any] = []

    def traffic() -> None:
        for _ in range(12):
            root = pipeline.tracer.start_span("request", context=Context())
            roots.append(root)
            with trace.use_span(root, end_on_exit=False):
                pipeline.tool_span(text)
            assert pipeline.accounted <= cap

    actual = held(traffic)
    store = pipeline.guard.processor.engine.store
    assert 2 <= len(store) < 12  # some traces evicted, the newest kept
    assert actual <= 2 * cap
    assert_within_2x(pipeline.accounted, actual)
    for root in roots:
        root.end()
    assert (len(store), pipeline.accounted) == (0, 0)


def test_an_over_the_cap_result_is_refused_before_it_is_parsed(
    pipelines: Callable[..., Pipeline],
) -> None:
    """1.5 MiB of ``[{},{},...]`` would be ~36 MiB of dicts: refused from its structure
    before parsing, so the capture's memory peak stays near the text's size (no parse spike),
    and counted as rejected."""
    pipeline = pipelines((FactSpec("t", "crm"),), Limits(max_trace_bytes=4 * 1024 * 1024))
    text = "[" + ",".join(["{}"] * 500_000) + "]"
    with pipeline.tracer.start_as_current_span("request", context=Context()):
        gc.collect()
        tracemalloc.start()
        try:
            pipeline.tool_span(text)
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        trace_id = trace.get_current_span().get_span_context().trace_id
        assert pipeline.guard.processor.engine.store.view(trace_id, ("t",)).problems == {
            "t": "rejected"
        }
    assert peak < 4 * len(text)  # parsing it first peaked at ~36 MiB


N_DENSE = 5_000
DENSE: dict[str, tuple[str, FactSpec]] = {
    "empty objects": ("[" + ",".join(["{}"] * N_DENSE) + "]", FactSpec("t", "crm")),
    "nested one-item arrays": (
        "[" + ",".join(["[[[[[[0]]]]]]"] * N_DENSE) + "]",
        FactSpec("t", "crm"),
    ),
    "one-key objects": ("[" + ",".join(['{"a":{"b":{}}}'] * N_DENSE) + "]", FactSpec("t", "crm")),
    "one-char strings": ("[" + ",".join(['"a"'] * N_DENSE) + "]", FactSpec("t", "crm")),
    "smallest rows (Table)": (
        "[" + ",".join(f'{{"k":{i}}}' for i in range(N_DENSE)) + "]",
        FactSpec("t", "crm", kind="table", key="k"),
    ),
    "name -> score map (Ranking)": (
        "{" + ",".join(f'"{i}":{i}' for i in range(N_DENSE)) + "}",
        FactSpec("t", "crm", kind="ranking"),
    ),
    "short names (Domain)": (
        "[" + ",".join(f'"N{i}"' for i in range(N_DENSE)) + "]",
        FactSpec("t", "crm", kind="domain"),
    ),
}
DENSE_CHECKS = {
    "table": lambda: (
        superlative("t", "w", column="k"),
        aggregate_reconciles("t", "total", "k"),
        entities_recorded(["w"], "t"),
        row_integrity("t", "w", {"v": "k"}),
    ),
    "ranking": lambda: (superlative("t", "w"), entities_recorded(["w"], "t")),
    "domain": lambda: (entities_recorded(["w"], "t"),),
    "value": lambda: (),
}


@pytest.mark.parametrize("decoder", ["orjson", "standard library"])
@pytest.mark.parametrize("shape", sorted(DENSE))
def test_the_text_bound_covers_the_densest_shapes_and_their_caches(
    pipelines: Callable[..., Pipeline], shape: str, decoder: str
) -> None:
    """The bound charged for a fact parsed from JSON text is no less than what the densest
    shapes of every fact kind retain, with either decoder (a 20-digit integer sends the text
    to the standard library's), and after checks cached their results on it."""
    text, spec = DENSE[shape]
    if decoder == "standard library":
        text = '{"big": 123456789012345678901, "v": ' + text + "}"
        spec = FactSpec(spec.name, spec.tool, kind=spec.kind, key=spec.key, path="v")
    checks = DENSE_CHECKS[spec.kind]()
    boundary = {"name": "answer", "facts": ("t",), "checks": checks} if checks else None
    pipeline = pipelines((spec,), boundary=boundary)

    def check() -> None:
        with pipeline.tracer.start_as_current_span(
            "chat m", attributes={"gen_ai.operation.name": "chat"}
        ):
            submit_output({"w": "N1", "total": 1, "v": 1}, guard=pipeline.guard)

    for measured in (False, True):  # the first trace creates the metric series: not measured
        with pipeline.tracer.start_as_current_span("request", context=Context()):
            actual = held(lambda: pipeline.tool_span(text))
            assert pipeline.accounted == text_bound(len(text)) >= actual
            before = pipeline.accounted
            cached = held(check) if checks else 0
            if measured:  # (a few hundred bytes of the guard's own bookkeeping are no cache)
                assert pipeline.accounted - before + 4096 >= cached
    assert pipeline.guard.processor.internal_errors == 0


def test_bounds_are_measured_before_anything_is_evicted(
    pipelines: Callable[..., Pipeline],
) -> None:
    """Bounds alone never evict: when the live facts' bounds would cross max_total_bytes the
    store measures them, keeps every trace whose facts fit, and evicts only on what they
    retain."""
    text = json.dumps({"rows": ROWS[:1_000]})  # ~75 KB of text: bound ~3.6 MB, retains ~0.8 MB
    cap = 8 * 1024 * 1024
    spec = SHAPES["row-table"][1]
    pipeline = pipelines((spec,), Limits(max_total_bytes=cap, max_trace_bytes=cap))
    store = pipeline.guard.processor.engine.store
    roots: list[Any] = []
    for _ in range(6):  # bounds: ~22 MB > the cap; retained: ~5 MB < the cap
        root = pipeline.tracer.start_span("request", context=Context())
        roots.append(root)
        with trace.use_span(root, end_on_exit=False):
            pipeline.tool_span(text)
        assert pipeline.accounted <= cap
    assert len(store) == 6
    assert pipeline.accounted < 6 * text_bound(len(text))  # measured, not bounds
    for root in roots:
        root.end()
    assert (len(store), pipeline.accounted) == (0, 0)
