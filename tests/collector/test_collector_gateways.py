"""collector_config/loadbalancing.yaml in front of two gateways running
collector_config/agent-gateway.yaml, each sending traces to its own trace backend: every span
of a trace reaches the same gateway, even from two services in separate exports."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

from otlp_services import agent_request, service
from processes import CONFIGS, Collector, TraceSink, free_port, overlay, wait_for

SPANS_PER_TRACE = 4


def _gateway(tmp: Path, teardown: ExitStack, name: str) -> tuple[Collector, TraceSink, str]:
    backend = TraceSink()
    teardown.callback(backend.close)
    grpc_endpoint = f"127.0.0.1:{free_port()}"
    env = {
        "OTLP_GRPC_ENDPOINT": grpc_endpoint,
        "OTLP_HTTP_ENDPOINT": f"127.0.0.1:{free_port()}",
        "TEMPO_ENDPOINT": backend.endpoint,
        "PROMETHEUS_EXPORTER_ENDPOINT": f"127.0.0.1:{free_port()}",
    }
    gateway = Collector(CONFIGS / "agent-gateway.yaml", [], env, tmp / name)
    teardown.callback(gateway.stop)
    return gateway.start(), backend, grpc_endpoint


def test_tier_one_sends_each_trace_whole_to_one_gateway(
    tmp_path: Path, teardown: ExitStack
) -> None:
    gateways = [_gateway(tmp_path, teardown, f"gateway-{i}") for i in range(2)]
    static = overlay(
        tmp_path / "lb-overlay.yaml",
        {
            "exporters": {
                "load_balancing": {
                    "resolver": {
                        "dns": None,
                        "static": {"hostnames": [endpoint for _, _, endpoint in gateways]},
                    }
                }
            }
        },
    )
    grpc_endpoint = f"127.0.0.1:{free_port()}"
    env = {"OTLP_GRPC_ENDPOINT": grpc_endpoint, "OTLP_HTTP_ENDPOINT": f"127.0.0.1:{free_port()}"}
    balancer = Collector(CONFIGS / "loadbalancing.yaml", [static], env, tmp_path / "tier1")
    teardown.callback(balancer.stop)
    balancer.start()

    agents = service("agent-service", grpc_endpoint)
    tools = service("sales-service", grpc_endpoint)
    teardown.callback(agents.shutdown)
    teardown.callback(tools.shutdown)
    sent = {agent_request(agents, tools, "EU").trace_id.to_bytes(16, "big") for _ in range(20)}

    def arrived() -> bool:
        return sum(sum(b.spans.values()) for _, b, _ in gateways) == SPANS_PER_TRACE * len(sent)

    wait_for(arrived, 30, "every span at a gateway's backend")
    per_gateway = [dict(backend.spans) for _, backend, _ in gateways]
    assert all(per_gateway), "one gateway got no trace: the tier did not spread the load"
    assert set(per_gateway[0]).isdisjoint(per_gateway[1])  # no trace split across gateways
    assert {**per_gateway[0], **per_gateway[1]} == dict.fromkeys(sent, SPANS_PER_TRACE)
