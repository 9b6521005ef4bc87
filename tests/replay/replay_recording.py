"""A recorded mixed stream of the sales agent, shared by the replay tests: the live run (its
harness) and the Collector-format file it exported, with the matching policy file's text."""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags
from otel_harness import SALES_ROWS, Harness, answer, sales_config

from groundplane_otel.errors import FactBoundaryError
from groundplane_otel.otel.otlp_files import OtlpFileExporter

CONFIG = sales_config()
INCOMING = trace.set_span_in_context(
    NonRecordingSpan(SpanContext(0xABC, 0xDEF, is_remote=True, trace_flags=TraceFlags(1)))
)


def traffic(otel: Harness) -> None:
    """A mixed stream: right, wrong, fact missing, no answer, two requests in one trace."""

    def run(winner: str | None, facts: bool = True, context: Any = None) -> None:
        with otel.tracer.start_as_current_span(
            "invoke_agent analyst",
            context=context,
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "analyst"},
        ):
            if facts:
                otel.tool(SALES_ROWS)
            if winner is not None:
                otel.chat(answer({"winner": winner}))

    for winner, facts in [("EU", True), ("US", True), ("EU", False), (None, True), ("EU", True)]:
        with contextlib.suppress(FactBoundaryError):
            run(winner, facts)
    for _ in range(2):  # one incoming traceparent, two requests (sequential here)
        run("EU", True, INCOMING)


def live_and_recorded(tmp_path: Path) -> tuple[Harness, Path]:
    otel = Harness()
    path = tmp_path / "traces.jsonl"
    otel.tracer_provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    otel.install(CONFIG)
    traffic(otel)
    return otel, path


def unguarded_recording(tmp_path: Path) -> Path:
    """A recording of spans none of which the policy guards (a web request, a tool call of
    another tool), exported by the SDK."""
    otel = Harness()
    path = tmp_path / "unguarded.jsonl"
    otel.tracer_provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    with otel.tracer.start_as_current_span("GET /health"):
        otel.tool({"ok": True}, name="ping")
    return path


# The stream's two error outputs (the run without its fact, the run without an answer) are
# deliberate; the gate fails on any error by default, so a test about something else allows them.
ALLOW_ITS_ERRORS = ("--max-errors", "2")

POLICY = """\
version: 1
mode: enforce
facts:
  sales:
    tool: top_sales
    kind: ranking
    path: rows
    key: region
    score: total
boundaries:
  answer:
    facts: [sales]
    match: {agent_name: analyst}
    report_mode: all
    checks:
      - superlative: {winner_field: winner}
"""
