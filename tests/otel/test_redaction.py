"""No claim content through exceptions: with content capture off, a guard exception's
``str()``/``repr()``/``args`` are a content-free summary, so the spans it propagates through
record a content-free message, stacktrace and status; the app still gets the full message in
``diagnosis`` and every attribute. No SDK method is patched."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace import Span as SdkSpan
from otel_harness import Harness, sales_config

from groundplane_otel.checks._base import NamedCheck
from groundplane_otel.errors import ClaimsUnsupported, UnsupportedClaim
from groundplane_otel.otel import (
    BoundarySpec,
    GuardConfig,
    MatchSpec,
    OutputUnchecked,
    submit_output,
    tool,
)

CLAIMED = "claimed-canary-5d1e"
SUPPORTED = "fact-canary-77b0"
ROWS = {"rows": [{"region": SUPPORTED, "total": 10}, {"region": "US", "total": 7}]}
SUMMARY = (
    "unsupported claim in field 'winner' (boundary 'answer', check superlative, reason not_ranked)"
)
ORIGINAL_RECORD_EXCEPTION = SdkSpan.__dict__["record_exception"]


@tool("top_sales")
def top_sales() -> dict[str, Any]:
    """The tool: its result (a fact canary) goes on its span only with content capture on."""
    return ROWS


def blocked_request(otel: Harness, *, use_span: bool = False) -> None:
    """request -> invoke_agent -> execute_tool + chat whose output (a wrong winner naming the
    claimed canary) is submitted in code, as with an instrumentation that captures no content.
    The agent span is entered with ``use_span`` or as a ``with`` block."""
    with otel.tracer.start_as_current_span("GET /report"):
        if use_span:
            agent = otel.tracer.start_span(
                "invoke_agent analyst",
                attributes={
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": "analyst",
                },
            )
            scope: Any = trace.use_span(agent, end_on_exit=True)
        else:
            scope = otel.agent()
        with scope:
            top_sales()
            with otel.tracer.start_as_current_span(
                "chat gpt-test", attributes={"gen_ai.operation.name": "chat"}
            ):
                submit_output({"winner": CLAIMED})


def dump(span: ReadableSpan) -> str:
    """Everything an exporter sees of a span: attributes, events, links, status, name."""
    return span.to_json()


def exception_event(span: ReadableSpan) -> dict[str, Any]:
    (event,) = [event for event in span.events if event.name == "exception"]
    return dict(event.attributes or {})


@pytest.mark.parametrize("use_span", [False, True], ids=["with-block", "use_span"])
def test_capture_off_keeps_the_canaries_out_of_every_exported_span(
    otel: Harness, use_span: bool
) -> None:
    """Capture off: the app's exception names both canaries, yet no exported span carries them:
    the enclosing spans' exception events hold the summary (message and stacktrace) and their
    status says ``ClaimsUnsupported: <summary>``."""
    otel.install()
    with pytest.raises(ClaimsUnsupported) as raised:
        blocked_request(otel, use_span=use_span)
    assert CLAIMED in raised.value.diagnosis
    assert SUPPORTED in raised.value.diagnosis
    assert (str(raised.value), raised.value.args) == (SUMMARY, (SUMMARY,))
    assert repr(raised.value) == f"ClaimsUnsupported({SUMMARY!r})"
    exported = otel.spans()
    assert [span.name for span in exported] == [
        "execute_tool top_sales",
        "chat gpt-test",
        "invoke_agent analyst",
        "GET /report",
    ]
    assert [span.name for span in exported if CLAIMED in dump(span)] == []
    assert [span.name for span in exported if SUPPORTED in dump(span)] == []
    for span in exported[2:]:
        event = exception_event(span)
        assert event["exception.type"] == "groundplane_otel.errors.ClaimsUnsupported"
        assert event["exception.message"] == SUMMARY
        assert f"ClaimsUnsupported: {SUMMARY}\n" in event["exception.stacktrace"]
        assert span.status.description == f"ClaimsUnsupported: {SUMMARY}"


def test_capture_on_records_the_full_message(otel: Harness) -> None:
    """Capture on: the SDK's own exception event (full message) and the guardrail event's
    claimed/supported values carry the canaries, as asked."""
    otel.install(sales_config(capture_content=True))
    with pytest.raises(ClaimsUnsupported) as raised:
        blocked_request(otel)
    (request,) = otel.spans("GET /report")
    assert exception_event(request)["exception.message"] == str(raised.value)
    assert CLAIMED in request.status.description  # type: ignore[operator]
    (chat,) = otel.spans("chat gpt-test")
    assert chat.events[0].attributes["groundplane.claimed"] == json.dumps(CLAIMED)  # type: ignore[index]
    assert chat.events[0].attributes["groundplane.supported"] == json.dumps(SUPPORTED)  # type: ignore[index]


def test_report_mode_first_raises_the_marked_claim(otel: Harness) -> None:
    """Report mode "first": the UnsupportedClaim itself is the summary; its attributes and
    ``diagnosis`` keep the values."""
    otel.install(sales_config(report_mode="first"))
    with pytest.raises(UnsupportedClaim) as raised:
        blocked_request(otel)
    assert (str(raised.value), raised.value.redacted) == (SUMMARY, True)
    assert (raised.value.claimed, raised.value.supported) == (CLAIMED, SUPPORTED)
    assert raised.value.diagnosis.startswith(
        f"unsupported claim in field 'winner': model said {CLAIMED!r}"
    )
    (request,) = otel.spans("GET /report")
    assert exception_event(request)["exception.message"] == SUMMARY
    assert CLAIMED not in dump(request)


def test_a_crashing_checks_cause_is_redacted_too(otel: Harness) -> None:
    """A check that crashes with content in its message (report mode "first"): the raised
    OutputUnchecked is not chained to it (its message names a value) but holds it in
    ``check_error``; no span carries the value."""

    def crash(registry: object, output: Any) -> None:
        raise KeyError(output["winner"])

    spec = BoundarySpec(
        "answer",
        ("sales",),
        (NamedCheck("crash()", crash, family="custom", facts=("sales",)),),
        match=MatchSpec(agent_name="analyst"),
        report_mode="first",
    )
    otel.install(GuardConfig(facts=sales_config().facts, boundaries=(spec,)))
    with pytest.raises(OutputUnchecked) as raised:
        blocked_request(otel)
    assert isinstance(raised.value.check_error, KeyError)
    assert CLAIMED in str(raised.value.check_error)
    assert (raised.value.__cause__, raised.value.__suppress_context__) == (None, True)
    (request,) = otel.spans("GET /report")
    stacktrace = exception_event(request)["exception.stacktrace"]
    assert "reason check_error" in stacktrace
    assert "KeyError" not in stacktrace
    assert [span.name for span in otel.spans() if CLAIMED in dump(span)] == []


def test_unmarked_exceptions_are_recorded_as_the_sdk_does(otel: Harness) -> None:
    """The application's own exceptions are recorded as the SDK does."""
    otel.install()
    with pytest.raises(ValueError, match=CLAIMED), otel.tracer.start_as_current_span("work"):
        raise ValueError(CLAIMED)
    (work,) = otel.spans("work")
    assert exception_event(work)["exception.message"] == CLAIMED
    assert work.status.description == f"ValueError: {CLAIMED}"


def test_installing_a_guard_patches_no_sdk_method(otel: Harness) -> None:
    """``Span.record_exception`` stays the SDK's own while a guard is installed and after."""
    guard = otel.install()
    assert SdkSpan.__dict__["record_exception"] is ORIGINAL_RECORD_EXCEPTION
    guard.uninstall()
    assert SdkSpan.__dict__["record_exception"] is ORIGINAL_RECORD_EXCEPTION


def test_the_core_api_keeps_the_full_message() -> None:
    """Not redacted (the core API, or capture on): str, repr, args and diagnosis agree."""
    claim = UnsupportedClaim("winner", CLAIMED, SUPPORTED, code="not_ranked")
    assert str(claim) == claim.diagnosis == claim.args[0]
    assert CLAIMED in repr(claim)
    assert claim.redacted is False
