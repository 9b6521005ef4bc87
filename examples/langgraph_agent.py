"""A LangGraph agent whose answer node is guarded: a wrong argmax takes the reask edge.

No API key: the "model" node is scripted (first the second-best campaign, then the winner).
The tool node adopts the ranking it put in the state as a fact (``record_state``); the model node
is wrapped with ``guarded_node``, whose ``on_violation`` turns the UnsupportedClaim into a state
update that a conditional edge routes to a reask node. The OpenTelemetry guard is installed on
in-memory SDK providers, so every check of the guarded node is also a span event and a metric.

    python examples/langgraph_agent.py
"""

from __future__ import annotations

import json
import operator
from typing import Annotated, Any, TypedDict

from langgraph.graph import END, START, StateGraph
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON

from groundplane_otel.adapters.langgraph import guarded_node, record_state
from groundplane_otel.checks.superlative import superlative
from groundplane_otel.errors import ClaimsUnsupported, UnsupportedClaim
from groundplane_otel.facts import Ranking, ranking_from_scores
from groundplane_otel.otel import GuardConfig, install
from groundplane_otel.otel.sampling import GuardSampler
from groundplane_otel.registry import FactRegistry

CTR = {"north": 0.0412, "harbour": 0.0455, "delta": 0.0301}
SCRIPT = [{"winner": "north", "ctr": 0.0412}, {"winner": "harbour", "ctr": 0.0455}]


class State(TypedDict, total=False):
    ranking: Ranking
    answer: dict[str, Any]
    violation: str | None
    path: Annotated[list[str], operator.add]


def build(registry: FactRegistry) -> Any:
    script = iter(SCRIPT)

    def warehouse(state: State) -> dict[str, Any]:
        update = {"ranking": ranking_from_scores("ctr", CTR), "path": ["tool"]}
        record_state(
            registry,
            update,
            keys={"ranking": "campaign_ctr"},
            tool="warehouse.query",
            args={"window": "7d"},
        )
        return update

    def model(state: State) -> dict[str, Any]:
        answer = next(script)
        print(f"model:  {json.dumps(answer)}")
        return {"answer": answer, "violation": None, "path": ["model"]}

    def on_violation(exc: UnsupportedClaim | ClaimsUnsupported, state: Any) -> dict[str, Any]:
        print(f"guard:  {exc.diagnosis}")  # str(exc) is content-free with capture off
        return {"violation": exc.diagnosis, "path": ["violation"]}

    def reask(state: State) -> dict[str, Any]:
        print("reask:  the model is asked again with the violation in its prompt")
        return {"path": ["reask"]}

    graph = StateGraph(State)
    graph.add_node("tool", warehouse)
    graph.add_node(
        "model",
        guarded_node(
            model,
            registry=registry,
            facts=["campaign_ctr"],
            checks=[superlative(fact="campaign_ctr", score_field="ctr")],
            output_key="answer",
            on_violation=on_violation,
            name="campaign_answer",
        ),
    )
    graph.add_node("reask", reask)
    graph.add_edge(START, "tool")
    graph.add_edge("tool", "model")
    graph.add_conditional_edges("model", lambda s: "reask" if s.get("violation") else END)
    graph.add_edge("reask", "model")
    return graph.compile()


def main() -> None:
    exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
    tracer_provider = TracerProvider(sampler=GuardSampler(ALWAYS_ON))
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    meter_provider = MeterProvider(metric_readers=[reader])
    guard = install(GuardConfig(), tracer_provider=tracer_provider, meter_provider=meter_provider)

    final = build(FactRegistry()).invoke({})
    print(f"answer: {json.dumps(final['answer'])}")
    print(f"path:   {' -> '.join(final['path'])}")

    for span in exporter.get_finished_spans():
        attributes = span.attributes or {}
        events = [(e.name, e.attributes or {}) for e in span.events]
        reasons = [
            a["gen_ai.guardrail.result.reason"] for n, a in events if n.endswith("guardrail.result")
        ]
        labels = [
            a["gen_ai.evaluation.score.label"] for n, a in events if n.endswith("evaluation.result")
        ]
        outcome = attributes["groundplane.outcome"]
        print(f"span:   {span.name} outcome={outcome} events={reasons} evaluations={labels}")
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == "groundplane.claims":
                    for point in metric.data.data_points:
                        verdict = point.attributes["groundplane.verdict"]
                        print(f"metric: groundplane.claims verdict={verdict} {point.value}")
    guard.uninstall()


if __name__ == "__main__":
    main()
