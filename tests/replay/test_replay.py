"""Replay of recorded traces (the Collector's file format) gives the live guard's verdicts:
the same engine decides both, whatever the order of spans, lines and files."""

from __future__ import annotations

import json
import random
import struct
import sys
from pathlib import Path
from typing import Any

import pytest
from otel_harness import Harness
from replay_recording import CONFIG, POLICY, live_and_recorded

from groundplane_otel.cli import main
from groundplane_otel.otel.otlp_files import BadInput, read_requests
from groundplane_otel.otel.replay import Replayer


def live_outputs(otel: Harness) -> dict[tuple[str, str], int]:
    return {
        (labels["groundplane.boundary"], labels["groundplane.outcome"]): value
        for labels, value in otel.metrics()["groundplane.outputs"]
    }


def live_findings(otel: Harness) -> list[tuple[str, str]]:
    return sorted(
        (f"{span.context.span_id:016x}", event.attributes["gen_ai.guardrail.result.reason"])
        for span in otel.spans()
        for event in span.events
        if event.name == "gen_ai.guardrail.result"
    )


def replayed(paths: list[Path], **options: Any) -> Replayer:
    replayer = Replayer(CONFIG, **options)
    bad: list[BadInput] = []
    for request in read_requests(paths, bad):
        replayer.feed(request)
    replayer.finish()
    assert bad == []
    return replayer


def test_replay_gives_the_live_verdicts(tmp_path: Path) -> None:
    """Outputs by outcome and every finding (span id, reason) are the live run's."""
    otel, path = live_and_recorded(tmp_path)
    replayer = replayed([path])
    assert replayer.counts()["outputs"] == live_outputs(otel)
    assert live_outputs(otel) == {
        ("answer", "passed"): 4,
        ("answer", "blocked"): 1,
        ("answer", "error"): 2,
    }
    found = sorted((f.span_id, f.reason) for f in replayer.stats.findings)
    assert found == live_findings(otel)
    stats = replayer.stats
    assert (stats.traces, stats.incomplete_traces, stats.orphan_spans) == (6, 0, 2)


def live_totals(otel: Harness, metric: str, *labels: str) -> dict[tuple[str, ...], int]:
    """The live guard's ``metric`` summed by the values of ``labels``."""
    totals: dict[tuple[str, ...], int] = {}
    for attributes, value in otel.metrics()[metric]:
        key = tuple(attributes[label] for label in labels)
        totals[key] = totals.get(key, 0) + value
    return totals


def test_replay_counts_the_live_claims_and_facts(tmp_path: Path) -> None:
    """Claims by (boundary, verdict) and facts by (kind, source, outcome), tallied from the
    engine's results, are the live guard's ``groundplane.claims`` and ``groundplane.facts``."""
    otel, path = live_and_recorded(tmp_path)
    stats = replayed([path]).stats
    live_claims = live_totals(
        otel, "groundplane.claims", "groundplane.boundary", "groundplane.verdict"
    )
    assert stats.claims == live_claims
    assert live_claims == {
        ("answer", "supported"): 4,
        ("answer", "unsupported"): 1,
        ("answer", "error"): 1,
    }
    live_facts = live_totals(
        otel,
        "groundplane.facts",
        "groundplane.fact.kind",
        "groundplane.fact.source",
        "groundplane.fact.outcome",
    )
    assert stats.facts == live_facts
    assert sum(live_facts.values()) == 6


def test_replay_writes_no_telemetry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Replay without providers builds no telemetry at all: with the guard's telemetry made
    unbuildable, the verdicts and findings are still the live ones."""
    otel, path = live_and_recorded(tmp_path)
    from groundplane_otel.otel._telemetry import telemetry

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("replay built telemetry")

    monkeypatch.setattr(telemetry.Telemetry, "__init__", refuse)
    replayer = replayed([path])
    assert replayer.counts()["outputs"] == live_outputs(otel)
    assert sorted((f.span_id, f.reason) for f in replayer.stats.findings) == live_findings(otel)
    assert replayer.internal_errors == 0


def test_an_engine_failure_at_a_span_end_is_counted_and_never_passes_the_answer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine raising as it decides the first model call's end is counted as its own bug
    and never raised: that run's answer goes unchecked, so its agent span counts it an error
    (never a pass), and every other trace is decided as live."""
    otel, path = live_and_recorded(tmp_path)
    replayer = Replayer(CONFIG)
    decide, failed = replayer.engine.decide, []

    def failing(span: Any) -> Any:
        if not failed and span.name.startswith("chat"):
            failed.append(span)
            raise RuntimeError("boom")
        return decide(span)

    monkeypatch.setattr(replayer.engine, "decide", failing)
    for request in read_requests([path], []):
        replayer.feed(request)
    replayer.finish()
    assert (len(failed), replayer.internal_errors) == (1, 1)
    live = live_outputs(otel)
    assert replayer.counts()["outputs"] == {
        ("answer", "passed"): live["answer", "passed"] - 1,
        ("answer", "blocked"): live["answer", "blocked"],
        ("answer", "error"): live["answer", "error"] + 1,
    }
    assert replayer.stats.errors == {"fact_missing": 1, "no_output": 2}  # live: 1 and 1
    replayer.close()


def test_findings_over_the_limit_are_counted_not_kept(tmp_path: Path) -> None:
    """With room for one finding, the first finding of the input is kept and the other two
    are counted as dropped; the outcomes are counted all the same."""
    otel, path = live_and_recorded(tmp_path)
    everything = replayed([path]).stats.findings
    replayer = replayed([path], max_findings=1)
    assert replayer.stats.findings == everything[:1]
    assert replayer.stats.findings_dropped == 2
    assert replayer.counts()["outputs"] == live_outputs(otel)


def test_any_span_order_over_any_number_of_files(tmp_path: Path) -> None:
    """Lines shuffled and split over three files (json and proto) decide the same."""
    otel, path = live_and_recorded(tmp_path)
    lines = path.read_text().splitlines()
    random.Random(7).shuffle(lines)
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    first.write_text("\n".join(lines[:5]) + "\n")
    second.write_text("\n".join(lines[5:10]) + "\n")
    third = tmp_path / "c.pb"
    from groundplane_otel.otel.otlp_files import request_from_json

    with third.open("wb") as out:
        for line in lines[10:]:
            body = request_from_json(line).SerializeToString()
            out.write(struct.pack(">I", len(body)) + body)
    replayer = replayed([first, third, second])
    assert replayer.counts()["outputs"] == live_outputs(otel)


def test_bad_lines_are_located_and_skipped(tmp_path: Path) -> None:
    """A truncated line, a non-object and an unknown field: located errors or ignored fields,
    never a crash; the good lines still count."""
    _, path = live_and_recorded(tmp_path)
    lines = path.read_text().splitlines()
    lines.insert(1, lines[0][:40])
    lines.insert(2, "[1, 2]")
    tree = json.loads(lines[3])
    tree["somethingNew"] = {"x": 1}
    lines[3] = json.dumps(tree)
    path.write_text("\n".join(lines) + "\n")
    bad: list[BadInput] = []
    requests = list(read_requests([path], bad))
    assert len(requests) == len(lines) - 2
    assert [item.location for item in bad] == [f"{path}:2", f"{path}:3"]
    assert bad[1].problem == "not an OTLP/JSON trace request (expected a JSON object, got list)"


def test_a_full_buffer_decides_early_and_reports_it(tmp_path: Path) -> None:
    """With room for one trace, interleaved traces are decided early: counted incomplete,
    never dropped silently."""
    _, path = live_and_recorded(tmp_path)
    lines = path.read_text().splitlines()
    random.Random(3).shuffle(lines)
    path.write_text("\n".join(lines) + "\n")
    replayer = replayed([path], max_traces=1)
    assert replayer.stats.incomplete_traces > 0
    assert replayer.stats.spans == len(lines)


def test_cli_gate_exits_non_zero_above_the_thresholds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``replay`` fails the build on the two error outputs by default (issue 36), passes when
    ``--max-errors 2`` allows them; ``--max-unsupported-rate 0`` fails it on the blocked answer
    (1 of the 5 answers checked; the claim rate beside it); ``--json`` is machine-readable;
    without content capture no claimed value is printed."""
    _, path = live_and_recorded(tmp_path)
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    base = ["replay", "--policy", str(policy), str(path), "--quiet"]
    assert main(base) == 1
    text = capsys.readouterr().out
    assert text.splitlines()[-1] == (
        "gate: FAILED — 2 of 7 outputs could not be checked (error: fact_missing 1, no_output 1) "
        "> 0 allowed (--max-errors 0, --max-error-rate 0)"
    )
    assert main([*base, "--max-errors", "2"]) == 0
    text = capsys.readouterr().out
    assert "gate: passed" in text
    assert "reason wrong_winner" in text
    assert "claimed" not in text
    assert main([*base, "--max-error-rate", "0.3"]) == 0  # 2 of 7 outputs: 0.29
    assert main([*base, "--max-error-rate", "0.25"]) == 1
    capsys.readouterr()
    assert main([*base, "--max-errors", "2", "--max-unsupported-rate", "0", "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["gate"]["failures"] == [
        "unsupported-answer rate 0.2000 (1 of 5 answers refused) > 0 (--max-unsupported-rate)"
    ]
    assert (report["answers_checked"], report["answers_refused"]) == (5, 1)
    assert (report["claims"], report["unsupported_claims"]) == (6, 1)
    assert report["unsupported_claim_rate"] == pytest.approx(1 / 6)
    assert report["boundaries"]["answer"]["outcomes"] == {"passed": 4, "blocked": 1, "error": 2}
    rates = ["--max-unsupported-rate", "0.2", "--max-unsupported-claim-rate", "0.1"]
    assert main([*base, "--max-errors", "2", *rates, "--json"]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["gate"]["failures"] == [
        "unsupported-claim rate 0.1667 (1 of 6 claims) > 0.1 (--max-unsupported-claim-rate)"
    ]
    assert main([*base, "--max-errors", "1"]) == 1


def test_progress_follows_the_bytes_read_over_every_file(tmp_path: Path) -> None:
    """The progress fraction grows with the bytes read and ends at 1.0 after the last file;
    the bar is drawn on a terminal only."""
    from groundplane_otel.cli import _Progress
    from groundplane_otel.otel.otlp_files import ReadProgress

    _, path = live_and_recorded(tmp_path)
    lines = path.read_text().splitlines()
    first, second = tmp_path / "1.jsonl", tmp_path / "2.jsonl"
    first.write_text("\n".join(lines[:10]) + "\n")
    second.write_text("\n".join(lines[10:]) + "\n")
    progress = ReadProgress([first, second])
    seen = [progress.fraction for _ in read_requests([first, second], [], progress=progress)]
    assert seen == sorted(seen)
    assert 0 < seen[0] < 0.5 < seen[-1]
    assert progress.fraction == 1.0
    import io

    out = io.StringIO()
    bar = _Progress(enabled=True)
    sys_stderr, sys.stderr = sys.stderr, out
    try:
        bar.show(0.5, 1200, 34)
    finally:
        sys.stderr = sys_stderr
    assert out.getvalue() == (
        "\rreplaying [###############...............]  50% · 1,200 spans · 34 traces decided"
    )
