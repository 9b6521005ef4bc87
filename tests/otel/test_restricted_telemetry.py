"""Restricted values never reach telemetry, even with content capture on: not on the guardrail
events, not in the log events, not in the exception recorded on enclosing spans, not on the
tool span the guard writes; other findings of the same output keep their content."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from otel_harness import Harness

from groundplane_otel import (
    ClaimsUnsupported,
    entities_recorded,
    no_restricted_values,
)
from groundplane_otel.otel import (
    BoundarySpec,
    FactSpec,
    GuardConfig,
    MatchSpec,
    install,
    submit_output,
    tool,
)
from groundplane_otel.otel._engine.withheld import OUTPUT_WITHHELD

SECRET = "Project Falcon"
COST = 1234.5
FORMS = ("project falcon", "1234.5", "1,234.50", "falcon")


@tool("erp.costs")
def wholesale() -> list[dict[str, Any]]:
    """The restricted tool: its result must never be written on its span by the guard."""
    return [{"sku": SECRET, "cost": COST}]


@tool("shop.list")
def catalogue() -> list[str]:
    return ["Widget", "Gadget"]


def config(mode: str = "enforce") -> GuardConfig:
    checks = (
        no_restricted_values(["answer"]),
        entities_recorded(["pick"], "catalogue"),
        entities_recorded(["also"], "catalogue"),
    )
    return GuardConfig(
        facts=(
            FactSpec("wholesale", "erp.costs", kind="table", key="sku", restricted=True),
            FactSpec("catalogue", "shop.list", kind="domain"),
        ),
        boundaries=(
            BoundarySpec(
                "sales",
                ("wholesale", "catalogue"),
                checks,
                match=MatchSpec(agent_name="seller"),
            ),
        ),
        mode=mode,  # type: ignore[arg-type]
        capture_content=True,
    )


def run(otel: Harness, logs: InMemoryLogRecordExporter, mode: str) -> BaseException | None:
    """request -> agent -> two tools -> chat whose answer leaks the secret three ways: in prose,
    as an unrecorded pick (entities_recorded's claim holds the secret), and one plain miss."""
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    otel.add_exporter()
    otel.guards.append(
        install(
            config(mode),
            tracer_provider=otel.tracer_provider,
            meter_provider=otel.meter_provider,
            logger_provider=logger_provider,
            raise_internal_errors=True,
        )
    )
    output = {"answer": f"{SECRET.upper()} costs us 1,234.50", "pick": SECRET, "also": "Sprocket"}
    try:
        with otel.tracer.start_as_current_span("POST /chat"), otel.agent("seller"):
            wholesale()
            catalogue()
            with otel.tracer.start_as_current_span(
                "chat gpt-test", attributes={"gen_ai.operation.name": "chat"}
            ):
                submit_output(output)
    except ClaimsUnsupported as error:
        return error
    return None


def events(otel: Harness) -> list[dict[str, Any]]:
    (chat,) = otel.spans("chat gpt-test")
    return [dict(e.attributes or {}) for e in chat.events if e.name == "gen_ai.guardrail.result"]


@pytest.mark.parametrize("mode", ["enforce", "observe"])
def test_no_exported_span_or_log_holds_a_restricted_value(otel: Harness, mode: str) -> None:
    """Every exported span (events, exception events, status, attributes) and every log record
    is free of the secret in any form, in both modes, with content capture on."""
    logs = InMemoryLogRecordExporter()
    error = run(otel, logs, mode)
    assert (error is not None) == (mode == "enforce")
    exported = "\n".join(span.to_json() for span in otel.spans()).casefold()
    records = "\n".join(
        repr(dict(data.log_record.attributes or {})) for data in logs.get_finished_logs()
    ).casefold()
    for form in FORMS:
        assert form not in exported
        assert form not in records
    assert [data.log_record.event_name for data in logs.get_finished_logs()] == [
        "gen_ai.guardrail.result"
    ] * 3 + ["gen_ai.evaluation.result"] * 3


def test_restricted_findings_lose_their_content_and_others_keep_it(otel: Harness) -> None:
    """The leak and the claim that quotes the secret carry reason codes but no claimed,
    supported or message; the unrelated miss keeps its content (capture is on)."""
    error = run(otel, InMemoryLogRecordExporter(), "enforce")
    leak, quoted, plain = events(otel)
    assert leak["gen_ai.guardrail.result.reason"] == "restricted_value"
    assert leak["groundplane.check"] == "no_restricted_values"
    assert leak["groundplane.fact"] == "wholesale"
    assert quoted["gen_ai.guardrail.result.reason"] == "unknown_entity"
    for event in (leak, quoted):
        assert not {"groundplane.claimed", "groundplane.supported", "groundplane.message"} & set(
            event
        )
    assert plain["groundplane.claimed"] == '"Sprocket"'
    assert "groundplane.message" in plain
    (chat,) = otel.spans("chat gpt-test")
    explanations = [
        (e.attributes or {}).get("gen_ai.evaluation.explanation")
        for e in chat.events
        if e.name == "gen_ai.evaluation.result"
    ]
    assert explanations == [None, None, plain["groundplane.message"]]
    assert error is not None
    assert SECRET in error.diagnosis  # the application still gets the full message
    assert SECRET not in str(error) + repr(error)  # withheld: redacted, like capture off


def test_the_restricted_tool_result_is_not_written_on_its_span(otel: Harness) -> None:
    """With capture on, @tool writes a result on its span, except for a restricted tool."""
    run(otel, InMemoryLogRecordExporter(), "observe")
    (erp,) = otel.spans("execute_tool erp.costs")
    (shop,) = otel.spans("execute_tool shop.list")
    assert "gen_ai.tool.call.result" not in (erp.attributes or {})
    assert (shop.attributes or {})["gen_ai.tool.call.result"] == '["Widget", "Gadget"]'


def test_the_captured_output_that_leaks_is_overwritten_on_the_guarded_span(otel: Harness) -> None:
    """An instrumentation captured the leaking answer in gen_ai.output.messages: the guard
    overwrites it on the guarded span; a clean answer's captured output stays as it was."""
    from otel_harness import answer

    otel.install(config("observe"))
    for text in (f"it is {SECRET}", "all public"):
        with otel.tracer.start_as_current_span("POST /chat"), otel.agent("seller"):
            wholesale()
            catalogue()
            otel.chat(answer({"answer": text, "pick": "Widget", "also": "Gadget"}))
    leaked, clean = otel.spans("chat gpt-test")
    assert (leaked.attributes or {})["gen_ai.output.messages"] == OUTPUT_WITHHELD
    assert "all public" in str((clean.attributes or {})["gen_ai.output.messages"])


def test_no_log_line_or_metric_label_holds_a_restricted_value(
    otel: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """The guard's Python log lines and every metric point's attributes are free of the secret."""
    caplog.set_level("DEBUG")
    run(otel, InMemoryLogRecordExporter(), "enforce")
    labels = repr(otel.metrics()).casefold()
    lines = "\n".join(record.getMessage() for record in caplog.records).casefold()
    for form in FORMS:
        assert form not in labels
        assert form not in lines
    outcomes = [attrs["groundplane.outcome"] for attrs, _ in otel.metrics()["groundplane.outputs"]]
    assert outcomes == ["blocked"]


def test_an_adapter_handing_the_answer_over_gets_the_same_withholding(otel: Harness) -> None:
    """Guard.check_output (the adapters' entry point) withholds a restricted finding's content
    on the event too, with content capture on, and the evaluation still blocks."""
    guard = otel.install(config())
    with otel.tracer.start_as_current_span("POST /chat"), otel.agent("seller") as agent:
        wholesale()
        catalogue()
        evaluation = guard.check_output(
            {"answer": f"it is {SECRET}", "pick": "Widget", "also": "Gadget"},
            boundary="sales",
            span=agent,
        )
    assert evaluation.outcome == "blocked"
    (finding,) = evaluation.findings
    assert finding.reason == "restricted_value"
    (span,) = otel.spans("invoke_agent seller")
    events = [e for e in span.events if e.name == "gen_ai.guardrail.result"]
    (event,) = [dict(e.attributes or {}) for e in events]
    assert event["gen_ai.guardrail.result.reason"] == "restricted_value"
    assert "groundplane.message" not in event
    assert "falcon" not in span.to_json().casefold()
