"""At the SDK's attribute limit the guard never evicts the span's own attributes: the summary
attributes are left off (counted in ``groundplane.summary.left_off``), the verdict stays in the
``gen_ai.guardrail.result`` event and the metrics."""

from __future__ import annotations

from typing import Any

import pytest

from tests.otel.otel_harness import SALES_ROWS, Harness, answer, guardrail_events, sales_config

LIMIT = 128  # the SDK's default span attribute limit
SUMMARY = (
    "groundplane.boundary",
    "groundplane.boundary_matched",  # the guard matched the boundary: the span named none
    "groundplane.facts",
    "groundplane.mode",
    "groundplane.outcome",
    "groundplane.violations",
)


def _own(count: int) -> dict[str, Any]:
    """``count`` attributes of the application's own on the chat span (with the output)."""
    filler = {f"llm.input_messages.{i}.message.content": f"m{i}" for i in range(count - 3)}
    return {"gen_ai.request.model": "gpt-test", **filler}


def _checked(own: int) -> tuple[Harness, Any]:
    """A wrong winner checked on a chat span carrying ``own`` attributes of its own."""
    harness = Harness()
    harness.install(sales_config(mode="observe"))
    with harness.agent():
        harness.tool(SALES_ROWS)
        harness.chat(answer({"winner": "US"}), **_own(own))
    (chat,) = harness.spans("chat gpt-test")
    return harness, chat


@pytest.mark.parametrize("own", [LIMIT, LIMIT - len(SUMMARY) + 1])
def test_a_span_without_room_keeps_its_own_attributes_and_the_verdict_event(own: int) -> None:
    """With fewer free slots than summary attributes (none, or five), every attribute the
    application set is exported, none dropped, no ``groundplane.*`` one; the unsupported winner
    is in the guardrail event and the metrics, and the six left off are counted."""
    harness, chat = _checked(own)
    expected = {"gen_ai.operation.name": "chat", **_own(own)}
    assert len(chat.attributes) == own
    assert {key: chat.attributes[key] for key in expected} == expected
    assert chat.attributes["gen_ai.output.messages"] == answer({"winner": "US"})
    assert chat.dropped_attributes == 0
    assert not any(key.startswith("groundplane.") for key in chat.attributes)
    (event,) = guardrail_events(chat)
    assert event.attributes["gen_ai.guardrail.result.value"] == "unsupported"
    assert event.attributes["gen_ai.guardrail.result.reason"] == "wrong_winner"
    metrics = harness.metrics()
    assert metrics["groundplane.summary.left_off"] == [({"groundplane.boundary": "answer"}, 6)]
    assert [value for labels, value in metrics["groundplane.outputs"]] == [1]
    assert metrics["groundplane.outputs"][0][0]["groundplane.outcome"] == "flagged"
    harness.close()


def test_a_span_with_room_for_the_summary_gets_it() -> None:
    """Exactly six free slots: the summary is written, nothing dropped, nothing left off."""
    harness, chat = _checked(LIMIT - len(SUMMARY))
    assert len(chat.attributes) == LIMIT
    assert chat.dropped_attributes == 0
    assert sorted(key for key in chat.attributes if key.startswith("groundplane.")) == list(SUMMARY)
    assert chat.attributes["groundplane.outcome"] == "flagged"
    assert "groundplane.summary.left_off" not in harness.metrics()
    harness.close()
