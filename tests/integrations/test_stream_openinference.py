"""Streams gated under OpenInference's instrumentations (the README matrix's OpenInference rows,
"streamed" column): ``guard_stream`` over the real ``openai`` client instrumented by
OpenInference's OpenAI instrumentor, the Agents SDK's ``guarded_model`` traced by OpenInference's
openai-agents instrumentor, LangChain's ``guarded_chat_model`` traced by OpenInference's
LangChain instrumentor, and pydantic-ai's capability with OpenInference's span processor — all
against the loopback fake server streaming real SSE. A wrong second sentence never reaches the
app; a right answer arrives whole; each answer counted once."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest
from fake_openai import FakeOpenAI, Turn, tool_call_turn
from integration_harness import Otel
from stream_policy import AGENT_NAME, revenue_config

from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.otel import guard_stream

AGENT = AGENT_NAME
OI_AGENT = {"openinference.span.kind": "AGENT", "agent.name": AGENT}
ROWS = [{"id": "A", "total": 10000, "rate": 3.9}, {"id": "B", "total": 250, "rate": 1.5}]
FIRST = "Invoice A totals 10,000 dollars."
RIGHT = FIRST + " Its rate was 3.9% last month. Invoice B totals 250 dollars."
WRONG = FIRST + " Its rate was 4.7% last month. Invoice B totals 250 dollars."
CASES = [(WRONG, True), (RIGHT, False)]


def words(text: str) -> tuple[str, ...]:
    parts = text.split(" ")
    return (parts[0], *(" " + part for part in parts[1:]))


def install(otel: Otel) -> None:
    otel.install(revenue_config())


def outcomes(otel: Otel) -> list[str]:
    return [
        attributes["groundplane.outcome"]
        for attributes, value in otel.metrics().get("groundplane.outputs", [])
        for _ in range(int(value))
    ]


def released(otel: Otel) -> list[tuple[str, int]]:
    """(span name, characters released) of each span a stream was counted on."""
    return [
        (span.name, (span.attributes or {})["groundplane.stream.released_chars"])
        for span in otel.spans()
        if "groundplane.stream.released_chars" in (span.attributes or {})
    ]


def invoice_query() -> list[dict[str, Any]]:
    """The invoices."""
    return ROWS


@pytest.mark.parametrize(("answer", "refused"), CASES)
def test_guard_stream_under_openinference_openai(otel: Otel, answer: str, refused: bool) -> None:
    """OpenInference's OpenAI instrumentor: the app receives the first sentence, then the
    refusal; the OpenInference LLM span carries the one outcome."""
    from openinference.instrumentation.openai import OpenAIInstrumentor

    from groundplane_otel.otel import tool

    install(otel)
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=otel.tracer_provider)
    shown: list[str] = []
    codes: list[str] = []
    try:
        with FakeOpenAI([Turn(content=answer, pieces=words(answer))]) as api:
            client = openai.OpenAI(base_url=api.base_url, api_key="test", max_retries=0)
            with otel.tracer.start_as_current_span(AGENT, attributes=OI_AGENT):
                tool("invoice_query")(invoice_query)()
                stream = client.chat.completions.create(
                    model="gpt-fake-1",
                    messages=[{"role": "user", "content": "How are the invoices?"}],
                    stream=True,
                )
                try:
                    for chunk in guard_stream(stream):
                        if chunk.choices and chunk.choices[0].delta.content:
                            shown.append(chunk.choices[0].delta.content)
                except UnsupportedClaim as claim:
                    codes.append(claim.code)
    finally:
        instrumentor.uninstrument()
    assert codes == (["number_unrecorded"] if refused else [])
    assert "".join(shown) == (FIRST if refused else RIGHT)
    assert outcomes(otel) == ["blocked" if refused else "passed"]
    ((name, count),) = released(otel)
    assert (name, count) == ("ChatCompletion", len(FIRST if refused else RIGHT))


@pytest.mark.parametrize(("answer", "refused"), CASES)
def test_agents_sdk_guarded_model_under_openinference(
    otel: Otel, answer: str, refused: bool
) -> None:
    """OpenInference's openai-agents instrumentor: Runner.run_streamed(...).stream_events()
    yields the first sentence's deltas, then the refusal; counted once. The boundary is named
    (``guarded_model(..., boundary=...)``): OpenInference writes the agent's name on its span
    only when the span ends, so no rule can match it while the model streams."""
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
    from agents.tracing import set_trace_processors
    from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

    from groundplane_otel.adapters.openai_agents import guard
    from groundplane_otel.adapters.openai_agents_stream import guarded_model

    install(otel)
    set_trace_processors([])
    instrumentor = OpenAIAgentsInstrumentor()
    instrumentor.instrument(tracer_provider=otel.tracer_provider)
    deltas: list[str] = []
    codes: list[str] = []
    query = function_tool(invoice_query, name_override="invoice_query")

    async def main() -> None:
        script = [tool_call_turn("invoice_query", {}), Turn(content=answer, pieces=words(answer))]
        with FakeOpenAI(script) as api:
            client = openai.AsyncOpenAI(base_url=api.base_url, api_key="test", max_retries=0)
            model = guarded_model(
                OpenAIChatCompletionsModel("gpt-fake-1", client), boundary="revenue_answer"
            )
            agent = guard(Agent(name=AGENT, model=model, tools=[query]))
            result = Runner.run_streamed(agent, "How are the invoices?")
            try:
                async for event in result.stream_events():
                    data = getattr(event, "data", None)
                    if getattr(data, "type", None) == "response.output_text.delta":
                        deltas.append(data.delta)
            except UnsupportedClaim as claim:
                codes.append(claim.code)

    try:
        asyncio.run(main())
    finally:
        instrumentor.uninstrument()
        set_trace_processors([])
    assert codes == (["number_unrecorded"] if refused else [])
    assert "".join(deltas) == (FIRST if refused else RIGHT)
    assert outcomes(otel) == ["blocked" if refused else "passed"]
    assert [count for _, count in released(otel)] == [len(FIRST if refused else RIGHT)]


@pytest.mark.parametrize("boundary", [None, "revenue_answer"])
def test_langchain_guarded_chat_model_under_openinference_is_not_gated(
    otel: Otel, boundary: str | None
) -> None:
    """OpenInference's LangChain instrumentor makes no span current while the model streams,
    so the wrapped model has no span to match a boundary on or count the answer on: without
    ``boundary=`` the stream flows and GroundplaneMiddleware refuses the answer when the
    model call returns (after the app streamed it: counted blocked once); with ``boundary=``
    the model call fails closed before any token (RuntimeError naming the missing span)."""
    from langchain.agents import create_agent
    from langchain_core.tools import tool as langchain_tool
    from langchain_openai import ChatOpenAI
    from openinference.instrumentation.langchain import LangChainInstrumentor

    from groundplane_otel.adapters.langchain import GroundplaneMiddleware
    from groundplane_otel.adapters.langchain_stream import guarded_chat_model

    install(otel)
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=otel.tracer_provider)
    tokens: list[str] = []
    errors: list[str] = []
    script = [tool_call_turn("invoice_query", {}), Turn(content=WRONG, pieces=words(WRONG))]
    try:
        with FakeOpenAI(script) as api:
            chat = ChatOpenAI(
                model="gpt-fake-1", base_url=api.base_url, api_key="test", max_retries=0
            )
            agent = create_agent(
                guarded_chat_model(chat, boundary=boundary),
                tools=[langchain_tool("invoice_query")(invoice_query)],
                middleware=[GroundplaneMiddleware()],
                name=AGENT,
            )
            question = {"messages": [{"role": "user", "content": "How are the invoices?"}]}
            try:
                for message, meta in agent.stream(question, stream_mode="messages"):
                    if meta.get("langgraph_node") == "model" and isinstance(message.content, str):
                        tokens.append(message.content)
            except (UnsupportedClaim, RuntimeError) as error:
                errors.append(f"{type(error).__name__}: {str(error)[:48]}")
    finally:
        instrumentor.uninstrument()
    if boundary is None:
        assert "".join(tokens) == WRONG
        assert errors == ["UnrecordedNumbers: unsupported claim in field '*' (boundary 'revenu"]
        assert outcomes(otel) == ["blocked"]
    else:
        assert "".join(tokens) == ""
        assert errors == ["RuntimeError: guard_stream() needs a recording span to count t"]


@pytest.mark.parametrize("order", ["before", "after"])
@pytest.mark.parametrize(("answer", "refused"), CASES)
def test_pydantic_ai_run_stream_under_openinference(
    otel: Otel, answer: str, refused: bool, order: str
) -> None:
    """OpenInference's pydantic-ai span processor (registered before or after the guard) with
    the capability: stream_text(delta=True) yields the first sentence, then the refusal."""
    from openinference.instrumentation.pydantic_ai import OpenInferenceSpanProcessor
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.models.instrumented import InstrumentationSettings
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from groundplane_otel.adapters.pydantic_ai import Groundplane

    if order == "before":
        otel.tracer_provider.add_span_processor(OpenInferenceSpanProcessor())
    install(otel)
    if order == "after":
        otel.tracer_provider.add_span_processor(OpenInferenceSpanProcessor())
    seen: list[str] = []
    codes: list[str] = []

    async def main() -> None:
        script = [tool_call_turn("invoice_query", {}), Turn(content=answer, pieces=words(answer))]
        with FakeOpenAI(script) as api:
            client = openai.AsyncOpenAI(base_url=api.base_url, api_key="test", max_retries=0)
            model = OpenAIChatModel("gpt-fake-1", provider=OpenAIProvider(openai_client=client))
            settings = InstrumentationSettings(
                tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider
            )
            agent: Agent[None, str] = Agent(
                model, name=AGENT, capabilities=[Instrumentation(settings), Groundplane()]
            )
            agent.tool_plain(invoice_query)
            try:
                async with agent.run_stream("How are the invoices?") as result:
                    async for delta in result.stream_text(delta=True, debounce_by=None):
                        seen.append(delta)
            except UnsupportedClaim as claim:
                codes.append(claim.code)

    asyncio.run(main())
    assert codes == (["number_unrecorded"] if refused else [])
    assert "".join(seen) == (FIRST if refused else RIGHT)
    assert outcomes(otel) == ["blocked" if refused else "passed"]
