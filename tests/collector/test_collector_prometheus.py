"""The guard's metrics through the Collector into the real Prometheus, and the shipped alerts live.

The application (tests/guard_traffic.py: the demo's agent, the guard installed from
examples/policy.yaml) exports its metrics over OTLP every 500 ms to the built Collector running
collector_config/agent-gateway.yaml; Prometheus (the Debian binary, tests/prometheus_server.py)
scrapes the Collector's Prometheus exporter (honor_labels, as the config says) every second and
evaluates dashboards/alerts.yaml time-compressed by 60 (tests/rules_timelapse.py: a test second
stands for a production minute; thresholds and counts unchanged). A burst of unsupported claims
fires the fast-burn page; when it ends the alert resolves (its longest short window, 30m, is
30 s here). The slow-burn alert is not waited for: its 6h window (6 min here) outlasts the run.
"""

from __future__ import annotations

import time
from collections import Counter
from contextlib import ExitStack
from pathlib import Path

import yaml
from guard_traffic import GuardedApp, Mode, Scenario, expected, interleave
from opentelemetry.exporter.otlp.proto.grpc.metric_exporter import OTLPMetricExporter
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
from opentelemetry.sdk.resources import Resource
from processes import CONFIGS, REPO, Collector, TraceSink, free_port
from prometheus_server import PrometheusServer, start_prometheus
from rules_timelapse import scale_rules

FAST_BURN = "GroundplaneUnsupportedClaimsFastBurn"
JOB = "collector-proof"
# 5 wrong winners and 1 right answer a tick: 5 unsupported of 18 claims, 27.8% (page: 14.4%).
BURST: tuple[tuple[Scenario, Mode, int], ...] = (
    ("wrong_winner", "enforce", 5),
    ("right", "enforce", 1),
)


def _alert_states(server: PrometheusServer) -> dict[str, str]:
    return {alert["labels"]["alertname"]: alert["state"] for alert in server.alerts()}


def test_alerts_fire_on_a_burst_through_the_collector_and_resolve_after(
    tmp_path: Path, teardown: ExitStack
) -> None:
    backend = TraceSink()
    teardown.callback(backend.close)
    exporter_endpoint = f"127.0.0.1:{free_port()}"
    grpc_endpoint = f"127.0.0.1:{free_port()}"
    env = {
        "OTLP_GRPC_ENDPOINT": grpc_endpoint,
        "OTLP_HTTP_ENDPOINT": f"127.0.0.1:{free_port()}",
        "TEMPO_ENDPOINT": backend.endpoint,
        "PROMETHEUS_EXPORTER_ENDPOINT": exporter_endpoint,
    }
    collector = Collector(CONFIGS / "agent-gateway.yaml", [], env, tmp_path / "collector")
    teardown.callback(collector.stop)
    collector.start()

    rules = tmp_path / "alerts.compressed.yaml"
    alerts = yaml.safe_load((REPO / "dashboards" / "alerts.yaml").read_text())
    rules.write_text(yaml.safe_dump(scale_rules(alerts, 60)))
    server = start_prometheus(tmp_path, [exporter_endpoint], [rules], honor_labels=True)
    teardown.callback(server.stop)

    meters = MeterProvider(
        metric_readers=[
            PeriodicExportingMetricReader(
                OTLPMetricExporter(endpoint=grpc_endpoint, insecure=True),
                export_interval_millis=500,
            )
        ],
        resource=Resource.create({"service.name": JOB}),
    )
    teardown.callback(meters.shutdown)
    app = GuardedApp(meters)
    teardown.callback(app.close)

    batch, ticks = interleave(BURST), 0
    while FAST_BURN not in {n for n, s in _alert_states(server).items() if s == "firing"}:
        assert ticks < 40, f"{FAST_BURN} did not fire within 40 s: {_alert_states(server)}"
        app.run_many(batch)
        ticks += 1
        time.sleep(1.0)
    burst_end = time.monotonic()

    mix: Counter[tuple[Scenario, Mode]] = Counter()
    for scenario, mode, n in BURST:
        mix[(scenario, mode)] += n * ticks
    want = expected(app.boundary, mix).claims_by_verdict()
    assert want == {"unsupported": 5 * ticks, "supported": 13 * ticks}
    meters.force_flush()

    def counted() -> dict[str, float] | None:
        result = server.query(
            f'sum by (groundplane_verdict) (groundplane_claims_total{{job="{JOB}"}})'
        )
        found = {r["metric"]["groundplane_verdict"]: float(r["value"][1]) for r in result}
        return found if found == want else None

    server.wait_for(counted, timeout=15)  # every claim, exactly, through the Collector

    server.wait_for(lambda: FAST_BURN not in _alert_states(server), timeout=90)
    resolved_after = time.monotonic() - burst_end
    assert resolved_after > 25, resolved_after  # not before the 30 s (30m) window ran out
    print(
        f"\n{FAST_BURN} fired after {ticks} ticks, resolved {resolved_after:.0f} s after; "
        f"still active: {_alert_states(server)}"
    )
