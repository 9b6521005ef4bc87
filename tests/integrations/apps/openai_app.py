"""An OpenAI agent run under ``opentelemetry-instrument`` by test_zero_code_openai.py.

It never imports the guard: the spans come from the OpenAI instrumentation (chat) and from the
app itself (invoke_agent, execute_tool with GenAI attributes), the guard from GROUNDPLANE_POLICY.
The fake server's URL arrives in OPENAI_BASE_URL; it prints what the application saw.
"""

from __future__ import annotations

import json
import sys

import openai
from opentelemetry import trace

from groundplane_otel.errors import ClaimsUnsupported, UnsupportedClaim

CTR = {"north": 0.0412, "harbour": 0.0455, "delta": 0.0301}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "warehouse_query",
            "parameters": {"type": "object", "properties": {"window": {"type": "string"}}},
        },
    }
]


def main() -> None:
    tracer = trace.get_tracer("openai_app")
    client = openai.OpenAI(api_key="test", max_retries=0)  # base URL from OPENAI_BASE_URL
    messages: list[dict[str, object]] = [{"role": "user", "content": "Which campaign won?"}]
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "campaign-analyst"}
    with tracer.start_as_current_span("invoke_agent campaign-analyst", attributes=agent):
        first = client.chat.completions.create(model="gpt-fake-1", messages=messages, tools=TOOLS)
        call = first.choices[0].message.tool_calls[0]
        tool = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.function.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.call.arguments": call.function.arguments,
            "gen_ai.tool.call.result": json.dumps(CTR),
        }
        with tracer.start_as_current_span(f"execute_tool {call.function.name}", attributes=tool):
            pass
        messages += [
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": json.dumps(CTR)},
        ]
        try:
            final = client.chat.completions.create(
                model="gpt-fake-1", messages=messages, response_format={"type": "json_object"}
            )
        except (UnsupportedClaim, ClaimsUnsupported) as exc:
            print(f"APP: {type(exc).__name__}: {exc.diagnosis}", flush=True)  # full, capture off
        else:
            print(f"APP: answer accepted {final.choices[0].message.content}", flush=True)


if __name__ == "__main__":
    main()
    sys.stdout.flush()
