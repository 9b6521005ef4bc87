"""The entry points framework adapters use: ``Guard.check_output`` (an answer handed over in
process) and ``Guard.delegate`` (the adapter checks, the span path keeps the run accounting)."""

from __future__ import annotations

from typing import Any

import pytest
from otel_harness import SALES_ROWS, Harness, answer, evaluations, guardrail_events

from groundplane_otel.errors import ClaimsUnsupported
from groundplane_otel.otel import Evaluation, Guard


def outputs(otel: Harness) -> list[tuple[str, int]]:
    return sorted(
        (labels["groundplane.outcome"], value)
        for labels, value in otel.metrics().get("groundplane.outputs", [])
    )


def adapter_run(otel: Harness, guard: Guard, handed: Any, chat: Any = None) -> Evaluation:
    """An agent run whose framework hook hands the final answer to the guard."""
    with otel.agent():
        otel.tool(SALES_ROWS)
        if chat is not None:
            otel.chat(chat)
        return guard.check_output(handed, boundary="answer")


def test_a_handed_over_answer_is_checked_and_counted_once(otel: Harness) -> None:
    """A right answer handed over passes; the run is answered (no no_output), counted once."""
    guard = otel.install()
    evaluation = adapter_run(otel, guard, {"winner": "EU"})
    assert (evaluation.outcome, evaluation.error) == ("passed", None)
    (agent,) = otel.spans("invoke_agent analyst")
    assert agent.attributes["groundplane.outcome"] == "passed"
    assert outputs(otel) == [("passed", 1)]


def test_a_wrong_answer_text_returns_the_error_to_raise(otel: Harness) -> None:
    """An answer text is parsed like a span's; the evaluation carries the exception the
    adapter raises its framework's way; nothing is raised by check_output itself."""
    guard = otel.install()
    evaluation = adapter_run(otel, guard, 'Sure: {"winner": "US"}')
    assert evaluation.outcome == "blocked"
    assert isinstance(evaluation.error, ClaimsUnsupported)
    (agent,) = otel.spans("invoke_agent analyst")
    (event,) = guardrail_events(agent)
    assert event.attributes["gen_ai.guardrail.result.reason"] == "wrong_winner"
    assert evaluations(agent) == [("superlative", "unsupported")]
    assert len(agent.events) == 2
    assert outputs(otel) == [("blocked", 1)]


def test_an_answer_the_span_path_checked_is_not_counted_again(otel: Harness) -> None:
    """The chat span carried the same answer and was checked as it ended: the adapter gets
    that evaluation back, and the count stays one."""
    guard = otel.install()
    evaluation = adapter_run(otel, guard, {"winner": "EU"}, chat=answer({"winner": "EU"}))
    assert evaluation.outcome == "passed"
    assert outputs(otel) == [("passed", 1)]


def test_a_delegated_boundary_is_checked_by_the_adapter_only(otel: Harness) -> None:
    """Delegated: the span path ignores the chat span's (wrong) answer; the adapter's answer
    is the one checked and counted."""
    guard = otel.install()
    guard.delegate("answer")
    evaluation = adapter_run(otel, guard, {"winner": "EU"}, chat=answer({"winner": "US"}))
    assert evaluation.outcome == "passed"
    assert "groundplane.outcome" not in otel.spans("chat gpt-test")[0].attributes
    assert outputs(otel) == [("passed", 1)]


def test_a_delegated_run_the_adapter_never_saw_is_no_output(otel: Harness) -> None:
    """Delegated, but no answer was handed over in the run: error/no_output at the agent span
    (fail closed) — an adapter that is not wired in is never silence."""
    guard = otel.install()
    guard.delegate("answer")

    def run() -> None:
        with otel.agent():
            otel.tool(SALES_ROWS)
            otel.chat(answer({"winner": "EU"}))

    with pytest.raises(ClaimsUnsupported) as raised:
        run()
    (claim,) = raised.value.report.violations
    assert claim.code == "no_output"
    assert outputs(otel) == [("error", 1)]


def test_unknown_boundaries_and_outputs_are_developer_errors(otel: Harness) -> None:
    """An unknown boundary is a ValueError naming the configured ones; an output that is
    neither a mapping nor a text is a TypeError."""
    guard = otel.install()
    with pytest.raises(ValueError, match=r"^unknown boundary 'nope' \(configured: answer\)$"):
        guard.delegate("nope")
    with pytest.raises(TypeError, match="^output must be a mapping or an answer text, got int$"):
        guard.check_output(3, boundary="answer")  # type: ignore[arg-type]
