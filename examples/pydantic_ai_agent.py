"""A pydantic-ai agent behind the guard: ``capabilities=[Groundplane()]``, content capture off.

No API key: a scripted ``FunctionModel`` asks for ``warehouse_query``, then answers. Run twice:
with ``reask=True`` the wrong winner goes back to the model as ``ModelRetry`` and the corrected
answer is returned; without it the guard's ``UnsupportedClaim`` leaves ``agent.run_sync``.

    python examples/pydantic_ai_agent.py
"""

from __future__ import annotations

import json
from typing import Any

from _framework_setup import CTR, RIGHT, WRONG, Setup
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings

from groundplane_otel.adapters.pydantic_ai import Groundplane
from groundplane_otel.errors import UnsupportedClaim


class Answer(BaseModel):
    winner: str
    ctr: float


def model(answers: list[dict[str, Any]]) -> FunctionModel:
    """Asks for the tool first, then gives the scripted answers in turn."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        if len(messages) == 1:
            return ModelResponse(parts=[ToolCallPart("warehouse_query", {"window": "7d"})])
        answer = answers.pop(0)
        print(f"model:  {json.dumps(answer)}")
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, answer)])

    return FunctionModel(respond)


def main() -> None:
    setup = Setup()
    settings = InstrumentationSettings(tracer_provider=setup.tracer_provider, include_content=False)
    for reask, answers in ((True, [WRONG, RIGHT]), (False, [WRONG])):
        agent = Agent(
            model(answers),
            output_type=Answer,
            name="campaign-analyst",  # the boundary's match.agent_name: nothing else to name
            capabilities=[Instrumentation(settings), Groundplane(reask=reask)],
        )

        @agent.tool_plain
        def warehouse_query(window: str) -> dict[str, float]:
            """CTR per campaign (a SQL query in a real agent)."""
            return dict(CTR)

        try:
            print(f"answer: {agent.run_sync('Which campaign won?').output.model_dump_json()}")
        except UnsupportedClaim as exc:
            print(f"raised: {type(exc).__name__} field={exc.field} claimed={exc.claimed}")
    setup.report()


if __name__ == "__main__":
    main()
