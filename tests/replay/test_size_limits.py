"""Replay's size limit per line and per message (``--max-line-bytes``), through the real
command: an oversize JSON line, protobuf message or compressed frame is located, counted
unreadable and skipped without being held in memory, and the gate fails on it (issue 21)."""

from __future__ import annotations

import gzip
import json
import struct
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
import zstandard
from replay_recording import ALLOW_ITS_ERRORS, POLICY, live_and_recorded

from groundplane_otel.cli import main
from groundplane_otel.otel.otlp_files import request_from_json

OUTCOMES = {"passed": 4, "blocked": 1, "error": 2}  # the recording's, read whole
LIMIT = 100_000


def replay(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    """``groundplane-otel replay --json`` over ``args``: exit code, report."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    code = main(["replay", "--policy", str(policy), "--json", "--quiet", *ALLOW_ITS_ERRORS, *args])
    return code, json.loads(capsys.readouterr().out)


def framed(bodies: list[bytes]) -> bytes:
    return b"".join(struct.pack(">I", len(body)) + body for body in bodies)


def oversize_line(size: int) -> str:
    """A valid OTLP/JSON line of about ``size`` bytes (one span, one long attribute)."""
    span = {
        "traceId": "ab" * 16,
        "spanId": "cd" * 8,
        "name": "big",
        "attributes": [{"key": "blob", "value": {"stringValue": "x" * size}}],
    }
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})


def test_a_json_line_over_the_limit_is_located_skipped_and_fails_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A line of 300,000 bytes under ``--max-line-bytes 100000`` is one located unreadable
    line; the lines after it are read as before; ``--max-unreadable 1`` passes the gate."""
    _, path = live_and_recorded(tmp_path)
    lines = path.read_text().splitlines()
    path.write_text("\n".join([*lines[:3], oversize_line(300_000), *lines[3:]]) + "\n")
    code, report = replay(tmp_path, capsys, str(path), "--max-line-bytes", str(LIMIT))
    assert code == 1
    data = report["input"]
    assert (data["unreadable"], data["spans"], data["requests"]) == (1, 19, 19)
    assert data["unreadable_locations"] == [
        f"{path}:4: line over the size limit of {LIMIT} bytes (--max-line-bytes): skipped"
    ]
    assert report["gate"]["failures"] == ["1 unreadable inputs > 0"]
    assert report["boundaries"]["answer"]["outcomes"] == OUTCOMES
    code, report = replay(
        tmp_path, capsys, str(path), "--max-line-bytes", str(LIMIT), "--max-unreadable", "1"
    )
    assert (code, report["input"]["spans"]) == (0, 19)
    code, report = replay(tmp_path, capsys, str(path))  # the default limit: 64 MiB
    assert (code, report["input"]["unreadable"], report["input"]["spans"]) == (0, 0, 20)


def test_a_protobuf_message_over_the_limit_is_skipped_and_the_next_one_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A length-prefixed message of 300,000 bytes is located at its byte offset, skipped
    unread, and every message after it is decided."""
    _, path = live_and_recorded(tmp_path)
    lines = path.read_text().splitlines()
    bodies = [request_from_json(line).SerializeToString() for line in lines]
    big = request_from_json(oversize_line(300_000)).SerializeToString()
    recording = tmp_path / "traces.pb"
    recording.write_bytes(framed([*bodies[:2], big, *bodies[2:]]))
    offset = sum(4 + len(body) for body in bodies[:2])
    code, report = replay(tmp_path, capsys, str(recording), "--max-line-bytes", str(LIMIT))
    assert code == 1
    data = report["input"]
    assert (data["unreadable"], data["spans"]) == (1, 19)
    assert data["unreadable_locations"] == [
        f"{recording}@{offset}: message of {len(big)} bytes over the size limit of {LIMIT} "
        "bytes (--max-line-bytes): skipped"
    ]
    assert report["boundaries"]["answer"]["outcomes"] == OUTCOMES


def test_a_gzip_bomb_line_is_skipped_without_holding_it_in_memory(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 50 MB line that gzips to a few kilobytes, ahead of the recording, is one unreadable
    line; replaying it allocates under 10 MB at its peak; the recording still decides."""
    _, path = live_and_recorded(tmp_path)
    bomb = tmp_path / "bomb.jsonl.gz"
    bomb.write_bytes(gzip.compress(b'{"x":[' + b"0," * 25_000_000 + b"0]}\n" + path.read_bytes()))
    assert bomb.stat().st_size < 200_000
    tracemalloc.start()
    try:
        code, report = replay(tmp_path, capsys, str(bomb), "--max-line-bytes", str(LIMIT))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert code == 1
    assert peak < 10_000_000
    data = report["input"]
    assert (data["unreadable"], data["spans"]) == (1, 19)
    assert data["unreadable_locations"] == [
        f"{bomb}:1: line over the size limit of {LIMIT} bytes (--max-line-bytes): skipped"
    ]
    assert report["boundaries"]["answer"]["outcomes"] == OUTCOMES


@pytest.mark.parametrize("compression", ["zstd", "gzip"])
def test_a_compressed_message_decompressing_past_the_limit_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], compression: str
) -> None:
    """A Collector-style compressed frame (zstd or gzip) that inflates past the limit is a
    located unreadable message (a compression bomb); the frames after it decide."""
    _, path = live_and_recorded(tmp_path)
    lines = [line.encode() for line in path.read_text().splitlines()]
    pack = zstandard.ZstdCompressor().compress if compression == "zstd" else gzip.compress
    bomb = pack(b" " * (LIMIT * 20) + b"{}")
    recording = tmp_path / "frames.zst"
    recording.write_bytes(framed([pack(lines[0]), bomb, *map(pack, lines[1:])]))
    offset = 4 + len(pack(lines[0]))
    code, report = replay(tmp_path, capsys, str(recording), "--max-line-bytes", str(LIMIT))
    assert code == 1
    data = report["input"]
    assert (data["unreadable"], data["spans"]) == (1, 19)
    assert data["unreadable_locations"] == [
        f"{recording}@{offset}: not a trace request (decompresses to more than {LIMIT} bytes "
        "(--max-line-bytes))"
    ]
    assert report["boundaries"]["answer"]["outcomes"] == OUTCOMES


@pytest.mark.parametrize("value", ["0", "-5", "1.5", "nan"])
def test_a_nonsense_size_limit_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    """``--max-line-bytes`` below 1 or not a whole number: exit 2, the option and the value
    named, before anything is read."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    with pytest.raises(SystemExit) as exit_info:
        main(["replay", "--policy", str(policy), str(tmp_path / "x"), "--max-line-bytes", value])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err.splitlines()[-1] == (
        "groundplane-otel replay: error: argument --max-line-bytes: "
        f"must be a whole number >= 1, got {value!r}"
    )


@pytest.mark.parametrize(("compressed", "jobs"), [(False, "1"), (False, "2"), (True, "1")])
def test_long_lines_are_read_or_refused_at_the_exact_limit(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], compressed: bool, jobs: str
) -> None:
    """Lines longer than one read (1 MiB) are read on in chunks: one of exactly
    ``--max-line-bytes`` bytes (its newline not counted) is read, one byte more is refused and
    located, and the lines around them are read as before — plain (measured, then read) or
    gzip (held), in one process or two (issue 36)."""
    limit = 3 * 1024 * 1024 + 7
    _, path = live_and_recorded(tmp_path)
    lines = path.read_text().splitlines()
    pad = limit - len(oversize_line(0))
    exact, over = oversize_line(pad), oversize_line(pad + 1)
    assert (len(exact), len(over)) == (limit, limit + 1)
    text = "\n".join([*lines[:3], exact, over, *lines[3:]]) + "\n"
    if compressed:
        path = path.with_suffix(".jsonl.gz")
        path.write_bytes(gzip.compress(text.encode(), compresslevel=1))
    else:
        path.write_text(text)
    code, report = replay(
        tmp_path, capsys, str(path), "--max-line-bytes", str(limit), "--jobs", jobs
    )
    assert code == 1
    data = report["input"]
    assert (data["unreadable"], data["spans"], data["requests"]) == (1, 20, 20)
    assert data["unreadable_locations"] == [
        f"{path}:5: line over the size limit of {limit} bytes (--max-line-bytes): skipped"
    ]
    assert report["boundaries"]["answer"]["outcomes"] == OUTCOMES
