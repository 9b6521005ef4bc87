"""What the framework examples share: SDK providers with an in-memory exporter, the guard from
examples/frameworks_policy.yaml, the fake OpenAI server, and a printout of what was exported.

A real app gets all of this from ``opentelemetry-instrument`` + ``GROUNDPLANE_POLICY`` (see the
framework matrix in docs/integrations.md); the examples wire it by hand so they print what the
guard wrote.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON

from groundplane_otel.otel import Guard, install
from groundplane_otel.otel.policy import load_policy
from groundplane_otel.otel.sampling import GuardSampler

HERE = Path(__file__).resolve().parent

CTR = {"north": 0.0412, "harbour": 0.0455, "delta": 0.0301}
RIGHT = {"winner": "harbour", "ctr": 0.0455}
WRONG = {"winner": "north", "ctr": 0.0412}


class Setup:
    def __init__(self) -> None:
        self.exporter = InMemorySpanExporter()
        self.reader = InMemoryMetricReader()
        self.tracer_provider = TracerProvider(sampler=GuardSampler(ALWAYS_ON))
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.exporter))
        self.meter_provider = MeterProvider(metric_readers=[self.reader])
        self.guard: Guard = install(
            load_policy(HERE / "frameworks_policy.yaml"),
            tracer_provider=self.tracer_provider,
            meter_provider=self.meter_provider,
        )

    def report(self) -> None:
        """One line per span the guard wrote on, then groundplane.outputs by outcome."""
        for span in self.exporter.get_finished_spans():
            outcome = (span.attributes or {}).get("groundplane.outcome")
            if outcome is not None:
                reasons = [e.attributes.get("gen_ai.guardrail.result.reason") for e in span.events]
                reasons = [reason for reason in reasons if reason]
                print(f"span:   {span.name} outcome={outcome} events={reasons}")
        data: Any = self.reader.get_metrics_data()
        for resource in data.resource_metrics:
            for scope in resource.scope_metrics:
                for metric in scope.metrics:
                    if metric.name == "groundplane.outputs":
                        for point in metric.data.data_points:
                            outcome = point.attributes["groundplane.outcome"]
                            print(f"metric: groundplane.outputs outcome={outcome} {point.value}")
        self.guard.uninstall()
