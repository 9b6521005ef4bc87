"""An agent that gets its ground truth from a real MCP server over stdio, guarded.

No API key, no network: this file is also the MCP server (``--serve``, built with the ``mcp``
package's MCPServer), spawned by the client half over stdio. ``call_and_record`` runs the tool
call inside a GenAI ``execute_tool`` span and records the result; with the guard installed the
result also becomes the ranking ``campaign_ctr`` of the trace (FactSpec), and a scripted model's
answers in ``chat`` spans are checked against it as those spans end.

    python examples/mcp_agent.py
"""

from __future__ import annotations

import asyncio
import json
import sys
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.trace import Tracer

from groundplane_otel.adapters.mcp import MCPToolError, call_and_record, stdio_session
from groundplane_otel.checks.superlative import superlative
from groundplane_otel.errors import ClaimsUnsupported, UnsupportedClaim
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec, install
from groundplane_otel.otel.sampling import GuardSampler
from groundplane_otel.registry import FactRegistry

CTR = {"north": 0.0412, "harbour": 0.0455, "delta": 0.0301}
AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "campaign-analyst"}


def serve() -> None:
    """The MCP server half: one tool with structured output, one that fails in-band."""
    server = MCPServer("campaign-metrics")

    @server.tool()
    def campaign_ctr(window: str) -> dict[str, float]:
        """Click-through rate per campaign over the window."""
        return dict(CTR)

    @server.tool()
    def campaign_spend(window: str) -> CallToolResult:
        """A tool whose backend is down: the error comes back in-band (isError)."""
        text = TextContent(type="text", text="billing backend unavailable")
        return CallToolResult(content=[text], is_error=True)

    server.run("stdio")


def config() -> GuardConfig:
    answer = BoundarySpec(
        "campaign_answer",
        ("campaign_ctr",),
        (superlative(fact="campaign_ctr", score_field="ctr"),),
        match=MatchSpec(agent_name="campaign-analyst"),
        report_mode="first",
    )
    return GuardConfig(
        facts=(FactSpec("campaign_ctr", "campaign_ctr", kind="ranking"),), boundaries=(answer,)
    )


def model_turn(tracer: Tracer, answer: dict[str, Any]) -> None:
    """A scripted model: a chat span carrying the answer like an instrumented client writes it."""
    part = {"type": "text", "content": json.dumps(answer)}
    messages = json.dumps([{"role": "assistant", "parts": [part], "finish_reason": "stop"}])
    with tracer.start_as_current_span(
        "chat scripted", attributes={"gen_ai.operation.name": "chat"}
    ) as span:
        span.set_attribute("gen_ai.output.messages", messages)


async def agent(tracer: Tracer) -> None:
    """One MCP session, two agent runs (one trace each): the right answer, then a wrong one."""
    async with stdio_session(sys.executable, [__file__, "--serve"]) as session:
        for answer in ({"winner": "harbour", "ctr": 0.0455}, {"winner": "north", "ctr": 0.0412}):
            registry = FactRegistry()
            try:
                with tracer.start_as_current_span(
                    "invoke_agent campaign-analyst", attributes=AGENT
                ):
                    await call_and_record(  # returns the raw MCP result; the fact is recorded
                        session,
                        registry,
                        fact="campaign_ctr",
                        tool="campaign_ctr",
                        arguments={"window": "7d"},
                    )
                    fact = registry.get("campaign_ctr")
                    print(f"fact:   {fact.name} = {json.dumps(fact.value)} from {fact.provenance}")
                    try:
                        await call_and_record(
                            session,
                            registry,
                            fact="campaign_spend",
                            tool="campaign_spend",
                            arguments={"window": "7d"},
                        )
                    except MCPToolError as exc:
                        print(f"tool:   {exc}")
                    print(f"model:  {json.dumps(answer)}")
                    model_turn(tracer, answer)
            except (UnsupportedClaim, ClaimsUnsupported) as exc:
                print(f"guard:  blocked: {exc.diagnosis}")  # str(exc): content-free
            else:
                print("guard:  passed")


def main() -> None:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider(sampler=GuardSampler(ALWAYS_ON))
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    guard = install(config(), tracer_provider=tracer_provider, meter_provider=MeterProvider())
    asyncio.run(agent(tracer_provider.get_tracer("mcp_agent")))
    for span in exporter.get_finished_spans():
        if span.name == "chat scripted":
            events = [
                e.attributes
                for e in span.events
                if e.name == "gen_ai.guardrail.result" and e.attributes
            ]
            fact_span = events[0]["groundplane.fact.span_id"] if events else "-"
            tool_spans = {
                f"{s.context.span_id:016x}"
                for s in exporter.get_finished_spans()
                if s.name == "execute_tool campaign_ctr"
            }
            linked = "execute_tool campaign_ctr" if fact_span in tool_spans else "-"
            outcome = (span.attributes or {})["groundplane.outcome"]
            print(f"span:   {span.name} outcome={outcome} event->{linked}")
    guard.uninstall()


if __name__ == "__main__":
    serve() if "--serve" in sys.argv else main()
