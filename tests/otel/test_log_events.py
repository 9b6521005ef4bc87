"""``events="log"``: the guard's ``gen_ai.guardrail.result`` / ``gen_ai.evaluation.result``
events as log records only (span events are being deprecated for log-based events, OTEP 4430),
through the real SDK's ``LoggerProvider`` and ``InMemoryLogRecordExporter``: exact attributes, the
guarded span's trace and span ids on each record, no span event, nothing claimed without
content capture; the switch in code, policy and environment, validated."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry._logs import NoOpLoggerProvider
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.trace import StatusCode
from otel_harness import SALES_ROWS, Harness, answer, sales_config

from groundplane_otel.errors import ClaimsUnsupported
from groundplane_otel.otel import Guard, GuardConfig, install
from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel.environment import apply_environment
from groundplane_otel.otel.instrumentor import GroundplaneInstrumentor
from groundplane_otel.otel.policy import PolicyError, load_policy

POLICY = """\
version: 1
facts:
  sales: {tool: top_sales, kind: ranking, key: region, score: total, path: rows}
boundaries:
  answer:
    facts: [sales]
    match: {agent_name: analyst}
    checks:
      - superlative: {winner_field: winner}
"""
RULE = "superlative(fact='sales', field='winner')"


class Logs:
    """A real SDK LoggerProvider exporting into memory."""

    def __init__(self) -> None:
        self.exporter = InMemoryLogRecordExporter()
        self.provider = LoggerProvider()
        self.provider.add_log_record_processor(SimpleLogRecordProcessor(self.exporter))

    def records(self) -> list[Any]:
        return [data.log_record for data in self.exporter.get_finished_logs()]


@pytest.fixture
def logs() -> Iterator[Logs]:
    found = Logs()
    yield found
    found.provider.shutdown()


def installed(otel: Harness, logs: Logs, config: GuardConfig) -> Guard:
    otel.add_exporter()
    guard = install(
        config,
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
        logger_provider=logs.provider,
    )
    otel.guards.append(guard)
    return guard


def run(otel: Harness, winner: str) -> None:
    with otel.agent():
        otel.tool(SALES_ROWS)
        otel.chat(answer({"winner": winner}))


def guardrail(tool: Any) -> dict[str, Any]:
    """The guardrail record of the wrong winner "US", without content."""
    return {
        sc.GUARDRAIL_COMPONENT_NAME: "groundplane",
        sc.GUARDRAIL_POLICY_ID: "answer",
        sc.GUARDRAIL_RESULT_TYPE: "verdict",
        sc.GUARDRAIL_RESULT_VALUE: "unsupported",
        sc.GUARDRAIL_RESULT_REASON: "wrong_winner",
        sc.GUARDRAIL_SOURCE: "model_response",
        sc.GUARDRAIL_POLICY_RULE_ID: RULE,
        sc.CHECK: "superlative",
        sc.FIELD: "winner",
        sc.FACT: "sales",
        sc.FACT_TOOL: "top_sales",
        sc.FACT_TRACE_ID: f"{tool.context.trace_id:032x}",
        sc.FACT_SPAN_ID: f"{tool.context.span_id:016x}",
    }


def no_guard_events(otel: Harness) -> bool:
    """No span has a guardrail or evaluation event (the agent span records the exception)."""
    names = {event.name for span in otel.spans() for event in span.events}
    return names.isdisjoint({sc.GUARDRAIL_EVENT, sc.EVALUATION_EVENT})


EVALUATION = {sc.EVALUATION_NAME: "superlative", sc.EVALUATION_SCORE_LABEL: "unsupported"}


def test_log_only_writes_records_with_the_span_ids_and_no_span_event(
    otel: Harness, logs: Logs
) -> None:
    """Enforce still raises and the span still says blocked (ERROR, summary attributes); the
    two events are log records carrying the chat span's trace and span ids, with exactly the
    attributes a span event would have, and without content capture nothing claimed."""
    installed(otel, logs, sales_config(events="log"))
    with pytest.raises(ClaimsUnsupported):
        run(otel, "US")
    chat = otel.spans("chat gpt-test")[-1]
    (tool,) = [span for span in otel.spans() if span.name.startswith("execute_tool")]
    assert chat.events == ()
    assert no_guard_events(otel)
    assert chat.status.status_code is StatusCode.ERROR
    assert (chat.attributes or {})[sc.OUTCOME] == "blocked"
    records = logs.records()
    assert [record.event_name for record in records] == [sc.GUARDRAIL_EVENT, sc.EVALUATION_EVENT]
    assert [dict(record.attributes or {}) for record in records] == [guardrail(tool), EVALUATION]
    assert {(record.trace_id, record.span_id) for record in records} == {
        (chat.context.trace_id, chat.context.span_id)
    }


def test_log_only_with_content_capture_carries_the_claimed_values(
    otel: Harness, logs: Logs
) -> None:
    """With content capture on, the records carry what the span events would: the claimed and
    supported values and the message (off: the test above has none of them)."""
    installed(otel, logs, sales_config(events="log", capture_content=True))
    with pytest.raises(ClaimsUnsupported):
        run(otel, "US")
    guardrail_record, evaluation_record = [dict(r.attributes or {}) for r in logs.records()]
    assert (guardrail_record[sc.CLAIMED], guardrail_record[sc.SUPPORTED]) == ('"US"', '"EU"')
    assert str(guardrail_record[sc.MESSAGE]).startswith(
        "unsupported claim in field 'winner': model said 'US'"
    )
    assert evaluation_record[sc.EVALUATION_EXPLANATION] == guardrail_record[sc.MESSAGE]
    assert no_guard_events(otel)


def test_the_default_keeps_span_events_and_also_writes_records(otel: Harness, logs: Logs) -> None:
    """events="span" (the default): span events as before, and the log records too."""
    assert GuardConfig().events == "span"
    installed(otel, logs, sales_config())
    with pytest.raises(ClaimsUnsupported):
        run(otel, "US")
    chat = otel.spans("chat gpt-test")[-1]
    assert [event.name for event in chat.events] == [sc.GUARDRAIL_EVENT, sc.EVALUATION_EVENT]
    assert [record.event_name for record in logs.records()] == [
        sc.GUARDRAIL_EVENT,
        sc.EVALUATION_EVENT,
    ]


def test_log_only_without_a_logger_provider_is_refused_at_install(otel: Harness) -> None:
    """No logger provider: the events would go nowhere, so install refuses (nothing installed)."""
    with pytest.raises(ValueError, match=r"^events='log' writes the guard's events as log") as e:
        install(
            sales_config(events="log"),
            tracer_provider=otel.tracer_provider,
            meter_provider=otel.meter_provider,
        )
    assert str(e.value) == (
        "events='log' writes the guard's events as log records only: pass logger_provider= "
        "(an OpenTelemetry LoggerProvider), or keep events='span'"
    )
    otel.install(sales_config())  # nothing was left installed on the provider


def test_the_switch_in_code_policy_and_environment(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """GuardConfig(events=...) is validated on construction; the policy key ``events`` is read
    like ``mode`` (a located error for a bad value); GROUNDPLANE_OTEL_EVENTS overrides the
    policy, and a bad value is ignored with a warning."""
    with pytest.raises(ValueError) as bad:
        GuardConfig(events="logs")  # type: ignore[arg-type]
    assert str(bad.value) == "events must be one of ('span', 'log'), got 'logs'"
    path = tmp_path / "p.yaml"
    path.write_text("events: log\n" + POLICY)
    assert load_policy(path).events == "log"
    assert load_policy(path).evaluation_events is True
    path.write_text("events: logs\n" + POLICY)
    with pytest.raises(PolicyError) as error:
        load_policy(path)
    assert str(error.value) == (
        f"{path}:1: events: expected one of span, log, got 'logs'. Fix: did you mean 'log'?"
    )
    span = sales_config()
    assert apply_environment(span, {"GROUNDPLANE_OTEL_EVENTS": "LOG"}).events == "log"
    logged = sales_config(events="log")
    assert apply_environment(logged, {"GROUNDPLANE_OTEL_EVENTS": "span"}).events == "span"
    with caplog.at_level(logging.WARNING, logger="groundplane_otel"):
        assert apply_environment(span, {"GROUNDPLANE_OTEL_EVENTS": "both"}).events == "span"
    assert caplog.messages == [
        "groundplane: ignoring GROUNDPLANE_OTEL_EVENTS='both'; allowed values: span, log"
    ]


@pytest.fixture
def instrumentor() -> Iterator[GroundplaneInstrumentor]:
    """The (singleton) zero-code instrumentor, always uninstrumented afterwards."""
    instance = GroundplaneInstrumentor()
    yield instance
    if instance.is_instrumented_by_opentelemetry:
        instance.uninstrument()


def test_zero_code_log_only_takes_the_sdk_logger_provider_or_installs_nothing_loudly(
    instrumentor: GroundplaneInstrumentor,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    tmp_path: Path,
    logs: Logs,
) -> None:
    """Under opentelemetry-instrument, GROUNDPLANE_OTEL_EVENTS=log with an SDK logger provider
    installs a guard writing log records only; with none, an ERROR says why nothing is
    installed (as for an invalid policy)."""
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY)
    monkeypatch.setenv("GROUNDPLANE_POLICY", str(path))
    monkeypatch.setenv("GROUNDPLANE_OTEL_EVENTS", "log")
    otel = Harness()
    with caplog.at_level(logging.ERROR, logger="groundplane_otel"):
        instrumentor.instrument(
            tracer_provider=otel.tracer_provider,
            meter_provider=otel.meter_provider,
            logger_provider=NoOpLoggerProvider(),
        )
    assert instrumentor.guard is None
    assert caplog.messages == [
        f"groundplane: the guard from {path} is NOT installed: events='log' writes the guard's "
        "events as log records only: pass logger_provider= (an OpenTelemetry LoggerProvider), "
        "or keep events='span'"
    ]
    instrumentor.uninstrument()
    instrumentor.instrument(
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
        logger_provider=logs.provider,
    )
    assert instrumentor.guard is not None
    assert instrumentor.guard.config.events == "log"
    otel.add_exporter()
    with pytest.raises(ClaimsUnsupported):
        run(otel, "US")
    assert no_guard_events(otel)
    assert [record.event_name for record in logs.records()] == [
        sc.GUARDRAIL_EVENT,
        sc.EVALUATION_EVENT,
    ]
    otel.close()
