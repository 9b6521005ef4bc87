"""The scale-out tier as the tests run it: the shipped collector_config/verifier.yaml in the
built Collector, routing by trace id to two ``groundplane-otel serve`` replicas, each exporting
its verdicts to its own loopback sink, and a loopback trace backend in Tempo's place.

What the test overlay changes in verifier.yaml, and nothing else: the ``load_balancing`` resolver
is ``static`` (the two replicas' loopback ports: a DNS name resolving to two loopback replicas
cannot be made here without editing /etc/hosts), and optional extra exporters (the file exporter
tests add theirs to the traces pipeline). Endpoints come through the config's own variables.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from otlp_services import agent_request, service
from otlp_sink import Sink
from processes import CONFIGS, Collector, Replica, TraceSink, free_port, overlay, wait_for

VERIFIER = CONFIGS / "verifier.yaml"
EXPECTED = {"US": "unsupported", "EU": "supported"}  # the sales policy's superlative check
OUTCOME = {"unsupported": "flagged", "supported": "passed"}


@dataclass
class Tier:
    collector: Collector
    replicas: list[Replica]
    sinks: list[Sink]
    backend: TraceSink
    grpc_endpoint: str
    http_endpoint: str
    providers: list[TracerProvider] = field(default_factory=list)

    def services(self) -> tuple[TracerProvider, TracerProvider]:
        """The two instrumented services (agent, tools) exporting every span on its own to the
        Collector (the SDK's SimpleSpanProcessor: one export per span)."""
        agents = service("agent-service", self.grpc_endpoint)
        tools = service("sales-service", self.grpc_endpoint)
        self.providers += [agents, tools]
        return agents, tools

    def send(self, count: int, every: int = 3) -> dict[str, str]:
        """``count`` requests, every ``every``-th answering the wrong winner: {trace id: the
        verdict it must get}."""
        agents, tools = self.services()
        sent = {}
        for index in range(count):
            winner = "US" if index % every == 0 else "EU"
            context = agent_request(agents, tools, winner)
            sent[f"{context.trace_id:032x}"] = EXPECTED[winner]
        return sent

    def close(self) -> None:
        for provider in self.providers:
            provider.shutdown()


def start_tier(
    tmp: Path,
    teardown: ExitStack,
    *,
    root_wait: float,
    exporters: Mapping[str, Any] | None = None,
    start_replicas: bool = True,
) -> Tier:
    """Sinks, two replicas (started unless ``start_replicas`` is False), the Collector; every
    process is stopped by ``teardown`` (by PID) whatever the test does."""
    sinks = [Sink(), Sink()]
    backend = TraceSink()
    for closeable in (*sinks, backend):
        teardown.callback(closeable.close)
    replicas = [
        Replica(sink.endpoint, root_wait, tmp / f"replica-{i}") for i, sink in enumerate(sinks)
    ]
    for replica in replicas:
        teardown.callback(replica.stop)
        if start_replicas:
            replica.start()
    extra = dict(exporters or {})
    test_overlay = overlay(
        tmp / "verifier-overlay.yaml",
        {
            "exporters": {
                "load_balancing/verifier": {
                    "resolver": {
                        "dns": None,
                        "static": {"hostnames": [r.endpoint for r in replicas]},
                    }
                },
                **extra,
            },
            "service": {
                "pipelines": {
                    "traces": {"exporters": ["otlp_grpc/tempo", "load_balancing/verifier", *extra]}
                }
            },
        },
    )
    grpc_endpoint, http_endpoint = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    env = {
        "OTLP_GRPC_ENDPOINT": grpc_endpoint,
        "OTLP_HTTP_ENDPOINT": http_endpoint,
        "TEMPO_ENDPOINT": backend.endpoint,
    }
    collector = Collector(VERIFIER, [test_overlay], env, tmp / "collector")
    teardown.callback(collector.stop)
    collector.start()
    tier = Tier(collector, replicas, sinks, backend, grpc_endpoint, http_endpoint)
    teardown.callback(tier.close)
    return tier


def verdicts(sink: Sink) -> dict[str, list[str]]:
    """{trace id: its checks' verdicts} from the ``gen_ai.evaluation.result`` records a replica
    exported (one record per evaluated check, carrying the guarded span's trace id)."""
    found: dict[str, list[str]] = {}
    with sink.lock:
        for record in sink.logs:
            if record.event_name != "gen_ai.evaluation.result":
                continue
            attributes = {kv.key: kv.value.string_value for kv in record.attributes}
            found.setdefault(record.trace_id.hex(), []).append(
                attributes["gen_ai.evaluation.score.label"]
            )
    return found


def deciders(tier: Tier) -> dict[str, list[int]]:
    """{trace id: the replicas (indexes) that decided it, once per decision}."""
    out: dict[str, list[int]] = {}
    for index, sink in enumerate(tier.sinks):
        for trace_id in verdicts(sink):
            out.setdefault(trace_id, []).append(index)
    return out


def wait_decided(tier: Tier, traces: Mapping[str, str], timeout: float) -> None:
    def done() -> bool:
        decided = deciders(tier)
        return all(trace_id in decided for trace_id in traces)

    wait_for(done, timeout, f"{len(traces)} traces to be decided")


def outputs(tier: Tier) -> Counter[str]:
    """The replicas' ``groundplane.outputs`` counters summed, by outcome (latest export)."""
    total: Counter[str] = Counter()
    for sink in tier.sinks:
        for labels, value in sink.sums("groundplane.outputs").items():
            total[dict(labels)["groundplane.outcome"]] += value
    return total


def received_spans(sink: Sink) -> int:
    """Spans a replica's current process received (its latest ``groundplane.verifier.spans``)."""
    return sink.sums("groundplane.verifier.spans").get(
        (("groundplane.verifier.outcome", "received"),), 0
    )
