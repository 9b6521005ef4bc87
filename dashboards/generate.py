"""Generate dashboards/groundplane.json, the Grafana dashboard for the groundplane_otel metrics.

Run ``python dashboards/generate.py`` after editing; a test checks the committed JSON matches.
Metric and label names follow the telemetry contract (DESIGN.md section 4) as Prometheus sees
them after the OpenTelemetry name translation.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

OUT = Path(__file__).with_name("groundplane.json")
DS = {"type": "prometheus", "uid": "${datasource}"}
SCHEMA_VERSION = 39

# Label filters driven by the dashboard variables.
JOB = 'job=~"$job"'
BOUNDARY = 'groundplane_boundary=~"$boundary"'
CHECK = 'groundplane_check=~"$check"'
MODE = 'groundplane_mode=~"$mode"'
# gen_ai.agent.name: written only for boundaries matched by agent name (values bounded by the
# policy); the All value ".*" also matches series without the label.
AGENT = 'gen_ai_agent_name=~"$agent"'
CLAIMS = f"{JOB}, {AGENT}, {BOUNDARY}, {CHECK}, {MODE}"
OUTPUTS = f"{JOB}, {AGENT}, {BOUNDARY}, {MODE}"
UNSUPPORTED = f'groundplane_claims_total{{{CLAIMS}, groundplane_verdict="unsupported"}}'
ALL_CLAIMS = f"groundplane_claims_total{{{CLAIMS}}}"


def target(expr: str, legend: str = "", *, ref: str = "A", instant: bool = False,
           table: bool = False) -> dict[str, Any]:
    """One Prometheus query; exemplars are requested for every counter or histogram query."""
    counter = "_total" in expr or "_bucket" in expr
    t: dict[str, Any] = {
        "datasource": DS,
        "refId": ref,
        "expr": expr,
        "legendFormat": legend or "__auto",
        "range": not instant,
        "instant": instant,
        "exemplar": counter,
    }
    if table:
        t["format"] = "table"
    return t


def panel(kind: str, title: str, description: str, unit: str, targets: list[dict[str, Any]],
          *, grid: tuple[int, int, int, int], **options: Any) -> dict[str, Any]:
    """A panel with the data source variable, a description, a unit and a grid position."""
    x, y, w, h = grid
    p: dict[str, Any] = {
        "type": kind,
        "title": title,
        "description": description,
        "datasource": DS,
        "gridPos": {"x": x, "y": y, "w": w, "h": h},
        "fieldConfig": {"defaults": {"unit": unit, **options.pop("defaults", {})}, "overrides": []},
        "options": options.pop("panel_options", {}),
        "targets": targets,
    }
    p.update(options)
    return p


def variable(name: str, label: str, query: str) -> dict[str, Any]:
    """A multi-select label_values variable refreshed on time range change, with an All option."""
    return {
        "type": "query",
        "name": name,
        "label": label,
        "datasource": DS,
        "query": {"query": query, "refId": f"var-{name}"},
        "definition": query,
        "refresh": 2,
        "multi": True,
        "includeAll": True,
        "allValue": ".*",
        "current": {"selected": True, "text": ["All"], "value": ["$__all"]},
        "sort": 1,
        "hide": 0,
        "options": [],
        "regex": "",
    }


def templating() -> dict[str, Any]:
    datasource = {
        "type": "datasource",
        "name": "datasource",
        "label": "Data source",
        "query": "prometheus",
        "refresh": 1,
        "hide": 0,
        "current": {},
        "options": [],
        "regex": "",
    }
    return {
        "list": [
            datasource,
            variable("job", "Service", "label_values(groundplane_outputs_total, job)"),
            variable(
                "agent",
                "Agent",
                'label_values(groundplane_outputs_total{job=~"$job"}, gen_ai_agent_name)',
            ),
            variable(
                "boundary",
                "Boundary",
                f"label_values(groundplane_outputs_total{{{JOB}, {AGENT}}}, groundplane_boundary)",
            ),
            variable(
                "check",
                "Check family",
                f"label_values(groundplane_claims_total{{{JOB}, {AGENT}, {BOUNDARY}}}, "
                "groundplane_check)",
            ),
            variable(
                "mode",
                "Mode",
                'label_values(groundplane_outputs_total{job=~"$job"}, groundplane_mode)',
            ),
        ]
    }


def ratio(window: str) -> str:
    fn = "increase" if window == "$__range" else "rate"
    return (
        f"sum({fn}({UNSUPPORTED}[{window}]))\n/\nsum({fn}({ALL_CLAIMS}[{window}]))"
    )


def panels() -> list[dict[str, Any]]:
    thresholds = {
        "mode": "absolute",
        "steps": [
            {"color": "green", "value": None},
            {"color": "orange", "value": 0.01},
            {"color": "red", "value": 0.06},
        ],
    }
    return [
        panel(
            "stat", "Unsupported-claim ratio",
            "Share of evaluated claims that were unsupported over the selected time range. "
            "The SLO allows 1% (orange); red is the 6x burn rate of the page alert.",
            "percentunit",
            [target(ratio("$__range"), "ratio", instant=True)],
            grid=(0, 0, 6, 6),
            defaults={"thresholds": thresholds, "decimals": 2},
            panel_options={"reduceOptions": {"calcs": ["lastNotNull"]}, "colorMode": "background"},
        ),
        panel(
            "timeseries", "Unsupported-claim ratio over time",
            "unsupported / all claims, rate over $__rate_interval. Exemplars link to the trace of "
            "a guarded span (Collector OpenMetrics path only).",
            "percentunit",
            [target(ratio("$__rate_interval"), "unsupported ratio")],
            grid=(6, 0, 12, 6),
            defaults={"thresholds": thresholds, "custom": {"thresholdsStyle": {"mode": "line"}}},
        ),
        panel(
            "stat", "Live traces",
            "Traces with a live fact registry in the guard right now (bounded by max live traces).",
            "short",
            [target(f"sum(groundplane_traces_active{{{JOB}}})", "live traces", instant=True)],
            grid=(18, 0, 6, 6),
            panel_options={"reduceOptions": {"calcs": ["lastNotNull"]}},
        ),
        panel(
            "timeseries", "Outputs blocked / flagged / skipped / errored per boundary",
            "Guarded LLM outputs per second that did not pass, by boundary and outcome. Skipped "
            "means checks did not run; error means the output could not be checked (fails closed "
            "in enforce mode).",
            "cps",
            [target(
                "sum by (groundplane_boundary, groundplane_outcome) (rate(groundplane_outputs_total"
                f'{{{OUTPUTS}, groundplane_outcome=~"blocked|flagged|skipped|error"}}'
                "[$__rate_interval]))",
                "{{groundplane_boundary}} {{groundplane_outcome}}",
            )],
            grid=(0, 6, 12, 8),
        ),
        panel(
            "timeseries", "Unsupported claims by check family",
            "Unsupported claims per second, by check family (groundplane_check).",
            "cps",
            [target(
                f"sum by (groundplane_check) (rate({UNSUPPORTED}[$__rate_interval]))",
                "{{groundplane_check}}",
            )],
            grid=(12, 6, 12, 8),
        ),
        panel(
            "table", "Top boundaries x checks by unsupported claims",
            "The 10 boundary/check pairs with the most unsupported claims in the time range.",
            "short",
            [target(
                "topk(10, sum by (groundplane_boundary, groundplane_check) "
                f"(increase({UNSUPPORTED}[$__range])))",
                instant=True, table=True,
            )],
            grid=(0, 14, 12, 8),
            transformations=[{"id": "organize", "options": {"excludeByName": {"Time": True}}}],
        ),
        panel(
            "table", "Top fact kinds x sources by outcome",
            "The 10 fact kind/source/outcome combinations with the most facts in the time range; "
            "conflict, truncated, unparseable and rejected facts make checks fail closed.",
            "short",
            [target(
                "topk(10, sum by (groundplane_fact_kind, groundplane_fact_source, "
                "groundplane_fact_outcome) "
                f"(increase(groundplane_facts_total{{{JOB}}}[$__range])))",
                instant=True, table=True,
            )],
            grid=(12, 14, 12, 8),
            transformations=[{"id": "organize", "options": {"excludeByName": {"Time": True}}}],
        ),
        panel(
            "timeseries", "Check latency p50 / p99",
            "Time the guard spends checking one output, per boundary (histogram quantiles).",
            "s",
            [
                target(
                    f"histogram_quantile({q}, sum by (le, groundplane_boundary) "
                    f"(rate(groundplane_check_duration_seconds_bucket{{{JOB}, {AGENT}, {BOUNDARY}}}"
                    "[$__rate_interval])))",
                    f"p{int(q * 100)} {{{{groundplane_boundary}}}}", ref=ref,
                )
                for q, ref in ((0.5, "A"), (0.99, "B"))
            ],
            grid=(0, 22, 12, 8),
        ),
        panel(
            "timeseries", "Facts by outcome",
            "Facts per second by outcome: recorded vs conflict, truncated, unparseable, rejected "
            "and evicted.",
            "cps",
            [target(
                "sum by (groundplane_fact_outcome) (rate(groundplane_facts_total"
                f"{{{JOB}}}[$__rate_interval]))",
                "{{groundplane_fact_outcome}}",
            )],
            grid=(12, 22, 12, 8),
        ),
        panel(
            "timeseries", "Skipped outputs by reason",
            "Matched outputs whose checks did not run, per second, by boundary and skip reason "
            "(refusal: the model refused; span_error: the LLM call failed). No grounding check "
            "ran on these outputs.",
            "cps",
            [target(
                "sum by (groundplane_boundary, groundplane_skip_reason) (rate("
                f'groundplane_outputs_total{{{OUTPUTS}, groundplane_outcome="skipped"}}'
                "[$__rate_interval]))",
                "{{groundplane_boundary}} {{groundplane_skip_reason}}",
            )],
            grid=(0, 30, 12, 8),
        ),
        panel(
            "timeseries", "Guard errors",
            "Outputs that could not be checked (outcome error) and claims whose check errored "
            "(verdict error), per second. Enforce mode fails closed: these outputs were refused.",
            "cps",
            [
                target(
                    "sum by (groundplane_boundary) (rate(groundplane_outputs_total"
                    f'{{{OUTPUTS}, groundplane_outcome="error"}}[$__rate_interval]))',
                    "outputs {{groundplane_boundary}}",
                ),
                target(
                    "sum by (groundplane_boundary, groundplane_check) "
                    f'(rate(groundplane_claims_total{{{CLAIMS}, groundplane_verdict="error"}}'
                    "[$__rate_interval]))",
                    "claims {{groundplane_boundary}} {{groundplane_check}}", ref="B",
                ),
            ],
            grid=(12, 30, 12, 8),
        ),
        panel(
            "timeseries", "Outputs per agent by outcome",
            "Guarded outputs per second, by agent (gen_ai_agent_name, from the boundary's "
            "configured match) and outcome. Outputs of boundaries not matched by agent name have "
            "no agent.",
            "cps",
            [target(
                "sum by (gen_ai_agent_name, groundplane_outcome) (rate(groundplane_outputs_total"
                f"{{{OUTPUTS}}}[$__rate_interval]))",
                "{{gen_ai_agent_name}} {{groundplane_outcome}}",
            )],
            grid=(0, 38, 12, 8),
        ),
        panel(
            "timeseries", "Unsupported-claim ratio per agent",
            "unsupported / all claims per agent, rate over $__rate_interval (0 for an agent "
            "with no unsupported claim).",
            "percentunit",
            [target(
                f"(sum by (gen_ai_agent_name) (rate({UNSUPPORTED}[$__rate_interval]))\n"
                f"or\n0 * sum by (gen_ai_agent_name) (rate({ALL_CLAIMS}[$__rate_interval])))\n"
                f"/\nsum by (gen_ai_agent_name) (rate({ALL_CLAIMS}[$__rate_interval]))",
                "{{gen_ai_agent_name}}",
            )],
            grid=(12, 38, 12, 8),
        ),
    ]


def dashboard() -> dict[str, Any]:
    items = panels()
    for i, p in enumerate(items, start=1):
        p["id"] = i
    return {
        "uid": "groundplane-otel",
        "title": "groundplane_otel — grounding guard",
        "description": "Unsupported claims, guarded outputs, facts and guard health.",
        "tags": ["groundplane", "opentelemetry", "llm"],
        "schemaVersion": SCHEMA_VERSION,
        "version": 1,
        "editable": True,
        "graphTooltip": 1,
        "time": {"from": "now-6h", "to": "now"},
        "refresh": "30s",
        "timezone": "",
        "templating": templating(),
        "annotations": {"list": []},
        "links": [],
        "panels": items,
    }


def render() -> str:
    return json.dumps(dashboard(), indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    OUT.write_text(render(), encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
