"""The guard's telemetry: instruments (explicit units), the guardrail events, span summaries.

Attribute values come from configuration and fixed vocabularies only; claimed values, fact
values and messages are written only when content capture is on.
"""

from __future__ import annotations

import json
import threading
import weakref
from collections.abc import Iterator
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.metrics import CallbackOptions, MeterProvider, Observation
from opentelemetry.trace import Span, SpanContext, Status, StatusCode, TraceFlags
from opentelemetry.util.types import AttributeValue

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine import (
    fits,
    is_withheld,
    override_ok,
    reveals_restricted,
    scrub_output,
    span_attributes,
)
from groundplane_otel.otel._telemetry.metric_counts import SeenFinding, Shown, seen_finding
from groundplane_otel.otel.config import GuardConfig
from groundplane_otel.otel.result import Evaluation, Finding

__all__ = ["Telemetry", "event_attributes", "finding_seen", "shown"]

_POINTS_KEPT = 4096  # metric attribute dicts kept per guard
_VERDICTS_KEPT = 8  # an output's points are kept for at most this many claims (memory)
_EMPTY = Context()  # the base of a guarded span's context: copied, never changed (``set_value``)
# An output's points (``Telemetry._points_of``): the claims adds (count, attributes), the
# outputs point's attributes, the duration point's (None: not recorded).
_Points = tuple[tuple[tuple[int, dict[str, str]], ...], dict[str, str], dict[str, str] | None]


def _content(value: Any) -> str:
    try:
        return json.dumps(value, default=repr, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)


class _Shared:
    """The batched instruments of one meter provider, shared by every guard installed on it:
    ``groundplane.facts``, ``groundplane.coverage`` and ``groundplane.traces.active`` are
    observed at collection time (cumulative fact and coverage counts kept here, the live traces
    of each guard's store) instead of one synchronous measurement per fact, request and trace.
    None carries a span context, so no exemplar is lost; ``claims``/``outputs``/
    ``check.duration`` stay synchronous for theirs."""

    def __init__(self, meter: Any) -> None:
        self.lock = threading.Lock()
        self.facts: dict[tuple[str, str, str], int] = {}
        self.coverage: dict[tuple[str, str], int] = {}
        self.stores: list[weakref.ref[Any]] = []
        meter.create_observable_counter(
            sc.METRIC_COVERAGE,
            callbacks=[self._observe_coverage],
            unit=sc.UNIT_TRACE,
            description=(
                "Requests that recorded a boundary's facts, by whether the boundary matched a "
                "span in them."
            ),
        )
        meter.create_observable_counter(
            sc.METRIC_FACTS,
            callbacks=[self._observe_facts],
            unit=sc.UNIT_FACT,
            description="Tool results seen, by outcome.",
        )
        meter.create_observable_up_down_counter(
            sc.METRIC_TRACES_ACTIVE,
            callbacks=[self._observe_traces],
            unit=sc.UNIT_TRACE,
            description="Live per-trace registries.",
        )

    def count_fact(self, kind: str, source: str, outcome: str) -> None:
        key = (kind, source, outcome)
        with self.lock:
            self.facts[key] = self.facts.get(key, 0) + 1

    def count_coverage(self, boundary: str, outcome: str) -> None:
        key = (boundary, outcome)
        with self.lock:
            self.coverage[key] = self.coverage.get(key, 0) + 1

    def _observe_coverage(self, options: CallbackOptions) -> Iterator[Observation]:
        with self.lock:
            counts = list(self.coverage.items())
        for (boundary, outcome), count in counts:
            yield Observation(count, {sc.BOUNDARY: boundary, sc.COVERAGE_OUTCOME: outcome})

    def _observe_facts(self, options: CallbackOptions) -> Iterator[Observation]:
        with self.lock:
            counts = list(self.facts.items())
        for (kind, source, outcome), count in counts:
            yield Observation(
                count, {sc.FACT_KIND: kind, sc.FACT_SOURCE: source, sc.FACT_OUTCOME: outcome}
            )

    def _observe_traces(self, options: CallbackOptions) -> Iterator[Observation]:
        with self.lock:
            stores = [store for ref in self.stores if (store := ref()) is not None]
        yield Observation(sum(len(store) for store in stores))


_shared_lock = threading.Lock()
_shared: weakref.WeakKeyDictionary[Any, _Shared] = weakref.WeakKeyDictionary()


def _shared_for(meter_provider: MeterProvider, meter: Any) -> _Shared:
    with _shared_lock:
        try:
            shared = _shared.get(meter_provider)
            if shared is None:
                shared = _shared[meter_provider] = _Shared(meter)
        except TypeError:  # a provider that cannot be weakly referenced: not shared
            shared = _Shared(meter)
        return shared


class Telemetry:
    """Instruments of one installed guard, and the writers of its span/log telemetry."""

    def __init__(
        self,
        meter_provider: MeterProvider,
        config: GuardConfig,
        *,
        logger_provider: Any = None,
        mode_label: str | None = None,
    ) -> None:
        meter = meter_provider.get_meter(sc.METER_NAME, schema_url=None)
        self.meter_provider = meter_provider
        self.capture_content = config.capture_content
        self.mode_label = mode_label  # replaces groundplane.mode in metrics (the verifier)
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
        self.left_off = meter.create_counter(
            sc.METRIC_SUMMARY_LEFT_OFF,
            unit=sc.UNIT_ATTRIBUTE,
            description="Summary attributes not written: the guarded span had no room for them.",
        )
        self._shared = _shared_for(meter_provider, meter)
        self.count_fact = self._shared.count_fact
        self.count_coverage = self._shared.count_coverage  # groundplane.coverage (Coverage)
        # Metric points' attribute dicts, built once per label set (bounded): a claims point's
        # by (check, verdict, boundary, mode), an output's by ("outputs", boundary, mode,
        # outcome, skip reason).
        self._attributes: dict[tuple[str | None, ...], Any] = {}
        # An output's three instruments' points, by its whole label set (``_Points``, bounded).
        self._points: dict[tuple[Any, ...], _Points] = {}
        self._agents: dict[str, str] = {}  # boundary -> its configured agent name
        self.policy_version: str | None = None
        self.evaluation_events = True
        self.span_events = True  # False: the events are log records only (config.events)
        self._logger = None
        if logger_provider is not None:
            self._logger = logger_provider.get_logger(sc.METER_NAME)
        self.configure(config)

    def watch_traces(self, store: Any) -> None:
        """Report ``len(store)`` in ``groundplane.traces.active`` (until ``close``)."""
        with self._shared.lock:
            self._shared.stores.append(weakref.ref(store))

    def close(self, store: Any) -> None:
        """The guard is uninstalled: its store's traces are no longer reported as live."""
        with self._shared.lock:
            self._shared.stores[:] = [
                ref for ref in self._shared.stores if ref() not in (store, None)
            ]

    def configure(self, config: GuardConfig) -> None:
        """What the guard's configuration decides about its telemetry: the agent of each
        boundary (``gen_ai.agent.name`` on its metrics — from the boundary's configured match,
        never from span values, so cardinality stays bounded by the policy), the policy
        version on guardrail events, the evaluation-event switch and where events go
        (span events, or log records only: then a logger provider is required)."""
        self._agents = {
            spec.name: spec.match.agent_name for spec in config.boundaries if spec.match.agent_name
        }
        self.policy_version = config.policy_version
        self.evaluation_events = config.evaluation_events
        if config.events == "log" and self._logger is None:
            raise ValueError(
                "events='log' writes the guard's events as log records only: pass "
                "logger_provider= (an OpenTelemetry LoggerProvider), or keep events='span'"
            )
        self.span_events = config.events == "span"
        self._attributes.clear()
        self._points.clear()

    def _labels(self, *key: str) -> dict[str, str]:
        """The attribute dict of a claims point (check, verdict, boundary, mode), built once."""
        labels = self._attributes.get(key)
        if labels is None:
            family, verdict, boundary, mode = key
            labels = {sc.CHECK: family, sc.VERDICT: verdict, sc.BOUNDARY: boundary, sc.MODE: mode}
            labels.update(self._agent(boundary))
            self._keep(key, labels)
        return labels

    def _keep(self, key: tuple[str | None, ...], point: Any) -> None:
        if len(self._attributes) < _POINTS_KEPT:  # bounded: names come from configuration
            self._attributes[key] = point

    def _output_points(
        self, boundary: str, mode: str, outcome: str, skip_reason: str | None
    ) -> tuple[dict[str, str], dict[str, str]]:
        """The attribute dicts of an output's ``groundplane.outputs`` and
        ``groundplane.check.duration`` points, built once per label set (bounded)."""
        agent = self._agent(boundary)
        output = {sc.BOUNDARY: boundary, sc.OUTCOME: outcome, sc.MODE: mode, **agent}
        if skip_reason is not None:
            output[sc.SKIP_REASON] = skip_reason
        points = (output, {sc.BOUNDARY: boundary, **agent})
        self._keep(("outputs", boundary, mode, outcome, skip_reason), points)
        return points

    def _agent(self, boundary: str) -> dict[str, str]:
        agent = self._agents.get(boundary)
        return {} if agent is None else {sc.GEN_AI_AGENT_NAME: agent}

    # -- one guarded output ------------------------------------------------------------------

    def _points_of(self, key: tuple[Any, ...]) -> _Points:
        """The points of an output with the label set ``key`` (boundary, mode, outcome, skip
        reason, verdicts): one ``groundplane.claims`` add per (check, verdict) in the order
        first seen, with its count; the ``groundplane.outputs`` attributes; the
        ``groundplane.check.duration`` attributes, None for a skipped output (not timed)."""
        boundary, mode, outcome, skip_reason, verdicts = key
        per_label: dict[tuple[str, str], int] = {}
        for label in verdicts:
            per_label[label] = per_label.get(label, 0) + 1
        claims = tuple(
            (count, self._labels(family, verdict, boundary, mode))
            for (family, verdict), count in per_label.items()
        )
        output = self._attributes.get(("outputs", boundary, mode, outcome, skip_reason))
        if output is None:
            output = self._output_points(boundary, mode, outcome, skip_reason)
        points = (claims, output[0], None if outcome == "skipped" else output[1])
        if len(verdicts) <= _VERDICTS_KEPT and len(self._points) < _POINTS_KEPT:  # bounded
            self._points[key] = points
        return points

    def record(self, span: Span, evaluation: Evaluation) -> None:
        """Metrics, in the guarded span's context so exemplars point at its trace."""
        context = trace.set_span_in_context(span, _EMPTY)
        # The attribute dicts of all three instruments, found by one lookup per output.
        key = (
            evaluation.boundary,
            self.mode_label or evaluation.mode,
            evaluation.outcome,
            evaluation.skip_reason,
            evaluation.verdicts,
        )
        points = self._points.get(key)
        if points is None:
            points = self._points_of(key)
        claims, output, duration = points
        for count, labels in claims:
            self.claims.add(count, labels, context=context)
        self.outputs.add(1, output, context=context)
        if duration is not None:
            self.duration.record(evaluation.duration, duration, context=context)
        if self._logger is not None:
            for finding in evaluation.findings:
                self._logger.emit(
                    event_name=sc.GUARDRAIL_EVENT,
                    attributes=self.event_attributes(evaluation, finding),
                    context=context,
                )
            for attributes in self.evaluation_attributes(span, evaluation):
                self._logger.emit(
                    event_name=sc.EVALUATION_EVENT, attributes=attributes, context=context
                )

    def annotate(self, span: Span, evaluation: Evaluation, *, matched: bool = False) -> None:
        """Summary attributes, one event per finding, links to the fact spans, ERROR status
        when blocked (enforce only) — written while the span is still recording. A span at its
        attribute limit keeps its own attributes: the summary is left off (counted in
        ``groundplane.summary.left_off``) and the verdict stays in the events and metrics. A
        boundary the policy's match rules chose (``matched``: neither the span nor the code
        named it) is marked ``groundplane.boundary_matched``, so a replay of the recording
        matches it again rather than echoing it."""
        summary: dict[str, AttributeValue] = {
            sc.BOUNDARY: evaluation.boundary,
            sc.OUTCOME: evaluation.outcome,
            sc.VIOLATIONS: evaluation.violations,
            sc.FACTS: list(evaluation.facts),
            sc.MODE: evaluation.mode,
        }
        if matched:  # the guard chose the boundary: a replay matches it again (records.py)
            summary[sc.BOUNDARY_MATCHED] = True
        if fits(span, summary):
            span.set_attributes(summary)
        else:
            context = trace.set_span_in_context(span, _EMPTY)
            self.left_off.add(len(summary), {sc.BOUNDARY: evaluation.boundary}, context=context)
        if self.span_events:  # else ``record`` writes them as log records only
            for finding in evaluation.findings:
                span.add_event(sc.GUARDRAIL_EVENT, self.event_attributes(evaluation, finding))
            for attributes in self.evaluation_attributes(span, evaluation):
                span.add_event(sc.EVALUATION_EVENT, attributes)
        if reveals_restricted(evaluation.findings):
            scrub_output(span)  # the captured output is the leak itself
        self._link(span, evaluation)
        if evaluation.mode == "enforce" and evaluation.outcome in ("blocked", "error"):
            status = Status(
                StatusCode.ERROR,
                f"groundplane: output {evaluation.outcome} by boundary "
                f"{evaluation.boundary!r} ({len(evaluation.findings)} finding(s))",
            )
            span.set_status(status)
            override_ok(span, status)

    def event_attributes(self, evaluation: Evaluation, finding: Finding) -> dict[str, Any]:
        """The attributes of one finding's ``gen_ai.guardrail.result`` event."""
        return event_attributes(
            evaluation,
            finding,
            capture_content=self.capture_content,
            policy_version=self.policy_version,
        )

    def evaluation_attributes(self, span: Span, evaluation: Evaluation) -> list[dict[str, Any]]:
        """One ``gen_ai.evaluation.result`` per evaluated check (none when switched off): the
        check family, its verdict as the score label, the explanation (the claim's message)
        only with content capture on and never for a withheld (restricted) finding."""
        if not self.evaluation_events:
            return []
        explained = iter([finding for finding in evaluation.findings if finding.check is not None])
        response_id = span_attributes(span).get(sc.GEN_AI_RESPONSE_ID)  # SDK spans, records
        found: list[dict[str, Any]] = []
        for family, verdict in evaluation.verdicts:
            attributes: dict[str, Any] = {
                sc.EVALUATION_NAME: family,
                sc.EVALUATION_SCORE_LABEL: verdict,
            }
            if isinstance(response_id, str):
                attributes[sc.GEN_AI_RESPONSE_ID] = response_id
            finding = next(explained, None) if verdict != "supported" else None
            if finding is not None and self.capture_content and not is_withheld(finding.claim):
                attributes[sc.EVALUATION_EXPLANATION] = str(finding.claim)
            found.append(attributes)
        return found

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


def shown(finding: Finding, *, capture_content: bool) -> Shown:
    """What one finding shows, in ``SeenFinding``'s optional fields' order (check, field, fact,
    claimed, supported, message): the claimed/supported values and the message only with
    ``capture_content``, never for a withheld (restricted) finding. The guardrail event and the
    findings read without one (replay's, the pytest fixture's) are both made from it."""
    unsupported = finding.result == sc.RESULT_UNSUPPORTED
    field = str(finding.claim.field) if unsupported else None
    claimed = supported = message = None
    if capture_content and not is_withheld(finding.claim):
        if unsupported:
            claimed = _content(finding.claim.claimed)
            supported = _content(finding.claim.supported)
        message = str(finding.claim)
    return finding.check, field, finding.fact, claimed, supported, message


def event_attributes(
    evaluation: Evaluation,
    finding: Finding,
    *,
    capture_content: bool,
    policy_version: str | None = None,
) -> dict[str, Any]:
    """The attributes of one finding's ``gen_ai.guardrail.result`` event (the span event and
    the log record), its shown values from ``shown``."""
    attributes: dict[str, Any] = {
        sc.GUARDRAIL_COMPONENT_NAME: sc.COMPONENT,
        sc.GUARDRAIL_POLICY_ID: evaluation.boundary,
        sc.GUARDRAIL_RESULT_TYPE: sc.RESULT_TYPE_VERDICT,
        sc.GUARDRAIL_RESULT_VALUE: finding.result,
        sc.GUARDRAIL_RESULT_REASON: finding.reason,
        sc.GUARDRAIL_SOURCE: sc.SOURCE_MODEL_RESPONSE,
    }
    if policy_version is not None:
        attributes[sc.GUARDRAIL_POLICY_VERSION] = policy_version
    rule, field, fact, claimed, supported, message = shown(finding, capture_content=capture_content)
    if rule is not None:
        attributes[sc.GUARDRAIL_POLICY_RULE_ID] = rule
    if finding.family is not None:
        attributes[sc.CHECK] = finding.family
    if field is not None:
        attributes[sc.FIELD] = field
    if fact is not None:
        attributes[sc.FACT] = fact
    provenance = finding.provenance
    if provenance is not None:
        if provenance.tool is not None:
            attributes[sc.FACT_TOOL] = provenance.tool
        if provenance.trace_id is not None:
            attributes[sc.FACT_TRACE_ID] = provenance.trace_id
        if provenance.span_id is not None:
            attributes[sc.FACT_SPAN_ID] = provenance.span_id
    if claimed is not None:
        attributes[sc.CLAIMED] = claimed
        attributes[sc.SUPPORTED] = supported
    if message is not None:
        attributes[sc.MESSAGE] = message
    return attributes


def finding_seen(
    evaluation: Evaluation,
    finding: Finding,
    *,
    capture_content: bool,
    trace_id: int,
    span_id: int,
    span_name: str | None,
    outcome: str | None = None,
) -> SeenFinding:
    """One finding as a ``SeenFinding``: what its guardrail event says, made directly."""
    return seen_finding(
        evaluation.boundary,
        finding.result,
        finding.reason,
        shown(finding, capture_content=capture_content),
        trace_id,
        span_id,
        span_name,
        outcome,
    )
