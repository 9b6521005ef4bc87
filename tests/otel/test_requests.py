"""Facts belong to one request (the spans under one local root span in this process): no
incoming trace id can make two requests share — or, by conflicts, poison — each other's facts."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
from otel_harness import SALES_ROWS, Harness, answer

from groundplane_otel.errors import ClaimsUnsupported

INCOMING = trace.set_span_in_context(
    NonRecordingSpan(SpanContext(0xABC, 0xDEF, is_remote=True, trace_flags=TraceFlags(1)))
)
AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "analyst"}


@pytest.fixture(params=["sdk fields", "public API"])
def layout(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The guard's hooks read the SDK span's fields, or (an SDK whose layout they do not know)
    the same hooks read each span through the public API."""
    if request.param == "public API":
        import groundplane_otel.otel._live.processor as processor_module

        monkeypatch.setattr(processor_module, "sdk_layout", lambda: False)
    return str(request.param)


def outcomes(otel: Harness) -> list[tuple[str, int]]:
    return sorted(
        (labels["groundplane.outcome"], value)
        for labels, value in otel.metrics().get("groundplane.outputs", [])
    )


def test_two_requests_with_one_traceparent_never_share_facts(otel: Harness, layout: str) -> None:
    """Request B (same incoming traceparent as A, interleaved) cannot use A's fact: its
    answer fails closed as fact_missing while A's passes."""
    guard = otel.install()
    tracer = otel.tracer
    first = tracer.start_span("invoke_agent analyst", context=INCOMING, attributes=AGENT)
    second = tracer.start_span("invoke_agent analyst", context=INCOMING, attributes=AGENT)
    with trace.use_span(first, end_on_exit=False):
        otel.tool(SALES_ROWS)
    with pytest.raises(ClaimsUnsupported) as raised, trace.use_span(second, end_on_exit=False):
        otel.chat(answer({"winner": "EU"}))
    (claim,) = raised.value.report.violations
    assert claim.code == "fact_missing"
    with trace.use_span(first, end_on_exit=False):
        otel.chat(answer({"winner": "EU"}))
    first.end()
    second.end()  # its run already counted its one outcome (the error): nothing more
    assert outcomes(otel) == [("error", 1), ("passed", 1)]
    assert len(guard.processor.engine.store) == 0
    assert guard.processor.engine.store.shared == set()
    assert guard.processor.engine.store.spans == {}


def test_two_requests_with_one_traceparent_never_conflict(otel: Harness, layout: str) -> None:
    """Different results under one fact name in two such requests are no conflict: each
    request checks its answer against its own result."""
    otel.install()
    tracer = otel.tracer
    first = tracer.start_span("invoke_agent analyst", context=INCOMING, attributes=AGENT)
    second = tracer.start_span("invoke_agent analyst", context=INCOMING, attributes=AGENT)
    with trace.use_span(first, end_on_exit=False):
        otel.tool(SALES_ROWS)
    with trace.use_span(second, end_on_exit=False):
        otel.tool({"rows": [{"region": "EU", "total": 1}, {"region": "US", "total": 7}]})
        otel.chat(answer({"winner": "US"}))
    with trace.use_span(first, end_on_exit=False):
        otel.chat(answer({"winner": "EU"}))
    first.end()
    second.end()
    assert outcomes(otel) == [("passed", 2)]
    facts = otel.metrics()["groundplane.facts"]
    assert [(labels["groundplane.fact.outcome"], n) for labels, n in facts] == [("recorded", 2)]


def test_an_llm_call_without_an_enclosing_span_gets_a_clue(otel: Harness) -> None:
    """Tool and model called with no enclosing span are two requests: fact_missing says so,
    and how to fix it."""
    from otel_harness import sales_config

    from groundplane_otel.otel import BoundarySpec, MatchSpec

    spec = sales_config().boundaries[0]
    config = sales_config(
        boundaries=(
            BoundarySpec("answer", spec.facts, spec.checks, match=MatchSpec(operation_name="chat")),
        )
    )
    otel.install(config)
    otel.tool(SALES_ROWS)
    with pytest.raises(ClaimsUnsupported) as raised:
        otel.chat(answer({"winner": "EU"}))
    (claim,) = raised.value.report.violations
    assert claim.code == "fact_missing"
    assert claim.reason.endswith(
        "check superlative(fact='sales', field='winner') needs fact 'sales'; no tool span of "
        "this request recorded it: the guarded span is itself a root span, so its request holds "
        "only facts recorded under it — run the tool and the model call under one root span"
    )


class ReplacesAttributes(SpanProcessor):
    """What openinference-instrumentation-pydantic-ai's OpenInferenceSpanProcessor.on_end does
    to every span: ``span._attributes`` becomes a plain dict."""

    def on_start(self, span: Span, parent_context: Any = None) -> None:
        pass

    def on_end(self, span: ReadableSpan) -> None:
        span._attributes = dict(span._attributes or {})  # type: ignore[assignment]


def test_a_processor_that_replaces_attributes_before_the_guard_breaks_nothing(
    otel: Harness,
) -> None:
    """Registered before the guard (OpenInference's documented order), a processor that swaps
    ``_attributes`` for a dict costs no fact, no root release, and no internal error."""
    otel.tracer_provider.add_span_processor(ReplacesAttributes())
    guard = otel.install()
    with otel.agent():
        otel.tool(SALES_ROWS)
        otel.chat(answer({"winner": "EU"}))
    assert guard.processor.internal_errors == 0
    assert outcomes(otel) == [("passed", 1)]
    assert len(guard.processor.engine.store) == 0
    assert guard.processor.engine.store.roots == {}
