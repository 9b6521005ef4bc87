"""The verifier decides again what an in-process guard already wrote (issue 21 item 11): the
agent service runs the guard itself (observe) and exports its annotated spans to a verifier
whose policy renamed the boundary; the verifier matches the boundary again and flags the wrong
winner whose tool ran in the other service."""

from __future__ import annotations

import dataclasses

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from otlp_services import CONFIG, agent_request, service, wait_for

from groundplane_otel.otel import install
from groundplane_otel.otel.verifier import Verifier, VerifierServer


def test_a_boundary_the_services_guard_matched_is_matched_again_by_the_verifier() -> None:
    """The agent service's guard names ``answer`` on its chat span (marked as its match, and
    unable to check it: the fact is in the other service); the verifier, with the boundary
    renamed ``answer_v2``, flags the wrong winner and passes the right one under the new name —
    no ``answer`` output and no ``no_output`` error echoed from the recording."""
    renamed = dataclasses.replace(
        CONFIG, boundaries=(dataclasses.replace(CONFIG.boundaries[0], name="answer_v2"),)
    )
    meters = MeterProvider()
    server = VerifierServer(
        Verifier(renamed, meter_provider=meters, root_wait_s=0.1),
        listen="127.0.0.1:0",
        health=None,
        tick_s=0.05,
    ).start()
    endpoint = f"127.0.0.1:{server.port}"
    agents, tools = service("agent-service", endpoint), service("sales-service", endpoint)
    sent = InMemorySpanExporter()  # what the agent service exported, as the verifier got it
    agents.add_span_processor(SimpleSpanProcessor(sent))
    install(
        dataclasses.replace(CONFIG, mode="observe"),
        tracer_provider=agents,
        meter_provider=MeterProvider(),
    )
    try:
        agent_request(agents, tools, "US")
        agent_request(agents, tools, "EU")
        stats = server.verifier.replayer.stats
        wait_for(lambda: stats.traces == 2)
        chats = [span for span in sent.get_finished_spans() if span.name == "chat m"]
        assert [
            {key: value for key, value in (span.attributes or {}).items() if "boundary" in key}
            | {"outcome": (span.attributes or {})["groundplane.outcome"]}
            for span in chats
        ] == [
            {
                "groundplane.boundary": "answer",
                "groundplane.boundary_matched": True,
                "outcome": "error",
            }
        ] * 2
        assert stats.outputs == {("answer_v2", "flagged"): 1, ("answer_v2", "passed"): 1}
        assert server.verifier.stats.root_ended == 2
    finally:
        agents.shutdown()
        tools.shutdown()
        server.stop(grace_s=1)
        meters.shutdown()
