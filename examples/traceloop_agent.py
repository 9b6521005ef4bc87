"""An OpenAI tool-calling agent traced by Traceloop's opentelemetry-instrumentation-openai, no
adapter: the guard reads the answer from Traceloop's ``openai.chat`` span (content on, its
default) and checks it as the span ends. Against the loopback fake OpenAI server (no API key).

A plain call needs nothing: a wrong winner raises out of ``chat.completions.create``. A streamed
call ends its span inside Traceloop's ``@dont_throw``, which would swallow the refusal (the wrong
answer reaching the app, counted in ``groundplane.outputs.swallowed``): an ``enforce()`` scope
around the call raises it on exit instead. With ``TRACELOOP_TRACE_CONTENT=false`` no answer is on
the span and Traceloop has no hook, so every answer fails closed (``OutputUnchecked``).

    python examples/traceloop_agent.py
"""

from __future__ import annotations

import json
import os
from typing import Any

import openai
from _framework_setup import CTR, RIGHT, WRONG, Setup
from openai.types.chat import ChatCompletionToolParam
from opentelemetry.instrumentation.openai import OpenAIInstrumentor

from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.fake_openai import FakeOpenAI, answer_turn, tool_call_turn
from groundplane_otel.otel import enforce, tool

AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "campaign-analyst"}
TOOLS: list[ChatCompletionToolParam] = [
    {
        "type": "function",
        "function": {
            "name": "warehouse_query",
            "description": "Click-through rate per campaign over a window",
            "parameters": {"type": "object", "properties": {"window": {"type": "string"}}},
        },
    }
]


@tool("warehouse_query")
def warehouse_query(window: str) -> dict[str, float]:
    """The ground truth: CTR per campaign (a SQL query in a real agent)."""
    return dict(CTR)


def final_answer(client: openai.OpenAI, messages: list[Any], stream: bool) -> str:
    """The model's last turn, plain or streamed (a stream's span ends after the last chunk)."""
    if not stream:
        final = client.chat.completions.create(
            model="gpt-fake-1", messages=messages, response_format={"type": "json_object"}
        )
        return final.choices[0].message.content or ""
    chunks = client.chat.completions.create(model="gpt-fake-1", messages=messages, stream=True)
    return "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)


def run_agent(setup: Setup, client: openai.OpenAI, stream: bool) -> dict[str, Any]:
    tracer = setup.tracer_provider.get_tracer("traceloop_agent")
    messages: list[Any] = [{"role": "user", "content": "Which campaign had the best CTR?"}]
    with tracer.start_as_current_span("invoke_agent campaign-analyst", attributes=AGENT):
        first = client.chat.completions.create(model="gpt-fake-1", messages=messages, tools=TOOLS)
        call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
        result = warehouse_query(**json.loads(call.function.arguments))  # type: ignore[union-attr]
        messages += [
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)},
        ]
        return dict(json.loads(final_answer(client, messages, stream)))


def main() -> None:
    os.environ.setdefault("TRACELOOP_TRACE_CONTENT", "true")  # the answer on the span
    setup = Setup()
    OpenAIInstrumentor().instrument(tracer_provider=setup.tracer_provider)
    for stream in (False, True):
        call = "streamed, enforce()" if stream else "plain"
        for answer in (RIGHT, WRONG):
            script = [tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(answer)]
            with FakeOpenAI(script) as api:
                client = openai.OpenAI(base_url=api.base_url, api_key="not-needed", max_retries=0)
                try:
                    if stream:
                        with enforce():  # raises on exit what @dont_throw swallowed
                            got = run_agent(setup, client, stream=True)
                    else:
                        got = run_agent(setup, client, stream=False)
                    print(f"{call}: answer {json.dumps(got)}")
                except UnsupportedClaim as exc:
                    print(f"{call}: raised {type(exc).__name__} field={exc.field} "
                          f"claimed={exc.claimed}")  # fmt: skip
    OpenAIInstrumentor().uninstrument()
    setup.report()


if __name__ == "__main__":
    main()
