"""A real OTLP/gRPC export to a loopback receiver built from opentelemetry-proto's TraceService:
the guardrail events, the links to the fact spans and the ERROR status survive the wire."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent import futures
from typing import Any

import grpc
import pytest
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.trace.v1 import trace_service_pb2, trace_service_pb2_grpc
from opentelemetry.proto.trace.v1 import trace_pb2
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from otel_harness import SALES_ROWS, Harness, answer

from groundplane_otel.errors import ClaimsUnsupported


class Receiver(trace_service_pb2_grpc.TraceServiceServicer):
    """Keeps every span it receives."""

    def __init__(self) -> None:
        self.spans: list[trace_pb2.Span] = []
        self.lock = threading.Lock()

    def Export(  # noqa: N802 - the generated gRPC method name
        self, request: trace_service_pb2.ExportTraceServiceRequest, context: Any
    ) -> trace_service_pb2.ExportTraceServiceResponse:
        with self.lock:
            for resource_spans in request.resource_spans:
                for scope_spans in resource_spans.scope_spans:
                    self.spans.extend(scope_spans.spans)
        return trace_service_pb2.ExportTraceServiceResponse()


@pytest.fixture
def receiver() -> Iterator[tuple[Receiver, int]]:
    """A gRPC TraceService on a free loopback port."""
    servicer = Receiver()
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    trace_service_pb2_grpc.add_TraceServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield servicer, port
    server.stop(grace=None)


def attributes(items: Any) -> dict[str, Any]:
    """OTLP KeyValues -> {key: (value kind, value)}."""
    out: dict[str, Any] = {}
    for item in items:
        kind = item.value.WhichOneof("value")
        value = getattr(item.value, kind)
        if kind == "array_value":
            value = [getattr(v, v.WhichOneof("value")) for v in value.values]
        out[item.key] = (kind, value)
    return out


def test_events_links_and_status_survive_otlp_grpc(
    otel: Harness, receiver: tuple[Receiver, int]
) -> None:
    """The blocked chat span arrives with its event, typed summary attributes, link and status."""
    servicer, port = receiver
    exporter = OTLPSpanExporter(endpoint=f"127.0.0.1:{port}", insecure=True, timeout=10)
    otel.tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel.install()

    def blocked_answer() -> None:
        with otel.agent():
            otel.tool(SALES_ROWS)
            otel.chat(answer({"winner": "US"}))

    with pytest.raises(ClaimsUnsupported):
        blocked_answer()
    exporter.shutdown()
    by_name = {span.name: span for span in servicer.spans}
    chat, tool = by_name["chat gpt-test"], by_name["execute_tool top_sales"]
    assert chat.status.code == trace_pb2.Status.STATUS_CODE_ERROR
    summary = attributes(chat.attributes)
    assert summary["groundplane.outcome"] == ("string_value", "blocked")
    assert summary["groundplane.violations"] == ("int_value", 1)
    assert summary["groundplane.facts"] == ("array_value", ["sales"])
    event, evaluation = chat.events
    assert (event.name, evaluation.name) == ("gen_ai.guardrail.result", "gen_ai.evaluation.result")
    assert attributes(evaluation.attributes) == {
        "gen_ai.evaluation.name": ("string_value", "superlative"),
        "gen_ai.evaluation.score.label": ("string_value", "unsupported"),
    }
    event_attributes = attributes(event.attributes)
    assert event_attributes["gen_ai.guardrail.result.type"] == ("string_value", "verdict")
    assert event_attributes["gen_ai.guardrail.result.value"] == ("string_value", "unsupported")
    assert event_attributes["gen_ai.guardrail.result.reason"] == ("string_value", "wrong_winner")
    assert event_attributes["groundplane.fact.span_id"] == ("string_value", tool.span_id.hex())
    (link,) = chat.links
    assert (link.trace_id, link.span_id) == (tool.trace_id, tool.span_id)
    assert attributes(link.attributes) == {"groundplane.fact": ("string_value", "sales")}
