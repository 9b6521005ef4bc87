"""Issue 40's prose classes under the guard, on the real SDK: a rank read from a captured Table
and a quarter the tool was not asked for are blocked with their reason codes on the guardrail
event; the right ones pass; nothing claimed leaks with content capture off."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import StatusCode
from otel_harness import Harness, answer, evaluations, guardrail_events, tool_call_turn

from groundplane_otel.checks.dates_recorded import UnrecordedDates, dates_recorded
from groundplane_otel.checks.numbers_recorded import UnrecordedNumbers, numbers_recorded
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec

STORES = {"rows": [{"store": "Harbour", "revenue": 1200}, {"store": "Elm Street", "revenue": 900},
                   {"store": "Oak Lane", "revenue": 500}]}  # fmt: skip


def config(check: Any) -> GuardConfig:
    boundary = BoundarySpec(
        "reply", ("stores",), (check,), match=MatchSpec(agent_name="analyst"), report_mode="first"
    )
    fact = FactSpec("stores", "bi.stores", kind="table", key="store", path="rows")
    return GuardConfig(facts=(fact,), boundaries=(boundary,))


def run(otel: Harness, reply: str, arguments: dict[str, Any] | None = None) -> None:
    with otel.agent():
        otel.chat(tool_call_turn("bi.stores"))
        otel.tool(
            STORES, name="bi.stores", **{"gen_ai.tool.call.arguments": json.dumps(arguments or {})}
        )
        otel.chat(answer({"reply": reply}))


def guarded(otel: Harness) -> Any:
    (span,) = [s for s in otel.spans("chat gpt-test") if "groundplane.outcome" in s.attributes]
    return span


def test_a_wrong_rank_on_a_table_column_is_blocked(otel: Harness) -> None:
    """ "Oak Lane was second on sales" (alias of revenue; Oak Lane is third) is blocked with
    rank_mismatch, the receipt naming the column; the claim is not in telemetry."""
    otel.install(config(numbers_recorded("stores", "reply", aliases={"revenue": ["sales"]})))
    with pytest.raises(UnrecordedNumbers) as raised:
        run(otel, "Oak Lane was second on sales.")
    (receipt,) = raised.value.receipts
    assert (receipt.code, receipt.column, receipt.row) == ("rank_mismatch", "revenue", "Oak Lane")
    span = guarded(otel)
    assert span.status.status_code is StatusCode.ERROR
    (event,) = guardrail_events(span)
    assert event.attributes["gen_ai.guardrail.result.reason"] == "rank_mismatch"
    written = json.dumps([[dict(e.attributes) for e in s.events] for s in otel.spans()])
    assert "second on sales" not in written


def test_the_right_rank_on_a_table_column_passes(otel: Harness) -> None:
    """ "Elm Street was second on revenue" passes: one supported evaluation."""
    otel.install(config(numbers_recorded("stores", "reply")))
    run(otel, "Elm Street was second on revenue, behind Harbour.")
    span = guarded(otel)
    assert span.attributes["groundplane.outcome"] == "passed"
    assert evaluations(span) == [("numbers_recorded", "supported")]


def test_a_quarter_the_tool_was_not_asked_for_is_blocked(otel: Harness) -> None:
    """The tool was called with quarter="Q3": "Q2 revenue" is period_unrecorded, "Q3" passes."""
    otel.install(config(dates_recorded("stores", "reply")))
    with pytest.raises(UnrecordedDates) as raised:
        run(otel, "Harbour led Q2 revenue.", {"quarter": "Q3", "year": 2026})
    assert raised.value.receipts[0].nearest == "Q3"
    (event,) = guardrail_events(guarded(otel))
    assert event.attributes["gen_ai.guardrail.result.reason"] == "period_unrecorded"


def test_the_quarter_the_tool_was_asked_for_passes(otel: Harness) -> None:
    """ "Q3 2026" is the quarter and year the tool's arguments name: passed."""
    otel.install(config(dates_recorded("stores", "reply")))
    run(otel, "Harbour led Q3 2026 revenue.", {"quarter": "Q3", "year": 2026})
    assert guarded(otel).attributes["groundplane.outcome"] == "passed"
