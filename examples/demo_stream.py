"""A streamed answer, guarded sentence by sentence: the reader never sees the wrong sentence.

No API key, no network. A scripted model streams its prose answer one word at a time inside the
agent's span; ``guard_stream`` releases each sentence only once it is checked. A right answer
arrives in full; in a wrong one (a rate nobody recorded in the second sentence) the reader gets
the first sentence, then the refusal — printed here as a terminal shows a streamed reply.

    python examples/demo_stream.py
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON

from groundplane_otel import UnsupportedClaim, numbers_recorded
from groundplane_otel.otel import (
    BoundarySpec,
    FactSpec,
    GuardConfig,
    MatchSpec,
    guard_stream,
    install,
    tool,
)

AGENT = "invoice-assistant"
INVOICES = [{"id": "A", "total": 10000, "rate": 3.9}, {"id": "B", "total": 250, "rate": 1.5}]
FIRST = "Invoice A totals 10,000 dollars."
RIGHT = FIRST + " Its rate was 3.9% last month. Invoice B totals 250 dollars."
WRONG = FIRST + " Its rate was 4.7% last month. Invoice B totals 250 dollars."


def model(answer: str, pause: float) -> Iterator[str]:
    """The scripted model: ``answer`` one word (with its leading space) at a time."""
    for index, word in enumerate(answer.split(" ")):
        time.sleep(pause)
        yield (" " if index else "") + word


def main(pause: float = 0.02) -> int:
    exporter = InMemorySpanExporter()
    provider = TracerProvider(sampler=ALWAYS_ON)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    spec = BoundarySpec(
        "invoice_answer",
        ("invoice",),
        (numbers_recorded("invoice"),),
        match=MatchSpec(agent_name=AGENT),
        report_mode="first",
        answer="text",
    )
    fact = FactSpec("invoice", "invoice_query", kind="table", key="id")
    guard = install(
        GuardConfig(facts=(fact,), boundaries=(spec,)),
        tracer_provider=provider,
        meter_provider=MeterProvider(),
    )
    tracer = provider.get_tracer("demo-stream")
    invoice_query = tool("invoice_query", guard=guard)(lambda: INVOICES)
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT}
    try:
        for title, answer in (("the right answer", RIGHT), ("a wrong rate in sentence 2", WRONG)):
            print(f"  streaming {title}:")
            print("    reader sees: ", end="", flush=True)
            with tracer.start_as_current_span(f"invoke_agent {AGENT}", attributes=attributes):
                invoice_query()
                try:
                    for delta in guard_stream(model(answer, pause), guard=guard):
                        print(delta, end="", flush=True)
                    print("\n    PASSED: every sentence checked, then shown")
                except UnsupportedClaim as refusal:
                    print(f"\n    BLOCKED before the next sentence: {type(refusal).__name__}")
                    print(f"      {refusal.diagnosis}")
            (span,) = exporter.get_finished_spans()[-1:]
            released = (span.attributes or {}).get("groundplane.stream.released_chars")
            outcome = (span.attributes or {}).get("groundplane.outcome")
            print(f"    counted once: outcome {outcome}, {released} characters released")
    finally:
        guard.uninstall()
        provider.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
