"""Two instrumented services exporting with the real OTLP/gRPC exporter, as the verifier tests
drive them: a tool in one service, the answer in the other (``traceparent`` between them)."""

from __future__ import annotations

import json
import time
from contextlib import ExitStack
from typing import Any

from opentelemetry import propagate
from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor
from opentelemetry.trace import SpanKind
from otel_harness import SALES_ROWS, answer, sales_config

__all__ = [
    "AGENT",
    "CONFIG",
    "agent_request",
    "deep_chain",
    "sales_service",
    "service",
    "wait_for",
]

CONFIG = sales_config()  # enforce in the policy: the verifier still only observes
AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "analyst"}


def service(name: str, endpoint: str) -> TracerProvider:
    provider = TracerProvider(resource=Resource.create({"service.name": name}))
    provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint, insecure=True))
    )
    return provider


def sales_service(tools: TracerProvider, headers: dict[str, str]) -> None:
    """Service A: a request handler that runs the tool (its span carries the result)."""
    tracer = tools.get_tracer("sales-service")
    context = propagate.extract(headers)
    with tracer.start_as_current_span("GET /sales", context=context, kind=SpanKind.SERVER):
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "top_sales",
            "gen_ai.tool.call.result": json.dumps(SALES_ROWS),
        }
        with tracer.start_as_current_span("execute_tool top_sales", attributes=attributes):
            pass


def agent_request(
    agents: TracerProvider, tools: TracerProvider, winner: str, *, model_s: float = 0.0
) -> Any:
    """Service B: the agent calls service A (traceparent in the headers), then answers after
    a model call of ``model_s`` seconds."""
    tracer = agents.get_tracer("agent-service")
    with tracer.start_as_current_span("invoke_agent analyst", attributes=AGENT):
        headers: dict[str, str] = {}
        propagate.inject(headers)
        sales_service(tools, headers)
        with tracer.start_as_current_span(
            "chat m", attributes={"gen_ai.operation.name": "chat"}
        ) as chat:
            time.sleep(model_s)
            chat.set_attribute("gen_ai.output.messages", answer({"winner": winner}))
    return chat.get_span_context()


def wait_for(condition: Any, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("timed out")
        time.sleep(0.02)


def deep_chain(endpoint: str, depth: int = 1_500) -> int:
    """A trace of ``depth`` nested spans, exported leaf-first as the SDK ends them (batched);
    its trace id."""
    provider = TracerProvider(resource=Resource.create({"service.name": "deep-service"}))
    provider.add_span_processor(
        BatchSpanProcessor(OTLPSpanExporter(endpoint=endpoint, insecure=True))
    )
    tracer = provider.get_tracer("deep-service")
    with ExitStack() as stack:
        for level in range(depth):
            span = stack.enter_context(tracer.start_as_current_span(f"step {level}"))
        trace_id = span.get_span_context().trace_id
    provider.force_flush()
    provider.shutdown()
    return trace_id
