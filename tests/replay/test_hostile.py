"""Hostile and broken recordings through the real ``groundplane-otel replay`` command: every
malformed input is located, counted and skipped (or its trace refused), nothing crashes, and the
gate fails on what it could not read or did not see unless told otherwise (issue 21)."""

from __future__ import annotations

import contextlib
import gzip
import json
import struct
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import zstandard
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from otel_harness import SALES_ROWS, Harness, answer
from replay_recording import (
    ALLOW_ITS_ERRORS,
    CONFIG,
    POLICY,
    live_and_recorded,
    unguarded_recording,
)

from groundplane_otel.cli import REPLAY_EXIT_CODES, main
from groundplane_otel.errors import FactBoundaryError
from groundplane_otel.otel.otlp_files import OtlpFileExporter, request_from_json

OUTCOMES = {"passed": 4, "blocked": 1, "error": 2}  # the recording's, read whole


def replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str
) -> tuple[int, dict[str, Any]]:
    """``groundplane-otel replay --json`` over ``args`` (files and options): exit code, report."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    code = main(["replay", "--policy", str(policy), "--json", "--quiet", *ALLOW_ITS_ERRORS, *args])
    return code, json.loads(capsys.readouterr().out)


def replay_text(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    """``groundplane-otel replay`` (the text report) over ``args``: exit code, report."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    code = main(["replay", "--policy", str(policy), "--quiet", *ALLOW_ITS_ERRORS, *args])
    return code, capsys.readouterr().out


def recording(tmp_path: Path) -> tuple[Path, list[str]]:
    _, path = live_and_recorded(tmp_path)
    return path, path.read_text().splitlines()


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def with_span(line: str, **fields: str) -> str:
    """``line`` (one span) with some of its span's fields replaced."""
    tree = json.loads(line)
    tree["resourceSpans"][0]["scopeSpans"][0]["spans"][0].update(fields)
    return json.dumps(tree)


def test_an_over_deep_json_line_is_located_and_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 200,000-deep line is one located unreadable line (no traceback): the gate fails on it
    (exit 1) unless ``--max-unreadable 1``, and the other lines decide as before."""
    path, lines = recording(tmp_path)
    deep = '{"resourceSpans":' + "[" * 200_000 + "]" * 200_000 + "}"
    write(path, [*lines[:1], deep, *lines[1:]])
    code, report = replay(tmp_path, capsys, str(path))
    assert code == 1
    assert report["input"]["unreadable"] == 1
    assert report["input"]["unreadable_locations"] == [
        f"{path}:2: not an OTLP/JSON trace request (nested too deep)"
    ]
    assert report["gate"]["failures"] == ["1 unreadable inputs > 0"]
    assert report["boundaries"]["answer"]["outcomes"] == OUTCOMES
    code, report = replay(tmp_path, capsys, str(path), "--max-unreadable", "1")
    assert code == 0
    assert report["gate"] == {"passed": True, "failures": []}


def test_over_deep_attributes_are_located_with_the_innermost_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An attribute nested 60 arrays deep (valid JSON, too deep for protobuf) makes its line
    unreadable, named by protobuf's innermost problem rather than its chain of fields."""
    path, lines = recording(tmp_path)
    value: dict[str, Any] = {"stringValue": "x"}
    for _ in range(60):
        value = {"arrayValue": {"values": [value]}}
    tree = json.loads(lines[0])
    tree["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"].append(
        {"key": "deep", "value": value}
    )
    write(path, [json.dumps(tree), *lines[1:]])
    # the line lost held a tool span: its run is a third error (fact_missing), allowed here
    code, report = replay(tmp_path, capsys, str(path), "--max-unreadable", "1", "--max-errors", "3")
    assert code == 0
    [location] = report["input"]["unreadable_locations"]
    assert location.startswith(
        f"{path}:1: not an OTLP/JSON trace request (Message too deep. Max recursion depth is 100"
    )
    assert report["input"]["spans"] == len(lines) - 1


def test_the_console_command_reports_a_hostile_line_without_a_traceback(tmp_path: Path) -> None:
    """``python -m groundplane_otel.cli replay`` in its own process, over an over-deep line:
    exit 1, the located line in the report, nothing on stderr that looks like a traceback."""
    path, lines = recording(tmp_path)
    write(path, ['{"resourceSpans":' + "[" * 200_000 + "]" * 200_000 + "}", *lines])
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "groundplane_otel.cli",
            "replay",
            "--policy",
            str(policy),
            str(path),
            *ALLOW_ITS_ERRORS,
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    out = done.stdout.splitlines()
    assert f"  unreadable {path}:1: not an OTLP/JSON trace request (nested too deep)" in out
    assert out[-1] == "gate: FAILED — 1 unreadable inputs > 0"


@pytest.mark.parametrize(("form", "jobs"), [("json", "1"), ("json", "2"), ("proto", "2")])
def test_spans_with_invalid_ids_are_unreadable_and_every_other_trace_is_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], form: str, jobs: str
) -> None:
    """Empty, 1-byte and 16-byte span ids, a 1-byte trace id and a 3-byte parent id, added to
    a real trace, are five located unreadable spans; all six traces are decided as recorded,
    and the one that lost four of them (its trace id usable) counts incomplete (issue 36), in
    one process or two, from OTLP/JSON or protobuf."""
    path, lines = recording(tmp_path)
    tool = lines[0]  # the first trace's tool span
    hostile = [
        with_span(tool, spanId=""),
        with_span(tool, spanId="ab"),
        with_span(tool, spanId="ab" * 16),
        with_span(tool, traceId="cd"),
        with_span(tool, spanId="1234567812345678", parentSpanId="abcdef"),
    ]
    every = [*lines[:2], *hostile, *lines[2:]]
    if form == "json":
        write(path, every)
        where = [f"{path}:{number}" for number in range(3, 8)]
    else:
        bodies = [request_from_json(line).SerializeToString() for line in every]
        path = path.with_suffix(".pb")
        path.write_bytes(b"".join(struct.pack(">I", len(body)) + body for body in bodies))
        offsets = [sum(4 + len(body) for body in bodies[:index]) for index in range(2, 7)]
        where = [f"{path}@{offset}" for offset in offsets]
    code, report = replay(tmp_path, capsys, str(path), "--jobs", jobs)
    assert code == 1
    data = report["input"]
    assert (data["bad_spans"], data["unreadable"], data["traces"]) == (5, 5, 6)
    assert data["incomplete_traces"] == 1
    name = "'execute_tool top_sales'"
    assert data["unreadable_locations"] == [
        f"{where[0]} span 0 {name}: invalid span id (0 bytes, need 8, not all zero)",
        f"{where[1]} span 0 {name}: invalid span id (1 bytes, need 8, not all zero)",
        f"{where[2]} span 0 {name}: invalid span id (16 bytes, need 8, not all zero)",
        f"{where[3]} span 0 {name}: invalid trace id (1 bytes, need 16, not all zero)",
        f"{where[4]} span 0 {name}: invalid parent span id (3 bytes, need 0 or 8)",
    ]
    assert report["boundaries"]["answer"]["outcomes"] == OUTCOMES
    assert replay(tmp_path, capsys, str(path), "--max-unreadable", "5")[0] == 0


def test_a_1500_deep_chain_exported_leaf_first_is_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An agent whose tool and model calls sit under 1,500 nested spans, recorded by the SDK
    (leaf first), replays without recursion: its wrong answer is blocked, as live."""
    otel = Harness()
    path = tmp_path / "deep.jsonl"
    otel.tracer_provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    otel.install(CONFIG)
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "analyst"}
    with contextlib.ExitStack() as stack:
        stack.enter_context(
            otel.tracer.start_as_current_span("invoke_agent analyst", attributes=agent)
        )
        for level in range(1_500):
            stack.enter_context(otel.tracer.start_as_current_span(f"step {level}"))
        otel.tool(SALES_ROWS)
        with contextlib.suppress(FactBoundaryError):
            otel.chat(answer({"winner": "US"}))
    names = [
        json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["name"]
        for line in path.read_text().splitlines()
    ]
    assert (len(names), names[0], names[-1]) == (
        1_503,
        "execute_tool top_sales",
        "invoke_agent analyst",
    )
    code, report = replay(tmp_path, capsys, str(path))
    assert code == 0
    assert report["input"]["spans"] == 1_503
    assert report["boundaries"]["answer"]["outcomes"] == {"blocked": 1}
    assert [finding["reason"] for finding in report["findings"]] == ["wrong_winner"]


@pytest.mark.parametrize(
    ("option", "value", "problem"),
    [
        ("--max-unsupported-rate", "nan", "must be a number between 0 and 1, got 'nan'"),
        ("--max-unsupported-rate", "-0.1", "must be a number between 0 and 1, got '-0.1'"),
        ("--max-unsupported-rate", "1.5", "must be a number between 0 and 1, got '1.5'"),
        ("--max-traces", "-1", "must be a whole number >= 1, got '-1'"),
        ("--max-traces", "0", "must be a whole number >= 1, got '0'"),
        ("--max-spans-per-trace", "0", "must be a whole number >= 1, got '0'"),
        ("--max-errors", "-1", "must be a whole number >= 0, got '-1'"),
        ("--max-unreadable", "two", "must be a whole number >= 0, got 'two'"),
        ("--max-findings", "-3", "must be a whole number >= 0, got '-3'"),
        ("--decision-wait", "-5", "must be a whole number >= 0, got '-5'"),
    ],
)
def test_nonsense_limits_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str, value: str, problem: str
) -> None:
    """A NaN, negative or zero limit is refused before anything is read: exit 2, a message
    naming the option and the value."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    with pytest.raises(SystemExit) as exit_info:
        main(["replay", "--policy", str(policy), str(tmp_path / "none.jsonl"), option, value])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        f"groundplane-otel replay: error: argument {option}: {problem}"
    )


def test_identical_copies_of_a_span_are_one_span_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A span exported twice byte for byte (an exporter's retry) is replayed once and counted
    as a duplicate; the gate passes and the outcomes are the recording's."""
    path, lines = recording(tmp_path)
    write(path, [*lines[:2], lines[1], *lines[2:]])
    code, report = replay(tmp_path, capsys, str(path))
    assert code == 0
    assert (report["input"]["duplicate_spans"], report["input"]["conflicting_traces"]) == (1, 0)
    assert report["boundaries"]["answer"]["outcomes"] == OUTCOMES


def test_two_different_spans_with_one_id_refuse_their_trace(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A right answer and a wrong one under the same span id: which one the user saw cannot be
    known, so that trace is not decided (one passed output fewer), it is counted conflicting
    and incomplete, located as unreadable, and the gate fails on it."""
    path, lines = recording(tmp_path)
    right = lines[1]  # the first trace's answer: {"winner": "EU"}
    wrong = right.replace('\\\\\\"EU\\\\\\"', '\\\\\\"US\\\\\\"')
    assert wrong != right
    write(path, [*lines[:2], wrong, *lines[2:]])
    code, report = replay(tmp_path, capsys, str(path))
    assert code == 1
    data = report["input"]
    assert (data["conflicting_traces"], data["incomplete_traces"], data["traces"]) == (1, 1, 6)
    span = json.loads(right)["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    assert data["unreadable_locations"] == [
        f"trace {span['traceId']}: span id {span['spanId']} used by 2 different spans: "
        "trace not decided"
    ]
    assert report["boundaries"]["answer"]["outcomes"] == {"passed": 3, "blocked": 1, "error": 2}


def test_findings_past_the_limit_are_shown_as_a_count(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """With ``--max-findings 1`` one finding is listed and the other two are counted, in the
    JSON report and in the text one."""
    path, _ = recording(tmp_path)
    code, report = replay(tmp_path, capsys, str(path), "--max-findings", "1")
    assert code == 0
    assert (len(report["findings"]), report["findings_left_out"]) == (1, 2)
    code, text = replay_text(tmp_path, capsys, str(path), "--max-findings", "1")
    assert code == 0
    assert "… 2 more findings, not listed" in text.splitlines()


def test_many_bad_lines_are_counted_with_the_first_located(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """20,000 bad lines are all counted, only the first 100 kept with their location (bounded
    memory); the gate fails on them unless ``--max-unreadable`` allows that many."""
    path, lines = recording(tmp_path)
    write(path, [*lines, *(["x"] * 20_000)])
    code, report = replay(tmp_path, capsys, str(path))
    assert code == 1
    data = report["input"]
    assert (data["unreadable"], len(data["unreadable_locations"])) == (20_000, 100)
    assert data["unreadable_left_out"] == 19_900
    assert data["unreadable_locations"][0].startswith(f"{path}:20: not an OTLP/JSON")
    assert data["unreadable_locations"][-1].startswith(f"{path}:119: not an OTLP/JSON")
    assert report["gate"]["failures"] == ["20000 unreadable inputs > 0"]
    code, text = replay_text(tmp_path, capsys, str(path), "--max-unreadable", "20000")
    assert code == 0
    assert "  … 19900 more unreadable, not located" in text.splitlines()


def length_prefixed(bodies: list[bytes]) -> bytes:
    return b"".join(struct.pack(">I", len(body)) + body for body in bodies)


def test_gzip_and_zstd_recordings_decide_as_the_plain_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Whole-file gzip and zstd (json lines in one frame or in many, and proto) and the
    Collector's per-message zstd frames (json and proto) are read: the same outcomes, nothing
    unreadable, exit 0."""
    path, lines = recording(tmp_path)
    plain = path.read_bytes()
    protos = [request_from_json(line).SerializeToString() for line in lines]
    zstd = zstandard.ZstdCompressor()
    files = {
        "lines.jsonl.gz": gzip.compress(plain),
        "lines.jsonl.zst": zstd.compress(plain),
        "frames.jsonl.zst": b"".join(
            zstd.compress(plain[at : at + 999]) for at in range(0, len(plain), 999)
        ),
        "messages.pb.zst": zstd.compress(length_prefixed(protos)),
        "frames-json.zst": length_prefixed([zstd.compress(line.encode()) for line in lines]),
        "frames-proto.zst": length_prefixed([zstd.compress(body) for body in protos]),
    }
    for name, content in files.items():
        (tmp_path / name).write_bytes(content)
        code, report = replay(tmp_path, capsys, str(tmp_path / name))
        assert (name, code, report["input"]["unreadable"]) == (name, 0, 0)
        assert report["input"]["spans"] == len(lines)
        assert report["boundaries"]["answer"]["outcomes"] == OUTCOMES


def test_a_corrupt_compressed_recording_fails_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A zstd file cut in half and a gzip one with a broken body are located as unreadable
    (whatever was read before the damage still counts) and the gate fails: exit 1."""
    path, _ = recording(tmp_path)
    plain = path.read_bytes()
    packed = zstandard.ZstdCompressor().compress(plain)
    cut = tmp_path / "cut.jsonl.zst"
    cut.write_bytes(packed[: len(packed) // 2])
    broken = tmp_path / "broken.jsonl.gz"
    squeezed = gzip.compress(plain)
    broken.write_bytes(squeezed[:20] + bytes(64) + squeezed[84:])
    for damaged in (cut, broken):
        code, report = replay(tmp_path, capsys, str(damaged), "--allow-empty")
        assert code == 1
        data = report["input"]
        assert data["unreadable"] >= 1
        assert data["unreadable_locations"][-1].startswith(
            f"{damaged}: unreadable compressed data ("
        )
        assert report["gate"]["failures"][0] == f"{data['unreadable']} unreadable inputs > 0"


def test_an_empty_match_fails_the_gate_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recording with no guarded output (spans, none guarded) fails the gate, saying so and
    naming what the policy expected; ``--allow-empty`` passes it. (Changed with issue 36: the
    input was an empty file, which no option passes now: see test_gate.py.)"""
    empty = unguarded_recording(tmp_path)
    code, report = replay(tmp_path, capsys, str(empty))
    assert code == 1
    assert report["gate"]["failures"] == [
        "no guarded output in the input (--allow-empty to pass)",
        "fact 'sales': its tool 'top_sales' never appeared in the input; tools seen: ping "
        "(--allow-unmatched to pass)",
        "boundary 'answer' matched no output (agent_name 'analyst'); no agent names in the "
        "input (--allow-unmatched to pass)",
    ]
    code, text = replay_text(tmp_path, capsys, str(empty), "--allow-empty")
    assert code == 0
    assert text.splitlines()[-1] == "gate: passed"
    assert "(no guarded output in the input)" in text.splitlines()


def test_the_exit_codes_are_in_the_help(capsys: pytest.CaptureFixture[str]) -> None:
    """``replay --help`` documents exit codes 0, 1 and 2 (the text of ``REPLAY_EXIT_CODES``)."""
    with pytest.raises(SystemExit) as exit_info:
        main(["replay", "--help"])
    assert exit_info.value.code == 0
    assert REPLAY_EXIT_CODES in capsys.readouterr().out
    assert "  2  bad usage" in REPLAY_EXIT_CODES
