"""A real Prometheus scrapes a real OTel SDK PrometheusMetricReader endpoint: names, dashboard
queries and alert rules are checked against what Prometheus actually ingests."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from dashboard_queries import dashboard_exprs, substitute, variable_queries
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.resources import Resource
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_server import PrometheusError, PrometheusServer, free_port, start_prometheus

REPO = Path(__file__).parents[1]
ALERTS = REPO / "dashboards" / "alerts.yaml"

# One batch of telemetry, following the contract in DESIGN.md section 4. Recorded twice so
# that every rate() has two scraped samples; proportions are identical in both batches.
CLAIMS = {"supported": 8, "unsupported": 2, "error": 1}
# 20 outputs per batch, 20% skipped: enough for the skipped-outputs alert's 20-output minimum.
OUTCOMES = {"passed": 10, "blocked": 2, "flagged": 2, "skipped": 4, "error": 2}
FACT_OUTCOMES = {"recorded": 6, "conflict": 1, "rejected": 1}


@dataclass
class App:
    """The SDK side: a meter provider whose reader is served over HTTP on ``target``."""

    provider: MeterProvider
    target: str
    instruments: dict[str, Any]

    def record_batch(self) -> None:
        base = {"groundplane.boundary": "answer", "groundplane.mode": "enforce"}
        for verdict, n in CLAIMS.items():
            attrs = {**base, "groundplane.check": "ranking", "groundplane.verdict": verdict}
            self.instruments["claims"].add(n, attrs)
        for outcome, n in OUTCOMES.items():
            attrs = {**base, "groundplane.outcome": outcome}
            if outcome == "skipped":
                attrs["groundplane.skip_reason"] = "refusal"
            self.instruments["outputs"].add(n, attrs)
        for seconds in (0.001, 0.002, 0.004, 0.05):
            self.instruments["duration"].record(seconds, {"groundplane.boundary": "answer"})
        for outcome, n in FACT_OUTCOMES.items():
            attrs = {
                "groundplane.fact.kind": "ranking",
                "groundplane.fact.source": "tool",
                "groundplane.fact.outcome": outcome,
            }
            self.instruments["facts"].add(n, attrs)
        self.instruments["traces"].add(1)
        for outcome, n in (("matched", 5), ("unmatched", 1)):
            attrs = {"groundplane.boundary": "answer", "groundplane.coverage.outcome": outcome}
            self.instruments["coverage"].add(n, attrs)


@pytest.fixture(scope="module")
def app() -> Iterator[App]:
    registry = CollectorRegistry()
    reader = PrometheusMetricReader(registry=registry)
    provider = MeterProvider(
        metric_readers=[reader], resource=Resource.create({"service.name": "demo"})
    )
    port = free_port()
    httpd, thread = start_http_server(port, addr="127.0.0.1", registry=registry)
    meter = provider.get_meter("groundplane_otel")
    instruments = {
        "claims": meter.create_counter("groundplane.claims", unit="{claim}"),
        "outputs": meter.create_counter("groundplane.outputs", unit="{output}"),
        "duration": meter.create_histogram("groundplane.check.duration", unit="s"),
        "facts": meter.create_counter("groundplane.facts", unit="{fact}"),
        "traces": meter.create_up_down_counter("groundplane.traces.active", unit="{trace}"),
        "coverage": meter.create_counter("groundplane.coverage", unit="{trace}"),
    }
    yield App(provider, f"127.0.0.1:{port}", instruments)
    httpd.shutdown()
    httpd.server_close()
    thread.join(timeout=5)
    provider.shutdown()


@pytest.fixture(scope="module")
def prom(app: App, tmp_path_factory: pytest.TempPathFactory) -> Iterator[PrometheusServer]:
    app.record_batch()
    server = start_prometheus(tmp_path_factory.mktemp("prom"), [app.target], rule_files=[ALERTS])
    try:
        first = 'groundplane_claims_total{groundplane_verdict="unsupported"}'
        server.wait_for(lambda: server.query(first))
        app.record_batch()
        # Wait until the second batch is scraped and every series has two samples.
        server.wait_for(lambda: _value(server, f"sum({first})") == 2 * CLAIMS["unsupported"])
        server.wait_for(lambda: server.query(f"count_over_time({first}[1m]) >= 3"))
        yield server
    finally:
        server.stop()


def _value(server: PrometheusServer, expr: str) -> float | None:
    result = server.query(expr)
    return float(result[0]["value"][1]) if result else None


def test_claims_counter_reaches_prometheus(prom: PrometheusServer) -> None:
    """OTel counter groundplane.claims is scraped as groundplane_claims_total with its labels."""
    result = prom.query(
        'groundplane_claims_total{groundplane_verdict="unsupported", groundplane_check="ranking",'
        ' groundplane_boundary="answer", groundplane_mode="enforce", job="app"}'
    )
    assert len(result) == 1
    assert float(result[0]["value"][1]) == 2 * CLAIMS["unsupported"]
    assert _value(prom, "sum(groundplane_claims_total)") == 2 * sum(CLAIMS.values())


def test_other_contract_names(prom: PrometheusServer) -> None:
    """Outputs, facts, the duration histogram and the live-trace gauge get the contract names."""
    blocked = 'sum(groundplane_outputs_total{groundplane_outcome="blocked"})'
    assert _value(prom, blocked) == 2 * OUTCOMES["blocked"]
    assert _value(prom, "sum(groundplane_facts_total)") == 2 * sum(FACT_OUTCOMES.values())
    assert _value(prom, "sum(groundplane_check_duration_seconds_count)") == 8
    assert _value(prom, "groundplane_traces_active") == 2


@pytest.mark.parametrize("expr", dashboard_exprs() + variable_queries())
def test_dashboard_query_parses_and_returns_data(prom: PrometheusServer, expr: str) -> None:
    """Every dashboard query, variables substituted, is valid PromQL and returns data."""
    assert prom.query(substitute(expr)), substitute(expr)


def test_invalid_query_is_reported(prom: PrometheusServer) -> None:
    """The helper surfaces a PromQL parse error, so the dashboard check above can fail."""
    with pytest.raises(PrometheusError, match="bad_data"):
        prom.query("sum(rate(groundplane_claims_total[$__rate_interval]))")


def test_alert_rules_load_and_evaluate(prom: PrometheusServer) -> None:
    """dashboards/alerts.yaml loads into Prometheus and every rule evaluates healthy."""

    def all_healthy() -> list[dict[str, Any]] | None:
        rules = [r for g in prom.rules() for r in g["rules"]]
        return rules if rules and all(r["health"] == "ok" for r in rules) else None

    rules = prom.wait_for(all_healthy)
    names = {r["name"] for r in rules}
    assert "job:groundplane_claims_unsupported:ratio_rate5m" in names
    assert {
        "GroundplaneUnsupportedClaimsFastBurn",
        "GroundplaneUnsupportedClaimsSlowBurn",
        "GroundplaneGuardErroring",
        "GroundplaneOutputsSkipped",
    } <= names


def test_recorded_ratio_matches_known_mix(prom: PrometheusServer) -> None:
    """The recording rule computes the unsupported-claim ratio of the recorded mix."""
    expected = CLAIMS["unsupported"] / sum(CLAIMS.values())
    ratio = prom.wait_for(
        lambda: _value(prom, 'job:groundplane_claims_unsupported:ratio_rate5m{job="app"}')
    )
    assert ratio == pytest.approx(expected, rel=1e-9)


def test_guard_alerts_go_pending(prom: PrometheusServer) -> None:
    """Real error and skipped outputs put the guard-health alerts in pending state."""

    def pending() -> set[str] | None:
        names = {a["labels"]["alertname"] for a in prom.alerts() if a["state"] == "pending"}
        wanted = {"GroundplaneGuardErroring", "GroundplaneOutputsSkipped"}
        return names if wanted <= names else None

    assert prom.wait_for(pending)


def test_helper_stops_by_pid(tmp_path: Path) -> None:
    """The context manager stops the process it started; query and query_range answer before."""
    with start_prometheus(tmp_path, []) as server:
        assert server.query("vector(1)")[0]["value"][1] == "1"
        now = float(server.query("time()")[0]["value"][0])
        series = server.query_range("vector(2)", now - 2, now, step="1s")
        assert [v for _, v in series[0]["values"]] == ["2", "2", "2"]
    assert server.process.poll() is not None
