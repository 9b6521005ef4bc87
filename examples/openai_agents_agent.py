"""An OpenAI Agents SDK agent behind the guard: ``guard(Agent(...))`` (an output guardrail plus
fact hooks), traced by opentelemetry-instrumentation-genai-openai-agents and -genai-openai with
content capture off, against the loopback fake OpenAI server (no API key, no network).

The wrong winner trips the SDK's own ``OutputGuardrailTripwireTriggered``; the guard's report is
its output info. ``python examples/openai_agents_agent.py --openinference`` runs the same agent
traced by OpenInference's openai-agents instrumentation instead (examples/openinference_agent.py).

    python examples/openai_agents_agent.py
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

import openai
from _framework_setup import CTR, RIGHT, WRONG, Setup
from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    OutputGuardrailTripwireTriggered,
    Runner,
    function_tool,
)
from agents.tracing import set_trace_processors
from pydantic import BaseModel

from groundplane_otel.adapters.openai_agents import guard
from groundplane_otel.fake_openai import FakeOpenAI, answer_turn, tool_call_turn


class Answer(BaseModel):
    winner: str
    ctr: float


@function_tool
def warehouse_query(window: str) -> dict[str, float]:
    """CTR per campaign (a SQL query in a real agent)."""
    return dict(CTR)


def instrument(setup: Setup, openinference: bool) -> list[Any]:
    set_trace_processors([])  # no export to OpenAI's tracing backend
    if openinference:
        from openinference.instrumentation.openai_agents import OpenAIAgentsInstrumentor

        instrumentors: list[Any] = [OpenAIAgentsInstrumentor()]
    else:
        from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor
        from opentelemetry.instrumentation.genai.openai_agents import (
            OpenAIAgentsInstrumentor as GenAIAgents,
        )

        instrumentors = [GenAIAgents(), OpenAIInstrumentor()]
    for instrumentor in instrumentors:
        instrumentor.instrument(tracer_provider=setup.tracer_provider)
    return instrumentors


async def ask(answer: dict[str, Any]) -> None:
    script = [tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(answer)]
    with FakeOpenAI(script) as api:
        # Closed in this event loop: a client left to the garbage collector closes in a later
        # one (asyncio.run) and logs "Event loop is closed".
        async with openai.AsyncOpenAI(
            base_url=api.base_url, api_key="not-needed", max_retries=0
        ) as client:
            agent = guard(  # the one line: output guardrail + fact hooks
                Agent(
                    name="campaign-analyst",  # the boundary's match.agent_name
                    model=OpenAIChatCompletionsModel("gpt-fake-1", client),
                    tools=[warehouse_query],
                    output_type=Answer,
                )
            )
            try:
                result = await Runner.run(agent, "Which campaign won?")
                print(f"answer: {result.final_output.model_dump_json()}")
            except OutputGuardrailTripwireTriggered as exc:
                info = exc.guardrail_result.output.output_info
                (violation,) = info["violations"]
                print(
                    f"tripwire: {info['outcome']} {json.dumps(violation['claimed'])} "
                    f"-> supported {json.dumps(violation['supported'])}"
                )


def main() -> None:
    setup = Setup()
    instrumentors = instrument(setup, "--openinference" in sys.argv)
    for answer in (RIGHT, WRONG):
        asyncio.run(ask(answer))
    for instrumentor in instrumentors:
        instrumentor.uninstrument()
    setup.report()


if __name__ == "__main__":
    main()
