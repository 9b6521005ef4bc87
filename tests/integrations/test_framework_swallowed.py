"""A refusal the framework swallowed is counted and named (``groundplane.outputs.swallowed``, one
warning per boundary naming the framework's own mechanism): LangChain's callback manager and the
OpenAI Agents SDK's trace processors catch what a span end raises. A refusal that reaches the
application, an ``enforce()`` scope, and an adapter's verdict are not counted."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from typing import Any

import pytest
from fake_openai import FakeOpenAI, answer_turn, tool_call_turn
from framework_kit import AGENT, BOUNDARY, RIGHT, WRONG, config, outputs, warehouse_query
from integration_harness import Otel

from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.otel import MatchSpec, enforce

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


def swallowed(otel: Otel) -> list[tuple[dict[str, Any], Any]]:
    return otel.metrics().get("groundplane.outputs.swallowed", [])


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "groundplane_otel.guard" and "never reached" in r.getMessage()
    ]


@pytest.fixture
def langchain_app(otel: Otel, monkeypatch: pytest.MonkeyPatch) -> Any:
    """create_agent under genai-langchain with content on and NO adapter: the span path checks
    the final chat span, and LangChain's callback manager catches what its end raises."""
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from opentelemetry.instrumentation.genai.langchain import LangChainInstrumentor

    monkeypatch.setenv(CONTENT_ENV, "SPAN_ONLY")
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=otel.tracer_provider)

    @tool("warehouse_query")
    def warehouse_query_tool(window: str) -> dict[str, float]:
        """CTR per campaign."""
        return warehouse_query(window)

    def run(answer: dict[str, Any]) -> str:
        script = [tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(answer)]
        with FakeOpenAI(script) as api:
            model = ChatOpenAI(
                model="gpt-fake-1", base_url=api.base_url, api_key="test", max_retries=0
            )
            agent = create_agent(model, tools=[warehouse_query_tool], name=AGENT)
            final = agent.invoke({"messages": [{"role": "user", "content": "Which won?"}]})
            return str(final["messages"][-1].content)

    yield run
    instrumentor.uninstrument()


def test_langchain_callbacks_swallow_the_block_and_it_is_counted(
    otel: Otel, langchain_app: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """The wrong answer reaches the app although outputs says blocked: swallowed counts it
    (framework langchain) and one warning names GroundplaneMiddleware."""
    otel.install(config())
    assert WRONG["winner"] in langchain_app(WRONG)
    assert outputs(otel) == [("blocked", 1)]
    assert swallowed(otel) == [
        (
            {
                "groundplane.boundary": BOUNDARY,
                "groundplane.mode": "enforce",
                "groundplane.framework": "langchain",
            },
            1,
        )
    ]
    (warning,) = warnings_of(caplog)
    assert "groundplane_otel.adapters.langchain.GroundplaneMiddleware" in warning


def test_one_warning_per_boundary(
    otel: Otel, langchain_app: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Two swallowed blocks: counted twice, warned once."""
    otel.install(config())
    langchain_app(WRONG)
    langchain_app(WRONG)
    assert [value for _, value in swallowed(otel)] == [2]
    assert len(warnings_of(caplog)) == 1


def test_a_passed_answer_is_not_counted(otel: Otel, langchain_app: Any) -> None:
    """Nothing blocked, nothing swallowed."""
    otel.install(config())
    langchain_app(RIGHT)
    assert outputs(otel) == [("passed", 1)]
    assert swallowed(otel) == []


def test_a_span_marked_handled_is_not_counted(otel: Otel, langchain_app: Any) -> None:
    """``Guard.mark_handled`` on the chat span (what an adapter calls when its framework
    delivers the verdict): the block is counted once in outputs, never as swallowed."""
    from opentelemetry.sdk.trace import SpanProcessor

    guard = otel.install(config())

    class MarkChats(SpanProcessor):
        def on_start(self, span: Any, parent_context: Any = None) -> None:
            if span.name.startswith("chat"):
                guard.mark_handled(span)

    otel.tracer_provider.add_span_processor(MarkChats())
    assert WRONG["winner"] in langchain_app(WRONG)
    assert outputs(otel) == [("blocked", 1)]
    assert swallowed(otel) == []


def test_an_enforce_scope_is_not_counted(otel: Otel, langchain_app: Any) -> None:
    """Inside enforce() the scope raises on exit: the app sees the refusal, nothing counted."""
    otel.install(config())
    with pytest.raises(UnsupportedClaim), enforce():
        langchain_app(WRONG)
    assert swallowed(otel) == []


def test_a_refusal_that_propagates_is_not_counted(otel: Otel) -> None:
    """A blocked span under an app span that the exception leaves through: not swallowed."""
    otel.install(config())
    from groundplane_otel.otel import submit_output, tool

    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT}

    def app() -> None:
        with otel.tracer.start_as_current_span(f"invoke_agent {AGENT}", attributes=attributes):
            tool("warehouse_query")(warehouse_query)(window="7d")
            with otel.tracer.start_as_current_span("chat gpt-fake-1") as span:
                submit_output(WRONG, span)

    with pytest.raises(UnsupportedClaim):
        app()
    assert outputs(otel) == [("blocked", 1)]
    assert swallowed(otel) == []


def test_a_refusal_the_app_catches_is_not_counted(otel: Otel) -> None:
    """The app catches UnsupportedClaim inside its own agent span (which then ends normally):
    it got the refusal, so nothing is counted as swallowed."""
    otel.install(config())
    from groundplane_otel.otel import submit_output, tool

    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT}
    caught = []
    with otel.tracer.start_as_current_span(f"invoke_agent {AGENT}", attributes=attributes):
        tool("warehouse_query")(warehouse_query)(window="7d")
        try:
            with otel.tracer.start_as_current_span("chat gpt-fake-1") as span:
                submit_output(WRONG, span)
        except UnsupportedClaim as exc:
            caught.append(exc)
    assert len(caught) == 1
    assert outputs(otel) == [("blocked", 1)]
    assert swallowed(otel) == []


def test_openai_agents_trace_processors_swallow_the_block_and_it_is_counted(
    otel: Otel, caplog: pytest.LogCaptureFixture
) -> None:
    """OpenInference's openai-agents LLM spans end in the SDK's trace processor, which catches
    what the guard raises: the run returns the wrong answer; counted (framework openai_agents),
    the warning names the output guardrail adapter."""
    import openai
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
    from agents.tracing import set_trace_processors
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    base = config()
    spec = dataclasses.replace(base.boundaries[0], match=MatchSpec(span_name="generation"))
    otel.install(dataclasses.replace(base, boundaries=(spec,)))
    set_trace_processors([])
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=otel.tracer_provider)

    @function_tool
    def warehouse_query_tool(window: str) -> dict[str, float]:
        """CTR per campaign."""
        return warehouse_query(window)

    warehouse_query_tool.name = "warehouse_query"

    async def main() -> Any:
        script = [tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(WRONG)]
        with FakeOpenAI(script) as api:
            client = openai.AsyncOpenAI(base_url=api.base_url, api_key="test", max_retries=0)
            model = OpenAIChatCompletionsModel("gpt-fake-1", client)
            agent = Agent(name=AGENT, model=model, tools=[warehouse_query_tool])
            return (await Runner.run(agent, "Which campaign won?")).final_output

    try:
        caplog.set_level(logging.WARNING)
        assert WRONG["winner"] in asyncio.run(main())
    finally:
        instrumentor.uninstrument()
        set_trace_processors([])
    assert outputs(otel) == [("blocked", 1)]
    assert [(a["groundplane.framework"], v) for a, v in swallowed(otel)] == [("openai_agents", 1)]
    (warning,) = warnings_of(caplog)
    assert "groundplane_otel.adapters.openai_agents.guard(agent)" in warning
