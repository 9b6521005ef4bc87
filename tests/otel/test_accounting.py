"""The accounting invariant on the real SDK: every run a boundary matches ends in exactly one
counted outcome — passed / blocked / flagged / skipped(reason) / error(reason) — never silence."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode
from otel_harness import (
    SALES_ROWS,
    Harness,
    answer,
    guardrail_events,
    sales_config,
    tool_call_turn,
)

from groundplane_otel.errors import ClaimsUnsupported
from groundplane_otel.otel import OutputUnchecked


def outputs(otel: Harness) -> list[tuple[str, Any, int]]:
    """(outcome, skip reason, count) of every groundplane.outputs point."""
    return sorted(
        (labels["groundplane.outcome"], labels.get("groundplane.skip_reason"), value)
        for labels, value in otel.metrics().get("groundplane.outputs", [])
    )


def reasons(span: Any) -> list[str]:
    """The reason of each guardrail event on ``span`` (evaluation events are pinned elsewhere)."""
    return [event.attributes["gen_ai.guardrail.result.reason"] for event in guardrail_events(span)]


def run_agent(otel: Harness, final: dict[str, Any]) -> None:
    with otel.agent():
        otel.tool(SALES_ROWS)
        otel.chat(answer(final))


def only_claim(raised: pytest.ExceptionInfo[ClaimsUnsupported]) -> Any:
    (claim,) = raised.value.report.violations
    return claim


class TestAgentRunsEndCounted:
    def test_agent_span_with_no_llm_span_below_is_error_no_output(self, otel: Harness) -> None:
        """genai-openai-agents alone emits invoke_agent and tool spans, no LLM span: the run
        is an error (no_output), raised in enforce mode, on the agent span."""
        otel.install()
        with pytest.raises(ClaimsUnsupported) as raised, otel.agent():
            otel.tool(SALES_ROWS)
        assert only_claim(raised).code == "no_output"
        (agent,) = otel.spans("invoke_agent analyst")
        assert (agent.attributes["groundplane.outcome"], reasons(agent)) == ("error", ["no_output"])
        assert agent.status.status_code is StatusCode.ERROR
        assert outputs(otel) == [("error", None, 1)]

    def test_observe_counts_no_output_without_raising(self, otel: Harness) -> None:
        """In observe mode the same run is counted as an error and nothing is raised."""
        otel.install(sales_config(mode="observe"))
        with otel.agent():
            otel.tool(SALES_ROWS)
        assert outputs(otel) == [("error", None, 1)]

    def test_a_failed_run_is_skipped_with_its_reason(self, otel: Harness) -> None:
        """A run that itself failed is skipped (span_error): the app already has its error."""
        otel.install()
        with pytest.raises(RuntimeError, match="model down"), otel.agent():
            raise RuntimeError("model down")
        assert outputs(otel) == [("skipped", "span_error", 1)]

    def test_other_agents_count_nothing(self, otel: Harness) -> None:
        """An agent span no boundary matches is not a run: nothing is counted."""
        otel.install()
        with otel.agent("writer"):
            otel.tool(SALES_ROWS)
        assert outputs(otel) == []

    def test_a_nested_matched_agent_defers_to_the_outer_run(self, otel: Harness) -> None:
        """A sub-agent matching through its parent's name is part of the parent's run: one
        answer, one count, no no_output for the sub-agent."""
        otel.install()
        with otel.agent():
            with otel.tracer.start_as_current_span(
                "invoke_agent helper", attributes={"gen_ai.operation.name": "invoke_agent"}
            ):
                otel.tool(SALES_ROWS)
            otel.chat(answer({"winner": "EU"}))
        assert outputs(otel) == [("passed", None, 1)]


PYDANTIC_AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "analyst"}
PYDANTIC_CHAT = {"gen_ai.operation.name": "chat", "gen_ai.agent.name": "analyst"}
CONTENT_OFF_ANSWER = json.dumps(
    [{"role": "assistant", "parts": [{"type": "text"}], "finish_reason": "stop"}]
)


def pydantic_run(otel: Harness, *turns: str) -> None:
    """pydantic-ai's native spans: the agent name on the agent, chat and tool spans alike."""
    with otel.tracer.start_as_current_span("invoke_agent analyst", attributes=PYDANTIC_AGENT):
        for index, turn in enumerate(turns):
            if index:
                otel.tool(SALES_ROWS, **{"gen_ai.agent.name": "analyst"})
            with otel.tracer.start_as_current_span("chat m", attributes=PYDANTIC_CHAT) as chat:
                chat.set_attribute("gen_ai.output.messages", turn)


class TestPydanticAiShapes:
    def test_content_off_answer_is_unreadable_and_counted_once(self, otel: Harness) -> None:
        """pydantic-ai's content-off shape (agent name on chat spans too, a text part without
        content) fails closed as output_unreadable on the chat span, counted once."""
        otel.install()
        with pytest.raises(ClaimsUnsupported) as raised:
            pydantic_run(otel, tool_call_turn(), CONTENT_OFF_ANSWER)
        assert only_claim(raised).code == "output_unreadable"
        final = otel.spans("chat m")[-1]
        assert reasons(final) == ["output_unreadable"]
        assert "groundplane.outcome" not in otel.spans("invoke_agent analyst")[0].attributes
        assert outputs(otel) == [("error", None, 1)]

    def test_content_on_wrong_winner_is_blocked_at_the_chat_span(self, otel: Harness) -> None:
        """With content on, the chat span (which carries the agent name) is checked, not
        mistaken for an agent span whose answer is read below."""
        otel.install()
        with pytest.raises(ClaimsUnsupported) as raised:
            pydantic_run(otel, tool_call_turn(), answer({"winner": "US"}))
        assert only_claim(raised).code == "wrong_winner"
        assert outputs(otel) == [("blocked", None, 1)]


OI_AGENT = {"openinference.span.kind": "AGENT"}
OI_LLM = {"openinference.span.kind": "LLM"}


def oi_llm(otel: Harness, content: str | None, finish: str = "stop") -> None:
    attributes = {**OI_LLM, "llm.finish_reason": finish}
    if content is not None:
        attributes["llm.output_messages.0.message.role"] = "assistant"
        attributes["llm.output_messages.0.message.content"] = content
    with otel.tracer.start_as_current_span("response", attributes=attributes):
        pass


class TestRootEndedBeforeItsAnswer:
    def start(self, otel: Harness, winner: str) -> tuple[Any, Any]:
        """An agent span (a local root) and its chat span, both open; the chat span carries
        the answer. The tests end the agent span first: the answer arrives after the run."""
        agent = otel.tracer.start_span("invoke_agent analyst", attributes=PYDANTIC_AGENT)
        with trace.use_span(agent, end_on_exit=False):
            otel.tool(SALES_ROWS)
        chat = otel.tracer.start_span(
            "chat gpt-test",
            context=trace.set_span_in_context(agent),
            attributes={"gen_ai.operation.name": "chat"},
        )
        chat.set_attribute("gen_ai.output.messages", answer({"winner": winner}))
        return agent, chat

    def test_observe_counts_the_run_once_as_no_output(self, otel: Harness) -> None:
        """One run, one outcome: the run is counted no_output as its root ends; the late
        child's answer adds nothing (no fact_missing)."""
        otel.install(sales_config(mode="observe"))
        agent, chat = self.start(otel, "US")
        agent.end()
        chat.end()
        assert outputs(otel) == [("error", None, 1)]
        (late,) = otel.spans("chat gpt-test")
        assert "groundplane.outcome" not in (late.attributes or {})

    def test_enforce_refuses_the_late_answer_with_the_runs_error(self, otel: Harness) -> None:
        """In enforce mode the root's end raises no_output, and the late child's end raises
        that same refusal again (the late answer never passes); counted once."""
        otel.install()
        agent, chat = self.start(otel, "EU")
        with pytest.raises(ClaimsUnsupported) as raised:
            agent.end()
        assert only_claim(raised).code == "no_output"
        with pytest.raises(ClaimsUnsupported) as again:
            chat.end()
        assert again.value is raised.value
        assert outputs(otel) == [("error", None, 1)]
        assert len(otel.spans("chat gpt-test")) == 1


class TestAgentNamedAtItsEnd:
    def run(self, otel: Harness, winner: str, name: str = "analyst") -> None:
        """OpenInference openai-agents: agent.name is set on the AGENT span as it ends."""
        with otel.tracer.start_as_current_span("analyst", attributes=OI_AGENT) as agent:
            oi_llm(otel, None, finish="tool_calls")
            otel.tool(SALES_ROWS)
            oi_llm(otel, json.dumps({"winner": winner}))
            agent.set_attribute("agent.name", name)

    def test_wrong_winner_is_blocked_when_the_agent_span_ends(self, otel: Harness) -> None:
        """The held answer is checked once the name selects the boundary: blocked, counted
        once, the event on the agent span."""
        otel.install()
        with pytest.raises(ClaimsUnsupported) as raised:
            self.run(otel, "US")
        assert only_claim(raised).code == "wrong_winner"
        (agent,) = otel.spans("analyst")
        assert reasons(agent) == ["wrong_winner"]
        assert outputs(otel) == [("blocked", None, 1)]

    def test_right_winner_passes_once(self, otel: Harness) -> None:
        """The right answer passes; the tool-call turn is not counted."""
        otel.install()
        self.run(otel, "EU")
        assert outputs(otel) == [("passed", None, 1)]

    def test_the_same_answer_from_two_model_calls_is_two_outcomes(self, otel: Harness) -> None:
        """Two model calls answering the same wrong winner under one late-named agent span are
        two answers: two held answers, two outcomes."""
        otel.install(sales_config(mode="observe"))
        with otel.tracer.start_as_current_span("analyst", attributes=OI_AGENT) as agent:
            otel.tool(SALES_ROWS)
            oi_llm(otel, json.dumps({"winner": "US"}))
            oi_llm(otel, json.dumps({"winner": "US"}))
            agent.set_attribute("agent.name", "analyst")
        assert outputs(otel) == [("flagged", None, 2)]
        (agent_span,) = otel.spans("analyst")
        assert reasons(agent_span) == ["wrong_winner", "wrong_winner"]

    def test_one_model_call_on_two_nested_spans_is_one_outcome(self, otel: Harness) -> None:
        """Two instrumentations' spans of one model call (a chat span around OpenInference's
        LLM span), both held with the same answer, are one answer: one outcome."""
        otel.install(sales_config(mode="observe"))
        with otel.tracer.start_as_current_span("analyst", attributes=OI_AGENT) as agent:
            otel.tool(SALES_ROWS)
            with otel.tracer.start_as_current_span(
                "chat gpt-test", attributes={"gen_ai.operation.name": "chat"}
            ) as chat:
                oi_llm(otel, json.dumps({"winner": "US"}))
                chat.set_attribute("gen_ai.output.messages", answer({"winner": "US"}))
            agent.set_attribute("agent.name", "analyst")
        assert outputs(otel) == [("flagged", None, 1)]

    def test_another_agent_name_counts_nothing(self, otel: Harness) -> None:
        """Held answers of an agent no boundary selects are dropped, uncounted."""
        otel.install()
        self.run(otel, "US", name="writer")
        assert outputs(otel) == []


class TestReaderFailuresFailClosed:
    def test_a_reader_crash_is_an_unreadable_output(
        self, otel: Harness, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """Reading the output runs inside the fail-closed path: a reader bug is counted as an
        unreadable output and refused, never a pass."""
        from groundplane_otel.otel._engine import accounting as _accounting

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise TypeError("unhashable type: 'list'")

        monkeypatch.setattr(_accounting, "read_output", broken)
        guard = otel.install()
        guard.processor.raise_internal_errors = False
        with pytest.raises(ClaimsUnsupported) as raised:
            run_agent(otel, {"winner": "EU"})
        claim = only_claim(raised)
        assert isinstance(claim, OutputUnchecked)
        assert claim.code == "output_unreadable"
        assert "the output reader failed: TypeError" in str(claim.reason)
        assert outputs(otel) == [("error", None, 1)]

    def test_a_reader_crash_reraises_under_the_debugging_switch(
        self, otel: Harness, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With raise_internal_errors (GROUNDPLANE_OTEL_RAISE_INTERNAL_ERRORS=1) a reader bug
        surfaces as itself, after the span was exported, like a bug in the checks."""
        from groundplane_otel.otel._engine import accounting as _accounting

        def broken(*args: Any, **kwargs: Any) -> Any:
            raise TypeError("unhashable type: 'list'")

        monkeypatch.setattr(_accounting, "read_output", broken)
        guard = otel.install()
        assert guard.processor.raise_internal_errors
        with pytest.raises(TypeError, match=r"^unhashable type: 'list'$"):
            run_agent(otel, {"winner": "EU"})
        assert guard.processor.internal_errors == 2  # the chat span's read, the agent span's
        assert len(otel.spans("chat gpt-test")) == 1


def test_failed_status_set_by_the_app_on_an_unanswered_run_is_skipped(otel: Harness) -> None:
    """An agent span the app marked ERROR without raising is a failed run: skipped."""
    otel.install()
    with otel.agent() as agent:
        agent.set_status(Status(StatusCode.ERROR, "gave up"))
    assert outputs(otel) == [("skipped", "span_error", 1)]
