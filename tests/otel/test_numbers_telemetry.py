"""numbers_recorded under the guard, on the real SDK: the reason code on the guardrail event,
fixed-vocabulary metric labels, and receipts on the event only with content capture on."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import StatusCode
from otel_harness import (
    AGENT,
    EVALUATION,
    Harness,
    answer,
    evaluations,
    guardrail_events,
    tool_call_turn,
)

from groundplane_otel.checks.numbers_recorded import UnrecordedNumbers, numbers_recorded
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec

ROWS = {"rows": [{"id": "A", "total": 10000, "days": 30}, {"id": "B", "total": 2500, "days": 45}]}
WRONG = "Invoice A totals 1,000 dollars, due in 30 days."
RIGHT = "Invoice A totals 10,000 dollars, due in 30 days."


def config(**overrides: Any) -> GuardConfig:
    boundary = BoundarySpec(
        "invoice_summary",
        ("invoice",),
        (numbers_recorded("invoice", "summary"),),
        match=MatchSpec(agent_name="analyst"),
        report_mode="first",
    )
    fact = FactSpec("invoice", "erp.invoices", kind="table", key="id", path="rows")
    return GuardConfig(facts=(fact,), boundaries=(boundary,), **overrides)


def run(otel: Harness, summary: str) -> None:
    with otel.agent():
        otel.chat(tool_call_turn("erp.invoices"))
        otel.tool(ROWS, name="erp.invoices")
        otel.chat(answer({"summary": summary}))


def guarded(otel: Harness) -> Any:
    (span,) = [s for s in otel.spans("chat gpt-test") if "groundplane.outcome" in s.attributes]
    return span


def test_a_right_number_passes_and_counts_one_supported_claim(otel: Harness) -> None:
    """Every number recorded: passed, no guardrail event, one supported evaluation and one
    supported claim for the family."""
    otel.install(config())
    run(otel, RIGHT)
    span = guarded(otel)
    assert (span.attributes["groundplane.outcome"], guardrail_events(span)) == ("passed", [])
    assert evaluations(span) == [("numbers_recorded", "supported")]
    assert len(span.events) == 1
    assert otel.metrics()["groundplane.claims"] == [
        (
            {
                "groundplane.check": "numbers_recorded",
                "groundplane.verdict": "supported",
                "groundplane.boundary": "invoice_summary",
                "groundplane.mode": "enforce",
                **AGENT,
            },
            1,
        )
    ]


def test_a_wrong_number_is_blocked_with_its_reason_code_and_no_content(otel: Harness) -> None:
    """Content capture off: the event has the reason code and the field, never the text, the
    number or the receipt; metric labels are the fixed vocabulary only."""
    otel.install(config())
    with pytest.raises(UnrecordedNumbers) as raised:
        run(otel, WRONG)
    assert raised.value.receipts[0].text == "1,000"  # the application still gets everything
    span = guarded(otel)
    assert span.status.status_code is StatusCode.ERROR
    (event,) = guardrail_events(span)
    (evaluation,) = [e for e in span.events if e.name == EVALUATION]
    assert dict(evaluation.attributes) == {  # no explanation: content capture is off
        "gen_ai.evaluation.name": "numbers_recorded",
        "gen_ai.evaluation.score.label": "unsupported",
    }
    assert dict(event.attributes) == {
        "gen_ai.guardrail.component.name": "groundplane",
        "gen_ai.guardrail.policy.id": "invoice_summary",
        "gen_ai.guardrail.result.type": "verdict",
        "gen_ai.guardrail.result.value": "unsupported",
        "gen_ai.guardrail.result.reason": "number_scale_mismatch",
        "gen_ai.guardrail.source": "model_response",
        "gen_ai.guardrail.policy.rule.id": "numbers_recorded(fact='invoice', field='summary')",
        "groundplane.check": "numbers_recorded",
        "groundplane.field": "summary",
        "groundplane.fact": "invoice",
        "groundplane.fact.tool": "erp.invoices",
        "groundplane.fact.trace_id": event.attributes["groundplane.fact.trace_id"],
        "groundplane.fact.span_id": event.attributes["groundplane.fact.span_id"],
    }
    written = json.dumps(  # what the guard writes: events, statuses, groundplane.* attributes
        [
            (
                [(e.name, dict(e.attributes)) for e in s.events],
                s.status.description,
                {k: v for k, v in s.attributes.items() if k.startswith("groundplane.")},
            )
            for s in otel.spans()
        ],
        default=str,
    )
    assert "1,000" not in written
    assert "10000" not in written
    for points in otel.metrics().values():
        for labels, _ in points:
            assert all("1,000" not in str(v) and "10000" not in str(v) for v in labels.values())


def test_with_content_capture_the_event_carries_the_receipts(otel: Harness) -> None:
    """Content capture on: claimed = the receipts (text, span, nearest, fact, row, column),
    supported = the nearest values, and the human message."""
    otel.install(config(capture_content=True))
    with pytest.raises(UnrecordedNumbers):
        run(otel, WRONG)
    span = guarded(otel)
    (event,) = guardrail_events(span)
    (evaluation,) = [e for e in span.events if e.name == EVALUATION]
    assert (
        evaluation.attributes["gen_ai.evaluation.explanation"]
        == (event.attributes["groundplane.message"])
    )
    assert json.loads(str(event.attributes["groundplane.claimed"])) == [
        {
            "text": "1,000",
            "span": [17, 22],
            "field": "summary",
            "value": "1000",
            "code": "number_scale_mismatch",
            "nearest": 10000,
            "fact": "invoice",
            "row": "A",
            "column": "total",
            "echo": False,
        }
    ]
    assert json.loads(str(event.attributes["groundplane.supported"])) == [10000]
    assert str(event.attributes["groundplane.message"]).startswith(
        "unsupported claim in field 'summary': 1 number is not recorded | '1,000' at 17..22"
    )


def test_observe_mode_flags_the_wrong_number(otel: Harness) -> None:
    """Observe: the same event, outcome flagged, no exception."""
    otel.install(config(mode="observe"))
    run(otel, WRONG)
    span = guarded(otel)
    assert span.attributes["groundplane.outcome"] == "flagged"
    assert [e.attributes["gen_ai.guardrail.result.reason"] for e in guardrail_events(span)] == [
        "number_scale_mismatch"
    ]
    assert evaluations(span) == [("numbers_recorded", "unsupported")]


def test_the_question_recorded_in_code_makes_an_echo(otel: Harness) -> None:
    """The app records the user's question with ``Guard.record_fact``: a number the answer took
    from it (and no fact records) is reported as ``number_echo_only`` on the event."""
    boundary = BoundarySpec(
        "invoice_summary",
        ("invoice", "question"),
        (numbers_recorded("invoice", "summary", question_fact="question"),),
        match=MatchSpec(agent_name="analyst"),
        report_mode="first",
    )
    facts = (
        FactSpec("invoice", "erp.invoices", kind="table", key="id", path="rows"),
        FactSpec("question", "user.question"),
    )
    guard = otel.install(GuardConfig(facts=facts, boundaries=(boundary,)))

    def run_with_question() -> None:
        with otel.agent() as agent:
            guard.record_fact(
                agent, tool="user.question", fact="question", value="Is A 12,500?", arguments={}
            )
            otel.chat(tool_call_turn("erp.invoices"))
            otel.tool(ROWS, name="erp.invoices")
            otel.chat(answer({"summary": "Yes, A totals 12,500."}))

    with pytest.raises(UnrecordedNumbers) as raised:
        run_with_question()
    assert [(r.text, r.code, r.echo) for r in raised.value.receipts] == [
        ("12,500", "number_echo_only", True)
    ]
    span = guarded(otel)
    (event,) = guardrail_events(span)
    assert event.attributes["gen_ai.guardrail.result.reason"] == "number_echo_only"
    assert evaluations(span) == [("numbers_recorded", "unsupported")]
