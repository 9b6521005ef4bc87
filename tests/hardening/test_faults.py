"""Faults around the guard: the OTLP endpoint down, black-holed or slow (real gRPC and HTTP
exporters, loopback endpoints only), bounded and counted batch-processor drops, traces whose root
never ends (evicted by TTL and LRU, counted), and shutdown that flushes."""

from __future__ import annotations

import contextlib
import gc
import statistics
import threading
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest
import requests
from hardening_kit import (
    WRONG,
    Pipeline,
    agent_trace,
    inside,
    install_guard,
    metric_points,
    open_root,
    tally,
    trace_rows,
)
from loopback import BlackHole, Receiver
from opentelemetry.context import Context
from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import (
    OTLPSpanExporter as GrpcSpanExporter,
)
from opentelemetry.exporter.otlp.proto.http.trace_exporter import (
    OTLPSpanExporter as HttpSpanExporter,
)
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.trace.export import SpanExporter
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Span
from otel_harness import Harness, answer, sales_config

from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.otel import (
    Limits,
    OutputUnchecked,
    enforce,
    submit_output,
    trace_registry,
)
from groundplane_otel.otel._live.handoff import RELEASE_DELAY

TIMEOUT = 0.5  # seconds: the exporter timeout every bad endpoint is configured with
NO_PROXY = (("grpc.enable_http_proxy", 0),)


def grpc_exporter(port: int, **kwargs: Any) -> GrpcSpanExporter:
    return GrpcSpanExporter(
        endpoint=f"127.0.0.1:{port}",
        insecure=True,
        timeout=TIMEOUT,
        channel_options=NO_PROXY,  # type: ignore[arg-type]
        **kwargs,
    )


def http_exporter(port: int) -> HttpSpanExporter:
    session = requests.Session()
    session.trust_env = False  # loopback only, whatever proxy the environment names
    return HttpSpanExporter(
        endpoint=f"http://127.0.0.1:{port}/v1/traces", timeout=TIMEOUT, session=session
    )


Endpoints = dict[str, int]


@pytest.fixture
def endpoints(closed_port: int, black_hole: BlackHole, slow_service: int) -> Endpoints:
    return {"down": closed_port, "blackhole": black_hole.port, "slow": slow_service}


BAD_EXPORTERS: dict[str, Callable[[Endpoints], SpanExporter]] = {
    "grpc-down": lambda ports: grpc_exporter(ports["down"]),
    "grpc-blackhole": lambda ports: grpc_exporter(ports["blackhole"]),
    "grpc-slow": lambda ports: grpc_exporter(ports["slow"]),
    "http-down": lambda ports: http_exporter(ports["down"]),
    "http-blackhole": lambda ports: http_exporter(ports["blackhole"]),
}

TRACES, REPEATS = 120, 3
QUEUE = 256  # max_queue_size == max_export_batch_size: at most one batch waits at shutdown


def verdicts(base: int) -> list[str | None]:
    """What the app must get for traces base..base+TRACES: every odd one is refused."""
    return [("wrong_winner" if number % 2 else None) for number in range(base, base + TRACES)]


def timed_traffic(pipeline: Pipeline, base: int) -> tuple[float, list[str | None]]:
    """App-side wall time of TRACES guarded traces; every odd one answers the wrong winner."""
    started = time.perf_counter()
    got = [
        agent_trace(pipeline.tracer, number, WRONG if number % 2 else f"R{number}")
        for number in range(base, base + TRACES)
    ]
    return time.perf_counter() - started, got


@pytest.mark.parametrize("kind", sorted(BAD_EXPORTERS))
def test_a_bad_endpoint_barely_moves_app_latency_and_the_guard_still_raises(
    kind: str, endpoints: Endpoints
) -> None:
    """With the OTLP endpoint down, black-holed or slow, the app-side time of guarded outputs
    stays within 3x of an in-memory exporter (measured side by side), every wrong answer still
    raises, every output is counted, and shutdown returns within the exporter timeout."""
    batch = {"max_queue_size": QUEUE, "max_export_batch_size": QUEUE, "schedule_delay_millis": 20}
    healthy = Pipeline(InMemorySpanExporter(), **batch)
    bad = Pipeline(BAD_EXPORTERS[kind](endpoints), **batch)
    times: dict[str, list[float]] = {"memory": [], kind: []}
    try:
        for repeat in range(REPEATS):  # alternate, so machine load hits both alike
            for name, pipeline in (("memory", healthy), (kind, bad)):
                elapsed, got = timed_traffic(pipeline, repeat * TRACES)
                times[name].append(elapsed)
                assert got == verdicts(repeat * TRACES)
        ratio = statistics.median(times[kind]) / statistics.median(times["memory"])
        print(f"\n{kind}: app-side time ratio vs in-memory exporter {ratio:.2f}")
        assert ratio < 3
        for pipeline in (healthy, bad):
            points = metric_points(pipeline.reader)
            assert tally(points, "groundplane.outputs", "groundplane.outcome") == {
                "passed": REPEATS * TRACES // 2,
                "blocked": REPEATS * TRACES // 2,
            }
            assert pipeline.guard is not None
            assert pipeline.guard.processor.internal_errors == 0
        started = time.perf_counter()
        bad.shutdown()
        took = time.perf_counter() - started
        print(f"{kind}: shutdown took {took:.2f}s (exporter timeout {TIMEOUT}s)")
        # At most one export in flight and one queued batch, each bounded by the timeout; the
        # default timeout (10 s) would blow this bound.
        assert took < 2 * TIMEOUT + 1.5
    finally:
        healthy.close()
        bad.close()


def test_drops_are_bounded_and_counted_when_the_endpoint_black_holes(
    black_hole: BlackHole, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Behind a black-holed endpoint the batch queue never holds more than max_queue_size,
    every span it loses is counted by the SDK, kept memory does not grow with traffic, and the
    guard still counts every output and raises on every wrong answer."""
    monkeypatch.setenv("OTEL_PYTHON_SDK_INTERNAL_METRICS_ENABLED", "true")
    queue, per_round, rounds, padding = 64, 60, 3, 32 * 1024
    exporter = GrpcSpanExporter(
        endpoint=f"127.0.0.1:{black_hole.port}",
        insecure=True,
        timeout=60,  # the first batch hangs for the whole test: the drops are deterministic
        channel_options=NO_PROXY,  # type: ignore[arg-type]
    )
    pipeline = Pipeline(
        exporter,
        max_queue_size=queue,
        max_export_batch_size=queue,
        schedule_delay_millis=3_600_000,  # the worker wakes only on a full batch
    )
    reader = pipeline.reader
    kept: list[int] = []
    raised: list[str | None] = []
    try:
        tracemalloc.start()
        for index in range(rounds):
            for number in range(index * per_round, (index + 1) * per_round):
                winner = WRONG if number % 2 else f"R{number}"
                raised.append(agent_trace(pipeline.tracer, number, winner, padding=padding))
            gc.collect()
            kept.append(tracemalloc.get_traced_memory()[0])
            (size,) = [value for _, value in metric_points(reader)[QUEUE_SIZE]]
            assert size <= queue
        tracemalloc.stop()
        started = time.perf_counter()
        exporter.shutdown()  # closes the channel: the hanging export is cancelled
        pipeline.shutdown()  # the last queued batch fails fast on the closed exporter
        assert time.perf_counter() - started < 5
        total = 3 * rounds * per_round
        assert raised == [("wrong_winner" if number % 2 else None) for number in range(len(raised))]
        points = metric_points(reader)
        processed = {attrs.get("error.type"): value for attrs, value in points[PROCESSED]}
        dropped, submitted = processed.get("queue_full", 0), processed.get(None, 0)
        print(f"\n{total} spans: {submitted} handed to the exporter, {dropped} dropped (counted)")
        assert submitted == 2 * queue  # the hanging batch, then the queue flushed at shutdown
        assert dropped >= total - submitted  # every other span was dropped, and counted
        assert tally(points, "groundplane.outputs", "groundplane.outcome") == {
            "passed": rounds * per_round // 2,
            "blocked": rounds * per_round // 2,
        }
        assert points["groundplane.traces.active"] == [({}, 0)]
        # Each round makes ~2 MiB of tool results; the queue holds at most 64 spans of them.
        growth = max(kept[1:]) - kept[0]
        print(f"kept memory after each round: {[value // 1024 for value in kept]} KiB")
        assert growth < 1536 * 1024
    finally:
        if tracemalloc.is_tracing():
            tracemalloc.stop()
        pipeline.close()


QUEUE_SIZE = "otel.sdk.processor.span.queue.size"
PROCESSED = "otel.sdk.processor.span.processed"


class Clock:
    """A fake monotonic clock for the store's TTL."""

    def __init__(self) -> None:
        self.now = 1_000.0

    def __call__(self) -> float:
        return self.now


def facts_by_outcome(otel: Harness) -> dict[str, int]:
    return tally(otel.metrics(), "groundplane.facts", "groundplane.fact.outcome")


def test_a_trace_whose_root_never_ends_is_evicted_by_ttl_and_counted(
    otel: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A trace left open past ttl_seconds is evicted when the next trace starts, its fact is
    counted evicted, the live-trace gauge returns to 0, and a late answer there fails closed."""
    guard = install_guard(otel, sales_config(limits=Limits(ttl_seconds=60), report_mode="first"))
    clock = Clock()
    # The store's clock is injectable (TraceStore(clock=...)); the processor builds its store
    # with the real one, so the test swaps it in.
    monkeypatch.setattr(guard.processor.engine.store, "_clock", clock)
    abandoned = open_root(otel.tracer)
    with inside(abandoned):
        otel.tool(trace_rows(1))
    assert otel.metrics()["groundplane.traces.active"] == [({}, 1)]
    clock.now += 61
    assert agent_trace(otel.tracer, 2, "R2") is None  # a new trace: the idle one expires
    assert facts_by_outcome(otel) == {"recorded": 2, "evicted": 1}
    assert otel.metrics()["groundplane.traces.active"] == [({}, 0)]

    def late_answer() -> None:
        with inside(abandoned):
            otel.chat(answer({"winner": "R1"}))

    with pytest.raises(OutputUnchecked) as late:
        late_answer()
    assert late.value.code == "fact_missing"
    abandoned.end()
    assert len(guard.processor.engine.store) == 0
    assert otel.metrics()["groundplane.traces.active"] == [({}, 0)]


def test_traces_whose_roots_never_end_are_evicted_lru_and_counted(otel: Harness) -> None:
    """Past max_traces the least recently used open traces are evicted and counted; late
    answers fail closed there (fact_missing) and pass in the traces still held."""
    guard = install_guard(otel, sales_config(limits=Limits(max_traces=3), report_mode="first"))
    roots = [open_root(otel.tracer) for _ in range(5)]
    for number, root in enumerate(roots):
        with inside(root):
            otel.tool(trace_rows(number))
    assert facts_by_outcome(otel) == {"recorded": 5, "evicted": 2}
    assert otel.metrics()["groundplane.traces.active"] == [({}, 3)]
    late: list[str | None] = []
    for number, root in enumerate(roots):
        try:
            with inside(root):
                otel.chat(answer({"winner": f"R{number}"}))
            late.append(None)
        except OutputUnchecked as error:
            late.append(error.code)
    assert late == ["fact_missing", "fact_missing", None, None, None]
    for root in roots:
        root.end()
    assert len(guard.processor.engine.store) == 0
    assert otel.metrics()["groundplane.traces.active"] == [({}, 0)]


def test_roots_that_never_end_keep_bounded_memory(otel: Harness) -> None:
    """10,000 abandoned root spans (no facts) cost the guard no memory that grows with them."""
    install_guard(otel, sales_config(limits=Limits(max_traces=100)))

    def abandon(count: int) -> None:
        for _ in range(count):
            otel.tracer.start_span("request", context=None)  # never ended, dropped

    abandon(1_000)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        abandon(9_000)
        gc.collect()
        growth = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    print(f"\n9,000 more abandoned roots kept {growth / 1024:.1f} KiB")
    # One bookkeeping entry per abandoned root would keep > 9,000 x 100 B = 880 KiB.
    assert growth < 128 * 1024


def test_force_flush_and_shutdown_deliver_pending_spans_and_metrics(receiver: Receiver) -> None:
    """Spans waiting in the batch queue reach a real OTLP/gRPC receiver on force_flush and on
    shutdown, with their guardrail events; the guard's counts reach it on meter shutdown."""
    metric_exporter = OTLPMetricExporter(
        endpoint=f"127.0.0.1:{receiver.port}",
        insecure=True,
        timeout=10,
        channel_options=NO_PROXY,  # type: ignore[arg-type]
    )
    pipeline = Pipeline(
        grpc_exporter(receiver.port),
        metric_readers=(
            PeriodicExportingMetricReader(metric_exporter, export_interval_millis=3_600_000),
        ),
        schedule_delay_millis=3_600_000,
        max_export_batch_size=1024,
    )
    try:
        first = [agent_trace(pipeline.tracer, n, WRONG if n % 2 else f"R{n}") for n in range(10)]
        assert first == [("wrong_winner" if n % 2 else None) for n in range(10)]
        assert receiver.spans == []  # all 30 spans wait in the queue
        assert pipeline.tracer_provider.force_flush(timeout_millis=10_000)
        assert len(receiver.spans) == 30
        chats = [span for span in receiver.spans if span.name == "chat gpt-test"]
        assert [[event.name for event in span.events] for span in chats].count(
            ["gen_ai.guardrail.result", "gen_ai.evaluation.result"]
        ) == 5
        assert [[event.name for event in span.events] for span in chats].count(
            ["gen_ai.evaluation.result"]
        ) == 5
        for number in range(10, 14):
            agent_trace(pipeline.tracer, number, f"R{number}")
        pipeline.shutdown()
        assert len(receiver.spans) == 42
        pipeline.shutdown_metrics()
        outputs = [
            (
                {item.key: item.value.string_value for item in point.attributes},
                point.as_int,
            )
            for metric in receiver.metrics
            if metric.name == "groundplane.outputs"
            for point in metric.sum.data_points
        ]
        assert sorted((attrs["groundplane.outcome"], value) for attrs, value in outputs) == [
            ("blocked", 5),
            ("passed", 9),
        ]
    finally:
        pipeline.close()


def test_a_worker_loop_inside_one_enforce_scope_keeps_no_entry_per_trace(otel: Harness) -> None:
    """``with enforce():`` around a loop of 20,000 requests: every ended trace's scope entries
    are released (a bounded few are kept), memory stays flat, and a violation swallowed in
    the last request is still raised when the scope exits."""
    handoff = install_guard(otel, sales_config(report_mode="first")).processor.handoff
    seen: dict[str, int] = {}

    def held() -> int:
        otel.exporter.clear()  # the exporter keeps every finished span
        gc.collect()
        return tracemalloc.get_traced_memory()[0]

    @enforce()
    def worker_loop() -> None:
        tracemalloc.start()
        try:
            for number in range(20_000):
                with otel.tracer.start_as_current_span("job", context=Context()):
                    pass
                if number == 999:  # warmed up: measure the next 19,000
                    seen["before"] = held()
            seen["grown"] = held() - seen["before"]
        finally:
            tracemalloc.stop()
        seen["entries"] = len(handoff._by_trace)
        with contextlib.suppress(UnsupportedClaim):  # a framework swallows the violation
            agent_trace(otel.tracer, 1, WRONG)

    with pytest.raises(UnsupportedClaim) as raised:
        worker_loop()
    assert raised.value.code == "wrong_winner"
    assert seen["grown"] < 256 * 1024  # it held ~200 bytes per trace: ~3.6 MiB here
    assert seen["entries"] <= RELEASE_DELAY
    assert handoff._by_trace == {}  # the scope left


def test_a_root_span_ended_on_another_thread_still_reaches_its_scope(otel: Harness) -> None:
    """The guarded chat span is itself the local root and ends on a worker thread (where the
    raise is lost): the scope it started in raises the violation, though its trace ended."""
    guard = install_guard(otel, sales_config(report_mode="first"))
    kept: list[bool] = []

    def chat_on_thread(span: Span) -> None:
        with contextlib.suppress(UnsupportedClaim):
            span.end()

    @enforce()
    def request() -> None:
        chat = otel.tracer.start_span(
            "chat gpt-test",
            context=Context(),
            attributes={"gen_ai.operation.name": "chat", "gen_ai.agent.name": "analyst"},
        )
        with inside(chat):
            registry = trace_registry(guard=guard)
            registry.record_ranking("sales", {"EU": 10, "US": 7}, tool="top_sales")
            submit_output({"winner": "US"}, guard=guard)
        worker = threading.Thread(target=chat_on_thread, args=(chat,))
        worker.start()
        worker.join(timeout=30)
        kept.append(
            bool(guard.processor.handoff._by_trace)
        )  # the ended trace's entry is kept a little while

    with pytest.raises(UnsupportedClaim) as raised:
        request()
    assert (raised.value.code, kept) == ("wrong_winner", [True])


def test_uninstall_with_traces_in_flight_releases_their_facts(otel: Harness) -> None:
    """Uninstalling while three traces hold facts drops them (store empty, live-trace gauge
    0, the memory returned); their roots ending later is harmless."""
    guard = install_guard(otel, sales_config())
    roots = [open_root(otel.tracer) for _ in range(3)]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for number, root in enumerate(roots):
            with inside(root):
                otel.tool(trace_rows(number, padding=200_000))
        assert len(guard.processor.engine.store) == 3
        assert otel.metrics()["groundplane.traces.active"] == [({}, 3)]
        guard.uninstall()
        otel.exporter.clear()  # the exported tool spans hold the results' text too
        gc.collect()
        left = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(guard.processor.engine.store) == 0
    assert guard.processor.engine.store._total_bytes == 0
    assert left < 100_000  # three results of 200 KB each were held
    assert otel.metrics().get("groundplane.traces.active", [({}, 0)]) == [({}, 0)]
    for root in roots:
        root.end()
    assert len(guard.processor.engine.store) == 0
