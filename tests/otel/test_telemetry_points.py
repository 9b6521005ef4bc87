"""An output's metric points (``Telemetry.record``), found once per label set: the same
``groundplane.claims`` / ``groundplane.outputs`` / ``groundplane.check.duration`` points,
counts and exemplars as built per output, through the real SDK; the kept label sets bounded."""

from __future__ import annotations

from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider

from groundplane_otel.otel._telemetry import telemetry
from groundplane_otel.otel._telemetry.telemetry import Telemetry
from groundplane_otel.otel.result import Evaluation
from tests.otel.otel_harness import sales_config

AGENT = {"gen_ai.agent.name": "analyst"}  # sales_config's boundary guards agent "analyst"


def _points(reader: InMemoryMetricReader) -> dict[str, list[tuple[dict[str, Any], Any, Any]]]:
    """Every point of the guard's metrics: (attributes, value or count, its exemplars)."""
    found: dict[str, list[tuple[dict[str, Any], Any, Any]]] = {}
    data = reader.get_metrics_data()
    assert data is not None
    for resource in data.resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                found[metric.name] = [
                    (
                        dict(point.attributes or {}),
                        getattr(point, "value", None) or getattr(point, "count", None),
                        [(e.trace_id, e.span_id) for e in point.exemplars],
                    )
                    for point in metric.data.data_points
                ]
    return found


def test_each_output_counts_its_claims_per_check_and_verdict_with_its_span_as_exemplar() -> None:
    """Two outputs of one label set (two unsupported superlative claims and one supported
    number each) and a skipped one: claims added per (check, verdict) with their counts,
    one outputs point per outcome, a duration for each checked output only; every exemplar
    points at the span of an output it counts; the mode label replaces the evaluation's."""
    reader = InMemoryMetricReader()
    guard = Telemetry(MeterProvider(metric_readers=[reader]), sales_config(), mode_label="verifier")
    tracer = TracerProvider().get_tracer("test")
    verdicts = (
        ("superlative", "unsupported"),
        ("numbers", "supported"),
        ("superlative", "unsupported"),
    )
    checked = Evaluation("answer", "observe", "flagged", verdicts=verdicts, duration=0.25)
    skipped = Evaluation("answer", "observe", "skipped", skip_reason="no_output")
    spans = []
    for evaluation in (checked, checked, skipped):
        with tracer.start_as_current_span("chat") as span:
            guard.record(span, evaluation)
        spans.append(span.get_span_context())
    points = _points(reader)
    base = {"groundplane.boundary": "answer", "groundplane.mode": "verifier", **AGENT}
    checked_spans = {(context.trace_id, context.span_id) for context in spans[:2]}
    assert [(labels, value) for labels, value, _ in points["groundplane.claims"]] == [
        ({"groundplane.check": "superlative", "groundplane.verdict": "unsupported", **base}, 4),
        ({"groundplane.check": "numbers", "groundplane.verdict": "supported", **base}, 2),
    ]
    for _, _, exemplars in points["groundplane.claims"]:
        assert len(exemplars) == 1
        assert set(exemplars) <= checked_spans
    assert [(labels, value) for labels, value, _ in points["groundplane.outputs"]] == [
        ({"groundplane.outcome": "flagged", **base}, 2),
        ({"groundplane.outcome": "skipped", "groundplane.skip_reason": "no_output", **base}, 1),
    ]
    assert points["groundplane.outputs"][1][2] == [(spans[2].trace_id, spans[2].span_id)]
    ((labels, count, exemplars),) = points["groundplane.check.duration"]
    assert (labels, count) == ({"groundplane.boundary": "answer", **AGENT}, 2)
    assert exemplars == [(spans[1].trace_id, spans[1].span_id)]  # its bucket's last


def test_label_sets_kept_are_bounded_and_forgotten_on_reconfiguration() -> None:
    """An output with more claims than ``_VERDICTS_KEPT`` is counted alike but its label set
    is not kept; ``configure`` forgets the kept ones (the agent names may have changed)."""
    reader = InMemoryMetricReader()
    config = sales_config()
    guard = Telemetry(MeterProvider(metric_readers=[reader]), config)
    span = TracerProvider().get_tracer("test").start_span("chat")
    many = (("superlative", "unsupported"),) * (telemetry._VERDICTS_KEPT + 1)
    few = (("superlative", "supported"),)
    for verdicts in (many, few, few):
        guard.record(span, Evaluation("answer", "observe", "flagged", verdicts=verdicts))
    assert [key[-1] for key in guard._points] == [few]
    claims = {
        labels["groundplane.verdict"]: value
        for labels, value, _ in _points(reader)["groundplane.claims"]
    }
    assert claims == {"unsupported": telemetry._VERDICTS_KEPT + 1, "supported": 2}
    guard.configure(config)
    assert guard._points == {}
