"""The examples a user runs first (`make demo`, `make quickstart`) do what they say, as
subprocesses: the pass, the block with its full message, the event on the exported span, observe
mode, the metrics summed from Prometheus, the CI gate command it prints (run, it fails), the next
steps, and the quickstart page's account of the demo."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]
WRONG_WINNER = (
    "unsupported claim in field 'winner': model said 'north', registered facts support "
    "'harbour' | fact='campaign_ctr' | provenance=warehouse.query(table='campaign_daily', "
    "window='7d') | computed argmax on 'ctr' is 'harbour' (0.0455); 'north' ranked #2 at 0.0412"
)
ENV = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)}  # this checkout's package


def run(script: str, *args: str) -> list[str]:
    """Run an example with this interpreter; it must exit 0 and print nothing on stderr."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / script), *args],
        cwd=ROOT,  # as `make demo` runs it
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env=ENV,
    )
    assert (result.returncode, result.stderr) == (0, "")
    return result.stdout.splitlines()


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[str]]:
    """One run of the demo for the tests of its later scenes: (span file directory, lines)."""
    spans = tmp_path_factory.mktemp("demo")
    return spans, run("demo_agent.py", "--spans", str(spans / "spans.jsonl"))


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
    assert "    groundplane.outcome           flagged" in lines
    assert lines.count("    groundplane.boundary_matched  True") == 2  # the key, a gap, the value


def test_demo_sums_the_metrics_prometheus_scrapes(demo: tuple[Path, list[str]]) -> None:
    """Scene 4: the guard's series read back from the Prometheus registry, summed by label."""
    _, lines = demo
    start = lines.index("  answers checked (groundplane_outputs_total), by mode and outcome:")
    assert lines[start : start + 10] == [
        "  answers checked (groundplane_outputs_total), by mode and outcome:",
        "    enforce  passed 1, blocked 1",
        "    observe  flagged 1",
        "  claims checked (groundplane_claims_total), by check and verdict:",
        "    superlative           supported 1, unsupported 2",
        "    ranking_prefix        supported 3",
        "    aggregate_reconciles  supported 3",
        "  tool results recorded as facts (groundplane_facts_total): 3",
        "  unsupported claims: 2 of 9; the alert rules compute that rate as",
        '    sum(rate(groundplane_claims_total{groundplane_verdict="unsupported"}[5m]))',
    ]
    assert not any(line.lstrip().startswith(("# HELP", "# TYPE")) for line in lines)


def test_demo_prints_a_ci_gate_command_that_runs_and_fails(demo: tuple[Path, list[str]]) -> None:
    """Scene 5 prints the CI gate on its enforce recording as a command that runs outside the
    venv's PATH; run as printed, it fails (exit 1: the recording holds a blocked answer)."""
    tmp_path, lines = demo
    start = lines.index("  the recording holds the blocked answer), as CI would run it:")
    command, verdict = lines[start + 1].strip(), lines[start + 2]
    assert command.endswith(
        "replay --policy examples/policy.yaml --max-unsupported-rate 0 "
        f"{tmp_path / 'spans.enforce.otlp.jsonl'}"
    )
    assert verdict.lower().startswith("    gate: failed")
    assert verdict.endswith(", exit 1")
    gate = subprocess.run(
        shlex.split(command),
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert gate.returncode == 1, gate.stderr
    assert verdict.strip().removesuffix(", exit 1") in gate.stdout.splitlines()


def test_demo_ends_with_next_steps_that_exist(demo: tuple[Path, list[str]]) -> None:
    """The demo ends with what to run and read next; every page it names exists."""
    _, lines = demo
    nexts = [index for index, line in enumerate(lines) if line.startswith("== Next ")]
    assert len(nexts) == 1
    after = lines[nexts[0] + 1 :]
    assert after[0] == "  - the core alone, no OpenTelemetry: make quickstart"
    assert after[1].endswith("/pytest examples/test_demo_agent.py")
    pages = [line.split()[0] for line in after[3:]]
    assert pages == [
        "docs/quickstart.md",
        "docs/guard.md",
        "docs/zero-code.md",
        "docs/start-from-traces.md",
        "docs/beyond.md",
    ]
    assert all((ROOT / page).is_file() for page in pages)


NUMBERS = {4: "Four", 5: "Five", 6: "Six", 7: "Seven", 8: "Eight", 9: "Nine"}


def test_the_quickstart_page_counts_the_demos_scenes(demo: tuple[Path, list[str]]) -> None:
    """docs/quickstart.md and the demo's docstring say how many scenes the demo prints."""
    _, lines = demo
    scenes = [line for line in lines if re.match(r"== \d+\. ", line)]
    count = NUMBERS[len(scenes)]
    page = " ".join((ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8").split())
    assert f"{count} scenes:" in page
    assert f"{count} scenes:" in (ROOT / "examples" / "demo_agent.py").read_text(encoding="utf-8")


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
