"""Drive the real guard the way an application does, with outputs of known kinds.

The agent mirrors examples/demo_agent.py (which is a CLI and is not imported): its tool queries
a real SQLite table inside a GenAI ``execute_tool`` span, and a scripted model answers in
``chat`` spans under an ``invoke_agent`` span. The guard is installed from the demo's
examples/policy.yaml, once in enforce mode and once in observe mode (two tracer providers, one
meter provider), exactly as the demo does.

``expected_*`` state what DESIGN.md §4/§5 and the policy say each kind of output must produce,
so a test can compare them with what the metrics backend received.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from opentelemetry.metrics import MeterProvider
from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
from opentelemetry.sdk.trace.sampling import ALWAYS_ON, ParentBased, Sampler
from opentelemetry.trace import Tracer

from groundplane_otel import ClaimsUnsupported, UnsupportedClaim
from groundplane_otel.otel import install
from groundplane_otel.otel.config import BoundarySpec
from groundplane_otel.otel.policy import load_policy
from groundplane_otel.otel.sampling import GuardSampler

POLICY = Path(__file__).parents[1] / "examples" / "policy.yaml"
AGENT = "campaign-analyst"  # what the policy's boundary matches on
MODEL = "scripted-analyst-1"

Scenario = Literal["right", "wrong_winner", "unreadable", "fact_missing", "refusal"]
Mode = Literal["enforce", "observe"]
MODES: tuple[Mode, ...] = ("enforce", "observe")

# campaign -> (impressions, clicks): distinct click-through rates, so the ranking has no ties.
CAMPAIGNS = {
    "harbour": (20_000, 910),
    "north": (20_000, 824),
    "summit": (30_000, 1_131),
    "meadow": (12_000, 396),
    "delta": (20_000, 602),
}
SQL = """
    SELECT campaign, SUM(impressions) AS impressions, SUM(clicks) AS clicks,
           ROUND(1.0 * SUM(clicks) / SUM(impressions), 4) AS ctr
    FROM campaign_daily GROUP BY campaign ORDER BY campaign
"""


def build_warehouse() -> sqlite3.Connection:
    """An in-memory SQLite table the tool queries (usable from the traffic thread)."""
    db = sqlite3.connect(":memory:", check_same_thread=False)
    db.execute("CREATE TABLE campaign_daily (campaign TEXT, impressions INT, clicks INT)")
    rows = [(name, impressions, clicks) for name, (impressions, clicks) in CAMPAIGNS.items()]
    db.executemany("INSERT INTO campaign_daily VALUES (?, ?, ?)", rows)
    return db


def query_rows(db: sqlite3.Connection) -> list[dict[str, Any]]:
    cursor = db.execute(SQL)
    columns = [column[0] for column in cursor.description]
    return [dict(zip(columns, row, strict=True)) for row in cursor]


def right_answer(rows: list[dict[str, Any]]) -> dict[str, Any]:
    ranked = sorted(rows, key=lambda row: row["ctr"], reverse=True)
    return {
        "winner": ranked[0]["campaign"],
        "ctr": ranked[0]["ctr"],
        "top3": [row["campaign"] for row in ranked[:3]],
        "total_clicks": sum(row["clicks"] for row in rows),
    }


def wrong_winner(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The runner-up named as the winner with its real CTR: only the superlative is wrong."""
    answer = right_answer(rows)
    runner_up = next(row for row in rows if row["campaign"] == answer["top3"][1])
    return {**answer, "winner": runner_up["campaign"], "ctr": runner_up["ctr"]}


def answer_parts(scenario: Scenario, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The final assistant message's parts for each kind of output."""
    if scenario in ("right", "fact_missing"):
        return [{"type": "text", "content": json.dumps(right_answer(rows))}]
    if scenario == "wrong_winner":
        return [{"type": "text", "content": json.dumps(wrong_winner(rows))}]
    if scenario == "unreadable":  # prose, no JSON object: the guard cannot check it
        return [{"type": "text", "content": "The best campaign this week was harbour."}]
    return [{"type": "refusal", "content": "I cannot answer questions about campaigns."}]


# -- what the contract says each output produces --------------------------------------------------


def expected_outcome(scenario: Scenario, mode: Mode) -> str:
    """groundplane.outcome of one output (DESIGN §4/§5)."""
    if scenario == "right":
        return "passed"
    if scenario == "wrong_winner":
        return "blocked" if mode == "enforce" else "flagged"
    if scenario == "refusal":
        return "skipped"
    return "error"  # unreadable output, missing fact: fails closed


def expected_raise(scenario: Scenario, mode: Mode) -> str | None:
    """The exception class the application gets (enforce only; observe never raises)."""
    outcome = expected_outcome(scenario, mode)
    if mode == "observe" or outcome in ("passed", "skipped"):
        return None
    return "UnsupportedClaim" if outcome == "blocked" else "OutputUnchecked"


def expected_claims(boundary: BoundarySpec, scenario: Scenario) -> list[tuple[str, str]]:
    """(check family, verdict) per claim counted, from the boundary's checks in policy order.

    A wrong winner violates the superlative check only; every check is evaluated and counted,
    whatever the report mode (it only decides what is raised). A missing fact makes every check
    an error; an unreadable output or a refusal runs no check at all.
    """
    families = [str(getattr(check, "family", "custom")) for check in boundary.checks]
    if scenario == "right":
        return [(family, "supported") for family in families]
    if scenario == "fact_missing":
        return [(family, "error") for family in families]
    if scenario != "wrong_winner":
        return []
    return [
        (family, "unsupported" if family == "superlative" else "supported") for family in families
    ]


@dataclass(frozen=True)
class Expected:
    """Totals a mix of outputs must produce."""

    claims: Counter[tuple[str, str, str]]  # (check, verdict, mode)
    outputs: Counter[tuple[str, str, str]]  # (outcome, mode, skip_reason or "")
    raised: Counter[str]  # exception class name -> count
    tool_calls: int  # facts recorded

    @property
    def unsupported_ratio(self) -> float:
        return self.claims_by_verdict().get("unsupported", 0) / sum(self.claims.values())

    def claims_by_verdict(self) -> dict[str, int]:
        out: Counter[str] = Counter()
        for (_, verdict, _), n in self.claims.items():
            out[verdict] += n
        return dict(out)


def expected(boundary: BoundarySpec, mix: Counter[tuple[Scenario, Mode]]) -> Expected:
    claims: Counter[tuple[str, str, str]] = Counter()
    outputs: Counter[tuple[str, str, str]] = Counter()
    raised: Counter[str] = Counter()
    tool_calls = 0
    for (scenario, mode), n in mix.items():
        for family, verdict in expected_claims(boundary, scenario):
            claims[(family, verdict, mode)] += n
        outcome = expected_outcome(scenario, mode)
        outputs[(outcome, mode, "refusal" if outcome == "skipped" else "")] += n
        error = expected_raise(scenario, mode)
        if error is not None:
            raised[error] += n
        tool_calls += 0 if scenario == "fact_missing" else n
    return Expected(claims, outputs, raised, tool_calls)


def interleave(unit: Sequence[tuple[Scenario, Mode, int]]) -> list[tuple[Scenario, Mode]]:
    """Round-robin over the kinds, so any prefix of a batch has about the batch's proportions."""
    queues = [[(scenario, mode)] * n for scenario, mode, n in unit]
    out: list[tuple[Scenario, Mode]] = []
    while any(queues):
        for queue in queues:
            if queue:
                out.append(queue.pop())
    return out


# -- the application ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Run:
    """One output: its guarded chat span's ids and what the application got."""

    scenario: Scenario
    mode: Mode
    trace_id: int
    span_id: int
    raised: str | None


class GuardedApp:
    """The agent, with the guard installed from examples/policy.yaml in both modes."""

    def __init__(
        self,
        meter_provider: MeterProvider,
        *,
        sampler: Sampler | None = None,
        span_processor: SpanProcessor | None = None,
    ) -> None:
        config = load_policy(POLICY)
        self.boundary = config.boundaries[0]
        self.db = build_warehouse()
        self.providers: list[TracerProvider] = []
        self.tracers: dict[Mode, Tracer] = {}
        self.guards = []
        for mode in MODES:
            provider = TracerProvider(sampler=sampler or GuardSampler(ParentBased(ALWAYS_ON)))
            if span_processor is not None:
                provider.add_span_processor(span_processor)
            guard = install(
                dataclasses.replace(config, mode=mode),
                tracer_provider=provider,
                meter_provider=meter_provider,
            )
            self.guards.append(guard)
            self.providers.append(provider)
            self.tracers[mode] = provider.get_tracer("tests.guard_traffic")
        self.raised: Counter[str] = Counter()

    def run_many(self, outputs: Iterable[tuple[Scenario, Mode]]) -> list[Run]:
        return [self.run(scenario, mode) for scenario, mode in outputs]

    def run(self, scenario: Scenario, mode: Mode) -> Run:
        """invoke_agent -> chat (asks for the tool) -> execute_tool (SQL) -> chat (the answer)."""
        tracer = self.tracers[mode]
        chat: list[Any] = []
        raised = None
        agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT}
        try:
            with tracer.start_as_current_span(f"invoke_agent {AGENT}", attributes=agent):
                if scenario == "fact_missing":  # answered without calling the tool
                    rows = query_rows(self.db)
                else:
                    rows = self._call_tool(tracer)
                self._chat(tracer, answer_parts(scenario, rows), "stop", chat)
        except (UnsupportedClaim, ClaimsUnsupported) as exc:
            raised = type(exc).__name__
            self.raised[raised] += 1
        context = chat[0]
        return Run(scenario, mode, context.trace_id, context.span_id, raised)

    def _call_tool(self, tracer: Tracer) -> list[dict[str, Any]]:
        arguments = {"table": "campaign_daily", "window": "7d"}
        call = {"type": "tool_call", "id": "call_1", "name": "warehouse.query"}
        self._chat(tracer, [{**call, "arguments": arguments}], "tool_calls", [])
        tool = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call["name"],
            "gen_ai.tool.call.id": call["id"],
            "gen_ai.tool.call.arguments": json.dumps(arguments),
        }
        with tracer.start_as_current_span(f"execute_tool {call['name']}", attributes=tool) as span:
            rows = query_rows(self.db)
            span.set_attribute("gen_ai.tool.call.result", json.dumps({"rows": rows}))
        return rows

    @staticmethod
    def _chat(
        tracer: Tracer, parts: list[dict[str, Any]], finish_reason: str, contexts: list[Any]
    ) -> None:
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": "scripted",
            "gen_ai.request.model": MODEL,
            "gen_ai.output.type": "json",
            "gen_ai.response.finish_reasons": (finish_reason,),
        }
        with tracer.start_as_current_span(f"chat {MODEL}", attributes=attributes) as span:
            contexts.append(span.get_span_context())
            message = {"role": "assistant", "parts": parts, "finish_reason": finish_reason}
            span.set_attribute("gen_ai.output.messages", json.dumps([message]))

    def close(self) -> None:
        for guard in self.guards:
            guard.uninstall()
        for provider in self.providers:
            provider.shutdown()
        self.db.close()
