"""Generate dashboards/groundplane.json, the Grafana dashboard for the groundplane_otel metrics.

Built with Grafana's typed builders (``grafana-foundation-sdk``, the ``dashboards`` extra), so the
JSON has the shape of the SDK's dashboard schema. Run ``python dashboards/generate.py`` after
editing; a test checks the committed JSON matches. Metric and label names follow the telemetry
contract (DESIGN.md section 4) as Prometheus sees them after the OpenTelemetry name translation.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TypeVar

from grafana_foundation_sdk.builders import common as cb
from grafana_foundation_sdk.builders import dashboard as db
from grafana_foundation_sdk.builders import prometheus, stat, table, timeseries
from grafana_foundation_sdk.cog.builder import Builder
from grafana_foundation_sdk.cog.encoder import JSONEncoder
from grafana_foundation_sdk.models import common as cm
from grafana_foundation_sdk.models import dashboard as dm
from grafana_foundation_sdk.models.prometheus import PromQueryFormat

OUT = Path(__file__).with_name("groundplane.json")
DS = dm.DataSourceRef(type_val="prometheus", uid="${datasource}")

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

# The SLO allows 1% unsupported claims (orange); red is the 6x burn rate of the page alert.
SLO_STEPS = (("green", None), ("orange", 0.01), ("red", 0.06))
# Only the table panels hide the time column.
HIDE_TIME = dm.DataTransformerConfig(id_val="organize", options={"excludeByName": {"Time": True}})

Grid = tuple[int, int, int, int]
Query = prometheus.Dataquery
AnyPanel = TypeVar("AnyPanel", stat.Panel, timeseries.Panel, table.Panel)


def query(
    expr: str, legend: str = "", *, ref: str = "A", instant: bool = False, table: bool = False
) -> Query:
    """One Prometheus query; exemplars are requested for every counter or histogram query."""
    q = (
        Query()
        .datasource(DS)
        .ref_id(ref)
        .expr(expr)
        .legend_format(legend or "__auto")
        .exemplar("_total" in expr or "_bucket" in expr)
    )
    q = q.instant() if instant else q.range()
    return q.format(PromQueryFormat.TABLE) if table else q


def framed(
    p: AnyPanel, title: str, description: str, unit: str, targets: Sequence[Query], grid: Grid
) -> AnyPanel:
    """What every panel carries: the data source variable, a description, a unit, a position."""
    x, y, w, h = grid
    return (
        p.title(title)
        .description(description)
        .datasource(DS)
        .grid_pos(dm.GridPos(x=x, y=y, w=w, h=h))
        .unit(unit)
        .targets(list(targets))
    )


def series(
    title: str, description: str, unit: str, targets: list[Query], grid: Grid, *, slo: bool = False
) -> timeseries.Panel:
    """A time series panel; with ``slo``, the SLO thresholds are drawn as lines, else none are.

    Legend (list, bottom, shown) and tooltip (single, unsorted) are Grafana's defaults, set
    explicitly because the SDK's model defaults differ (legend hidden, tooltip sorted ascending).
    """
    legend = (
        cb.VizLegendOptions()
        .display_mode(cm.LegendDisplayMode.LIST)
        .placement(cm.LegendPlacement.BOTTOM)
        .show_legend(True)
        .calcs([])
    )
    tooltip = cb.VizTooltipOptions().mode(cm.TooltipDisplayMode.SINGLE).sort(cm.SortOrder.NONE)
    style = cm.GraphThresholdsStyleMode.LINE if slo else cm.GraphThresholdsStyleMode.OFF
    p = (
        timeseries.Panel()
        .legend(legend)
        .tooltip(tooltip)
        .thresholds_style(cb.GraphThresholdsStyleConfig().mode(style))
    )
    if slo:
        p = p.thresholds(slo_thresholds())
    return framed(p, title, description, unit, targets, grid)


def top10(title: str, description: str, target: Query, grid: Grid) -> table.Panel:
    """A table of an instant topk() query, the time column hidden, cells aligned by Grafana."""
    p = (
        table.Panel()
        .show_header(True)
        .align(cm.FieldTextAlignment.AUTO)
        .with_transformation(HIDE_TIME)
    )
    return framed(p, title, description, "short", [target], grid)


def last_value(title: str, description: str, unit: str, target: Query, grid: Grid) -> stat.Panel:
    """A stat panel showing the last non-null value of one instant query."""
    p = stat.Panel().reduce_options(cb.ReduceDataOptions().calcs(["lastNotNull"]))
    return framed(p, title, description, unit, [target], grid)


def slo_thresholds() -> db.ThresholdsConfig:
    """Green below the 1% SLO, orange from it, red from the page alert's 6x burn rate."""
    steps = [dm.Threshold(color=color, value=value) for color, value in SLO_STEPS]
    return db.ThresholdsConfig().mode(dm.ThresholdsMode.ABSOLUTE).steps(steps)


def variable(name: str, label: str, promql: str) -> db.QueryVariable:
    """A multi-select label_values variable refreshed on time range change, with an All option."""
    return (
        db.QueryVariable(name)
        .label(label)
        .datasource(DS)
        .query({"query": promql, "refId": f"var-{name}"})
        .refresh(dm.VariableRefresh.ON_TIME_RANGE_CHANGED)
        .multi(True)
        .include_all(True)
        .all_value(".*")
        .current(dm.VariableOption(selected=True, text=["All"], value=["$__all"]))
        .sort(dm.VariableSort.ALPHABETICAL_ASC)
        .options([])
        .regex("")
    )


def variables() -> list[Builder[dm.VariableModel]]:
    """The Prometheus data source, then job, agent, boundary, check family and mode."""
    datasource = (
        db.DatasourceVariable("datasource").label("Data source").type("prometheus").regex("")
    )
    return [
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


def ratio(window: str) -> str:
    """unsupported / all claims: increase over the time range, or rate over a rate interval."""
    fn = "increase" if window == "$__range" else "rate"
    return f"sum({fn}({UNSUPPORTED}[{window}]))\n/\nsum({fn}({ALL_CLAIMS}[{window}]))"


def panels() -> list[stat.Panel | timeseries.Panel | table.Panel]:
    """Every panel, in reading order (left to right, top to bottom of a 24-column grid)."""
    return [
        last_value(
            "Unsupported-claim ratio",
            "Share of evaluated claims that were unsupported over the selected time range. "
            "The SLO allows 1% (orange); red is the 6x burn rate of the page alert.",
            "percentunit",
            query(ratio("$__range"), "ratio", instant=True),
            (0, 0, 6, 6),
        )
        .thresholds(slo_thresholds())
        .decimals(2)
        .color_mode(cm.BigValueColorMode.BACKGROUND),
        series(
            "Unsupported-claim ratio over time",
            "unsupported / all claims, rate over $__rate_interval. Exemplars link to the trace of "
            "a guarded span (Collector OpenMetrics path only).",
            "percentunit",
            [query(ratio("$__rate_interval"), "unsupported ratio")],
            (6, 0, 12, 6),
            slo=True,
        ),
        last_value(
            "Live traces",
            "Traces with a live fact registry in the guard right now (bounded by max live traces).",
            "short",
            query(f"sum(groundplane_traces_active{{{JOB}}})", "live traces", instant=True),
            (18, 0, 6, 6),
        ),
        series(
            "Outputs blocked / flagged / skipped / errored per boundary",
            "Guarded LLM outputs per second that did not pass, by boundary and outcome. Skipped "
            "means checks did not run; error means the output could not be checked (fails closed "
            "in enforce mode).",
            "cps",
            [
                query(
                    "sum by (groundplane_boundary, groundplane_outcome) (rate("
                    "groundplane_outputs_total"
                    f'{{{OUTPUTS}, groundplane_outcome=~"blocked|flagged|skipped|error"}}'
                    "[$__rate_interval]))",
                    "{{groundplane_boundary}} {{groundplane_outcome}}",
                )
            ],
            (0, 6, 12, 8),
        ),
        series(
            "Unsupported claims by check family",
            "Unsupported claims per second, by check family (groundplane_check).",
            "cps",
            [
                query(
                    f"sum by (groundplane_check) (rate({UNSUPPORTED}[$__rate_interval]))",
                    "{{groundplane_check}}",
                )
            ],
            (12, 6, 12, 8),
        ),
        top10(
            "Top boundaries x checks by unsupported claims",
            "The 10 boundary/check pairs with the most unsupported claims in the time range.",
            query(
                "topk(10, sum by (groundplane_boundary, groundplane_check) "
                f"(increase({UNSUPPORTED}[$__range])))",
                instant=True,
                table=True,
            ),
            (0, 14, 12, 8),
        ),
        top10(
            "Top fact kinds x sources by outcome",
            "The 10 fact kind/source/outcome combinations with the most facts in the time range; "
            "conflict, truncated, unparseable and rejected facts make checks fail closed.",
            query(
                "topk(10, sum by (groundplane_fact_kind, groundplane_fact_source, "
                "groundplane_fact_outcome) "
                f"(increase(groundplane_facts_total{{{JOB}}}[$__range])))",
                instant=True,
                table=True,
            ),
            (12, 14, 12, 8),
        ),
        series(
            "Check latency p50 / p99",
            "Time the guard spends checking one output, per boundary (histogram quantiles).",
            "s",
            [
                query(
                    f"histogram_quantile({q}, sum by (le, groundplane_boundary) "
                    f"(rate(groundplane_check_duration_seconds_bucket{{{JOB}, {AGENT}, {BOUNDARY}}}"
                    "[$__rate_interval])))",
                    f"p{int(q * 100)} {{{{groundplane_boundary}}}}",
                    ref=ref,
                )
                for q, ref in ((0.5, "A"), (0.99, "B"))
            ],
            (0, 22, 12, 8),
        ),
        series(
            "Facts by outcome",
            "Facts per second by outcome: recorded vs conflict, truncated, unparseable, rejected "
            "and evicted.",
            "cps",
            [
                query(
                    "sum by (groundplane_fact_outcome) (rate(groundplane_facts_total"
                    f"{{{JOB}}}[$__rate_interval]))",
                    "{{groundplane_fact_outcome}}",
                )
            ],
            (12, 22, 12, 8),
        ),
        series(
            "Skipped outputs by reason",
            "Matched outputs whose checks did not run, per second, by boundary and skip reason "
            "(refusal: the model refused; span_error: the LLM call failed). No grounding check "
            "ran on these outputs.",
            "cps",
            [
                query(
                    "sum by (groundplane_boundary, groundplane_skip_reason) (rate("
                    f'groundplane_outputs_total{{{OUTPUTS}, groundplane_outcome="skipped"}}'
                    "[$__rate_interval]))",
                    "{{groundplane_boundary}} {{groundplane_skip_reason}}",
                )
            ],
            (0, 30, 12, 8),
        ),
        series(
            "Guard errors",
            "Outputs that could not be checked (outcome error) and claims whose check errored "
            "(verdict error), per second. Enforce mode fails closed: these outputs were refused.",
            "cps",
            [
                query(
                    "sum by (groundplane_boundary) (rate(groundplane_outputs_total"
                    f'{{{OUTPUTS}, groundplane_outcome="error"}}[$__rate_interval]))',
                    "outputs {{groundplane_boundary}}",
                ),
                query(
                    "sum by (groundplane_boundary, groundplane_check) "
                    f'(rate(groundplane_claims_total{{{CLAIMS}, groundplane_verdict="error"}}'
                    "[$__rate_interval]))",
                    "claims {{groundplane_boundary}} {{groundplane_check}}",
                    ref="B",
                ),
            ],
            (12, 30, 12, 8),
        ),
        series(
            "Outputs per agent by outcome",
            "Guarded outputs per second, by agent (gen_ai_agent_name, from the boundary's "
            "configured match) and outcome. Outputs of boundaries not matched by agent name have "
            "no agent.",
            "cps",
            [
                query(
                    "sum by (gen_ai_agent_name, groundplane_outcome) (rate("
                    f"groundplane_outputs_total{{{OUTPUTS}}}[$__rate_interval]))",
                    "{{gen_ai_agent_name}} {{groundplane_outcome}}",
                )
            ],
            (0, 38, 12, 8),
        ),
        series(
            "Unsupported-claim ratio per agent",
            "unsupported / all claims per agent, rate over $__rate_interval (0 for an agent "
            "with no unsupported claim).",
            "percentunit",
            [
                query(
                    f"(sum by (gen_ai_agent_name) (rate({UNSUPPORTED}[$__rate_interval]))\n"
                    f"or\n0 * sum by (gen_ai_agent_name) (rate({ALL_CLAIMS}[$__rate_interval])))\n"
                    f"/\nsum by (gen_ai_agent_name) (rate({ALL_CLAIMS}[$__rate_interval]))",
                    "{{gen_ai_agent_name}}",
                )
            ],
            (12, 38, 12, 8),
        ),
        series(
            "Coverage: traces with a boundary's facts, matched or not",
            "Requests (local root spans) that recorded a fact a boundary reads, per second, by "
            "boundary and whether the boundary matched a span in them. A boundary that stays "
            "unmatched checks nothing: its match rules do not fit the spans (the guard logs a "
            "WARNING naming the agent and span names it saw; strict mode refuses its answers).",
            "cps",
            [
                query(
                    "sum by (groundplane_boundary, groundplane_coverage_outcome) (rate("
                    f"groundplane_coverage_total{{{JOB}, {BOUNDARY}}}[$__rate_interval]))",
                    "{{groundplane_boundary}} {{groundplane_coverage_outcome}}",
                )
            ],
            (0, 46, 12, 8),
        ),
    ]


def dashboard() -> dm.Dashboard:
    """The whole dashboard as the SDK's typed model."""
    board = (
        db.Dashboard("groundplane_otel — grounding guard")
        .uid("groundplane-otel")
        .description("Unsupported claims, guarded outputs, facts and guard health.")
        .tags(["groundplane", "opentelemetry", "llm"])
        .version(1)
        .editable()
        .tooltip(dm.DashboardCursorSync.CROSSHAIR)
        .time("now-6h", "now")
        .refresh("30s")
        .timezone("")
        .variables(variables())
        .annotations([])
        .links([])
    )
    # with_panel keeps each panel's gridPos, except (0, 0), which it fills in (the first panel's
    # place anyway); ids are numbered in order.
    for i, p in enumerate(panels(), start=1):
        board.with_panel(p.id(i))
    return board.build()


def render() -> str:
    """The dashboard JSON exactly as committed (two-space indent, UTF-8, final newline)."""
    return json.dumps(dashboard(), cls=JSONEncoder, indent=2, ensure_ascii=False) + "\n"


def main() -> int:
    OUT.write_text(render(), encoding="utf-8")
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
