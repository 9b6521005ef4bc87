"""Helpers shared by the hardening tests: a production-like pipeline (real SDK providers, a
BatchSpanProcessor in front of any exporter, an in-memory metric reader, the guard installed as
in production: its own bugs are logged and counted, never raised), the agent traces the tests
emit, and readers of what the pipeline exported."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricReader
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.trace import Span, Tracer
from otel_harness import Harness, answer, sales_config

from groundplane_otel.errors import FactBoundaryError
from groundplane_otel.otel import Guard, GuardConfig, install

AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "analyst"}
WRONG = "OTHER"  # ranked second in every trace of ``trace_rows``


def trace_rows(number: int, padding: int = 0) -> str:
    """The tool result of trace ``number``: its own winner ``R{number}``, so a fact leaking into
    another trace would change that trace's verdict. ``padding`` adds a distinct filler string
    of that many characters (to make retained spans visible to tracemalloc)."""
    rows: dict[str, Any] = {
        "rows": [{"region": f"R{number}", "total": 10}, {"region": WRONG, "total": 1}]
    }
    if padding:
        rows["note"] = f"{number:08d}" + "x" * padding
    return json.dumps(rows)


def install_guard(
    harness: Harness, config: GuardConfig | None = None, *, logger_provider: Any = None
) -> Guard:
    """Install on a harness as in production (``raise_internal_errors=False``), exporter first."""
    if not harness.export_added:
        harness.add_exporter()
    guard = install(
        config or sales_config(),
        tracer_provider=harness.tracer_provider,
        meter_provider=harness.meter_provider,
        logger_provider=logger_provider,
        raise_internal_errors=False,
    )
    harness.guards.append(guard)
    return guard


class Pipeline:
    """TracerProvider -> BatchSpanProcessor(exporter) first, then the guard (as zero-code does);
    MeterProvider -> InMemoryMetricReader. ``guarded=False`` builds the same without a guard."""

    def __init__(
        self,
        exporter: SpanExporter,
        *,
        guarded: bool = True,
        config: GuardConfig | None = None,
        span_limits: SpanLimits | None = None,
        metric_readers: tuple[MetricReader, ...] = (),
        **batch: Any,
    ) -> None:
        self.exporter = exporter
        self.reader = InMemoryMetricReader()
        self.meter_provider = MeterProvider(metric_readers=[self.reader, *metric_readers])
        self.tracer_provider = TracerProvider(sampler=ALWAYS_ON, span_limits=span_limits)
        self.batch = BatchSpanProcessor(exporter, meter_provider=self.meter_provider, **batch)
        self.tracer_provider.add_span_processor(self.batch)
        self.guard: Guard | None = None
        if guarded:
            self.guard = install(
                config or sales_config(),
                tracer_provider=self.tracer_provider,
                meter_provider=self.meter_provider,
                raise_internal_errors=False,
            )
        self.tracer: Tracer = self.tracer_provider.get_tracer("load-app")
        self.traces_down = self.metrics_down = False

    def shutdown(self) -> None:
        """Shut the tracer provider down (flushes the batch processor through the exporter)."""
        if not self.traces_down:
            self.traces_down = True
            if self.guard is not None:
                self.guard.uninstall()
            self.tracer_provider.shutdown()

    def shutdown_metrics(self) -> None:
        """Shut the meter provider down (every reader collects and exports one last time)."""
        if not self.metrics_down:
            self.metrics_down = True
            self.meter_provider.shutdown()

    def close(self) -> None:
        self.shutdown()
        self.shutdown_metrics()


def agent_trace(
    tracer: Tracer, number: int, winner: str, *, padding: int = 0, final: str | None = None
) -> str | None:
    """invoke_agent analyst -> execute_tool top_sales -> chat (the final answer), in a new
    trace. Returns the ``.code`` of the guard exception the app got (None: no exception)."""
    try:
        with tracer.start_as_current_span(
            "invoke_agent analyst", context=Context(), attributes={**AGENT, "app.trace": number}
        ):
            with tracer.start_as_current_span(
                "execute_tool top_sales",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "top_sales",
                    "gen_ai.tool.call.result": trace_rows(number, padding),
                },
            ):
                pass
            with tracer.start_as_current_span(
                "chat gpt-test", attributes={"gen_ai.operation.name": "chat"}
            ) as chat:
                chat.set_attribute(
                    "gen_ai.output.messages",
                    final if final is not None else answer({"winner": winner}),
                )
    except FactBoundaryError as error:
        return codes(error)[0]
    return None


def codes(error: BaseException) -> list[str]:
    """The reason codes a guard exception carries (one per claim)."""
    report = getattr(error, "report", None)
    if report is not None:
        return [claim.code for claim in report.violations]
    return [getattr(error, "code", type(error).__name__)]


def metric_points(reader: InMemoryMetricReader) -> dict[str, list[tuple[dict[str, Any], Any]]]:
    """Metric name -> [(attributes, value or histogram count)], zero-valued points included."""
    found: dict[str, list[tuple[dict[str, Any], Any]]] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                for point in metric.data.data_points:
                    value = getattr(point, "value", None)
                    if value is None:
                        value = point.count
                    found.setdefault(metric.name, []).append((dict(point.attributes), value))
    return found


def tally(
    points: dict[str, list[tuple[dict[str, Any], Any]]], metric: str, key: str
) -> dict[str, int]:
    """Sum of a counter by one attribute, zero totals dropped: ``{outcome: count}``."""
    totals: Counter[str] = Counter()
    for attributes, value in points.get(metric, []):
        totals[str(attributes.get(key))] += value
    return {name: count for name, count in totals.items() if count}


def spans_by_trace(spans: Iterable[ReadableSpan]) -> dict[int, dict[str, ReadableSpan]]:
    """trace id -> {span name: span} (the tests emit one span of each name per trace)."""
    found: dict[int, dict[str, ReadableSpan]] = {}
    for span in spans:
        assert span.context is not None
        found.setdefault(span.context.trace_id, {})[span.name] = span
    return found


def open_root(tracer: Tracer, name: str = "invoke_agent analyst") -> Span:
    """A root agent span the app starts and never ends (a crashed request, a leaked span)."""
    return tracer.start_span(name, context=Context(), attributes=AGENT)


def inside(span: Span) -> Any:
    """Make ``span`` current without ending it on exit."""
    return trace.use_span(span, end_on_exit=False)


__all__ = [
    "AGENT",
    "WRONG",
    "Pipeline",
    "agent_trace",
    "codes",
    "inside",
    "install_guard",
    "metric_points",
    "open_root",
    "spans_by_trace",
    "tally",
    "trace_rows",
]
