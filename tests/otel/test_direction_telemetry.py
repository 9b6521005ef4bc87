"""The direction and unit rules under the guard, on the real SDK: their reason codes on the
guardrail event, and the receipt's ``expected`` only with content capture on."""

from __future__ import annotations

import json
from typing import Any

import pytest
from otel_harness import Harness, answer, guardrail_events, tool_call_turn

from groundplane_otel.checks.numbers_recorded import UnrecordedNumbers, numbers_recorded
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec

ROWS = {"rows": [{"region": "North", "qoq_change": -3.2, "revenue": 1230000}]}


def config(**overrides: Any) -> GuardConfig:
    check = numbers_recorded("kpi", "summary", units={"revenue": "USD"})
    boundary = BoundarySpec(
        "kpi_summary", ("kpi",), (check,), match=MatchSpec(agent_name="analyst"),
        report_mode="first",
    )  # fmt: skip
    fact = FactSpec("kpi", "bi.query", kind="table", key="region", path="rows")
    return GuardConfig(facts=(fact,), boundaries=(boundary,), **overrides)


def run(otel: Harness, summary: str) -> None:
    with otel.agent():
        otel.chat(tool_call_turn("bi.query"))
        otel.tool(ROWS, name="bi.query")
        otel.chat(answer({"summary": summary}))


def reasons(otel: Harness) -> list[object]:
    (span,) = [s for s in otel.spans("chat gpt-test") if "groundplane.outcome" in s.attributes]
    return [e.attributes["gen_ai.guardrail.result.reason"] for e in guardrail_events(span)]


@pytest.mark.parametrize(
    ("summary", "code"),
    [
        ("North revenue rose 3.2% to $1.23M.", "number_direction_false"),
        ("North revenue fell 3.2% to \u20ac1.23M.", "number_unit_mismatch"),
    ],
)
def test_the_reason_code_reaches_the_event(otel: Harness, summary: str, code: str) -> None:
    """A false direction or another currency is blocked with its own reason code."""
    otel.install(config())
    with pytest.raises(UnrecordedNumbers) as raised:
        run(otel, summary)
    assert raised.value.code == code
    assert reasons(otel) == [code]


def test_a_right_direction_and_currency_pass(otel: Harness) -> None:
    """'fell 3.2% to $1.23M' against a recorded -3.2 and a USD revenue passes: no event."""
    otel.install(config())
    run(otel, "North revenue fell 3.2% to $1.23M.")
    assert reasons(otel) == []


def test_expected_is_on_the_event_with_content_capture(otel: Harness) -> None:
    """Content capture on: the claimed receipt carries ``expected``, the column and its sign."""
    otel.install(config(capture_content=True))
    with pytest.raises(UnrecordedNumbers):
        run(otel, "North revenue rose 3.2% to $1.23M.")
    (span,) = [s for s in otel.spans("chat gpt-test") if "groundplane.outcome" in s.attributes]
    (event,) = guardrail_events(span)
    (receipt,) = json.loads(str(event.attributes["groundplane.claimed"]))
    assert receipt["expected"] == "'rose' says a rise; the recorded change is -3.2, a fall"
    assert (receipt["code"], receipt["column"], receipt["nearest"]) == (
        "number_direction_false",
        "qoq_change",
        -3.2,
    )
