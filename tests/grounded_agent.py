"""A scripted agent for the pytest-plugin tests: the spans an instrumented agent run emits.

``invoke_agent analyst`` -> ``execute_tool top_sales`` (the ranking EU 10, US 7) -> ``chat``
with the final JSON answer ``{"winner": <winner>}`` (no chat span when ``winner`` is None).
The pytester tests copy this file next to their inner test files, so both use one agent.
"""

from __future__ import annotations

import json

from opentelemetry.trace import Tracer

SALES_ROWS = {"rows": [{"region": "EU", "total": 10}, {"region": "US", "total": 7}]}

POLICY_YAML = """\
version: 1
mode: enforce
facts:
  sales: {tool: top_sales, kind: ranking, key: region, score: total, path: rows}
boundaries:
  answer:
    facts: [sales]
    match: {agent_name: analyst}
    checks:
      - superlative: {winner_field: winner}
"""


def run_agent(tracer: Tracer, winner: str | None) -> None:
    """One agent run traced with ``tracer``; the answer names ``winner``."""
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "analyst"}
    with tracer.start_as_current_span("invoke_agent analyst", attributes=agent):
        tool = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "top_sales",
            "gen_ai.tool.call.id": "call_1",
        }
        with tracer.start_as_current_span("execute_tool top_sales", attributes=tool) as span:
            span.set_attribute("gen_ai.tool.call.result", json.dumps(SALES_ROWS))
        if winner is None:
            return
        with tracer.start_as_current_span(
            "chat gpt-test", attributes={"gen_ai.operation.name": "chat"}
        ) as span:
            part = {"type": "text", "content": json.dumps({"winner": winner})}
            message = {"role": "assistant", "parts": [part], "finish_reason": "stop"}
            span.set_attribute("gen_ai.output.messages", json.dumps([message]))
