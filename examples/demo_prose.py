"""Numbers in prose, guarded: a wrong number in an answer's summary is blocked, with its receipt.

No API key, no network. An invoice tool runs inside a GenAI ``execute_tool`` span (its result
becomes the fact ``invoice``), the user's question is recorded the same way (``question``: the
question is not a source, its numbers are only echoes), and a scripted "model" answers in chat
spans carrying ``gen_ai.output.messages``. The guard checks every number of the ``summary``
field with ``numbers_recorded``: the right summary passes; the wrong one (1,000 for 10,000, a
rate taken from the question, 45 days for 30) is blocked and each receipt is printed.

    python examples/demo_prose.py

``run(tracer_provider, meter_provider)`` does the same on the caller's providers (the main demo
calls it); it uninstalls its guard before returning. Give it providers with no other guard
installed: a second guard on the same provider logs that it does not know this boundary.
"""

from __future__ import annotations

import json
import sys
from typing import Any, TextIO

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.trace import Tracer

from groundplane_otel import UnrecordedNumbers, numbers_recorded
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec, install
from groundplane_otel.otel.sampling import GuardSampler

AGENT = "invoice-assistant"
INVOICES = {
    "rows": [
        {"invoice": "A", "total": 10000, "rate": 3.9, "term_days": 30},
        {"invoice": "B", "total": 2500, "rate": 2.5, "term_days": 60},
    ]
}
QUESTION = "Is the rate on invoice A 4.75%, and what is the payment term?"
RIGHT = "Invoice A totals $10,000 at 3.90%, payable within 30 days."
WRONG = "Invoice A totals $1,000 at 4.75%, payable within 45 days."
CHECK = numbers_recorded("invoice", "summary", question_fact="question")


def config() -> GuardConfig:
    """Two facts (the tool's rows, the user's question) and one boundary on the agent."""
    return GuardConfig(
        facts=(
            FactSpec("invoice", "erp.invoices", kind="table", key="invoice", path="rows"),
            FactSpec("question", "user.question"),
        ),
        boundaries=(
            BoundarySpec(
                "invoice_summary",
                ("invoice", "question"),
                (CHECK,),
                match=MatchSpec(agent_name=AGENT),
                report_mode="first",
            ),
        ),
    )


def _tool(tracer: Tracer, name: str, result: Any, call_id: str) -> None:
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,
    }
    with tracer.start_as_current_span(f"execute_tool {name}", attributes=attributes) as span:
        span.set_attribute("gen_ai.tool.call.result", json.dumps(result))


def _answer(tracer: Tracer, summary: str) -> None:
    """One agent run: the tools, then the scripted model's final answer."""
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT}
    with tracer.start_as_current_span(f"invoke_agent {AGENT}", attributes=agent):
        _tool(tracer, "user.question", QUESTION, "call_q")
        _tool(tracer, "erp.invoices", INVOICES, "call_1")
        part = {"type": "text", "content": json.dumps({"summary": summary})}
        message = [{"role": "assistant", "parts": [part], "finish_reason": "stop"}]
        with tracer.start_as_current_span(
            "chat scripted-assistant-1", attributes={"gen_ai.operation.name": "chat"}
        ) as span:
            span.set_attribute("gen_ai.output.messages", json.dumps(message))


def run(
    tracer_provider: TracerProvider, meter_provider: MeterProvider, out: TextIO = sys.stdout
) -> None:
    """The two scenes on the caller's providers; prints what the application sees."""
    guard = install(config(), tracer_provider=tracer_provider, meter_provider=meter_provider)
    tracer = tracer_provider.get_tracer("demo-prose")
    try:
        print(f"numbers in prose: boundary 'invoice_summary' runs {CHECK.name}", file=out)
        print(f"  question: {QUESTION}", file=out)
        for label, summary in (("right", RIGHT), ("wrong", WRONG)):
            print(f"  {label} answer: {summary}", file=out)
            try:
                _answer(tracer, summary)
            except UnrecordedNumbers as blocked:
                print(f"  BLOCKED: UnrecordedNumbers, reason {blocked.code}", file=out)
                for receipt in blocked.receipts:
                    print(f"    receipt {receipt.describe()}", file=out)
            else:
                print("  PASSED: every number in the summary is recorded", file=out)
    finally:
        guard.uninstall()


def main() -> int:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider(sampler=GuardSampler(ALWAYS_ON))
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    meter_provider = MeterProvider()
    run(tracer_provider, meter_provider)
    blocked = [
        span
        for span in exporter.get_finished_spans()
        if span.attributes and span.attributes.get("groundplane.outcome") == "blocked"
    ]
    for span in blocked:
        print(f"  exported span {span.name!r}: status {span.status.status_code.name}")
        for event in span.events:
            attributes = event.attributes or {}
            if event.name == "gen_ai.evaluation.result":
                name = attributes.get("gen_ai.evaluation.name")
                label = attributes.get("gen_ai.evaluation.score.label")
                print(f"    event {event.name}: {name} {label} (no explanation: capture is off)")
                continue
            reason = attributes.get("gen_ai.guardrail.result.reason")
            print(f"    event {event.name}: reason {reason} (no content: capture is off)")
    tracer_provider.shutdown()
    meter_provider.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
