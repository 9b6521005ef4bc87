"""Rank claims and dates_recorded under the guard, on the real SDK: a wrong rank or an invented
due date is blocked with its reason code on the guardrail event, and no content leaks with
capture off."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import StatusCode
from otel_harness import Harness, answer, evaluations, guardrail_events, tool_call_turn

from groundplane_otel.checks.dates_recorded import UnrecordedDates, dates_recorded
from groundplane_otel.checks.numbers_recorded import UnrecordedNumbers, numbers_recorded
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec

ROWS = {"rows": [{"id": "T-1", "due": "2027-12-31", "revenue": 120}]}


def config(check: Any, kind: str) -> GuardConfig:
    boundary = BoundarySpec(
        "reply", ("facts",), (check,), match=MatchSpec(agent_name="analyst"), report_mode="first"
    )
    if kind == "ranking":
        fact = FactSpec(
            "facts", "warehouse.rank", kind="ranking", key="name", score="revenue", path="rows"
        )
    else:
        fact = FactSpec("facts", "crm.tickets", kind="table", key="id", path="rows")
    return GuardConfig(facts=(fact,), boundaries=(boundary,))


def run(otel: Harness, tool: str, result: Any, reply: str) -> None:
    with otel.agent():
        otel.chat(tool_call_turn(tool))
        otel.tool(result, name=tool)
        otel.chat(answer({"reply": reply}))


def guarded(otel: Harness) -> Any:
    (span,) = [s for s in otel.spans("chat gpt-test") if "groundplane.outcome" in s.attributes]
    return span


def test_an_invented_due_date_is_blocked_with_date_unrecorded(otel: Harness) -> None:
    """dates_recorded in a boundary: "Dec 30, 2027" against a recorded 2027-12-31 raises in
    enforce mode, the event says date_unrecorded, and the date is nowhere in telemetry."""
    otel.install(config(dates_recorded("facts", "reply"), "table"))
    with pytest.raises(UnrecordedDates) as raised:
        run(otel, "crm.tickets", ROWS, "Ticket T-1 is due on Dec 30, 2027.")
    assert raised.value.receipts[0].nearest == "2027-12-31"
    span = guarded(otel)
    assert span.status.status_code is StatusCode.ERROR
    (event,) = guardrail_events(span)
    assert event.attributes["gen_ai.guardrail.result.reason"] == "date_unrecorded"
    assert event.attributes["groundplane.check"] == "dates_recorded"
    written = json.dumps([[dict(e.attributes) for e in s.events] for s in otel.spans()])
    assert "Dec 30" not in written
    assert "2027-12-30" not in written


def test_the_recorded_date_passes_in_another_format(otel: Harness) -> None:
    """ "December 31st" is the recorded 2027-12-31: passed, one supported evaluation."""
    otel.install(config(dates_recorded("facts", "reply"), "table"))
    run(otel, "crm.tickets", ROWS, "Ticket T-1 is due December 31st.")
    span = guarded(otel)
    assert span.attributes["groundplane.outcome"] == "passed"
    assert evaluations(span) == [("dates_recorded", "supported")]


def test_a_wrong_rank_is_blocked_with_rank_mismatch(otel: Harness) -> None:
    """numbers_recorded over a captured Ranking: "North was first" for a second North is
    blocked with rank_mismatch."""
    otel.install(config(numbers_recorded("facts", "reply"), "ranking"))
    ranking = {"rows": [{"name": "South", "revenue": 150}, {"name": "North", "revenue": 120}]}
    with pytest.raises(UnrecordedNumbers) as raised:
        run(otel, "warehouse.rank", ranking, "North was first with 120.")
    assert raised.value.receipts[0].code == "rank_mismatch"
    (event,) = guardrail_events(guarded(otel))
    assert event.attributes["gen_ai.guardrail.result.reason"] == "rank_mismatch"
