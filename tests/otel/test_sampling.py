"""Sampling never switches the guard off: GuardSampler records what the inner sampler drops, the
SDK selects it by OTEL_TRACES_SAMPLER, and install warns about samplers that can drop spans."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk._configuration import _import_sampler
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricsData
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import (
    ALWAYS_ON,
    DEFAULT_ON,
    AlwaysRecordSampler,
    Decision,
    ParentBased,
    Sampler,
    SamplingResult,
    TraceIdRatioBased,
)
from opentelemetry.trace import Link, NonRecordingSpan, SpanContext, SpanKind, TraceFlags
from opentelemetry.trace.span import TraceState
from opentelemetry.util._importlib_metadata import entry_points
from opentelemetry.util.types import Attributes

from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.otel.install import install
from groundplane_otel.otel.policy import load_policy
from groundplane_otel.otel.sampling import (
    SAMPLER_ENTRY_POINT,
    GuardSampler,
    sampler_from_env,
    warn_if_sampler_drops,
)

RATIO_ZERO = "ParentBased{root:TraceIdRatioBased{0.0},remoteParentSampled:AlwaysOnSampler,"
RATIO_ZERO += "remoteParentNotSampled:AlwaysOffSampler,localParentSampled:AlwaysOnSampler,"
RATIO_ZERO += "localParentNotSampled:AlwaysOffSampler}"


class Fixed(Sampler):
    """Returns one fixed result, so the wrapper's handling of it is visible."""

    def __init__(self, result: SamplingResult) -> None:
        self.result = result

    def should_sample(  # noqa: PLR0917
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: TraceState | None = None,
    ) -> SamplingResult:
        return self.result

    def get_description(self) -> str:
        return "Fixed"


class Seen(SpanProcessor):
    """Collects every span a processor is shown (what the guard would see)."""

    def __init__(self) -> None:
        self.ended: list[ReadableSpan] = []

    def on_end(self, span: ReadableSpan) -> None:
        self.ended.append(span)


def provider_with(sampler: Sampler) -> tuple[TracerProvider, Seen, InMemorySpanExporter]:
    provider = TracerProvider(sampler=sampler)
    seen, exporter = Seen(), InMemorySpanExporter()
    provider.add_span_processor(seen)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, seen, exporter


def test_drop_becomes_record_only_keeping_attributes_and_trace_state() -> None:
    """A DROP comes back RECORD_ONLY with the start attributes (plus any the inner sampler added)
    and the inner sampler's trace state."""
    state = TraceState([("vendor", "x")])
    sampler = GuardSampler(Fixed(SamplingResult(Decision.DROP, {"added": 1}, state)))
    result = sampler.should_sample(None, 1, "chat", attributes={"gen_ai.agent.name": "a"})
    assert result.decision is Decision.RECORD_ONLY
    assert dict(result.attributes) == {"gen_ai.agent.name": "a", "added": 1}
    assert result.trace_state is state


def test_record_only_spans_keep_their_start_attributes() -> None:
    """The SDK's samplers return no attributes with DROP (so AlwaysRecordSampler loses them):
    a GuardSampler span still carries the attributes a boundary matches on."""
    provider, seen, _ = provider_with(GuardSampler(ParentBased(TraceIdRatioBased(0.0))))
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "campaign-analyst"}
    with provider.get_tracer("t").start_as_current_span("invoke_agent", attributes=agent):
        pass
    assert [dict(span.attributes or {}) for span in seen.ended] == [agent]


@pytest.mark.parametrize("decision", [Decision.RECORD_ONLY, Decision.RECORD_AND_SAMPLE])
def test_other_decisions_pass_through_unchanged(decision: Decision) -> None:
    """Only DROP is rewritten: the inner sampler's other results are returned as they are."""
    inner = SamplingResult(decision, {"b": 2})
    assert GuardSampler(Fixed(inner)).should_sample(None, 1, "chat") is inner


def test_description_names_the_wrapped_sampler() -> None:
    """get_description() shows the wrapper around the inner sampler's own description."""
    sampler = GuardSampler(ParentBased(TraceIdRatioBased(0.0)))
    assert sampler.get_description() == "GuardSampler{" + RATIO_ZERO + "}"


def test_wrapping_a_non_sampler_is_a_type_error() -> None:
    """A misplaced argument fails at construction, naming what was passed."""
    with pytest.raises(TypeError, match=r"^GuardSampler wraps a Sampler, got float$"):
        GuardSampler(0.5)  # type: ignore[arg-type]


def test_ratio_zero_unwrapped_hides_every_span_from_processors() -> None:
    """The failure being fixed: with a plain ratio of 0 no processor sees any span."""
    provider, seen, exporter = provider_with(ParentBased(TraceIdRatioBased(0.0)))
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("invoke_agent"), tracer.start_as_current_span("chat"):
        pass
    assert (seen.ended, exporter.get_finished_spans()) == ([], ())


def test_ratio_zero_wrapped_records_every_span_and_exports_none() -> None:
    """Wrapped, every span (root and child) reaches processors as recorded-not-sampled."""
    provider, seen, exporter = provider_with(GuardSampler(ParentBased(TraceIdRatioBased(0.0))))
    tracer = provider.get_tracer("t")
    with (
        tracer.start_as_current_span("invoke_agent") as root,
        tracer.start_as_current_span("chat") as child,
    ):
        assert (root.is_recording(), child.is_recording()) == (True, True)
    assert [span.name for span in seen.ended] == ["chat", "invoke_agent"]
    assert [span.context.trace_flags.sampled for span in seen.ended] == [False, False]
    assert exporter.get_finished_spans() == ()


def test_a_sampled_remote_parent_is_still_honoured() -> None:
    """Wrapping keeps parent-based export: a child of a sampled remote parent is exported."""
    provider, seen, exporter = provider_with(GuardSampler(ParentBased(TraceIdRatioBased(0.0))))
    parent = SpanContext(1, 2, is_remote=True, trace_flags=TraceFlags(TraceFlags.SAMPLED))
    context = trace.set_span_in_context(NonRecordingSpan(parent))
    with provider.get_tracer("t").start_as_current_span("chat", context=context):
        pass
    assert [span.name for span in exporter.get_finished_spans()] == ["chat"]
    assert len(seen.ended) == 1


@pytest.mark.parametrize(
    ("arg", "rate"), [(None, "1.0"), ("", "1.0"), ("0.25", "0.25"), ("0", "0.0"), (0.5, "0.5")]
)
def test_factory_reads_the_ratio_argument(arg: str | float | None, rate: str) -> None:
    """The factory wraps ParentBased(TraceIdRatioBased(arg)); unset or empty means 1.0."""
    description = sampler_from_env(arg).get_description()
    assert description == "GuardSampler{" + RATIO_ZERO.replace("0.0", rate, 1) + "}"


@pytest.mark.parametrize("arg", ["abc", "1.5", "-0.1", "nan"])
def test_factory_warns_on_a_bad_ratio_and_exports_everything(
    arg: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A bad OTEL_TRACES_SAMPLER_ARG warns naming the variable and allowed values, then uses 1.0."""
    with caplog.at_level(logging.WARNING, logger="groundplane_otel"):
        description = sampler_from_env(arg).get_description()
    assert "TraceIdRatioBased{1.0}" in description
    assert caplog.messages == [
        f"groundplane: ignoring OTEL_TRACES_SAMPLER_ARG={arg!r} for "
        "groundplane_parentbased_traceidratio; allowed values: a number from 0.0 to 1.0 "
        "(the fraction of traces exported); using 1.0"
    ]


def test_entry_point_is_what_the_sdk_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """OTEL_TRACES_SAMPLER=groundplane_parentbased_traceidratio resolves, through the SDK's own
    loader, to a GuardSampler with OTEL_TRACES_SAMPLER_ARG as the ratio."""
    (entry_point,) = entry_points(group="opentelemetry_traces_sampler", name=SAMPLER_ENTRY_POINT)
    assert entry_point.load() is sampler_from_env
    monkeypatch.setenv("OTEL_TRACES_SAMPLER_ARG", "0.01")
    sampler = _import_sampler(SAMPLER_ENTRY_POINT)
    assert isinstance(sampler, GuardSampler)
    assert "TraceIdRatioBased{0.01}" in sampler.get_description()


@pytest.mark.parametrize(
    "sampler",
    [ALWAYS_ON, GuardSampler(DEFAULT_ON)],
    ids=["always_on", "guard_sampler"],
)
def test_no_warning_when_nothing_can_be_dropped(
    sampler: Sampler, caplog: pytest.LogCaptureFixture
) -> None:
    """ALWAYS_ON and GuardSampler never hide a span from the guard: no warning."""
    with caplog.at_level(logging.WARNING, logger="groundplane_otel"):
        assert warn_if_sampler_drops(TracerProvider(sampler=sampler)) is False
    assert caplog.messages == []


DEFAULT_SAMPLER_WARNING = (
    "groundplane: the tracer provider's sampler is the SDK default, ParentBased(AlwaysOn): it "
    "drops every span of a request whose incoming traceparent says not sampled (an upstream "
    "service sampled it out), and the guard never sees a dropped span (its output goes "
    "unchecked and uncounted). Wrap it: TracerProvider(sampler=GuardSampler(ParentBased("
    "ALWAYS_ON))), or set OTEL_TRACES_SAMPLER=groundplane_parentbased_traceidratio; every span "
    "is then recorded for the guard and only the sampled ones are exported"
)


def test_warns_when_the_sdk_default_sampler_can_drop(caplog: pytest.LogCaptureFixture) -> None:
    """The SDK default (parent-based) drops what an upstream sampled out: the warning says
    exactly when, and both fixes."""
    with caplog.at_level(logging.WARNING, logger="groundplane_otel"):
        assert warn_if_sampler_drops(TracerProvider(sampler=DEFAULT_ON)) is True
    assert caplog.messages == [DEFAULT_SAMPLER_WARNING]


def test_warns_when_another_sampler_can_drop(caplog: pytest.LogCaptureFixture) -> None:
    """Any other sampler that can drop spans: the warning names it and both fixes."""
    sampler = TraceIdRatioBased(0.5)
    with caplog.at_level(logging.WARNING, logger="groundplane_otel"):
        assert warn_if_sampler_drops(TracerProvider(sampler=sampler)) is True
    assert caplog.messages == [
        f"groundplane: the tracer provider's sampler {sampler.get_description()} can drop "
        "spans, and the guard never sees a dropped span (its output goes unchecked and "
        "uncounted). Wrap it: TracerProvider(sampler=GuardSampler(sampler)), or set "
        "OTEL_TRACES_SAMPLER=groundplane_parentbased_traceidratio (OTEL_TRACES_SAMPLER_ARG = the "
        "fraction to export); every span is then recorded for the guard and only the sampled "
        "ones are exported"
    ]


def test_warns_that_always_record_sampler_strips_attributes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """The SDK's AlwaysRecordSampler records dropped spans bare: warn and point to GuardSampler."""
    sampler = AlwaysRecordSampler(DEFAULT_ON)
    with caplog.at_level(logging.WARNING, logger="groundplane_otel"):
        assert warn_if_sampler_drops(TracerProvider(sampler=sampler)) is True
    assert caplog.messages == [
        f"groundplane: the tracer provider's sampler {sampler.get_description()} records the "
        "spans it drops without their start attributes (gen_ai.agent.name, "
        "gen_ai.operation.name …), so the guard cannot match them. Use "
        "TracerProvider(sampler=GuardSampler(inner)) instead"
    ]


def test_a_provider_without_a_sampler_is_not_judged(caplog: pytest.LogCaptureFixture) -> None:
    """The API's no-op provider has no sampler: nothing to warn about here."""
    with caplog.at_level(logging.WARNING, logger="groundplane_otel"):
        assert warn_if_sampler_drops(trace.NoOpTracerProvider()) is False
    assert caplog.messages == []


# -- with the guard installed -----------------------------------------------------------------

ROWS = [
    {"campaign": "harbour", "impressions": 20000, "clicks": 910, "ctr": 0.0455},
    {"campaign": "north", "impressions": 20000, "clicks": 824, "ctr": 0.0412},
    {"campaign": "delta", "impressions": 20000, "clicks": 602, "ctr": 0.0301},
]
RIGHT = {"winner": "harbour", "ctr": 0.0455, "top3": ["harbour", "north", "delta"]}
RIGHT["total_clicks"] = 2336
WRONG = {**RIGHT, "winner": "north", "ctr": 0.0412}
POLICY = Path(__file__).resolve().parents[2] / "examples" / "policy.yaml"


def agent_turn(tracer: trace.Tracer, answer: dict[str, object]) -> None:
    """invoke_agent → execute_tool (the SQL result) → chat (the structured answer)."""
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "campaign-analyst"}
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "warehouse.query",
        "gen_ai.tool.call.arguments": json.dumps({"table": "campaign_daily"}),
        "gen_ai.tool.call.result": json.dumps({"rows": ROWS}),
    }
    message = {"role": "assistant", "parts": [{"type": "text", "content": json.dumps(answer)}]}
    with tracer.start_as_current_span("invoke_agent campaign-analyst", attributes=agent):
        with tracer.start_as_current_span("execute_tool warehouse.query", attributes=tool):
            pass
        with tracer.start_as_current_span("chat m", attributes={"gen_ai.operation.name": "chat"}):
            trace.get_current_span().set_attribute("gen_ai.output.messages", json.dumps([message]))


def run_turns(sampler: Sampler, count: int) -> tuple[int, InMemorySpanExporter, dict[Any, int]]:
    """``count`` wrong and ``count`` right turns; returns (raised, exporter, output counts)."""
    provider, _, exporter = provider_with(sampler)
    reader = InMemoryMetricReader()
    install(
        load_policy(POLICY),
        tracer_provider=provider,
        meter_provider=MeterProvider(metric_readers=[reader]),
    )
    raised = 0
    for _ in range(count):
        try:
            agent_turn(provider.get_tracer("t"), WRONG)
        except UnsupportedClaim:
            raised += 1
        agent_turn(provider.get_tracer("t"), RIGHT)
    counts: dict[Any, int] = {}
    for resource in (reader.get_metrics_data() or MetricsData([])).resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name in ("groundplane.outputs", "groundplane.claims"):
                    for point in metric.data.data_points:  # type: ignore[union-attr]
                        labels = tuple(sorted((point.attributes or {}).items()))
                        counts[metric.name, labels] = point.value  # type: ignore[union-attr]
    return raised, exporter, counts


def output(outcome: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The key of a groundplane.outputs point for ``outcome`` in run_turns' counts."""
    labels = {
        "groundplane.boundary": "campaign_report",
        "groundplane.mode": "enforce",
        "gen_ai.agent.name": "campaign-analyst",  # the boundary's configured match
    }
    return "groundplane.outputs", tuple(sorted({**labels, "groundplane.outcome": outcome}.items()))


def claim(check: str, verdict: str) -> tuple[str, tuple[tuple[str, str], ...]]:
    """The key of a groundplane.claims point for ``check`` and ``verdict``."""
    labels = {
        "groundplane.boundary": "campaign_report",
        "groundplane.mode": "enforce",
        "gen_ai.agent.name": "campaign-analyst",  # the boundary's configured match
    }
    labels |= {"groundplane.check": check, "groundplane.verdict": verdict}
    return "groundplane.claims", tuple(sorted(labels.items()))


def test_ratio_zero_wrapped_checks_raises_and_counts_every_output_and_exports_none() -> None:
    """With GuardSampler(ParentBased(ratio 0)) all 5 wrong answers raise, all 10 outputs and
    all 30 checks (3 per output, report mode "first" included) are counted, and not one span
    is exported."""
    raised, exporter, counts = run_turns(GuardSampler(ParentBased(TraceIdRatioBased(0.0))), 5)
    assert raised == 5
    assert exporter.get_finished_spans() == ()
    assert counts == {
        output("blocked"): 5,
        output("passed"): 5,
        claim("superlative", "unsupported"): 5,
        claim("superlative", "supported"): 5,
        claim("ranking_prefix", "supported"): 10,
        claim("aggregate_reconciles", "supported"): 10,
    }


def test_ratio_zero_unwrapped_checks_nothing() -> None:
    """The failure GuardSampler fixes: the plain sampler lets every wrong answer through."""
    raised, exporter, counts = run_turns(ParentBased(TraceIdRatioBased(0.0)), 5)
    assert (raised, exporter.get_finished_spans()) == (0, ())
    assert counts == {}
