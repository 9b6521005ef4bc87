"""Proof against a real Prometheus: the real guard, a known mix, the shipped dashboard and rules.

What runs
    Two deployments of the same application (tests/guard_traffic.py: the demo's agent, the guard
    installed from examples/policy.yaml in enforce and observe mode), each with a real SDK
    MeterProvider whose PrometheusMetricReader is served by ``prometheus_client`` from its own
    CollectorRegistry on a free loopback port, and each scraped every second by its own real
    Prometheus (the Debian binary, started by tests/prometheus_server.py, stopped by PID in the
    fixture finalizer whatever happens). Nothing is synthesized: every sample Prometheus holds was
    counted by the guard while it checked an output.

The mixes (TICKS batches, one per second, each interleaved so a scrape that lands mid-batch
sees about the batch's proportions)
    bad, per batch: enforce 1 right + 5 wrong winners + 2 refusals (skipped) + 1 prose answer
    (unreadable -> error) + 1 answer without the tool call (fact missing -> error); observe
    1 right + 1 wrong winner (flagged). The policy has 3 checks, each counted whatever the report
    mode, so a right answer counts 3 supported claims, a wrong winner 1 unsupported and 2
    supported claims, a missing fact 3 error claims, the others none: 6 unsupported of 27
    claims per batch, 22.2% (well above the 14.4% page threshold), and 2 skipped
    of 12 outputs (above the 10% skipped threshold). The expected totals are computed from the
    policy's checks by tests/guard_traffic.py and compared exactly with Prometheus.
    clean, per batch: 10 right answers in enforce mode and 2 in observe mode.

Why the rules are time-compressed (and not backfilled)
    The burn-rate alerts look at 5m..3d windows and hold ``for:`` 2m..15m. Backfilling history
    with ``promtool tsdb create-blocks-from openmetrics`` would put synthetic samples, not the
    guard's, in the windows, and would still not satisfy ``for:``: pending time is wall-clock
    time between rule evaluations, which no backfill provides. So the test loads a time-lapse
    of dashboards/alerts.yaml: ``scale_rules`` divides every duration by SCALE = 60 (one test
    second stands for one production minute, one scrape per second for one per minute): every
    range selector (``[1h]`` -> ``[60s]``), every ``for:`` (``15m`` -> ``15s``) and the
    window-length constants of the low-traffic guard (``job:groundplane_claims:rate1h * 3600``
    is "claims in the last hour"; it becomes ``* 60`` so it still counts the claims in the
    compressed window). Counts and ratios (the 100-claim and 20-output minimums, the
    14.4/6/3/1 x budget thresholds) are unchanged. The compression is uniform, so the rules
    keep every relation between their windows and durations, and
    ``test_time_compressed_rules_keep_their_structure`` checks that nothing else changed. The
    uncompressed rules' own timing is covered by ``promtool test rules`` (alerts_test.yaml).

Exemplars
    Checked at the SDK/OTLP level (InMemoryMetricReader, then the OTLP protobuf encoder): the
    pull exporter, opentelemetry-exporter-prometheus, drops exemplars, even in OpenMetrics
    format. In production they travel OTLP -> Collector prometheus exporter (OpenMetrics) ->
    Prometheus with --enable-feature=exemplar-storage.
"""

from __future__ import annotations

import math
import re
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import pytest
import yaml
from dashboard_queries import dashboard_exprs, substitute, variable_queries
from guard_traffic import (
    Expected,
    GuardedApp,
    Mode,
    Run,
    Scenario,
    expected,
    expected_claims,
    expected_outcome,
    interleave,
)
from opentelemetry.exporter.otlp.proto.common.metrics_encoder import encode_metrics
from opentelemetry.exporter.prometheus import PrometheusMetricReader
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader, MetricsData
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased
from prometheus_client import CollectorRegistry, start_http_server
from prometheus_server import PrometheusServer, free_port, start_prometheus
from rules_timelapse import RANGE as _RANGE
from rules_timelapse import WINDOW_COUNT as _WINDOW_COUNT
from rules_timelapse import scale_expr, scale_rules, seconds

from groundplane_otel.otel.sampling import GuardSampler

ALERTS = Path(__file__).parents[1] / "dashboards" / "alerts.yaml"
SCALE = 60  # time compression of the rules: one test second stands for one production minute
TICKS = 20  # batches of traffic, one per second
TICK = 1.0
BAD_BATCH: tuple[tuple[Scenario, Mode, int], ...] = (
    ("right", "enforce", 1),
    ("wrong_winner", "enforce", 5),
    ("refusal", "enforce", 2),
    ("unreadable", "enforce", 1),
    ("fact_missing", "enforce", 1),
    ("right", "observe", 1),
    ("wrong_winner", "observe", 1),
)
CLEAN_BATCH: tuple[tuple[Scenario, Mode, int], ...] = (
    ("right", "enforce", 10),
    ("right", "observe", 2),
)
EVERY_ALERT = {
    "GroundplaneUnsupportedClaimsFastBurn",
    "GroundplaneUnsupportedClaimsSlowBurn",
    "GroundplaneGuardErroring",
    "GroundplaneOutputsSkipped",
}
PAGE_RATIO = 14.4 * 0.01  # the fast-burn threshold in alerts.yaml (14.4 x a 1% budget)
SKIPPED_SHARE = 0.1  # the skipped-outputs threshold in alerts.yaml
TIMED = ("expr", "for")  # the only rule keys the time compression may change


# -- time compression of the rules (tests/rules_timelapse.py) -------------------------------


def _mask(expr: str) -> str:
    """The expression with every window and window constant replaced by a placeholder."""
    return _WINDOW_COUNT.sub(r"\1 * W", _RANGE.sub("[W]", expr))


def _rules(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [rule for group in document["groups"] for rule in group["rules"]]


# -- the deployments ------------------------------------------------------------------------------


@dataclass
class Deployment:
    """One application, its /metrics endpoint and the Prometheus scraping it."""

    name: str
    app: GuardedApp
    server: PrometheusServer
    batch: list[tuple[Scenario, Mode]]
    expected: Expected


@contextmanager
def deploy(
    name: str, batch: tuple[tuple[Scenario, Mode, int], ...], rules: Path, tmp: Path
) -> Iterator[Deployment]:
    registry = CollectorRegistry()  # this application's metrics only
    meters = MeterProvider(
        metric_readers=[PrometheusMetricReader(registry=registry)],
        resource=Resource.create({"service.name": f"proof-{name}"}),
    )
    port = free_port()
    httpd, thread = start_http_server(port, addr="127.0.0.1", registry=registry)
    app = GuardedApp(meters)
    server = None
    try:
        server = start_prometheus(tmp / name, [f"127.0.0.1:{port}"], rule_files=[rules])
        mix: Counter[tuple[Scenario, Mode]] = Counter()
        for scenario, mode, n in batch:
            mix[(scenario, mode)] += n * TICKS
        yield Deployment(name, app, server, interleave(batch), expected(app.boundary, mix))
    finally:
        if server is not None:
            server.stop()  # by PID
            assert server.process.poll() is not None
        httpd.shutdown()
        httpd.server_close()
        thread.join(timeout=5)
        app.close()
        meters.shutdown()


class Traffic(threading.Thread):
    """Runs one batch per deployment every TICK seconds, TICKS times."""

    def __init__(self, deployments: list[Deployment]) -> None:
        super().__init__(name="guard-traffic", daemon=True)
        self.deployments = deployments
        self.halt = threading.Event()
        self.ticks = 0
        self.error: BaseException | None = None

    def run(self) -> None:
        start = time.monotonic()
        try:
            for tick in range(TICKS):
                for deployment in self.deployments:
                    deployment.app.run_many(deployment.batch)
                self.ticks += 1
                if self.halt.wait(max(0.0, start + (tick + 1) * TICK - time.monotonic())):
                    return
        except BaseException as exc:  # surfaced by finish()
            self.error = exc

    def finish(self) -> None:
        self.join(timeout=TICKS * TICK + 30)
        assert not self.is_alive(), "traffic did not finish"
        if self.error is not None:
            raise self.error
        assert self.ticks == TICKS

    def stop(self) -> None:
        self.halt.set()
        self.join(timeout=10)


@dataclass
class Proof:
    bad: Deployment
    clean: Deployment
    traffic: Traffic
    _done: bool = False
    _fired: set[str] = field(default_factory=set)

    def finished(self) -> None:
        """Wait for the whole mix to be driven and scraped by both servers."""
        if self._done:
            return
        self.traffic.finish()
        for deployment in (self.bad, self.clean):
            server, total = deployment.server, sum(deployment.expected.outputs.values())
            server.wait_for(partial(_equals, server, "sum(groundplane_outputs_total)", total))
        self._done = True

    def bad_alerts_fired(self) -> set[str]:
        """Wait until every alert has fired on the bad mix (the wait the clean mix gets too)."""
        if not self._fired:
            server = self.bad.server

            def all_fired() -> set[str] | None:
                names = _ever(server, "firing")
                return names if names >= EVERY_ALERT else None

            self._fired = server.wait_for(all_fired, timeout=60)
        return self._fired


@pytest.fixture(scope="module")
def proof(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Proof]:
    tmp = tmp_path_factory.mktemp("proof")
    rules = tmp / "alerts.compressed.yaml"
    rules.write_text(yaml.safe_dump(scale_rules(yaml.safe_load(ALERTS.read_text()), SCALE)))
    with ExitStack() as stack:  # unwinds in reverse: traffic stops, then servers (by PID)
        bad = stack.enter_context(deploy("bad", BAD_BATCH, rules, tmp))
        clean = stack.enter_context(deploy("clean", CLEAN_BATCH, rules, tmp))
        for server in (bad.server, clean.server):
            # Traffic starts once Prometheus has scraped the (still empty) endpoint: its
            # service discovery hands targets over after about 5 s, so both wait together.
            server.wait_for(partial(_scraped, server))
        traffic = Traffic([bad, clean])
        stack.callback(traffic.stop)
        traffic.start()
        yield Proof(bad, clean, traffic)


def _scraped(server: PrometheusServer) -> bool:
    return any(target["health"] == "up" for target in server.targets())


def _value(server: PrometheusServer, expr: str) -> float | None:
    result = server.query(expr)
    return float(result[0]["value"][1]) if result else None


def _equals(server: PrometheusServer, expr: str, value: float) -> bool:
    return _value(server, expr) == value


def _by(server: PrometheusServer, expr: str, labels: tuple[str, ...]) -> dict[Any, float]:
    """{label values: value} of an instant vector; one label gives plain keys."""
    out = {}
    for item in server.query(expr):
        key = tuple(item["metric"].get(label, "") for label in labels)
        out[key[0] if len(labels) == 1 else key] = float(item["value"][1])
    return out


def _ever(server: PrometheusServer, state: str | None = None) -> set[str]:
    """Alert names Prometheus recorded in ALERTS (pending or firing) since it started."""
    selector = f'{{alertstate="{state}"}}' if state else ""
    result = server.query(f"group by (alertname) (last_over_time(ALERTS{selector}[1h]))")
    return {item["metric"]["alertname"] for item in result}


# -- the rules transformation ---------------------------------------------------------------------


def test_time_compressed_rules_keep_their_structure(tmp_path: Path) -> None:
    """The compressed rules equal alerts.yaml except that every window, window constant and
    for: is divided by SCALE, and promtool accepts them."""
    original = yaml.safe_load(ALERTS.read_text())
    scaled = scale_rules(original, SCALE)

    def shape(document: dict[str, Any]) -> list[Any]:
        return [
            (
                group["name"],
                [{k: v for k, v in r.items() if k not in TIMED} for r in group["rules"]],
            )
            for group in document["groups"]
        ]

    assert shape(scaled) == shape(original)
    window_constants = ranges = 0
    for before, after in zip(_rules(original), _rules(scaled), strict=True):
        assert _mask(after["expr"]) == _mask(before["expr"])
        windows = [seconds(w) for w in _RANGE.findall(before["expr"])]
        ranges += len(windows)
        assert before["expr"].count("[") == len(windows)  # every range selector is rewritten
        assert [SCALE * seconds(w) for w in _RANGE.findall(after["expr"])] == windows
        constants = _WINDOW_COUNT.findall(before["expr"])
        window_constants += len(constants)
        assert [int(c) for _, _, c in constants] == [seconds(w) for _, w, _ in constants]
        assert [SCALE * int(c) for _, _, c in _WINDOW_COUNT.findall(after["expr"])] == [
            int(c) for _, _, c in constants
        ]
        # No other literal in the expression looks like a duration in seconds (>= 5m, whole
        # minutes): a seconds constant the transformation missed would make the lapse lie.
        literals = [int(n) for n in re.findall(r"(?<![\w.:])\d+(?![\w.])", _mask(before["expr"]))]
        assert [n for n in literals if n >= 300 and n % 60 == 0] == [], before["expr"]
        assert seconds(before.get("for", "0s")) == SCALE * seconds(after.get("for", "0s"))
    assert window_constants == 4  # the low-traffic guard of each burn-rate branch
    assert ranges == 2 * 7 + 2 + 3  # 2 rates x 7 windows, then the 2 guard-health alerts
    path = tmp_path / "compressed.yaml"
    path.write_text(yaml.safe_dump(scaled))
    check = subprocess.run(
        ["promtool", "check", "rules", str(path)], capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stdout + check.stderr


def test_scale_rules_rejects_a_constant_that_is_not_the_window() -> None:
    """A low-traffic constant that does not match its window is refused, not silently kept."""
    with pytest.raises(ValueError, match="window length"):
        scale_expr("job:groundplane_claims:rate1h * 60 >= 100", SCALE)


# -- exact numbers in Prometheus ------------------------------------------------------------------


def test_unsupported_ratio_equals_the_known_mix(proof: Proof) -> None:
    """Prometheus's sum(unsupported) / sum(all claims) over the guard's counters is exactly 6/27."""
    proof.finished()
    server, want = proof.bad.server, proof.bad.expected
    assert want.unsupported_ratio == 6 / 27  # the mix described in the module docstring
    ratio = _value(
        server,
        'sum(groundplane_claims_total{groundplane_verdict="unsupported"})'
        " / sum(groundplane_claims_total)",
    )
    assert ratio == want.unsupported_ratio
    verdicts = _by(
        server, "sum by (groundplane_verdict) (groundplane_claims_total)", ("groundplane_verdict",)
    )
    assert verdicts == want.claims_by_verdict()
    assert verdicts == {"supported": 18 * TICKS, "unsupported": 6 * TICKS, "error": 3 * TICKS}
    labels = ("groundplane_check", "groundplane_verdict", "groundplane_mode")
    claims = _by(server, f"sum by ({', '.join(labels)}) (groundplane_claims_total)", labels)
    assert claims == dict(want.claims)
    assert set(_by(server, "groundplane_claims_total", ("groundplane_boundary",))) == {
        "campaign_report"
    }


def test_outputs_by_outcome_are_exact(proof: Proof) -> None:
    """Outputs by outcome, mode and skip reason, the exceptions the app got, check durations,
    facts and live traces match the mix exactly."""
    proof.finished()
    server, want = proof.bad.server, proof.bad.expected
    labels = ("groundplane_outcome", "groundplane_mode", "groundplane_skip_reason")
    outputs = _by(server, f"sum by ({', '.join(labels)}) (groundplane_outputs_total)", labels)
    assert outputs == dict(want.outputs)
    assert outputs == {
        ("passed", "enforce", ""): 1 * TICKS,
        ("blocked", "enforce", ""): 5 * TICKS,
        ("skipped", "enforce", "refusal"): 2 * TICKS,
        ("error", "enforce", ""): 2 * TICKS,
        ("passed", "observe", ""): 1 * TICKS,
        ("flagged", "observe", ""): 1 * TICKS,
    }
    assert proof.bad.app.raised == want.raised
    assert want.raised == {"UnsupportedClaim": 5 * TICKS, "OutputUnchecked": 2 * TICKS}
    checked = sum(n for (outcome, _, _), n in want.outputs.items() if outcome != "skipped")
    assert _value(server, "sum(groundplane_check_duration_seconds_count)") == checked
    facts = _by(
        server,
        "sum by (groundplane_fact_kind, groundplane_fact_source, groundplane_fact_outcome)"
        " (groundplane_facts_total)",
        ("groundplane_fact_kind", "groundplane_fact_source", "groundplane_fact_outcome"),
    )
    assert facts == {("table", "genai", "recorded"): want.tool_calls}
    assert _value(server, "sum(groundplane_traces_active)") == 0  # every trace was evicted


def test_clean_mix_counts_are_exact(proof: Proof) -> None:
    """The clean mix reaches Prometheus as supported claims and passed outputs only."""
    proof.finished()
    server, want = proof.clean.server, proof.clean.expected
    verdicts = _by(
        server, "sum by (groundplane_verdict) (groundplane_claims_total)", ("groundplane_verdict",)
    )
    assert verdicts == want.claims_by_verdict()
    assert verdicts == {"supported": 36 * TICKS}
    outcomes = _by(
        server, "sum by (groundplane_outcome) (groundplane_outputs_total)", ("groundplane_outcome",)
    )
    assert outcomes == {"passed": 12 * TICKS}
    assert proof.clean.app.raised == Counter()


@pytest.mark.parametrize("expr", dashboard_exprs() + variable_queries())
def test_dashboard_query_returns_the_guards_data(proof: Proof, expr: str) -> None:
    """Every dashboard query, variables substituted, parses and returns a number computed from
    the guard's metrics."""
    proof.finished()
    result = proof.bad.server.query(substitute(expr))
    assert result, substitute(expr)
    values = [float(item["value"][1]) for item in result]
    assert any(math.isfinite(v) for v in values), (substitute(expr), values)


def test_agent_queries_split_by_the_configured_agent(proof: Proof) -> None:
    """The agent variable and the per-agent panels return the agent of the demo policy's
    boundary match (gen_ai_agent_name after the exporter's translation), not an empty label."""
    proof.finished()
    agent_queries = [
        expr for expr in dashboard_exprs() + variable_queries() if "by (gen_ai_agent_name" in expr
    ]
    assert len(agent_queries) == 3  # the variable and the two per-agent panels
    for expr in agent_queries:
        result = proof.bad.server.query(substitute(expr))
        agents = {item["metric"].get("gen_ai_agent_name") for item in result}
        assert agents == {"campaign-analyst"}, (substitute(expr), result)


# -- the alert rules ------------------------------------------------------------------------------


def test_bad_mix_fires_every_alert(proof: Proof) -> None:
    """With 22.2% unsupported claims, errors and 17% skipped outputs, every compressed alert
    reaches firing."""
    want = proof.bad.expected
    assert want.unsupported_ratio > PAGE_RATIO
    skipped = sum(n for (outcome, _, _), n in want.outputs.items() if outcome == "skipped")
    assert skipped / sum(want.outputs.values()) > SKIPPED_SHARE
    rules = [rule for group in proof.bad.server.rules() for rule in group["rules"]]
    shipped = _rules(yaml.safe_load(ALERTS.read_text()))
    assert {rule["name"] for rule in rules} == {r.get("alert") or r["record"] for r in shipped}
    assert proof.bad_alerts_fired() == EVERY_ALERT
    assert [r["name"] for r in rules if r["health"] != "ok"] == []


def test_clean_mix_leaves_every_alert_inactive(proof: Proof) -> None:
    """After the wait that fired every alert on the bad mix, the clean mix never had an alert
    pending or firing, although its traffic passed the low-traffic guard."""
    proof.bad_alerts_fired()
    proof.finished()
    server = proof.clean.server
    assert _ever(server) == set()
    assert server.alerts() == []
    # The rules did see the clean traffic: enough claims for the page branch, a ratio of 0.
    claims_per_hour = _value(
        server, f"max_over_time(job:groundplane_claims:rate1h[1h]) * {3600 // SCALE}"
    )
    assert claims_per_hour is not None
    assert claims_per_hour >= 100
    ratio = "(job:groundplane_claims_unsupported:ratio_rate5m >= 0)"
    assert _value(server, f"max_over_time({ratio}[1h:1s])") == 0
    evaluations = _value(server, f"count_over_time({ratio}[1h:1s])")
    assert evaluations is not None
    assert evaluations >= 5


# -- exemplars (SDK and OTLP level) ---------------------------------------------------------------


def _collect(reader: InMemoryMetricReader) -> MetricsData:
    data = reader.get_metrics_data()
    assert data is not None
    return data


def _points(data: MetricsData, name: str) -> list[Any]:
    return [
        point
        for resource in data.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == name
        for point in metric.data.data_points
    ]


def _otlp_exemplars(data: MetricsData, name: str) -> dict[frozenset[Any], list[tuple[int, int]]]:
    """{data point attributes: [(trace_id, span_id)]} as the OTLP protobuf encodes them."""
    out = {}
    for resource in encode_metrics(data).resource_metrics:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name != name:
                    continue
                for point in metric.sum.data_points:
                    attributes = frozenset((a.key, a.value.string_value) for a in point.attributes)
                    out[attributes] = [
                        (int.from_bytes(e.trace_id, "big"), int.from_bytes(e.span_id, "big"))
                        for e in point.exemplars
                    ]
    return out


def _with_exemplars(points: list[Any], key: Callable[[Any], Any]) -> dict[Any, list[Any]]:
    """{key(point): [(trace_id, span_id)]} of the data points that carry exemplars."""
    return {
        key(point): [(e.trace_id, e.span_id) for e in point.exemplars]
        for point in points
        if point.exemplars
    }


def test_metrics_carry_exemplars_of_the_guarded_chat_span() -> None:
    """Each output's claim, output and duration points (SDK and OTLP) carry one exemplar whose
    trace and span ids are those of that output's guarded chat span."""
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    spans = InMemorySpanExporter()
    app = GuardedApp(meters, span_processor=SimpleSpanProcessor(spans))
    scenarios: list[tuple[Scenario, Mode]] = [
        ("right", "enforce"),
        ("wrong_winner", "enforce"),
        ("wrong_winner", "observe"),
        ("fact_missing", "enforce"),
        ("unreadable", "enforce"),
        ("refusal", "enforce"),
    ]
    try:
        for scenario, mode in scenarios:
            run: Run = app.run(scenario, mode)
            ids = [(run.trace_id, run.span_id)]
            data = _collect(reader)  # the exemplar reservoirs start over
            # The exemplar's span is the exported chat span the guard annotated.
            chat = next(s for s in spans.get_finished_spans() if s.context.span_id == run.span_id)
            assert chat.context.trace_id == run.trace_id
            assert (chat.attributes or {})["groundplane.outcome"] == expected_outcome(
                scenario, mode
            )

            def claim_key(point: Any) -> tuple[str, str, str]:
                a = point.attributes
                return a["groundplane.check"], a["groundplane.verdict"], a["groundplane.mode"]

            want = {(f, v, mode): ids for f, v in expected_claims(app.boundary, scenario)}
            assert _with_exemplars(_points(data, "groundplane.claims"), claim_key) == want
            otlp = {k: v for k, v in _otlp_exemplars(data, "groundplane.claims").items() if v}
            assert sorted(otlp.values()) == sorted(want.values())
            outputs = _with_exemplars(
                _points(data, "groundplane.outputs"),
                lambda p: (p.attributes["groundplane.outcome"], p.attributes["groundplane.mode"]),
            )
            assert outputs == {(expected_outcome(scenario, mode), mode): ids}
            durations = _with_exemplars(_points(data, "groundplane.check.duration"), lambda p: 0)
            assert durations == ({} if scenario == "refusal" else {0: ids})
    finally:
        app.close()
        meters.shutdown()


def test_unsampled_output_is_counted_without_exemplar() -> None:
    """An output in a trace the sampler does not export is still checked and counted, but
    carries no exemplar pointing at a trace nobody can open."""
    reader = InMemoryMetricReader()
    meters = MeterProvider(metric_readers=[reader])
    sampler = GuardSampler(ParentBased(TraceIdRatioBased(0.0)))  # export nothing, guard all
    app = GuardedApp(meters, sampler=sampler)
    try:
        run = app.run("wrong_winner", "enforce")
        assert run.raised == "UnsupportedClaim"
        points = _points(_collect(reader), "groundplane.claims")
        assert [
            (p.attributes["groundplane.check"], p.attributes["groundplane.verdict"], p.value)
            for p in points
        ] == [  # every check counted, report mode "first" included
            ("superlative", "unsupported", 1),
            ("ranking_prefix", "supported", 1),
            ("aggregate_reconciles", "supported", 1),
        ]
        assert [p.exemplars for p in points] == [[], [], []]
    finally:
        app.close()
        meters.shutdown()
