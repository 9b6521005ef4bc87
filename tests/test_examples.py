"""The examples a user runs first (`make demo`, `make quickstart`) do what they say, as
subprocesses: the pass, the block with its full message, the event on the exported span, observe
mode, and the unsupported claim in the Prometheus text."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
WRONG_WINNER = (
    "unsupported claim in field 'winner': model said 'north', registered facts support "
    "'harbour' | fact='campaign_ctr' | provenance=warehouse.query(table='campaign_daily', "
    "window='7d') | computed argmax on 'ctr' is 'harbour' (0.0455); 'north' ranked #2 at 0.0412"
)
SCOPE = 'otel_scope_name="groundplane_otel",otel_scope_schema_url="",otel_scope_version=""'


def run(script: str, *args: str) -> list[str]:
    """Run an example with this interpreter; it must exit 0 and print nothing on stderr."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), *args],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},  # this checkout's package
    )
    assert (result.returncode, result.stderr) == (0, "")
    return result.stdout.splitlines()


def claims_line(check: str, mode: str, verdict: str) -> str:
    labels = 'gen_ai_agent_name="campaign-analyst",'  # the boundary's configured agent
    labels += f'groundplane_boundary="campaign_report",groundplane_check="{check}",'
    labels += f'groundplane_mode="{mode}",groundplane_verdict="{verdict}",{SCOPE}'
    return f"  groundplane_claims_total{{{labels}}} 1.0"


def test_demo_passes_blocks_flags_and_prints_prometheus_metrics(tmp_path: Path) -> None:
    """The demo prints the pass, the block with the full message, the event on the exported
    span (enforce: ERROR; observe: UNSET) and the claims in Prometheus text format."""
    lines = run("demo_agent.py", "--spans", str(tmp_path / "spans.jsonl"))
    assert "  PASSED: the answer reached the application" in lines
    blocked = lines.index("  BLOCKED: the application got UnsupportedClaim:")
    assert lines[blocked + 1] == f"    {WRONG_WINNER}"
    assert lines[blocked + 3] == (
        "    status      ERROR groundplane: output blocked by boundary 'campaign_report' "
        "(1 finding(s))"
    )
    assert lines.count("    event gen_ai.guardrail.result") == 2
    assert lines.count("    event gen_ai.evaluation.result") == 3 + 3  # one per check, twice
    assert lines.count("      gen_ai.guardrail.result.type      verdict") == 2
    assert lines.count("      gen_ai.guardrail.result.reason    wrong_winner") == 2
    assert (
        lines.count(
            "      (the fact's span_id is the exported 'execute_tool warehouse.query' span)"
        )
        == 2
    )
    assert "    status      UNSET" in lines
    assert "    groundplane.outcome          flagged" in lines  # aligned on the longest key
    assert "    groundplane.boundary_matched True" in lines  # never run together
    assert claims_line("superlative", "enforce", "unsupported") in lines
    assert claims_line("superlative", "observe", "unsupported") in lines
    assert claims_line("superlative", "enforce", "supported") in lines


def test_demo_backtest_replays_its_recording_with_the_live_verdicts(tmp_path: Path) -> None:
    """Scene 5 replays the spans recorded in the Collector's file format through the guard and
    gets what the live run decided (and the recordings are valid OTLP/JSON lines)."""
    spans = tmp_path / "spans.jsonl"
    lines = run("demo_agent.py", "--spans", str(spans))
    assert (
        "  spans.enforce.otlp.jsonl: live {'blocked': 1, 'passed': 1}, "
        "replayed {'blocked': 1, 'passed': 1}"
    ) in lines
    assert "  spans.observe.otlp.jsonl: live {'flagged': 1}, replayed {'flagged': 1}" in lines
    assert "  same verdicts as the live run: yes" in lines
    assert "  BLOCKED: UnrecordedNumbers, reason number_scale_mismatch" in lines  # scene 6
    assert any(line.startswith("  REFUSED (restricted_value): ") for line in lines)  # scene 7
    assert any(line.startswith("  REFUSED (citation_not_retrieved): ") for line in lines)
    first = json.loads((tmp_path / "spans.enforce.otlp.jsonl").read_text().splitlines()[0])
    assert set(first) == {"resourceSpans"}


def exported_chat_spans(path: Path) -> list[dict[str, Any]]:
    spans = [json.loads(line) for line in path.read_text().splitlines()]
    return [span for span in spans if span["name"] == "chat scripted-analyst-1"]


def test_demo_span_file_holds_every_chat_span_with_its_outcome(tmp_path: Path) -> None:
    """The exported JSON-lines file has the tool-request turns (unchecked) and the three answers:
    passed, blocked with ERROR and the event, flagged with the event and no error; every
    answer carries one evaluation event per check."""
    spans_file = tmp_path / "spans.jsonl"
    run("demo_agent.py", "--spans", str(spans_file))
    chats = exported_chat_spans(spans_file)
    summary = [
        (
            span["attributes"].get("groundplane.outcome"),
            span["status"]["status_code"],
            [event["name"] for event in span["events"]],
        )
        for span in chats
    ]
    evaluations = ["gen_ai.evaluation.result"] * 3  # one per check of the policy
    assert summary == [
        (None, "UNSET", []),
        ("passed", "UNSET", evaluations),
        (None, "UNSET", []),
        ("blocked", "ERROR", ["gen_ai.guardrail.result", *evaluations]),
        (None, "UNSET", []),
        ("flagged", "UNSET", ["gen_ai.guardrail.result", *evaluations]),
    ]


def test_quickstart_passes_raises_and_reports_every_violation() -> None:
    """The core-only quickstart: a pass, the full provenance message, three report lines, and
    ClaimsUnsupported naming the three failed checks."""
    lines = run("quickstart.py")
    assert lines[0] == "recorded campaign_ctr; computed winner: harbour"
    assert lines[lines.index("1. the model names the computed winner") + 1] == "   passed"
    assert f"   UnsupportedClaim: {WRONG_WINNER}" in lines
    report = lines.index("3. report mode: every violation at once, for a reask loop")
    assert lines[report + 1] == "   ok=False passed=[]"
    assert lines[report + 2] == f"   - {WRONG_WINNER}"
    assert [line.split(": ")[0] for line in lines[report + 3 : report + 5]] == [
        "   - unsupported claim in field 'top'",
        "   - unsupported claim in field 'mentioned'",
    ]
    assert lines[-4:] == [
        "   ClaimsUnsupported with 3 violations, from:",
        "   - superlative(fact='campaign_ctr', field='winner')",
        "   - ranking_prefix(fact='campaign_ctr', field='top')",
        "   - entities_recorded(fact='campaign_ctr', fields=['mentioned'])",
    ]
