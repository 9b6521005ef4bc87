"""The Grafana dashboard follows the lint rules and matches its generator; provisioning is sound."""

from __future__ import annotations

import copy
import importlib.util
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.cog.plugins import register_default_plugins
from grafana_foundation_sdk.models.dashboard import Dashboard

REPO = Path(__file__).parents[1]
DASHBOARDS = REPO / "dashboards"
BOARD = DASHBOARDS / "groundplane.json"
PROVISIONING = DASHBOARDS / "provisioning"
DS_VAR = "${datasource}"
RANGES = ("[$__rate_interval]", "[$__range]")
# Counter series (and the cumulative series of a histogram) must only appear inside rate/increase.
COUNTER = re.compile(r"\b\w+(_total|_bucket|_count|_sum)\b")
REQUIRED_VARIABLES = {"job", "agent", "boundary", "check", "mode"}
# 41 is the schemaVersion the generator's SDK emits (grafana-foundation-sdk built for Grafana
# 11.6, the Grafana of docker-compose.yaml).
SCHEMA_VERSIONS = (39, 41)


def _calls(expr: str, names: tuple[str, ...] = ("rate", "increase")) -> list[tuple[int, int]]:
    """(start, end) spans of each rate(...)/increase(...) call, parentheses balanced."""
    spans = []
    for match in re.finditer(rf"\b({'|'.join(names)})\(", expr):
        depth, i = 1, match.end()
        while depth and i < len(expr):
            depth += {"(": 1, ")": -1}.get(expr[i], 0)
            i += 1
        spans.append((match.start(), i))
    return spans


def lint_expr(expr: str) -> list[str]:
    """PromQL rules: range functions use Grafana intervals; counters only inside rate/increase."""
    errors = []
    outside = expr
    for start, end in _calls(expr):
        call = expr[start:end]
        if not call[:-1].rstrip().endswith(RANGES):
            errors.append(f"{call.split('(')[0]}() without $__rate_interval or $__range: {call}")
        outside = outside[:start] + " " * (end - start) + outside[end:]
    for match in COUNTER.finditer(outside):
        errors.append(f"counter {match[0]} used outside rate()/increase()")
    return errors


def lint_dashboard(board: dict[str, Any]) -> list[str]:
    """Every rule the dashboard must satisfy; returns the violations."""
    errors = []
    low, high = SCHEMA_VERSIONS
    if not low <= board.get("schemaVersion", 0) <= high:
        errors.append(f"schemaVersion {board.get('schemaVersion')} not in {low}..{high}")
    variables = {v["name"]: v for v in board.get("templating", {}).get("list", [])}
    ds = variables.get("datasource")
    if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        errors.append("missing datasource variable of type prometheus")
    for name in sorted(REQUIRED_VARIABLES):
        var = variables.get(name)
        if var is None:
            errors.append(f"missing variable {name}")
            continue
        if not (var.get("multi") and var.get("includeAll") and var.get("refresh") == 2):
            errors.append(f"variable {name}: needs multi, includeAll and refresh=2")
        if var.get("datasource", {}).get("uid") != DS_VAR:
            errors.append(f"variable {name}: datasource is not {DS_VAR}")
        if not str(var.get("query", {}).get("query", "")).startswith("label_values("):
            errors.append(f"variable {name}: not a label_values() query")
    ids = [p.get("id") for p in board.get("panels", [])]
    if len(ids) != len(set(ids)):
        errors.append(f"duplicate panel ids: {ids}")
    for panel in board.get("panels", []):
        where = f"panel {panel.get('id')} {panel.get('title')!r}"
        for key in ("title", "description"):
            if not panel.get(key):
                errors.append(f"{where}: missing {key}")
        if not panel.get("fieldConfig", {}).get("defaults", {}).get("unit"):
            errors.append(f"{where}: missing unit")
        if not {"x", "y", "w", "h"} <= set(panel.get("gridPos", {})):
            errors.append(f"{where}: missing gridPos")
        if panel.get("datasource", {}).get("uid") != DS_VAR:
            errors.append(f"{where}: datasource is not {DS_VAR}")
        if not panel.get("targets"):
            errors.append(f"{where}: no targets")
        for target in panel.get("targets", []):
            expr = target.get("expr", "")
            if target.get("datasource", {}).get("uid") != DS_VAR:
                errors.append(f"{where} target {target.get('refId')}: datasource is not {DS_VAR}")
            if COUNTER.search(expr) and target.get("exemplar") is not True:
                errors.append(f"{where} target {target.get('refId')}: counter without exemplar")
            errors.extend(f"{where}: {e}" for e in lint_expr(expr))
    return errors


def _board() -> dict[str, Any]:
    board: dict[str, Any] = json.loads(BOARD.read_text())
    return board


def _generator() -> Any:
    spec = importlib.util.spec_from_file_location("dashboard_generate", DASHBOARDS / "generate.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dashboard_is_clean() -> None:
    """The committed dashboard passes every lint rule."""
    assert lint_dashboard(_board()) == []


def test_json_matches_generator() -> None:
    """groundplane.json is exactly what dashboards/generate.py renders (run it after editing)."""
    assert BOARD.read_text(encoding="utf-8") == _generator().render()


def test_required_panels_present() -> None:
    """The panels the issue asks for exist, each with at least one query."""
    titles = {p["title"] for p in _board()["panels"]}
    assert {
        "Unsupported-claim ratio",
        "Unsupported-claim ratio over time",
        "Outputs blocked / flagged / skipped / errored per boundary",
        "Unsupported claims by check family",
        "Top boundaries x checks by unsupported claims",
        "Check latency p50 / p99",
        "Facts by outcome",
        "Live traces",
        "Outputs per agent by outcome",
        "Unsupported-claim ratio per agent",
        "Coverage: traces with a boundary's facts, matched or not",
    } <= titles
    kinds = {p["type"] for p in _board()["panels"]}
    assert {"stat", "timeseries", "table"} <= kinds
    exprs = " ".join(t["expr"] for p in _board()["panels"] for t in p["targets"])
    assert "histogram_quantile(0.99" in exprs
    assert "topk(" in exprs
    assert "sum by (gen_ai_agent_name" in exprs
    assert "groundplane_coverage_total{" in exprs  # groundplane.coverage, by boundary/outcome


def test_every_guard_query_filters_by_the_agent_variable() -> None:
    """The agent variable reads gen_ai_agent_name and every claims/outputs/duration query of a
    panel honours it (the facts and live-trace gauges carry no agent)."""
    board = _board()
    (agent,) = [v for v in board["templating"]["list"] if v["name"] == "agent"]
    assert agent["query"]["query"] == (
        'label_values(groundplane_outputs_total{job=~"$job"}, gen_ai_agent_name)'
    )
    for p in board["panels"]:
        for t in p["targets"]:
            for series in re.findall(
                r"groundplane_(?:claims|outputs|check_duration)\w*\{[^}]*\}", t["expr"]
            ):
                assert 'gen_ai_agent_name=~"$agent"' in series, (p["title"], series)


def test_stat_and_table_panels_use_range() -> None:
    """Stat and table panels over counters aggregate over $__range, not the rate interval."""
    for panel in _board()["panels"]:
        if panel["type"] in ("stat", "table"):
            for target in panel["targets"]:
                if COUNTER.search(target["expr"]):
                    assert "[$__range]" in target["expr"], panel["title"]


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("sum(rate(x_total[$__rate_interval]))", []),
        ("sum(increase(x_total[$__range])) / sum(increase(y_total[$__range]))", []),
        (
            "sum(rate(x_total[5m]))",
            ["rate() without $__rate_interval or $__range: rate(x_total[5m])"],
        ),
        ("sum(x_total)", ["counter x_total used outside rate()/increase()"]),
        (
            "histogram_quantile(0.5, sum by (le) (h_bucket))",
            ["counter h_bucket used outside rate()/increase()"],
        ),
        ("max(groundplane_traces_active)", []),
    ],
)
def test_expr_lint(expr: str, expected: list[str]) -> None:
    """The PromQL rules catch fixed ranges and raw counters, and accept the right forms."""
    assert lint_expr(expr) == expected


def _mutated(change: Any) -> list[str]:
    board = copy.deepcopy(_board())
    change(board)
    return lint_dashboard(board)


def test_lint_catches_hardcoded_datasource() -> None:
    """A panel or target with a fixed data source uid is reported."""

    def change(b: dict[str, Any]) -> None:
        b["panels"][0]["datasource"] = {"type": "prometheus", "uid": "abc"}
        b["panels"][0]["targets"][0]["datasource"] = {"type": "prometheus", "uid": "abc"}

    assert _mutated(change) == [
        "panel 1 'Unsupported-claim ratio': datasource is not ${datasource}",
        "panel 1 'Unsupported-claim ratio' target A: datasource is not ${datasource}",
    ]


def test_lint_catches_missing_unit_description_gridpos() -> None:
    """Missing unit, description and gridPos are reported."""

    def change(b: dict[str, Any]) -> None:
        p = b["panels"][2]
        del p["fieldConfig"]["defaults"]["unit"], p["description"], p["gridPos"]

    assert _mutated(change) == [
        "panel 3 'Live traces': missing description",
        "panel 3 'Live traces': missing unit",
        "panel 3 'Live traces': missing gridPos",
    ]


def test_lint_catches_exemplar_off_and_duplicate_ids() -> None:
    """A counter target without exemplars and duplicate panel ids are reported."""

    def change(b: dict[str, Any]) -> None:
        b["panels"][1]["targets"][0]["exemplar"] = False
        b["panels"][1]["id"] = 1

    assert _mutated(change) == [
        f"duplicate panel ids: {[1, 1, *range(3, len(_board()['panels']) + 1)]}",
        "panel 1 'Unsupported-claim ratio over time' target A: counter without exemplar",
    ]


def test_lint_catches_variables_and_schema() -> None:
    """Wrong schemaVersion, a single-value variable and a missing variable are reported."""

    def change(b: dict[str, Any]) -> None:
        b["schemaVersion"] = 27
        b["templating"]["list"] = [v for v in b["templating"]["list"] if v["name"] != "mode"]
        next(v for v in b["templating"]["list"] if v["name"] == "check")["multi"] = False

    assert _mutated(change) == [
        "schemaVersion 27 not in 39..41",
        "variable check: needs multi, includeAll and refresh=2",
        "missing variable mode",
    ]


def _sdk_round_trip(board: dict[str, Any]) -> dict[str, Any]:
    """The board decoded into the SDK's typed models (panel options and field config included)
    and encoded back: a field outside the SDK's schema is dropped."""
    register_default_plugins()
    encoded: dict[str, Any] = json.loads(json.dumps(Dashboard.from_json(board), cls=JSONEncoder))
    return encoded


def test_dashboard_is_the_sdk_schema() -> None:
    """The committed dashboard survives the SDK's typed models unchanged and declares the
    schemaVersion of the SDK's dashboard schema."""
    board = _board()
    assert _sdk_round_trip(board) == board
    assert board["schemaVersion"] == Dashboard().schema_version == 41


def test_sdk_round_trip_drops_a_field_outside_the_schema() -> None:
    """A variable field the SDK's schema lacks (the UI's ``definition``) does not survive the
    round trip, so the check above can fail."""
    board = copy.deepcopy(_board())
    board["templating"]["list"][1]["definition"] = "label_values(groundplane_outputs_total, job)"
    back = _sdk_round_trip(board)
    assert back != board
    del board["templating"]["list"][1]["definition"]
    assert back == board


def test_datasource_provisioning_links_exemplars_to_tempo() -> None:
    """Prometheus exemplars link trace_id to the provisioned Tempo data source uid."""
    doc = yaml.safe_load((PROVISIONING / "datasources" / "datasources.yaml").read_text())
    assert doc["apiVersion"] == 1
    by_type = {d["type"]: d for d in doc["datasources"]}
    assert set(by_type) == {"prometheus", "tempo"}
    for ds in doc["datasources"]:
        assert {"name", "type", "uid", "url", "access"} <= set(ds), ds["name"]
    links = by_type["prometheus"]["jsonData"]["exemplarTraceIdDestinations"]
    assert links == [{"name": "trace_id", "datasourceUid": by_type["tempo"]["uid"]}]
    assert by_type["tempo"]["uid"] == "tempo"


def test_dashboard_provider() -> None:
    """The dashboard provider is a file provider reading a folder."""
    doc = yaml.safe_load((PROVISIONING / "dashboards" / "dashboards.yaml").read_text())
    assert doc["apiVersion"] == 1
    (provider,) = doc["providers"]
    assert provider["type"] == "file"
    assert provider["options"]["path"].startswith("/")
