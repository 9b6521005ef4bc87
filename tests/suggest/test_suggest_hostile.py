"""Hostile and empty recordings through the real ``groundplane-otel suggest``: unreadable input
is located and skipped as replay does (and fails the run unless ``--max-unreadable`` allows it),
nothing crashes, and when nothing can be inferred the command says what is missing (exit 1)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import recordings
import yaml

from groundplane_otel.cli import main

Span = dict[str, Any]


def suggest(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["suggest", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def demo_lines(tmp_path: Path) -> list[str]:
    path = tmp_path / "demo.jsonl"
    recordings.record_demo(path)
    return path.read_text().splitlines()


def span_of(tree: dict[str, Any]) -> Span:
    span: Span = tree["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    return span


def edited(lines: list[str], edit: Callable[[Span], Span | None]) -> list[str]:
    """Each line's span edited (None: the line is left out)."""
    out = []
    for line in lines:
        tree = json.loads(line)
        span = edit(span_of(tree))
        if span is not None:
            tree["resourceSpans"][0]["scopeSpans"][0]["spans"][0] = span
            out.append(json.dumps(tree))
    return out


def without_attribute(key: str) -> Callable[[Span], Span]:
    def edit(span: Span) -> Span:
        span["attributes"] = [a for a in span.get("attributes", []) if a["key"] != key]
        return span

    return edit


def write(path: Path, lines: list[str]) -> Path:
    path.write_text("\n".join(lines) + "\n")
    return path


def test_unreadable_lines_are_located_skipped_and_fail_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 200,000-deep line, a line that is not JSON and a span with a 3-byte id are located on
    stderr; the run exits 1 without writing a policy, and with ``--max-unreadable 3`` writes
    the same policy as the clean recording."""
    lines = demo_lines(tmp_path)
    deep = '{"resourceSpans":' + "[" * 200_000 + "]" * 200_000 + "}"
    bad_id = json.loads(lines[0])
    span_of(bad_id)["spanId"] = "abcdef"
    path = write(tmp_path / "hostile.jsonl", [deep, "not json", json.dumps(bad_id), *lines[1:]])
    policy = tmp_path / "suggested.yaml"
    code, out, err = suggest(capsys, "-o", str(policy), str(path))
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        f"groundplane-otel: unreadable: {path}:1: not an OTLP/JSON trace request (nested too deep)",
        f"groundplane-otel: unreadable: {path}:2: not an OTLP/JSON trace request "
        "(invalid literal, expected 'null': line 1 column 1 (char 0))",
        f"groundplane-otel: unreadable: {path}:3 span 0 'chat scripted-analyst-1': invalid span id "
        "(3 bytes, need 8, not all zero)",
        "groundplane-otel: 3 unreadable inputs > 0 (--max-unreadable): no policy written",
    ]
    assert not policy.exists()
    clean = tmp_path / "clean.yaml"
    assert suggest(capsys, "-o", str(clean), str(write(tmp_path / "c.jsonl", lines)))[0] == 0
    code, _, _ = suggest(capsys, "-o", str(policy), "--max-unreadable", "3", str(path))
    assert code == 0
    assert yaml.safe_load(policy.read_text()) == yaml.safe_load(clean.read_text())
    assert "# 3 unreadable inputs were skipped." in policy.read_text()


def test_a_line_over_max_line_bytes_is_located_skipped_and_fails_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--max-line-bytes`` caps a line as in replay: the first demo line, made longer than the
    limit, is one located unreadable input (exit 1, no policy); allowed by ``--max-unreadable
    1``, the other runs are read and a policy is written."""
    lines = demo_lines(tmp_path)
    limit = max(map(len, lines)) + 10
    long = json.loads(lines[0])
    span_of(long)["name"] = "x" * limit
    path = write(tmp_path / "long.jsonl", [json.dumps(long), *lines[1:]])
    policy = tmp_path / "suggested.yaml"
    code, out, err = suggest(capsys, "-o", str(policy), "--max-line-bytes", str(limit), str(path))
    assert (code, out) == (1, "")
    assert err.splitlines() == [
        f"groundplane-otel: unreadable: {path}:1: line over the size limit of {limit} bytes "
        "(--max-line-bytes): skipped",
        "groundplane-otel: 1 unreadable inputs > 0 (--max-unreadable): no policy written",
    ]
    assert not policy.exists()
    args = ("-o", str(policy), "--max-line-bytes", str(limit), "--max-unreadable", "1")
    assert suggest(capsys, *args, str(path))[0] == 0
    assert "# 1 unreadable inputs were skipped." in policy.read_text()


def test_two_different_spans_with_one_id_make_their_trace_unused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A span id reused by a different span: that trace is told (located by its id) and left
    out; the other 59 runs are read."""
    lines = demo_lines(tmp_path)
    twin = json.loads(lines[0])
    span_of(twin)["name"] = "chat another-model"
    path = write(tmp_path / "twin.jsonl", [*lines, json.dumps(twin)])
    trace = span_of(twin)["traceId"]
    code, out, err = suggest(capsys, "--max-unreadable", "1", str(path))
    assert code == 0
    assert err == (
        f"groundplane-otel: unreadable: trace {trace}: span id {span_of(twin)['spanId']} used "
        "by different spans: trace not used\n"
    )
    assert out.startswith("# Suggested by `groundplane-otel suggest` from 59 recorded runs:")


def _drop_tools(span: Span) -> Span | None:
    return None if span["name"].startswith("execute_tool") else span


def _drop_chats(span: Span) -> Span | None:
    return None if span["name"].startswith("chat") else span


NOTHING = [
    (
        "no tool spans",
        _drop_tools,
        "no tool spans among the 240 spans read: no tool result to ground answers on",
    ),
    (
        "tool results not captured",
        without_attribute("gen_ai.tool.call.result"),
        "none of the 60 tool spans carries its result: content was not captured. An "
        "instrumentation writes tool results only with its content capture on (e.g. "
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY); a tool the guard records "
        "in code (the tool decorator, call_and_record) writes its result only when the guard's "
        "capture_content is true (GuardConfig(capture_content=True), or capture_content: true "
        "in the policy). Record again with the one your tools use on",
    ),
    (
        "no answers",
        _drop_chats,
        "no agent answers in the input (no LLM span carries an output)",
    ),
    (
        "answers not captured",
        without_attribute("gen_ai.output.messages"),
        "60 LLM spans answered but carry no output content: the model instrumentation's content "
        "capture was off (e.g. OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY); "
        "record again with it on",
    ),
]


@pytest.mark.parametrize(("case", "edit", "message"), NOTHING, ids=[c[0] for c in NOTHING])
def test_nothing_to_infer_says_what_is_missing(
    case: str,
    edit: Callable[[Span], Span | None],
    message: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A recording without what a policy is inferred from exits 1 with one line saying what is
    missing, and writes no policy."""
    path = write(tmp_path / "traces.jsonl", edited(demo_lines(tmp_path), edit))
    policy = tmp_path / "suggested.yaml"
    code, out, err = suggest(capsys, "-o", str(policy), str(path))
    assert (code, out) == (1, "")
    assert err == f"groundplane-otel: nothing to suggest: {message}\n"
    assert not policy.exists()


def test_an_empty_file_has_nothing_to_infer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An empty recording exits 1 saying that no span was read."""
    path = write(tmp_path / "empty.jsonl", [])
    code, _, err = suggest(capsys, str(path))
    assert code == 1
    assert err == (
        "groundplane-otel: nothing to suggest: 0 spans read: the input holds no recorded span\n"
    )


def test_answers_that_quote_nothing_recorded_have_no_candidate_check(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every answer a made-up winner: no candidate check at all (exit 1), and the message says
    so and what the facts are, not "lower --min-support" (which would change nothing)."""

    def scramble(span: Span) -> Span:
        for attribute in span.get("attributes", []):
            if attribute["key"] == "gen_ai.output.messages" and '\\"winner' in json.dumps(
                attribute
            ):
                attribute["value"]["stringValue"] = json.dumps(
                    [
                        {
                            "role": "assistant",
                            "parts": [{"type": "text", "content": '{"winner": "nobody"}'}],
                            "finish_reason": "stop",
                        }
                    ]
                )
        return span

    path = write(tmp_path / "traces.jsonl", edited(demo_lines(tmp_path), scramble))
    code, _, err = suggest(capsys, str(path))
    assert code == 1
    assert err == (
        "groundplane-otel: nothing to suggest: no candidate check: no answer field equals "
        "anything the facts hold (warehouse_query from warehouse.query: a table of rows keyed "
        "by 'campaign' under 'rows' (60 of 60 results))\n"
    )


def test_names_from_the_traces_cannot_break_the_policy_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An agent named with a line break and YAML syntax and a tool named ``yes``: the file
    is still valid as written (check-policy), names them exactly, and replay with it flags
    the 6 injected wrong runs and passes the 54 right ones."""
    lines = demo_lines(tmp_path)
    agent, tool = "evil\nversion: 2\n# x: [", "yes"

    def rename(span: Span) -> Span:
        for attribute in span.get("attributes", []):
            if attribute["key"] == "gen_ai.agent.name":
                attribute["value"] = {"stringValue": agent}
            if attribute["key"] == "gen_ai.tool.name":
                attribute["value"] = {"stringValue": tool}
        return span

    path = write(tmp_path / "traces.jsonl", edited(lines, rename))
    policy = tmp_path / "suggested.yaml"
    assert suggest(capsys, "-o", str(policy), str(path))[0] == 0
    assert main(["check-policy", str(policy)]) == 0
    capsys.readouterr()
    data = yaml.safe_load(policy.read_text())
    assert data["version"] == 1
    assert list(data["facts"]) == ["yes"]
    assert data["facts"]["yes"]["tool"] == "yes"
    (boundary,) = data["boundaries"].values()
    assert boundary["match"] == {"agent_name": agent}
    assert main(["replay", "--policy", str(policy), "--json", "--quiet", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    (outcomes,) = (entry["outcomes"] for entry in report["boundaries"].values())
    assert outcomes == {"passed": 54, "flagged": 6}
