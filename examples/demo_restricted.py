"""Evidence demo: a restricted value refused, and a fabricated citation refused.

No API key, no network. A scripted support agent answers in prose. Its knowledge-base search
runs inside a GenAI ``retrieval`` span (``gen_ai.retrieval.documents``) and its cost lookup is
a tool whose result is a *restricted* fact (``restricted=True``): evidence the model may read
but never reveal. The guard is installed with content capture ON, and still:

1. an answer quoting the retrieved policy with its citation passes;
2. an answer that leaks the internal wholesale cost (written "1,234.50", recorded 1234.5) is
   refused by ``no_restricted_values`` — and the exported guardrail event carries the reason
   code, never the value;
3. an answer citing a document nobody retrieved is refused by ``citations_retrieved``, with the
   retrieval span's id as provenance.

    python examples/demo_restricted.py
"""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased

from groundplane_otel import (
    ClaimsUnsupported,
    UnsupportedClaim,
    citations_retrieved,
    no_restricted_values,
    quotes_anchored,
)
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec, install, tool
from groundplane_otel.otel.sampling import GuardSampler

DOCUMENTS = [
    {"id": "policy-7", "score": 0.91, "content": "Orders ship within two business days."},
    {"id": "faq-2", "score": 0.55, "content": "Express shipping costs $9 per order."},
]
RIGHT = 'Orders "ship within two business days" [policy-7]; express is $9 [faq-2].'
LEAK = "Between us, the kit costs us 1,234.50 wholesale, so $9 express is a bargain [faq-2]."
FABRICATED = "Orders ship in two days [policy-12]."

CONFIG = GuardConfig(
    facts=(
        FactSpec("kb", "support-kb", kind="documents"),
        FactSpec("wholesale", "erp.costs", kind="table", key="sku", restricted=True),
    ),
    boundaries=(
        BoundarySpec(
            "support_answer",
            ("kb", "wholesale"),
            (
                no_restricted_values(["answer"]),
                citations_retrieved(text_fields=["answer"], min_citations=1),
                quotes_anchored(text_fields=["answer"]),
            ),
            match=MatchSpec(agent_name="support"),
            report_mode="first",
        ),
    ),
    capture_content=True,  # values on events ... except restricted ones, never
)


@tool("erp.costs")
def wholesale_costs() -> list[dict[str, Any]]:
    """The confidential lookup the agent is allowed to read, never to quote."""
    return [{"sku": "harbour-kit", "cost": 1234.5}]


def run_agent(tracer: Any, text: str) -> str:
    """One request: retrieval span, restricted tool, then the scripted model's answer."""
    answer = json.dumps(
        [
            {
                "role": "assistant",
                "parts": [{"type": "text", "content": json.dumps({"answer": text})}],
            }
        ]
    )
    with (
        tracer.start_as_current_span("POST /support"),
        tracer.start_as_current_span(
            "invoke_agent support",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"},
        ),
    ):
        with tracer.start_as_current_span(
            "retrieval support-kb",
            attributes={
                "gen_ai.operation.name": "retrieval",
                "gen_ai.data_source.id": "support-kb",
                "gen_ai.retrieval.query.text": "shipping times",
                "gen_ai.retrieval.documents": json.dumps(DOCUMENTS),
            },
        ):
            pass
        wholesale_costs()
        with tracer.start_as_current_span(
            "chat scripted-support-1", attributes={"gen_ai.operation.name": "chat"}
        ) as chat:
            chat.set_attribute("gen_ai.output.messages", answer)
    return text


def guardrail_event(exporter: InMemorySpanExporter) -> dict[str, Any]:
    (chat,) = [s for s in exporter.get_finished_spans() if s.name.startswith("chat ")]
    (event,) = [e for e in chat.events if e.name == "gen_ai.guardrail.result"]
    return dict(event.attributes or {})


def scene(tracer: Any, exporter: InMemorySpanExporter, title: str, text: str) -> None:
    exporter.clear()
    print(f"\n{title}\n  model answered: {text!r}")
    try:
        run_agent(tracer, text)
    except (UnsupportedClaim, ClaimsUnsupported) as exc:
        code = getattr(exc, "code", "")
        print(f"  REFUSED ({code}): {exc.diagnosis}")  # str(exc) is the content-free summary
        event = guardrail_event(exporter)
        shown = {
            k: v
            for k, v in sorted(event.items())
            if k.startswith(("gen_ai.guardrail.result", "groundplane."))
        }
        print(f"  exported event: {json.dumps(shown, sort_keys=True)}")
        return
    print("  PASSED: the answer reached the application")


def main() -> int:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider(sampler=GuardSampler(ParentBased(ALWAYS_ON)))
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    guard = install(CONFIG, tracer_provider=tracer_provider, meter_provider=MeterProvider())
    tracer = tracer_provider.get_tracer("demo-restricted")
    print("groundplane_otel evidence demo: restricted facts and retrieval citations")
    try:
        scene(tracer, exporter, "1. A quoted, cited answer", RIGHT)
        scene(tracer, exporter, "2. The model leaks the restricted wholesale cost", LEAK)
        exported = "\n".join(span.to_json() for span in exporter.get_finished_spans())
        leaked = "1234.5" in exported or "1,234.50" in exported
        print(f"  the cost in any exported span (content capture on): {leaked}")
        scene(tracer, exporter, "3. The model cites a document nobody retrieved", FABRICATED)
    finally:
        guard.uninstall()
        tracer_provider.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
