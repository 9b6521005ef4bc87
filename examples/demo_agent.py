"""The production demo (`make demo`): a campaign analyst agent guarded by a policy file.

No API key, no network. The agent's SQL tool queries a real SQLite table (built in memory
below) inside a GenAI `execute_tool` span; a scripted "model" answers in chat spans carrying
`gen_ai.output.messages`, exactly as an instrumented LLM client would. The guard is installed
from examples/policy.yaml: it turns the tool span's result into a fact and checks the model's
structured answer as the chat span ends.

Seven scenes: a right answer passes; a wrong winner is blocked (the exception, and the span event
read back from the exported file); the same mistake in observe mode (same telemetry, no
exception); the metrics in Prometheus text format; and a backtest: the spans, also recorded in
the Collector's file format, replayed through the same guard (`groundplane-otel replay`), with
the same verdicts as the live run; a prose answer with a wrong number blocked, its receipt
printed (examples/demo_prose.py); a restricted value and a fabricated citation refused
(examples/demo_restricted.py).

    python examples/demo_agent.py [--spans FILE]
    GROUNDPLANE_CAPTURE_CONTENT=true python examples/demo_agent.py   # values on the events too
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sqlite3
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

import demo_prose  # examples/: the prose and evidence scenes
import demo_restricted
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased
from opentelemetry.trace import Tracer

from groundplane_otel import ClaimsUnsupported, UnsupportedClaim
from groundplane_otel.otel import GuardConfig, install
from groundplane_otel.otel.environment import apply_environment
from groundplane_otel.otel.otlp_files import BadInput, OtlpFileExporter, read_requests
from groundplane_otel.otel.policy import load_policy
from groundplane_otel.otel.replay import Replayer
from groundplane_otel.otel.sampling import GuardSampler

try:
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from prometheus_client import CollectorRegistry, generate_latest
except ImportError:  # pragma: no cover - the hint is the point
    sys.exit("The demo prints Prometheus metrics: pip install 'groundplane-otel[prometheus]'")

POLICY = Path(__file__).with_name("policy.yaml")
AGENT = "campaign-analyst"
MODEL = "scripted-analyst-1"
QUESTION = "Which campaign had the best click-through rate this week?"

# campaign → (impressions, clicks) over the week; spread over seven daily rows below.
WEEK = {
    "harbour": (20_000, 910),
    "north": (20_000, 824),
    "summit": (30_000, 1_131),
    "meadow": (12_000, 396),
    "delta": (20_000, 602),
    "coast": (18_000, 540),
    "river": (10_000, 250),
}
DAYS = [f"2026-11-{day}" for day in range(22, 29)]
SQL = """
    SELECT campaign, SUM(impressions) AS impressions, SUM(clicks) AS clicks,
           ROUND(1.0 * SUM(clicks) / SUM(impressions), 4) AS ctr
    FROM campaign_daily
    WHERE day > date(:as_of, :since)
    GROUP BY campaign ORDER BY campaign
"""


def build_warehouse() -> sqlite3.Connection:
    """An in-memory SQLite `campaign_daily` table: one row per campaign per day."""
    db = sqlite3.connect(":memory:")
    db.execute("CREATE TABLE campaign_daily (day TEXT, campaign TEXT, impressions INT, clicks INT)")
    for campaign, totals in WEEK.items():
        shares = [divmod(total, len(DAYS)) for total in totals]  # (per day, remainder)
        for index, day in enumerate(DAYS):
            impressions, clicks = (base + (index < extra) for base, extra in shares)
            db.execute(
                "INSERT INTO campaign_daily VALUES (?, ?, ?, ?)",
                (day, campaign, impressions, clicks),
            )
    return db


def warehouse_query(db: sqlite3.Connection, table: str, window: str) -> dict[str, Any]:
    """The agent's tool: per-campaign totals and CTR over the window, computed by SQLite."""
    if table != "campaign_daily" or not window.endswith("d"):
        raise ValueError(f"unsupported query: table={table!r}, window={window!r}")
    cursor = db.execute(SQL, {"as_of": DAYS[-1], "since": f"-{int(window[:-1])} days"})
    columns = [column[0] for column in cursor.description]
    return {"rows": [dict(zip(columns, row, strict=True)) for row in cursor]}


class ScriptedModel:
    """Stands in for the LLM: asks for the tool, then answers with `answer(rows)` as JSON."""

    def __init__(self, answer: Callable[[list[dict[str, Any]]], dict[str, Any]]) -> None:
        self.answer = answer

    def chat(self, tracer: Tracer, parts: list[dict[str, Any]], finish_reason: str) -> None:
        """One inference span, with the output messages the GenAI conventions define."""
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "scripted",
            "gen_ai.request.model": MODEL,
            "gen_ai.output.type": "json",
            "gen_ai.response.finish_reasons": (finish_reason,),
        }
        with tracer.start_as_current_span(f"chat {MODEL}", attributes=attributes) as span:
            message = {"role": "assistant", "parts": parts, "finish_reason": finish_reason}
            span.set_attribute("gen_ai.output.messages", json.dumps([message]))

    def ask_for_rows(self, tracer: Tracer) -> dict[str, Any]:
        arguments = {"table": "campaign_daily", "window": "7d"}
        call = {
            "type": "tool_call",
            "id": "call_1",
            "name": "warehouse.query",
            "arguments": arguments,
        }
        self.chat(tracer, [call], "tool_calls")  # a tool request is not an output to check
        return call

    def final_answer(self, tracer: Tracer, rows: list[dict[str, Any]]) -> dict[str, Any]:
        answer = self.answer(rows)
        self.chat(tracer, [{"type": "text", "content": json.dumps(answer)}], "stop")
        return answer


def right_answer(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ranked = sorted(rows, key=lambda row: row["ctr"], reverse=True)
    return {
        "winner": ranked[0]["campaign"],
        "ctr": ranked[0]["ctr"],
        "top3": [row["campaign"] for row in ranked[:3]],
        "total_clicks": sum(row["clicks"] for row in rows),
    }


def wrong_winner(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The silent failure: the runner-up named as the winner, quoting its real CTR."""
    answer = right_answer(rows)
    runner_up = next(row for row in rows if row["campaign"] == answer["top3"][1])
    return {**answer, "winner": runner_up["campaign"], "ctr": runner_up["ctr"]}


def run_agent(tracer: Tracer, model: ScriptedModel, db: sqlite3.Connection) -> dict[str, Any]:
    """invoke_agent → chat (asks for the tool) → execute_tool (SQL) → chat (the answer)."""
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT}
    with tracer.start_as_current_span(f"invoke_agent {AGENT}", attributes=agent):
        call = model.ask_for_rows(tracer)
        tool = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call["name"],
            "gen_ai.tool.call.id": call["id"],
            "gen_ai.tool.call.arguments": json.dumps(call["arguments"]),
        }
        with tracer.start_as_current_span(f"execute_tool {call['name']}", attributes=tool) as span:
            result = warehouse_query(db, **call["arguments"])
            span.set_attribute("gen_ai.tool.call.result", json.dumps(result))
        return model.final_answer(tracer, result["rows"])


class Pipeline:
    """One tracer provider with the guard on it; spans go to the shared JSON-lines file."""

    def __init__(
        self, config: GuardConfig, meters: MeterProvider, spans: TextIO, recording: Path
    ) -> None:
        # GuardSampler: export 100% here; lower the ratio in production, the guard still
        # sees every span (OTEL_TRACES_SAMPLER=groundplane_parentbased_traceidratio).
        self.provider = TracerProvider(
            sampler=GuardSampler(ParentBased(TraceIdRatioBased(1.0))),
            resource=Resource.create({"service.name": "campaign-analyst-demo"}),
        )
        exporter = ConsoleSpanExporter(out=spans, formatter=lambda s: s.to_json(indent=None) + "\n")
        self.provider.add_span_processor(SimpleSpanProcessor(exporter))
        # The same spans in the Collector's `file` exporter format, for the backtest (scene 5).
        self.provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(recording)))
        self.guard = install(config, tracer_provider=self.provider, meter_provider=meters)
        self.tracer = self.provider.get_tracer("examples.demo_agent")


def exported(path: Path, name: str) -> dict[str, Any]:
    """The last span called `name` in the exported file: what a trace backend receives."""
    spans: list[dict[str, Any]] = [json.loads(line) for line in path.read_text().splitlines()]
    return [span for span in spans if span["name"] == name][-1]


def exported_by_id(path: Path, span_id: object) -> dict[str, Any] | None:
    spans: list[dict[str, Any]] = [json.loads(line) for line in path.read_text().splitlines()]
    return next((span for span in spans if span["context"]["span_id"] == f"0x{span_id}"), None)


def show_span(path: Path) -> None:
    span = exported(path, f"chat {MODEL}")
    status = span["status"]
    print(f"  exported span '{span['name']}' (read back from {path.name}):")
    print(f"    status      {status['status_code']} {status.get('description', '')}".rstrip())
    ours = {k: v for k, v in span["attributes"].items() if k.startswith("groundplane.")}
    width = max([24, *(len(key) + 1 for key in ours)])  # groundplane.boundary_matched: 28
    for key, value in ours.items():
        print(f"    {key:<{width}}{value}")
    for event in span["events"]:
        print(f"    event {event['name']}")
        for key, value in event["attributes"].items():
            print(f"      {key:<34}{value}")
        source = exported_by_id(path, event["attributes"].get("groundplane.fact.span_id"))
        if source is not None:
            print(f"      (the fact's span_id is the exported '{source['name']}' span)")


def backtest(config: GuardConfig, recording: Path) -> dict[str, int]:
    """Outputs by outcome when the recorded spans are replayed through the guard."""
    replayer = Replayer(config)
    bad: list[BadInput] = []
    for request in read_requests([recording], bad):
        replayer.feed(request)
    replayer.finish()
    outcomes: dict[str, int] = {}
    for (_, outcome), count in replayer.counts()["outputs"].items():
        outcomes[outcome] = outcomes.get(outcome, 0) + count
    replayer.close()
    return dict(sorted(outcomes.items()))


def scene(number: int, title: str) -> None:
    print(f"\n== {number}. {title} ".ljust(96, "="))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default = Path(tempfile.gettempdir()) / "groundplane-demo-spans.jsonl"
    parser.add_argument("--spans", type=Path, default=default, help="JSON-lines span file")
    args = parser.parse_args(argv)

    config = apply_environment(load_policy(POLICY))  # GROUNDPLANE_MODE / _CAPTURE_CONTENT apply
    registry = CollectorRegistry()  # our own: only the demo's metrics
    meters = MeterProvider(metric_readers=[PrometheusMetricReader(registry=registry)])
    db = build_warehouse()
    print(f"groundplane_otel demo: a scripted '{AGENT}' agent, guarded by {POLICY.name}")
    for boundary in config.boundaries:
        names = ", ".join(check.family for check in boundary.checks)
        print(f"  boundary {boundary.name!r} (mode {boundary.mode or config.mode}): {names}")
    print(f"  spans are exported to {args.spans}, one JSON span per line")
    print(f"  question: {QUESTION}")

    recorded = {
        mode: args.spans.with_suffix(f".{mode}.otlp.jsonl") for mode in ("enforce", "observe")
    }
    for path in recorded.values():
        path.unlink(missing_ok=True)
    live: dict[str, dict[str, int]] = {"enforce": {}, "observe": {}}  # what the app saw

    def saw(mode: str) -> None:  # the outcome the guard wrote on the exported chat span
        outcome = exported(args.spans, f"chat {MODEL}")["attributes"]["groundplane.outcome"]
        live[mode][outcome] = live[mode].get(outcome, 0) + 1
        live[mode] = dict(sorted(live[mode].items()))

    with args.spans.open("w") as spans:
        enforce = Pipeline(config, meters, spans, recorded["enforce"])

        scene(1, "The model names the right winner")
        answer = run_agent(enforce.tracer, ScriptedModel(right_answer), db)
        print(f"  model answered {json.dumps(answer)}")
        print("  PASSED: the answer reached the application")
        saw("enforce")

        scene(2, "The model names the runner-up as the winner (enforce mode)")
        try:
            run_agent(enforce.tracer, ScriptedModel(wrong_winner), db)
        except (UnsupportedClaim, ClaimsUnsupported) as exc:
            print(f"  BLOCKED: the application got {type(exc).__name__}:")
            print(f"    {exc.diagnosis}")  # the full message (str(exc) is content-free)
            saw("enforce")
        else:
            print("  NOT BLOCKED: check the policy")
            return 1
        show_span(args.spans)

        scene(3, "The same mistake in observe mode (shadow rollout: GROUNDPLANE_MODE=observe)")
        observed = dataclasses.replace(config, mode="observe")
        observe = Pipeline(observed, meters, spans, recorded["observe"])
        answer = run_agent(observe.tracer, ScriptedModel(wrong_winner), db)
        print(f"  FLAGGED, not raised: the application got {json.dumps(answer)}")
        saw("observe")
        show_span(args.spans)
        if not config.capture_content:
            print("  (claimed values and the message stay off spans: capture_content is false)")

    scene(4, "Metrics, Prometheus text format (what /metrics serves; buckets omitted)")
    for line in generate_latest(registry).decode().splitlines():
        if "groundplane" in line and "_bucket{" not in line:
            print(f"  {line}")
    print("\n  unsupported-claim rate, as the alert rules compute it:")
    print('    sum(rate(groundplane_claims_total{groundplane_verdict="unsupported"}[5m]))')
    print("      / sum(rate(groundplane_claims_total[5m]))")
    for pipeline in (enforce, observe):
        pipeline.provider.shutdown()
    meters.shutdown()

    scene(5, "Backtest: the recorded spans replayed through the same guard")
    same = True
    for mode, path in recorded.items():
        replayed = backtest(config if mode == "enforce" else observed, path)
        same = same and replayed == live[mode]
        print(f"  {path.name}: live {live[mode]}, replayed {replayed}")
    print(f"  same verdicts as the live run: {'yes' if same else 'NO'}")
    print(f"  reproduce: groundplane-otel replay --policy {POLICY} {recorded['enforce']}")
    if not same:
        return 1

    scene(6, "Numbers in prose: every number in the answer must be a recorded one")
    demo_prose.main()
    scene(7, "Evidence: a restricted value and a fabricated citation refused")
    return demo_restricted.main()


if __name__ == "__main__":
    sys.exit(main())
