"""A framework agent run under ``opentelemetry-instrument`` by test_zero_code_frameworks.py: the
guard comes from GROUNDPLANE_POLICY, the tracing from the installed instrumentations; the app's
only groundplane line is the framework's adapter. Usage: ``framework_app.py langchain|
openai_agents|pydantic_ai``; the fake server's URL is in OPENAI_BASE_URL. Prints what the app saw.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

CTR = {"north": 0.0412, "harbour": 0.0455, "delta": 0.0301}
AGENT = "campaign-analyst"


def langchain() -> str:
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI

    from groundplane_otel.adapters.langchain import GroundplaneMiddleware

    @tool
    def warehouse_query(window: str) -> dict[str, float]:
        """CTR per campaign."""
        return dict(CTR)

    model = ChatOpenAI(model="gpt-fake-1", api_key="test", max_retries=0)
    agent = create_agent(
        model, tools=[warehouse_query], middleware=[GroundplaneMiddleware()], name=AGENT
    )
    final = agent.invoke({"messages": [{"role": "user", "content": "Which campaign won?"}]})
    return str(final["messages"][-1].content)


def openai_agents() -> str:
    import openai
    from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool

    from groundplane_otel.adapters.openai_agents import guard

    @function_tool
    def warehouse_query(window: str) -> dict[str, float]:
        """CTR per campaign."""
        return dict(CTR)

    client = openai.AsyncOpenAI(api_key="test", max_retries=0)
    model = OpenAIChatCompletionsModel("gpt-fake-1", client)
    agent = guard(Agent(name=AGENT, model=model, tools=[warehouse_query]))
    return str(asyncio.run(Runner.run(agent, "Which campaign won?")).final_output)


def pydantic_ai() -> str:
    from pydantic_ai import Agent
    from pydantic_ai.models.openai import OpenAIChatModel
    from pydantic_ai.providers.openai import OpenAIProvider

    from groundplane_otel.adapters.pydantic_ai import Groundplane

    Agent.instrument_all()  # pydantic-ai's own instrumentation, on the global providers
    provider = OpenAIProvider(base_url=os.environ["OPENAI_BASE_URL"], api_key="test")
    agent: Any = Agent(
        OpenAIChatModel("gpt-fake-1", provider=provider), name=AGENT, capabilities=[Groundplane()]
    )

    @agent.tool_plain
    def warehouse_query(window: str) -> dict[str, float]:
        """CTR per campaign."""
        return dict(CTR)

    return str(agent.run_sync("Which campaign won?").output)


def main() -> None:
    run = {"langchain": langchain, "openai_agents": openai_agents, "pydantic_ai": pydantic_ai}
    try:
        answer = run[sys.argv[1]]()
        print(f"APP: answer {json.dumps(json.loads(answer))}")
    except Exception as exc:
        print(f"APP: {type(exc).__name__}")


if __name__ == "__main__":
    main()
