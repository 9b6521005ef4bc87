"""The integration tests' harness: real SDK providers passed in (never global), an in-memory span
exporter and metric reader, the guard installed on them, and readers of what was exported."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased

from groundplane_otel.otel import Guard, GuardConfig, install
from groundplane_otel.otel.sampling import GuardSampler

__all__ = ["Otel", "events"]


class Otel:
    """Providers + exporter (registered before the guard, as zero-code does) + metric reader
    + log record exporter (the guard's log events, and the instrumentations' given it)."""

    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.reader = InMemoryMetricReader()
        # ParentBased(AlwaysOn) still drops children of unsampled remote parents: wrapped, the
        # guard sees every span (and install() has nothing to warn about).
        self.tracer_provider = TracerProvider(sampler=GuardSampler(ParentBased(ALWAYS_ON)))
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.logs = InMemoryLogRecordExporter()
        self.logger_provider = LoggerProvider()
        self.logger_provider.add_log_record_processor(SimpleLogRecordProcessor(self.logs))
        self.tracer = self.tracer_provider.get_tracer("integration-app")
        self.guards: list[Guard] = []

    def install(self, config: GuardConfig) -> Guard:
        guard = install(
            config,
            tracer_provider=self.tracer_provider,
            meter_provider=self.meter_provider,
            logger_provider=self.logger_provider,
            raise_internal_errors=True,
        )
        self.guards.append(guard)
        return guard

    def spans(self, name: str | None = None) -> list[ReadableSpan]:
        found = list(self.exporter.get_finished_spans())
        return [span for span in found if name is None or span.name == name]

    def span(self, name: str) -> ReadableSpan:
        (found,) = self.spans(name)
        return found

    def metrics(self) -> dict[str, list[tuple[dict[str, Any], Any]]]:
        """Metric name -> sorted [(attributes, value or histogram count)]."""
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
        for points in found.values():
            points.sort(key=lambda item: sorted(item[0].items()))
        return found

    def close(self) -> None:
        for guard in self.guards:
            guard.uninstall()
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()
        self.logger_provider.shutdown()


def events(span: ReadableSpan) -> list[dict[str, Any]]:
    """The span's events as plain dicts ({"name": ..., **attributes})."""
    return [{"name": event.name, **dict(event.attributes or {})} for event in span.events]
