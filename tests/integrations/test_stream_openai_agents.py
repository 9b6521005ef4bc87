"""OpenAI Agents SDK streams gated through a model wrapper
(``adapters.openai_agents_stream.guarded_model``): ``Runner.run_streamed(...).stream_events()``
on the real SDK and the real openai client against the loopback fake server streaming real SSE,
genai-openai-agents + genai-openai instrumenting. A wrong second sentence never reaches the app:
the first sentence's deltas do, then the refusal; a right answer arrives whole; counted once
(the SDK output guardrail's check takes the stream's)."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
from agents.tracing import set_trace_processors
from fake_openai import FakeOpenAI, Turn, tool_call_turn
from integration_harness import Otel
from stream_policy import AGENT_NAME, revenue_config

from groundplane_otel.adapters.openai_agents import guard
from groundplane_otel.adapters.openai_agents_stream import guarded_model
from groundplane_otel.errors import UnsupportedClaim

AGENT = AGENT_NAME
ROWS = [{"id": "A", "total": 10000, "rate": 3.9}, {"id": "B", "total": 250, "rate": 1.5}]
FIRST = "Invoice A totals 10,000 dollars."
RIGHT = FIRST + " Its rate was 3.9% last month. Invoice B totals 250 dollars."
WRONG = FIRST + " Its rate was 4.7% last month. Invoice B totals 250 dollars."


@function_tool(name_override="invoice_query")
def invoice_query() -> list[dict[str, Any]]:
    """The invoices."""
    return ROWS


@pytest.fixture
def otel_agents(otel: Otel) -> Iterator[Otel]:
    """The guard (a prose boundary for the revenue-analyst), the SDK's exporter removed,
    genai-openai-agents and genai-openai on the test's providers."""
    from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor
    from opentelemetry.instrumentation.genai.openai_agents import OpenAIAgentsInstrumentor

    otel.install(revenue_config())
    set_trace_processors([])
    instrumentors = [OpenAIAgentsInstrumentor(), OpenAIInstrumentor()]
    for instrumentor in instrumentors:
        instrumentor.instrument(
            tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider
        )
    yield otel
    for instrumentor in reversed(instrumentors):
        instrumentor.uninstrument()
    set_trace_processors([])


def words(text: str) -> tuple[str, ...]:
    parts = text.split(" ")
    return (parts[0], *(" " + part for part in parts[1:]))


def outcomes(otel: Otel) -> list[str]:
    return [
        attributes["groundplane.outcome"]
        for attributes, value in otel.metrics().get("groundplane.outputs", [])
        for _ in range(int(value))
    ]


@pytest.mark.parametrize(("answer", "refused"), [(WRONG, True), (RIGHT, False)])
def test_run_streamed_never_yields_the_wrong_sentence(
    otel_agents: Otel, answer: str, refused: bool
) -> None:
    """stream_events(): the tool call turn, then the answer's text deltas sentence by
    sentence; a wrong second sentence never arrives (the refusal leaves stream_events), the
    chat span carries the outcome and the characters released; counted once."""
    otel = otel_agents
    deltas: list[str] = []
    codes: list[str] = []

    async def main() -> None:
        script = [tool_call_turn("invoice_query", {}), Turn(content=answer, pieces=words(answer))]
        with FakeOpenAI(script) as api:
            client = openai.AsyncOpenAI(base_url=api.base_url, api_key="test", max_retries=0)
            model = guarded_model(OpenAIChatCompletionsModel("gpt-fake-1", client))
            agent = guard(Agent(name=AGENT, model=model, tools=[invoice_query]))
            result = Runner.run_streamed(agent, "How are the invoices?")
            try:
                async for event in result.stream_events():
                    data = getattr(event, "data", None)
                    if getattr(data, "type", None) == "response.output_text.delta":
                        deltas.append(data.delta)
            except UnsupportedClaim as claim:
                codes.append(claim.code)

    asyncio.run(main())
    assert codes == (["number_unrecorded"] if refused else [])
    assert "".join(deltas) == (FIRST if refused else RIGHT)
    assert outcomes(otel) == ["blocked" if refused else "passed"]
    (counted,) = [s for s in otel.spans() if "groundplane.outcome" in (s.attributes or {})]
    assert counted.name == "chat gpt-fake-1"
    released = (counted.attributes or {})["groundplane.stream.released_chars"]
    assert released == len(FIRST if refused else RIGHT)


def test_an_agents_model_is_required() -> None:
    """Anything but an Agents SDK Model is a TypeError naming what was given."""
    with pytest.raises(TypeError, match="^model must be an Agents SDK Model, got str$"):
        guarded_model("gpt-4")
