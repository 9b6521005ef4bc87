"""A LangChain v1 agent behind the guard: ``create_agent(..., middleware=[GroundplaneMiddleware(
on_violation="reask")])``, traced by opentelemetry-instrumentation-genai-langchain with content
capture off, through langchain-openai against the loopback fake OpenAI server (no API key).

The wrong winner goes back to the model as a human message naming the violation, and the
corrected answer ends the run. ``--langgraph`` runs LangGraph's prebuilt ``create_react_agent``
with ``post_model_hook(agent_name=...)`` and a ``ToolNode`` wrapper, raising instead.

    python examples/langchain_agent.py
"""

from __future__ import annotations

import json
import sys
import warnings
from typing import Any

from _framework_setup import CTR, RIGHT, WRONG, Setup
from langchain.agents import create_agent
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from opentelemetry.instrumentation.genai.langchain import LangChainInstrumentor

from groundplane_otel.adapters.langchain import (
    GroundplaneMiddleware,
    post_model_hook,
    tool_call_wrapper,
)
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.fake_openai import FakeOpenAI, answer_turn, tool_call_turn

AGENT = "campaign-analyst"  # the boundary's match.agent_name


@tool
def warehouse_query(window: str) -> dict[str, float]:
    """CTR per campaign (a SQL query in a real agent)."""
    return dict(CTR)


def agent(model: ChatOpenAI, langgraph: bool) -> Any:
    if not langgraph:
        middleware = [GroundplaneMiddleware(on_violation="reask")]  # the one line
        return create_agent(model, tools=[warehouse_query], middleware=middleware, name=AGENT)
    from langgraph.prebuilt import ToolNode, create_react_agent

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in LangGraph 1.x
        return create_react_agent(
            model,
            tools=ToolNode([warehouse_query], wrap_tool_call=tool_call_wrapper()),
            post_model_hook=post_model_hook(agent_name=AGENT),
            name=AGENT,
        )


def main() -> None:
    langgraph = "--langgraph" in sys.argv
    setup = Setup()
    LangChainInstrumentor().instrument(tracer_provider=setup.tracer_provider)
    script = [tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(WRONG)]
    if not langgraph:
        script.append(answer_turn(RIGHT))
    with FakeOpenAI(script) as api:
        model = ChatOpenAI(model="gpt-fake-1", base_url=api.base_url, api_key="not-needed")
        try:
            final = agent(model, langgraph).invoke(
                {"messages": [{"role": "user", "content": "Which campaign won?"}]}
            )
            if not langgraph:
                print(f"reask:  {api.requests[-1]['messages'][-1]['content'].splitlines()[1]}")
            print(f"answer: {json.dumps(json.loads(final['messages'][-1].content))}")
        except UnsupportedClaim as exc:
            print(f"raised: {type(exc).__name__} field={exc.field} claimed={exc.claimed}")
    LangChainInstrumentor().uninstrument()
    setup.report()


if __name__ == "__main__":
    main()
