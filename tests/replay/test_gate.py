"""The CI gate fails closed (issue 36): an output that could not be checked, a fact whose tool
never appeared, a boundary that matched nothing, a recording made with content capture off, and
input that is not an OTLP recording each fail ``groundplane-otel replay`` by default, named in
the report with what *was* seen; JUnit tells errors from refusals; the CI files say where they
were written; a reader that stops early (``| head``) gets no traceback. Each test runs the
user's command on recordings made with the real SDK."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from otel_harness import Harness
from replay_recording import POLICY, live_and_recorded

from groundplane_otel.cli import main
from groundplane_otel.otel.otlp_files import OtlpFileExporter
from groundplane_otel.otel.replay.coverage import CAPTURE_HINT

ROOT = Path(__file__).resolve().parents[2]
ERRORS = (
    "2 of 7 outputs could not be checked (error: fact_missing 1, no_output 1) > 0 allowed "
    "(--max-errors 0, --max-error-rate 0)"
)
NO_SPAN = (
    "; replay reads the Collector's file exporter output: one OTLP/JSON request per line "
    "(lowerCamelCase keys) or length-prefixed OTLP protobuf"
)


def replay(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str, policy: str = POLICY
) -> tuple[int, dict[str, Any]]:
    """``groundplane-otel replay --policy policy.yaml --json --quiet ARGS``: exit code, report."""
    file = tmp_path / "policy.yaml"
    file.write_text(policy)
    code = main(["replay", "--policy", str(file), "--json", "--quiet", *args])
    return code, json.loads(capsys.readouterr().out)


def capture_off_recording(path: Path, runs: int = 3) -> Path:
    """The sales agent recorded as a GenAI instrumentation records it with content capture
    off: the tool span without its result, the model span without its answer."""
    otel = Harness()
    otel.tracer_provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    for _ in range(runs):
        with otel.agent("analyst"):
            otel.tool(None)
            otel.chat(None)
    return path


def test_any_error_output_fails_the_gate_unless_allowed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The recording's two outputs that could not be checked fail the gate with no option
    given, named by reason; ``--max-errors 2`` or ``--max-error-rate 0.3`` (2 of 7) allows
    them, one less does not."""
    _, path = live_and_recorded(tmp_path)
    code, report = replay(tmp_path, capsys, str(path))
    assert (code, report["gate"]["failures"]) == (1, [ERRORS])
    assert report["error_reasons"] == {"fact_missing": 1, "no_output": 1}
    assert replay(tmp_path, capsys, str(path), "--max-errors", "2")[0] == 0
    assert replay(tmp_path, capsys, str(path), "--max-error-rate", "0.3")[0] == 0
    code, report = replay(tmp_path, capsys, str(path), "--max-errors", "1")
    assert report["gate"]["failures"] == [
        ERRORS.replace("> 0 allowed (--max-errors 0", "> 1 allowed (--max-errors 1")
    ]


def test_a_typo_in_the_policys_tool_name_fails_the_gate_naming_the_tool_seen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The issue's first finding: a one-letter typo in the tool name, replayed with
    ``--max-unsupported-rate 0``. Every output is an error (its fact is missing), so nothing
    was checked: the gate fails on the errors and names the tool the policy expects, the tools
    the input holds and the one it probably meant; text, JSON and Markdown say it."""
    _, path = live_and_recorded(tmp_path)
    typo = POLICY.replace("tool: top_sales", "tool: top_sale")
    args = (str(path), "--max-unsupported-rate", "0")
    code, report = replay(
        tmp_path, capsys, *args, "--markdown", str(tmp_path / "g.md"), policy=typo
    )
    unseen = (
        "fact 'sales': its tool 'top_sale' never appeared in the input; tools seen: top_sales; "
        "did you mean 'top_sales'? (--allow-unmatched to pass)"
    )
    assert code == 1
    assert report["gate"]["failures"] == [
        "7 of 7 outputs could not be checked (error: fact_missing 6, no_output 1) > 0 allowed "
        "(--max-errors 0, --max-error-rate 0)",
        unseen,
    ]
    assert report["boundaries"]["answer"]["outcomes"] == {"error": 7}
    assert report["coverage"]["tools_seen"] == ["top_sales"]
    assert "- fact 'sales': its tool 'top\\_sale' never appeared" in (tmp_path / "g.md").read_text()
    file = tmp_path / "policy.yaml"
    code = main(["replay", "--policy", str(file), *args, "--quiet", "--max-errors", "7"])
    lines = capsys.readouterr().out.splitlines()
    assert (code, lines[-1]) == (1, f"gate: FAILED — {unseen}")
    assert "not seen in the input:" in lines
    code = main(["replay", "--policy", str(file), *args, "--max-errors", "7", "--allow-unmatched"])
    assert (code, capsys.readouterr().out.splitlines()[-1]) == (0, "gate: passed")


def test_a_boundary_that_matched_nothing_fails_the_gate_naming_the_agents_seen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``match: {agent_name: analist}``: no output is guarded; the gate says so and names the
    agent names the input holds, with the likely one."""
    _, path = live_and_recorded(tmp_path)
    typo = POLICY.replace("agent_name: analyst", "agent_name: analist")
    # the recorded spans name their boundary: matched again by the policy's rules
    code, report = replay(tmp_path, capsys, str(path), "--rematch", policy=typo)
    assert code == 1
    assert report["gate"]["failures"] == [
        "no guarded output in the input (--allow-empty to pass)",
        "boundary 'answer' matched no output (agent_name 'analist'); agent names seen: analyst; "
        "did you mean 'analyst'? (--allow-unmatched to pass)",
    ]
    assert report["coverage"]["agent_names_seen"] == ["analyst"]


def test_a_recording_made_with_content_capture_off_fails_naming_the_cause_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Every output is an error (nothing to check) and the policy's tool never carried its
    result: the gate fails, saying content was not captured and how to record it."""
    path = capture_off_recording(tmp_path / "off.jsonl")
    code, report = replay(tmp_path, capsys, str(path), "--max-unsupported-rate", "0")
    assert code == 1
    assert report["gate"]["failures"] == [
        "3 of 3 outputs could not be checked (error: no_output 3) > 0 allowed (--max-errors 0, "
        f"--max-error-rate 0); content not captured: {CAPTURE_HINT}",
        "fact 'sales': 3 calls of its tool 'top_sales', none with its result on the span "
        "(content not captured) (--allow-unmatched to pass)",
    ]
    assert CAPTURE_HINT.startswith(
        "record with content capture on: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true"
    )
    code, report = replay(tmp_path, capsys, str(path), "--max-errors", "3")
    assert code == 1  # the errors allowed, the missing results still fail it, with the fix
    assert report["gate"]["failures"] == [
        "fact 'sales': 3 calls of its tool 'top_sales', none with its result on the span "
        f"(content not captured): {CAPTURE_HINT} (--allow-unmatched to pass)"
    ]


def _documented_command(page: str) -> str:
    """The ``replay`` command of the GitHub Actions step in ``docs/<page>``."""
    text = (ROOT / "docs" / page).read_text()
    block = text.split("GitHub Actions:\n\n```yaml\n", 1)[1].split("```", 1)[0]
    command = re.search(r"run: >\n((?:    .*\n)+)", block)
    assert command is not None
    return " ".join(line.strip() for line in command.group(1).splitlines())


def test_the_documented_github_actions_command_fails_on_a_capture_off_recording(
    tmp_path: Path,
) -> None:
    """The exact command docs/ci-gate.md gives for GitHub Actions, run by a shell in a
    checkout holding a capture-off recording: exit 1, the cause in the last line, both CI
    files written and where said; JUnit's gate case fails and the outputs are errors."""
    command = _documented_command("ci-gate.md")
    assert command == (
        "groundplane-otel replay --policy policy.yaml traces/*.jsonl --max-unsupported-rate 0.01 "
        "--junit-xml groundplane.xml --markdown groundplane.md"
    )
    (tmp_path / "traces").mkdir()
    capture_off_recording(tmp_path / "traces" / "today.jsonl")
    (tmp_path / "policy.yaml").write_text(POLICY)
    cli = f"{shlex.quote(sys.executable)} -m groundplane_otel.cli"
    done = subprocess.run(
        command.replace("groundplane-otel", cli, 1),
        shell=True,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1, done.stderr
    assert done.stdout.splitlines()[-3:] == [
        "gate: FAILED, 2 reasons:",
        "  - 3 of 3 outputs could not be checked (error: no_output 3) > 0 allowed (--max-errors 0, "
        f"--max-error-rate 0); content not captured: {CAPTURE_HINT}",
        "  - fact 'sales': 3 calls of its tool 'top_sales', none with its result on the span "
        "(content not captured) (--allow-unmatched to pass)",
    ]
    assert done.stderr.splitlines() == [
        "groundplane-otel: wrote the JUnit XML to groundplane.xml",
        "groundplane-otel: wrote the Markdown summary to groundplane.md",
    ]
    root = ET.fromstring((tmp_path / "groundplane.xml").read_bytes())
    gate, answer = root.findall("testsuite")
    assert [case.find("failure") is not None for case in gate.iter("testcase")] == [True]
    kinds = [child.tag for case in answer.iter("testcase") for child in case]
    assert kinds == ["error", "error", "error"]
    assert "**Gate: FAILED**" in (tmp_path / "groundplane.md").read_text()


def test_junit_marks_errors_as_errors_and_refusals_as_failures(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The mixed recording under the default gate: the wrong answer is a ``<failure>``, the two
    outputs that could not be checked are ``<error>``s, and the gate case fails with the
    errors named."""
    _, path = live_and_recorded(tmp_path)
    xml = tmp_path / "out" / "gate.xml"
    xml.parent.mkdir()
    (tmp_path / "policy.yaml").write_text(POLICY)
    code = main(
        [
            "replay",
            "--policy",
            str(tmp_path / "policy.yaml"),
            str(path),
            "--json",
            "--junit-xml",
            str(xml),
        ]
    )
    assert code == 1
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert err == f"groundplane-otel: wrote the JUnit XML to {xml}\n"
    root = ET.fromstring(xml.read_bytes())
    gate, answer = root.findall("testsuite")
    (failure,) = gate.iter("failure")
    assert failure.get("message") == f"gate failed: {ERRORS}"
    results = {
        finding["reason"]: [child.tag for child in case if child.tag in ("failure", "error")]
        for finding, case in zip(report["findings"], answer.iter("testcase"), strict=False)
    }
    assert results == {
        "wrong_winner": ["failure"],
        "fact_missing": ["error"],
        "no_output": ["error"],
    }
    assert (answer.get("failures"), answer.get("errors")) == ("1", "2")


def _console_recording(path: Path, before: str = "") -> Path:
    """What the SDK's ``ConsoleSpanExporter`` prints for one agent span (after ``before``:
    the app's own output on the same stream)."""
    with path.open("w") as out:
        out.write(before)
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(ConsoleSpanExporter(out=out)))
        attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "analyst"}
        with provider.get_tracer("app").start_as_current_span(
            "invoke_agent analyst", attributes=attributes
        ):
            pass
        provider.shutdown()
    return path


CONSOLE = (
    "not an OTLP recording: the OpenTelemetry SDK's console exporter output (one span per "
    "multi-line JSON object, not OTLP); record with the Collector's file exporter, or in process "
    "with groundplane_otel.otel.otlp_files.OtlpFileExporter"
)


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.parametrize("before", ["", "right answer: EU\n"], ids=["alone", "after-text"])
def test_the_console_exporters_output_is_named_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], jobs: str, before: str
) -> None:
    """The console exporter's output (alone, or after the app's own printed text — once read
    as a 1.9 GB protobuf message) is one located problem saying what it is and how to record,
    and the gate fails: no span was read. The same with --jobs 2 (the file split in parts)."""
    path = _console_recording(tmp_path / "console.txt", before)
    code, report = replay(tmp_path, capsys, str(path), "--jobs", jobs)
    assert code == 1
    assert report["input"]["unreadable_locations"] == [f"{path}: {CONSOLE}"]
    assert report["gate"]["failures"] == [
        "1 unreadable inputs > 0",
        f"no span read from the input (nothing in it is OTLP trace data){NO_SPAN}",
    ]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_pretty_printed_recording_is_named_once_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], jobs: str
) -> None:
    """A recording re-indented (``json.dumps(indent=2)`` per request) is one problem — not
    one per line — saying it is not one request per line and how to make it so."""
    _, path = live_and_recorded(tmp_path)
    pretty = tmp_path / "pretty.json"
    requests = [json.loads(line) for line in path.read_text().splitlines()]
    pretty.write_text("".join(json.dumps(request, indent=2) + "\n" for request in requests))
    code, report = replay(tmp_path, capsys, str(pretty), "--jobs", jobs)
    assert code == 1
    assert report["input"]["unreadable_locations"] == [
        f"{pretty}: not one OTLP/JSON request per line: a multi-line (pretty-printed) JSON "
        "document; write each request on one line (e.g. jq -c . FILE > FILE.jsonl), as the "
        "Collector's file exporter does"
    ]
    assert report["input"]["unreadable"] == 1


def _snake(value: Any) -> Any:
    if isinstance(value, dict):
        return {re.sub("([A-Z])", r"_\1", k).lower(): _snake(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_snake(item) for item in value]
    return value


def test_snake_case_keys_are_named_and_no_span_read_never_passes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Protobuf's own field names (``resource_spans``…) instead of OTLP/JSON's: each line is
    unreadable, saying why; 0 spans read fails the gate even with every allowance given."""
    _, path = live_and_recorded(tmp_path)
    snake = tmp_path / "snake.jsonl"
    lines = path.read_text().splitlines()
    snake.write_text("".join(json.dumps(_snake(json.loads(line))) + "\n" for line in lines))
    allow = ("--allow-empty", "--allow-unmatched", "--max-unreadable", "100")
    code, report = replay(tmp_path, capsys, str(snake), *allow)
    assert code == 1
    assert report["input"]["spans"] == 0
    assert report["input"]["unreadable"] == len(lines)
    assert report["input"]["unreadable_locations"][0] == (
        f"{snake}:1: not an OTLP/JSON trace request: snake_case keys ('resource_spans'); "
        "OTLP/JSON keys are lowerCamelCase ('resourceSpans', 'scopeSpans', 'traceId'), as the "
        "Collector's file exporter writes them"
    )
    assert report["gate"]["failures"] == [
        f"no span read from the input (nothing in it is OTLP trace data){NO_SPAN}"
    ]
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    code, report = replay(tmp_path, capsys, str(empty), *allow)
    assert (code, report["gate"]["failures"]) == (
        1,
        [f"no span read from the input (the input is empty){NO_SPAN}"],
    )


def _closed_reader(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """The command with its stdout a pipe whose reader is gone before it writes (as
    ``| head`` leaves it): its exit code and stderr."""
    process = subprocess.Popen(
        [sys.executable, "-m", "groundplane_otel.cli", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    process.stdout.close()
    stderr = process.stderr.read()
    process.wait(timeout=120)
    return subprocess.CompletedProcess(process.args, process.returncode, "", stderr)


def test_a_reader_that_stops_early_gets_no_traceback(tmp_path: Path) -> None:
    """``replay … --json | head``: no BrokenPipeError traceback; the exit code is still the
    gate's and the JUnit file is still written. ``check-policy | head`` ends with 141."""
    _, path = live_and_recorded(tmp_path)
    (tmp_path / "policy.yaml").write_text(POLICY)
    common = ("replay", "--policy", "policy.yaml", str(path), "--json", "--junit-xml", "g.xml")
    for extra, code in (((), 1), (("--max-errors", "2"), 0)):
        done = _closed_reader(*common, *extra, cwd=tmp_path)
        assert done.returncode == code
        assert done.stderr == "groundplane-otel: wrote the JUnit XML to g.xml\n"
        assert (tmp_path / "g.xml").exists()
    done = _closed_reader("check-policy", "policy.yaml", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (141, "")


def test_a_recording_that_holds_console_like_text_is_still_read(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tool result that is itself a console exporter dump, recorded in either format, is
    data, not a sign of a console file: both recordings are read whole."""
    from groundplane_otel.otel.otlp_files import request_from_json

    dump = '{\n    "name": "x",\n    "context": {\n        "trace_id": "0x1"\n    }\n}'
    otel = Harness()
    lines = tmp_path / "dump.jsonl"
    otel.tracer_provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(lines)))
    with otel.agent("other"):  # no boundary guards it
        otel.tool(dump, name="logs")
    proto = tmp_path / "dump.pb"
    bodies = [
        request_from_json(line).SerializeToString() for line in lines.read_text().splitlines()
    ]
    proto.write_bytes(b"".join(len(body).to_bytes(4, "big") + body for body in bodies))
    for path in (lines, proto):
        code, report = replay(tmp_path, capsys, str(path), "--allow-empty")
        assert (code, report["input"]["spans"], report["input"]["unreadable"]) == (0, 2, 0)
