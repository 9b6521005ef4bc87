"""The production demo (`make demo`): a campaign analyst agent guarded by a policy file.

No API key, no network. The agent's SQL tool queries a real SQLite table (built in memory
below) inside a GenAI `execute_tool` span; a scripted "model" answers in chat spans carrying
`gen_ai.output.messages`, exactly as an instrumented LLM client would. The guard is installed
from examples/policy.yaml: it turns the tool span's result into a fact and checks the model's
structured answer as the chat span ends.

Eight scenes: a right answer passes; a wrong winner is blocked (the exception, and the span event
read back from the exported file); the same mistake in observe mode (same telemetry, no
exception); the metrics, summed from what Prometheus scrapes; a backtest: the spans, also
recorded in the Collector's file format, replayed through the same guard with the same verdicts
as the live run, and the CI gate on that recording failing as it should (`groundplane-otel
replay`); a prose answer with a wrong number blocked, its receipt printed
(examples/demo_prose.py); a restricted value and a fabricated citation refused
(examples/demo_restricted.py); a streamed answer released sentence by sentence and cut
before its wrong sentence (examples/demo_stream.py). Then the next steps.

    python examples/demo_agent.py [--spans FILE]
    GROUNDPLANE_CAPTURE_CONTENT=true python examples/demo_agent.py   # values on the events too
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import sqlite3
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, TextIO

import demo_prose  # examples/: the prose and evidence scenes
import demo_restricted
import demo_stream
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased
from opentelemetry.trace import Tracer

from groundplane_otel import ClaimsUnsupported, UnsupportedClaim
from groundplane_otel.cli import main as groundplane_otel_cli
from groundplane_otel.otel import GuardConfig, install
from groundplane_otel.otel.environment import apply_environment
from groundplane_otel.otel.otlp_files import BadInput, OtlpFileExporter, read_requests
from groundplane_otel.otel.policy import load_policy
from groundplane_otel.otel.replay import Replayer
from groundplane_otel.otel.sampling import GuardSampler

try:
    from opentelemetry.exporter.prometheus import PrometheusMetricReader
    from prometheus_client import CollectorRegistry
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
    width = max(map(len, ours), default=0) + 2
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


def scene(number: int | None, title: str) -> None:
    print(f"\n== {'' if number is None else f'{number}. '}{title} ".ljust(96, "="))


def totals(registry: CollectorRegistry, name: str, *labels: str) -> dict[tuple[str, ...], int]:
    """The Prometheus series `name` summed by `labels`, in the registry's order."""
    summed: dict[tuple[str, ...], int] = {}
    for family in registry.collect():
        for sample in family.samples:
            if sample.name == name:
                key = tuple(sample.labels[label] for label in labels)
                summed[key] = summed.get(key, 0) + int(sample.value)
    return summed


def show_metrics(registry: CollectorRegistry) -> None:
    """A readable summary of the guard's metrics, read from the Prometheus registry."""
    print("  answers checked (groundplane_outputs_total), by mode and outcome:")
    outputs = totals(
        registry, "groundplane_outputs_total", "groundplane_mode", "groundplane_outcome"
    )
    for mode in dict.fromkeys(mode for mode, _ in outputs):
        counts = ", ".join(f"{o} {n}" for (m, o), n in outputs.items() if m == mode)
        print(f"    {mode:<9}{counts}")
    print("  claims checked (groundplane_claims_total), by check and verdict:")
    claims = totals(
        registry, "groundplane_claims_total", "groundplane_check", "groundplane_verdict"
    )
    for check in dict.fromkeys(check for check, _ in claims):
        counts = ", ".join(f"{v} {n}" for (c, v), n in sorted(claims.items()) if c == check)
        print(f"    {check:<22}{counts}")
    facts = sum(totals(registry, "groundplane_facts_total").values())
    print(f"  tool results recorded as facts (groundplane_facts_total): {facts}")
    unsupported = sum(n for (_, verdict), n in claims.items() if verdict == "unsupported")
    checked = sum(claims.values())
    print(f"  unsupported claims: {unsupported} of {checked}; the alert rules compute that rate as")
    print('    sum(rate(groundplane_claims_total{groundplane_verdict="unsupported"}[5m]))')
    print("      / sum(rate(groundplane_claims_total[5m]))")


def shown(path: Path) -> str:
    """`path` as a reader types it: relative to the current directory when under it."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def command(script: str, module: str) -> str:
    """How to run this environment's `script` (it may not be on PATH outside the venv)."""
    installed = Path(sys.executable).with_name(script)
    if installed.exists():
        return shown(installed)
    return f"{shown(Path(sys.executable))} -m {module}"


def gate(argv: Sequence[str]) -> tuple[int, str]:
    """Run `groundplane-otel ARGV` in this process: its exit code and its `gate:` line."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = groundplane_otel_cli(list(argv))
    lines = [line for line in out.getvalue().splitlines() if line.startswith("gate:")]
    return code, lines[-1] if lines else "(no gate line)"


def next_steps() -> None:
    """What to run and read next, as paths the reader can type from here."""
    scene(None, "Next")
    root = POLICY.parent.parent
    make = "make" if Path.cwd().resolve() == root.resolve() else f"make -C {root}"
    pytest = f"{command('pytest', 'pytest')} {shown(root / 'examples' / 'test_demo_agent.py')}"
    print(f"  - the core alone, no OpenTelemetry: {make} quickstart")
    print(f"  - this agent as a grounded test suite (one test fails on purpose): {pytest}")
    pages = [
        ("quickstart.md", "this demo, scene by scene"),
        ("guard.md", "the guard in your app, in code"),
        ("zero-code.md", "or with no code: opentelemetry-instrument and a policy file"),
        ("start-from-traces.md", "a first policy inferred from your own recorded traces"),
        ("beyond.md", "replay and the CI gate on recorded traces"),
    ]
    docs = {shown(root / "docs" / page): what for page, what in pages}
    width = max(map(len, docs)) + 2
    site = shown(root / "build" / "site" / "index.html")
    print(f"  - read (or build the website: {make} docs, then open {site}):")
    for page, what in docs.items():
        print(f"      {page:<{width}}{what}")


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

    scene(4, "Metrics: what Prometheus scrapes from the guard, summed")
    show_metrics(registry)
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
    if not same:
        return 1
    # The CI gate on the enforce recording: it holds a blocked answer, so a gate that allows
    # no unsupported claim must fail (exit 1).
    argv = ["replay", "--policy", shown(POLICY), "--max-unsupported-rate", "0"]
    argv.append(shown(recorded["enforce"]))
    code, verdict = gate(argv)
    print("  the CI gate on the enforce recording, allowing no unsupported claim (it must fail:")
    print("  the recording holds the blocked answer), as CI would run it:")
    print(f"    {command('groundplane-otel', 'groundplane_otel.cli')} {' '.join(argv)}")
    print(f"    {verdict}, exit {code}")
    if code != 1:
        return 1

    scene(6, "Numbers in prose: every number in the answer must be a recorded one")
    demo_prose.main()
    scene(7, "Evidence: a restricted value and a fabricated citation refused")
    code = demo_restricted.main()
    scene(8, "A streamed answer, cut before its wrong sentence (guard_stream)")
    code = demo_stream.main() or code
    next_steps()
    return code


if __name__ == "__main__":
    sys.exit(main())
