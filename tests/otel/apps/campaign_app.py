"""A tiny agent for the zero-code tests: no groundplane import except the exception types.

It opens the spans a GenAI-instrumented agent emits (invoke_agent → execute_tool → chat) with
the global tracer provider that `opentelemetry-instrument` configured, answers with the wrong
winner (argv[1] == "wrong") or the right one, and prints what the application saw.
"""

from __future__ import annotations

import json
import sys

from opentelemetry import trace

from groundplane_otel.errors import ClaimsUnsupported, UnsupportedClaim

ROWS = [
    {"campaign": "harbour", "impressions": 20000, "clicks": 910, "ctr": 0.0455},
    {"campaign": "north", "impressions": 20000, "clicks": 824, "ctr": 0.0412},
    {"campaign": "delta", "impressions": 20000, "clicks": 602, "ctr": 0.0301},
]
RIGHT = {"winner": "harbour", "ctr": 0.0455, "top3": ["harbour", "north", "delta"]}
ANSWERS = {
    "right": {**RIGHT, "total_clicks": 2336},
    "wrong": {**RIGHT, "winner": "north", "ctr": 0.0412, "total_clicks": 2336},
}


def main(which: str) -> None:
    tracer = trace.get_tracer("campaign_app")
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "campaign-analyst"}
    tool = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "warehouse.query",
        "gen_ai.tool.call.id": "call_1",
        "gen_ai.tool.call.arguments": json.dumps({"table": "campaign_daily", "window": "7d"}),
        "gen_ai.tool.call.result": json.dumps({"rows": ROWS}),
    }
    text = json.dumps(ANSWERS[which])
    message = {"role": "assistant", "parts": [{"type": "text", "content": text}]}
    with tracer.start_as_current_span("invoke_agent campaign-analyst", attributes=agent):
        with tracer.start_as_current_span("execute_tool warehouse.query", attributes=tool):
            pass
        try:
            with tracer.start_as_current_span(
                "chat scripted-model", attributes={"gen_ai.operation.name": "chat"}
            ) as chat:
                chat.set_attribute("gen_ai.output.messages", json.dumps([message]))
        except (UnsupportedClaim, ClaimsUnsupported) as exc:
            print(f"APP: {type(exc).__name__}: {exc.diagnosis}", flush=True)  # full, capture off
        else:
            print("APP: answer accepted", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
