"""The guard tests' harness: real SDK providers (never global), an in-memory span exporter and
metric reader, and helpers that emit GenAI spans the way instrumentations do."""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Tracer

from groundplane_otel.checks.superlative import superlative
from groundplane_otel.otel import (
    BoundarySpec,
    FactSpec,
    Guard,
    GuardConfig,
    MatchSpec,
    install,
)

SALES_ROWS = {"rows": [{"region": "EU", "total": 10}, {"region": "US", "total": 7}]}
AGENT = {"gen_ai.agent.name": "analyst"}  # the metric label of a boundary matched by agent name
GUARDRAIL = "gen_ai.guardrail.result"
EVALUATION = "gen_ai.evaluation.result"


def guardrail_events(span: Any) -> list[Any]:
    """The ``gen_ai.guardrail.result`` events of ``span`` (an SDK span or exported JSON dict)."""
    return [event for event in _events(span) if _name(event) == GUARDRAIL]


def evaluations(span: Any) -> list[tuple[str, str]]:
    """(``gen_ai.evaluation.name``, ``gen_ai.evaluation.score.label``) of each
    ``gen_ai.evaluation.result`` event of ``span``, in order."""
    found = []
    for event in _events(span):
        if _name(event) == EVALUATION:
            attributes = _attributes(event)
            found.append(
                (attributes["gen_ai.evaluation.name"], attributes["gen_ai.evaluation.score.label"])
            )
    return found


def _events(span: Any) -> list[Any]:
    return list(span["events"] if isinstance(span, dict) else span.events)


def _name(event: Any) -> str:
    return str(event["name"] if isinstance(event, dict) else event.name)


def _attributes(event: Any) -> dict[str, Any]:
    return dict((event["attributes"] if isinstance(event, dict) else event.attributes) or {})


def answer(obj: Any) -> str:
    """``gen_ai.output.messages`` of a final answer whose text part is ``obj`` as JSON."""
    part = {"type": "text", "content": json.dumps(obj)}
    return json.dumps([{"role": "assistant", "parts": [part], "finish_reason": "stop"}])


def tool_call_turn(name: str = "top_sales", call_id: str = "call_1") -> str:
    """``gen_ai.output.messages`` of a turn that only asks for a tool call."""
    part = {"type": "tool_call", "id": call_id, "name": name, "arguments": {}}
    return json.dumps([{"role": "assistant", "parts": [part], "finish_reason": "tool_call"}])


def sales_config(**overrides: Any) -> GuardConfig:
    """One ranking fact from tool ``top_sales`` and one boundary guarding agent ``analyst``."""
    boundary = BoundarySpec(
        "answer",
        ("sales",),
        (superlative(fact="sales", winner_field="winner"),),
        match=MatchSpec(agent_name="analyst"),
        mode=overrides.pop("boundary_mode", None),
        report_mode=overrides.pop("report_mode", "all"),
    )
    fact = FactSpec("sales", "top_sales", kind="ranking", key="region", score="total", path="rows")
    values: dict[str, Any] = {"facts": (fact,), "boundaries": (boundary,)}
    values.update(overrides)
    return GuardConfig(**values)


class Harness:
    """Providers + exporter + reader, with helpers to emit spans and read telemetry back."""

    def __init__(self, span_limits: SpanLimits | None = None) -> None:
        self.exporter = InMemorySpanExporter()
        self.reader = InMemoryMetricReader()
        self.tracer_provider = TracerProvider(span_limits=span_limits)
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.tracer: Tracer = self.tracer_provider.get_tracer("test-app")
        self.guards: list[Guard] = []
        self.export_added = False

    def add_exporter(self) -> None:
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.export_added = True

    def install(self, config: GuardConfig | None = None, *, exporter_first: bool = True) -> Guard:
        if exporter_first and not self.export_added:
            self.add_exporter()
        guard = install(
            config or sales_config(),
            tracer_provider=self.tracer_provider,
            meter_provider=self.meter_provider,
            raise_internal_errors=True,
        )
        self.guards.append(guard)
        if not self.export_added:
            self.add_exporter()
        return guard

    # -- emitting spans like instrumentations do ---------------------------------------------

    def tool(
        self, result: Any, name: str = "top_sales", call_id: str = "call_1", **extra: Any
    ) -> ReadableSpan:
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            "gen_ai.tool.call.id": call_id,
            **extra,
        }
        with self.tracer.start_as_current_span(
            f"execute_tool {name}", attributes=attributes
        ) as span:
            if result is not None:
                span.set_attribute(
                    "gen_ai.tool.call.result",
                    result if isinstance(result, str) else json.dumps(result),
                )
        return span  # type: ignore[return-value]

    def chat(self, output_messages: Any, **extra: Any) -> None:
        attributes = {"gen_ai.operation.name": "chat", **extra}
        with self.tracer.start_as_current_span("chat gpt-test", attributes=attributes) as span:
            if output_messages is not None:
                span.set_attribute("gen_ai.output.messages", output_messages)

    def agent(self, name: str = "analyst") -> Any:
        attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
        return self.tracer.start_as_current_span(f"invoke_agent {name}", attributes=attributes)

    # -- reading telemetry back ---------------------------------------------------------------

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        spans = list(self.exporter.get_finished_spans())
        return [span for span in spans if name is None or span.name == name]

    def metrics(self) -> dict[str, list[tuple[dict[str, Any], Any]]]:
        """Metric name -> [(attributes, value or histogram count)] (zero-valued points dropped)."""
        found: dict[str, list[tuple[dict[str, Any], Any]]] = {}
        data = self.reader.get_metrics_data()
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    for point in metric.data.data_points:
                        value = getattr(point, "value", None)
                        if value is None:
                            value = point.count
                        found.setdefault(metric.name, []).append((dict(point.attributes), value))
        return found

    def metric_points(self) -> dict[str, list[Any]]:
        """Metric name -> raw data points. Collect once per test: collecting resets exemplars."""
        data = self.reader.get_metrics_data()
        found: dict[str, list[Any]] = {}
        for resource in data.resource_metrics if data else ():
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    found.setdefault(metric.name, []).extend(metric.data.data_points)
        return found

    def close(self) -> None:
        for guard in self.guards:
            guard.uninstall()
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()


__all__ = [
    "AGENT",
    "EVALUATION",
    "GUARDRAIL",
    "SALES_ROWS",
    "Harness",
    "answer",
    "evaluations",
    "guardrail_events",
    "sales_config",
    "tool_call_turn",
]
