"""The guard's telemetry: instruments (explicit units), the guardrail events, span summaries.

Attribute values come from configuration and fixed vocabularies only; claimed values, fact
values and messages are written only when content capture is on.
"""

from __future__ import annotations

import json
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.metrics import MeterProvider
from opentelemetry.trace import Span, SpanContext, Status, StatusCode, TraceFlags

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel.result import Evaluation, Finding

__all__ = ["Telemetry"]


def _content(value: Any) -> str:
    try:
        return json.dumps(value, default=repr, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)


def _override_ok(span: Span, status: Status) -> None:
    """ERROR on a blocked output's span even when an instrumentation already set OK.

    The SDK ignores ``set_status`` once a span is OK, and OpenInference sets OK as the model call
    returns, before the guard reads the answer: the blocked span would be exported as OK. Only
    in that case is the SDK span's status replaced directly (``_status``, in every 1.x SDK).
    """
    current = getattr(span, "status", None)
    if getattr(current, "status_code", None) is StatusCode.OK and hasattr(span, "_status"):
        span._status = status


class Telemetry:
    """Instruments of one installed guard, and the writers of its span/log telemetry."""

    def __init__(
        self, meter_provider: MeterProvider, *, capture_content: bool, logger_provider: Any = None
    ) -> None:
        meter = meter_provider.get_meter(sc.METER_NAME, schema_url=None)
        self.capture_content = capture_content
        self.claims = meter.create_counter(
            sc.METRIC_CLAIMS, unit=sc.UNIT_CLAIM, description="Claims checked, by verdict."
        )
        self.outputs = meter.create_counter(
            sc.METRIC_OUTPUTS, unit=sc.UNIT_OUTPUT, description="Guarded outputs, by outcome."
        )
        self.duration = meter.create_histogram(
            sc.METRIC_CHECK_DURATION,
            unit=sc.UNIT_SECONDS,
            description="Time spent checking one output.",
            explicit_bucket_boundaries_advisory=list(sc.DURATION_BUCKETS),
        )
        self.facts = meter.create_counter(
            sc.METRIC_FACTS, unit=sc.UNIT_FACT, description="Tool results seen, by outcome."
        )
        self.traces = meter.create_up_down_counter(
            sc.METRIC_TRACES_ACTIVE, unit=sc.UNIT_TRACE, description="Live per-trace registries."
        )
        self._logger = None
        if logger_provider is not None:
            self._logger = logger_provider.get_logger(sc.METER_NAME)

    def count_fact(self, kind: str, source: str, outcome: str) -> None:
        self.facts.add(1, {sc.FACT_KIND: kind, sc.FACT_SOURCE: source, sc.FACT_OUTCOME: outcome})

    def count_traces(self, delta: int) -> None:
        self.traces.add(delta)

    # -- one guarded output ------------------------------------------------------------------

    def record(self, span: Span, evaluation: Evaluation) -> None:
        """Metrics, in the guarded span's context so exemplars point at its trace."""
        context = trace.set_span_in_context(span, Context())
        boundary, mode = evaluation.boundary, evaluation.mode
        for family, verdict in evaluation.verdicts:
            attributes = {
                sc.CHECK: family,
                sc.VERDICT: verdict,
                sc.BOUNDARY: boundary,
                sc.MODE: mode,
            }
            self.claims.add(1, attributes, context=context)
        output_attributes = {sc.BOUNDARY: boundary, sc.OUTCOME: evaluation.outcome, sc.MODE: mode}
        if evaluation.skip_reason is not None:
            output_attributes[sc.SKIP_REASON] = evaluation.skip_reason
        self.outputs.add(1, output_attributes, context=context)
        if evaluation.outcome != "skipped":
            self.duration.record(evaluation.duration, {sc.BOUNDARY: boundary}, context=context)
        if self._logger is not None:
            for finding in evaluation.findings:
                self._logger.emit(
                    event_name=sc.GUARDRAIL_EVENT,
                    attributes=self.event_attributes(evaluation, finding),
                    context=context,
                )

    def annotate(self, span: Span, evaluation: Evaluation) -> None:
        """Summary attributes, one event per finding, links to the fact spans, ERROR status
        when blocked (enforce only) — written while the span is still recording."""
        span.set_attributes(
            {
                sc.BOUNDARY: evaluation.boundary,
                sc.OUTCOME: evaluation.outcome,
                sc.VIOLATIONS: evaluation.violations,
                sc.FACTS: list(evaluation.facts),
                sc.MODE: evaluation.mode,
            }
        )
        for finding in evaluation.findings:
            span.add_event(sc.GUARDRAIL_EVENT, self.event_attributes(evaluation, finding))
        self._link(span, evaluation)
        if evaluation.mode == "enforce" and evaluation.outcome in ("blocked", "error"):
            status = Status(
                StatusCode.ERROR,
                f"groundplane: output {evaluation.outcome} by boundary "
                f"{evaluation.boundary!r} ({len(evaluation.findings)} finding(s))",
            )
            span.set_status(status)
            _override_ok(span, status)

    def event_attributes(self, evaluation: Evaluation, finding: Finding) -> dict[str, Any]:
        attributes: dict[str, Any] = {
            sc.GUARDRAIL_COMPONENT_NAME: sc.COMPONENT,
            sc.GUARDRAIL_POLICY_ID: evaluation.boundary,
            sc.GUARDRAIL_RESULT_VALUE: finding.result,
            sc.GUARDRAIL_RESULT_REASON: finding.reason,
            sc.GUARDRAIL_SOURCE: sc.SOURCE_MODEL_RESPONSE,
        }
        if finding.check is not None:
            attributes[sc.GUARDRAIL_POLICY_RULE_ID] = finding.check
        if finding.family is not None:
            attributes[sc.CHECK] = finding.family
        if finding.result == sc.RESULT_UNSUPPORTED:
            attributes[sc.FIELD] = str(finding.claim.field)
        if finding.fact is not None:
            attributes[sc.FACT] = finding.fact
        provenance = finding.provenance
        if provenance is not None:
            if provenance.tool is not None:
                attributes[sc.FACT_TOOL] = provenance.tool
            if provenance.trace_id is not None:
                attributes[sc.FACT_TRACE_ID] = provenance.trace_id
            if provenance.span_id is not None:
                attributes[sc.FACT_SPAN_ID] = provenance.span_id
        if self.capture_content:
            if finding.result == sc.RESULT_UNSUPPORTED:
                attributes[sc.CLAIMED] = _content(finding.claim.claimed)
                attributes[sc.SUPPORTED] = _content(finding.claim.supported)
            attributes[sc.MESSAGE] = str(finding.claim)
        return attributes

    @staticmethod
    def _link(span: Span, evaluation: Evaluation) -> None:
        fallback: list[str] = []
        for fact, provenance in evaluation.links:
            if provenance.trace_id is None or provenance.span_id is None:
                continue
            add_link = getattr(span, "add_link", None)
            if add_link is None:
                fallback.append(f"{fact}@{provenance.trace_id}:{provenance.span_id}")
                continue
            context = SpanContext(
                int(provenance.trace_id, 16),
                int(provenance.span_id, 16),
                is_remote=False,
                trace_flags=TraceFlags(TraceFlags.SAMPLED),
            )
            add_link(context, {sc.FACT: fact})
        if fallback:
            span.set_attribute(sc.FACT_LINKS, fallback)
