"""An OpenAI tool-calling agent behind the guard: the real ``openai`` client, instrumented by
opentelemetry-instrumentation-genai-openai, against a loopback fake OpenAI server.

No API key, no network: the fake server (groundplane_otel.fake_openai) answers with a
scripted tool call, then a final JSON answer. Point ``base_url`` at the real API and the code is
unchanged. The tool runs under the guard's ``tool`` decorator (an ``execute_tool`` span whose
result becomes the ranking ``campaign_ctr``); the final answer is checked as the instrumented
``chat`` span ends, so a wrong winner raises out of ``chat.completions.create`` itself.

    python examples/openai_agent.py
"""

from __future__ import annotations

import json
import os
from typing import Any

import openai
from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.trace import Tracer

from groundplane_otel.checks.superlative import superlative
from groundplane_otel.errors import ClaimsUnsupported, UnsupportedClaim
from groundplane_otel.fake_openai import FakeOpenAI, answer_turn, tool_call_turn
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec, install, tool
from groundplane_otel.otel.sampling import GuardSampler

CTR = {"north": 0.0412, "harbour": 0.0455, "delta": 0.0301}
AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "campaign-analyst"}
TOOLS = [
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


def config() -> GuardConfig:
    answer = BoundarySpec(
        "campaign_answer",
        ("campaign_ctr",),
        (superlative(fact="campaign_ctr", score_field="ctr"),),
        match=MatchSpec(agent_name="campaign-analyst"),
        report_mode="first",
    )
    fact = FactSpec("campaign_ctr", "warehouse_query", kind="ranking")
    return GuardConfig(facts=(fact,), boundaries=(answer,))


def run_agent(client: openai.OpenAI, tracer: Tracer) -> dict[str, Any]:
    messages: list[Any] = [{"role": "user", "content": "Which campaign had the best CTR?"}]
    with tracer.start_as_current_span("invoke_agent campaign-analyst", attributes=AGENT):
        first = client.chat.completions.create(model="gpt-fake-1", messages=messages, tools=TOOLS)
        call = first.choices[0].message.tool_calls[0]  # type: ignore[index]
        result = warehouse_query(**json.loads(call.function.arguments))  # type: ignore[union-attr]
        messages += [
            first.choices[0].message,
            {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)},
        ]
        final = client.chat.completions.create(
            model="gpt-fake-1", messages=messages, response_format={"type": "json_object"}
        )
        return dict(json.loads(final.choices[0].message.content or "{}"))


def main() -> None:
    # Content capture puts the answer on the chat span, where the guard reads it. Without it,
    # a guarded span fails closed (or the app hands the answer over with submit_output).
    os.environ.setdefault("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider(sampler=GuardSampler(ALWAYS_ON))
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    meter_provider = MeterProvider()
    guard = install(config(), tracer_provider=tracer_provider, meter_provider=meter_provider)
    OpenAIInstrumentor().instrument(tracer_provider=tracer_provider, meter_provider=meter_provider)
    tracer = tracer_provider.get_tracer("openai_agent")

    for answer in ({"winner": "harbour", "ctr": 0.0455}, {"winner": "north", "ctr": 0.0412}):
        script = [tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(answer)]
        with FakeOpenAI(script) as api:
            client = openai.OpenAI(base_url=api.base_url, api_key="not-needed", max_retries=0)
            try:
                print(f"answer: {json.dumps(run_agent(client, tracer))}")
            except (UnsupportedClaim, ClaimsUnsupported) as exc:
                print(f"blocked: {exc.diagnosis}")  # str(exc): content-free

    for span in exporter.get_finished_spans():
        outcome = (span.attributes or {}).get("groundplane.outcome")
        if outcome is not None:
            events = [(e.name, e.attributes or {}) for e in span.events]
            reasons = [
                a["gen_ai.guardrail.result.reason"]
                for n, a in events
                if n.endswith("guardrail.result")
            ]
            labels = [
                a["gen_ai.evaluation.score.label"]
                for n, a in events
                if n.endswith("evaluation.result")
            ]
            print(
                f"span:   {span.name} outcome={outcome} status={span.status.status_code.name} "
                f"events={reasons} evaluations={labels}"
            )
    OpenAIInstrumentor().uninstrument()
    guard.uninstall()


if __name__ == "__main__":
    main()
