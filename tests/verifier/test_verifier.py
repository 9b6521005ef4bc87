"""The fleet verifier with real parts: two services export with the real OTLP/gRPC exporters to
a running verifier (tool span in one service, the answer in the other, context propagated with
``traceparent``); its metrics and log records arrive at a loopback OTLP receiver."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from opentelemetry.exporter.otlp.proto.grpc._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, PeriodicExportingMetricReader
from otlp_services import CONFIG, agent_request, service, wait_for
from otlp_sink import Sink

from groundplane_otel.otel.verifier import Verifier, VerifierServer


@pytest.fixture
def verifier(sink: Sink) -> Iterator[tuple[VerifierServer, MeterProvider, LoggerProvider]]:
    meters = MeterProvider(
        metric_readers=[
            PeriodicExportingMetricReader(
                OTLPMetricExporter(endpoint=sink.endpoint, insecure=True),
                export_interval_millis=60_000,
            )
        ]
    )
    logs = LoggerProvider()
    logs.add_log_record_processor(
        SimpleLogRecordProcessor(OTLPLogExporter(endpoint=sink.endpoint, insecure=True))
    )
    server = VerifierServer(
        Verifier(CONFIG, meter_provider=meters, logger_provider=logs, root_wait_s=0.2),
        listen="127.0.0.1:0",
        health="127.0.0.1:0",
        tick_s=0.05,
    ).start()
    yield server, meters, logs
    server.stop(grace_s=1)
    meters.shutdown()
    logs.shutdown()


def test_a_tool_in_one_service_and_the_answer_in_another_are_checked(
    sink: Sink, verifier: tuple[VerifierServer, MeterProvider, LoggerProvider]
) -> None:
    """The wrong winner is flagged (observe only) with mode=verifier, counted once; the log
    record carries the guarded span's ids; the right winner passes; both tool results are
    exported as ``groundplane.facts`` and tallied in the replay's stats."""
    server, meters, logs = verifier
    endpoint = f"127.0.0.1:{server.port}"
    agents, tools = service("agent-service", endpoint), service("sales-service", endpoint)
    wrong = agent_request(agents, tools, "US")
    agent_request(agents, tools, "EU")
    stats = server.verifier.replayer.stats
    wait_for(lambda: stats.traces == 2)
    meters.force_flush()
    logs.force_flush()
    outputs = sink.sums("groundplane.outputs")
    assert outputs == {
        (
            ("gen_ai.agent.name", "analyst"),
            ("groundplane.boundary", "answer"),
            ("groundplane.mode", "verifier"),
            ("groundplane.outcome", "flagged"),
        ): 1,
        (
            ("gen_ai.agent.name", "analyst"),
            ("groundplane.boundary", "answer"),
            ("groundplane.mode", "verifier"),
            ("groundplane.outcome", "passed"),
        ): 1,
    }
    evaluated = [log for log in sink.logs if log.event_name == "gen_ai.evaluation.result"]
    assert sorted(tuple(kv.value.string_value for kv in log.attributes) for log in evaluated) == [
        ("superlative", "supported"),
        ("superlative", "unsupported"),
    ]
    (record,) = [log for log in sink.logs if log.event_name == "gen_ai.guardrail.result"]
    assert record.trace_id.hex() == f"{wrong.trace_id:032x}"
    assert record.span_id.hex() == f"{wrong.span_id:016x}"
    attributes = {kv.key: kv.value.string_value for kv in record.attributes}
    assert attributes["gen_ai.guardrail.result.reason"] == "wrong_winner"
    assert attributes["groundplane.fact.tool"] == "top_sales"
    assert (
        sink.sums("groundplane.verifier.spans")[(("groundplane.verifier.outcome", "received"),)]
        == 8  # 2 requests x 4 spans
    )
    assert stats.outputs == {("answer", "flagged"): 1, ("answer", "passed"): 1}
    assert sink.sums("groundplane.facts") == {
        (
            ("groundplane.fact.kind", "ranking"),
            ("groundplane.fact.outcome", "recorded"),
            ("groundplane.fact.source", "genai"),
        ): 2
    }
    assert stats.facts == {("ranking", "genai", "recorded"): 2}
    agents.shutdown()
    tools.shutdown()


def test_health_answers_while_serving_and_refuses_while_draining(
    verifier: tuple[VerifierServer, MeterProvider, LoggerProvider],
) -> None:
    """/healthz: 200 while serving, 503 once draining began."""
    server, _, _ = verifier
    url = f"http://127.0.0.1:{server.health_port}/healthz"
    with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - loopback
        assert (response.status, response.read()) == (200, b"ok\n")
    server.serving.clear()
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(url, timeout=5)  # noqa: S310 - loopback
    assert refused.value.code == 503
    server.serving.set()


class Router(trace_service_pb2_grpc.TraceServiceServicer):
    """What the Collector's load_balancing exporter does (routing_key: traceID): every span of
    a trace goes to the same replica."""

    def __init__(self, ports: list[int]) -> None:
        self.stubs = [
            trace_service_pb2_grpc.TraceServiceStub(grpc.insecure_channel(f"127.0.0.1:{port}"))
            for port in ports
        ]

    def Export(self, request: Any, context: Any) -> Any:  # noqa: N802 - gRPC method name
        parts = [trace_service_pb2.ExportTraceServiceRequest() for _ in self.stubs]
        for resource_spans in request.resource_spans:
            for scope_spans in resource_spans.scope_spans:
                for span in scope_spans.spans:
                    target = parts[int.from_bytes(span.trace_id, "big") % len(parts)]
                    resource = target.resource_spans.add()
                    resource.resource.CopyFrom(resource_spans.resource)
                    resource.scope_spans.add(scope=scope_spans.scope).spans.append(span)
        for stub, part in zip(self.stubs, parts, strict=True):
            if part.resource_spans:
                stub.Export(part, timeout=10)
        return trace_service_pb2.ExportTraceServiceResponse()


def outputs_of(readers: list[InMemoryMetricReader]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for reader in readers:
        data = reader.get_metrics_data()
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == "groundplane.outputs":
                        for point in metric.data.data_points:
                            outcome = str(point.attributes["groundplane.outcome"])
                            totals[outcome] = totals.get(outcome, 0) + int(point.value)
    return totals


def fleet(replicas: int, winners: list[str]) -> dict[str, int]:
    readers = [InMemoryMetricReader() for _ in range(replicas)]
    servers = [
        VerifierServer(
            Verifier(
                CONFIG, meter_provider=MeterProvider(metric_readers=[reader]), root_wait_s=0.2
            ),
            listen="127.0.0.1:0",
            health=None,
            tick_s=0.05,
        ).start()
        for reader in readers
    ]
    router = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(
        Router([s.port for s in servers]), router
    )
    port = router.add_insecure_port("127.0.0.1:0")
    router.start()
    agents, tools = (
        service("agent-service", f"127.0.0.1:{port}"),
        service("sales-service", f"127.0.0.1:{port}"),
    )
    for winner in winners:
        agent_request(agents, tools, winner)
    wait_for(lambda: sum(s.verifier.replayer.stats.traces for s in servers) == len(winners))
    for server in servers:
        server.stop(grace_s=1)
    router.stop(0)
    agents.shutdown()
    tools.shutdown()
    return outputs_of(readers)


def test_two_replicas_fed_whole_traces_give_the_totals_of_one() -> None:
    """Routed by trace id, two verifier replicas count exactly what one does."""
    winners = ["US", "EU", "EU", "US", "EU", "EU"]
    one, two = fleet(1, winners), fleet(2, winners)
    assert one == two == {"flagged": 2, "passed": 4}


def test_spans_whose_parent_never_arrives_and_floods_are_counted(sink: Sink) -> None:
    """A flood of distinct trace ids past max_traces decides early (reported incomplete);
    a span whose parent never arrives is counted, nothing crashes, memory stays bounded."""
    reader = InMemoryMetricReader()
    verifier = Verifier(CONFIG, meter_provider=MeterProvider(metric_readers=[reader]), max_traces=5)
    request = trace_service_pb2.ExportTraceServiceRequest()
    spans = request.resource_spans.add().scope_spans.add().spans
    for index in range(50):
        span = spans.add(name="orphan", trace_id=(index + 1).to_bytes(16, "big"))
        span.span_id = (index + 1).to_bytes(8, "big")
        span.parent_span_id = (10_000 + index).to_bytes(8, "big")
    verifier.Export(request, None)
    assert verifier.replayer.buffered == 5
    verifier.drain()
    stats = verifier.replayer.stats
    assert (stats.spans, stats.traces, stats.incomplete_traces, stats.orphan_spans) == (
        50,
        50,
        45,
        50,
    )
