"""``groundplane-otel suggest``'s own manners (issue 36): ``-o`` is checked before any input is
read and never replaces a file without ``--force``; a progress line on a terminal; runs without
content are counted; a check not kept names only facts the file declares; a recording made with
the guard's ``tool`` decorator without its content capture gets the real cause and fix."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
import recordings
import yaml
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from test_suggest_hostile import Span, edited, write
from test_suggest_inference import chat, tool

from groundplane_otel.cli import main
from groundplane_otel.otel import GuardConfig, install
from groundplane_otel.otel import tool as guarded_tool
from groundplane_otel.otel.otlp_files import OtlpFileExporter


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["suggest", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def demo(tmp_path: Path) -> Path:
    path = tmp_path / "demo.jsonl"
    recordings.record_demo(path)
    return path


def test_an_unwritable_output_is_refused_before_reading(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``-o`` into a folder that does not exist, or onto a folder: exit 2 at once with the
    exact reason (the input, missing here, is not even opened)."""
    missing = tmp_path / "nowhere" / "policy.yaml"
    assert run(capsys, "-o", str(missing), str(tmp_path / "absent.jsonl")) == (
        2,
        "",
        f"groundplane-otel: cannot write the policy to {missing}: folder "
        f"{str(missing.parent)!r} does not exist\n",
    )
    assert run(capsys, "-o", str(tmp_path), str(tmp_path / "absent.jsonl")) == (
        2,
        "",
        f"groundplane-otel: cannot write the policy to {tmp_path}: it is a directory\n",
    )


def test_an_existing_policy_is_replaced_only_with_force(
    demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An existing ``-o`` file is left as it is (exit 2, nothing read); ``--force`` replaces
    it."""
    policy = tmp_path / "policy.yaml"
    policy.write_text("# my hand-written policy\n")
    assert run(capsys, "-o", str(policy), str(demo)) == (
        2,
        "",
        f"groundplane-otel: {policy} exists: suggest does not replace a policy file (pass "
        "--force to replace it, or -o another file)\n",
    )
    assert policy.read_text() == "# my hand-written policy\n"
    code, out, err = run(capsys, "-o", str(policy), "--force", str(demo))
    assert (code, err) == (0, "")
    assert out == f"{policy}: 60 runs read (300 spans): 1 fact, 1 boundary, 4 checks\n"
    assert policy.read_text().startswith("# Suggested by `groundplane-otel suggest`")


def test_a_progress_line_on_a_terminal_and_none_with_quiet(
    demo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a terminal, suggest draws replay's progress bar on stderr (ended by a line break);
    ``--quiet`` draws none."""
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    code, _, err = run(capsys, str(demo))
    assert code == 0
    assert err.startswith("\rreading [")
    assert err.endswith("\rreading [" + "#" * 30 + "] 100% · 300 spans · 60 traces decided\n")
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True)
    assert run(capsys, "--quiet", str(demo))[::2] == (0, "")


def test_runs_without_content_are_counted(
    demo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The first 20 runs' tool results were not captured: the summary and the file say that
    20 of the 60 runs had no content (the policy comes from the other 40)."""
    seen: list[str] = []

    def uncaptured(span: Span) -> Span:
        if span["name"].startswith("execute_tool") and len(seen) < 20:
            seen.append(span["traceId"])
            span["attributes"] = [
                a for a in span["attributes"] if a["key"] != "gen_ai.tool.call.result"
            ]
        return span

    traces = write(tmp_path / "partial.jsonl", edited(demo.read_text().splitlines(), uncaptured))
    policy = tmp_path / "policy.yaml"
    code, out, err = run(capsys, "-o", str(policy), str(traces))
    assert (code, err) == (0, "")
    assert out == (
        f"{policy}: 60 runs read (300 spans; 20 without content): 1 fact, 1 boundary, 4 checks\n"
    )
    assert (
        "# 20 of the 60 runs had a tool result or an answer without content (not captured): "
        "what they lack was not inferred from."
    ) in policy.read_text().splitlines()


def _record(path: Path, runs: int = 20) -> None:
    """An agent whose ``db.query`` rows always hold the total it answers, and whose
    ``config.get`` value holds its currency in only half of the runs."""
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    tracer = provider.get_tracer("cli-test")
    for index in range(runs):
        rows = [{"order": f"o{index}-{n}", "amount": 10 * n + index} for n in range(4)]
        settings = {"currency": "EUR", "year": 2026}
        answer = {"total": sum(row["amount"] for row in rows)}
        answer["currency"] = "EUR" if index % 2 else "USD"
        agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "sales"}
        with tracer.start_as_current_span("invoke_agent sales", attributes=agent):
            tool(tracer, "db.query", {}, {"rows": rows})
            tool(tracer, "config.get", {}, settings)
            chat(tracer, answer)
    provider.shutdown()


def test_a_check_not_kept_names_a_fact_the_file_declares(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The currency check held in half the runs: it is not kept, and the fact it reads, which
    no kept check reads, is declared in a comment beside it (uncommenting both is valid)."""
    traces = tmp_path / "traces.jsonl"
    _record(traces)
    policy = tmp_path / "policy.yaml"
    assert run(capsys, "-o", str(policy), str(traces))[::2] == (0, "")
    lines = policy.read_text().splitlines()
    start = lines.index("  # Not declared: facts only the checks not kept below read.")
    assert lines[start : start + 4] == [
        "  # Not declared: facts only the checks not kept below read.",
        "  # config_get:  # a value; no list of rows in it (looked in the root) (20 of 20 results)",
        "  #   tool: config.get",
        "  #   kind: value",
    ]
    assert (
        "      # not kept (10 of 20 runs): field_matches_fact: {fact: config_get, field: "
        "currency, path: currency}"
    ) in lines
    assert list(yaml.safe_load(policy.read_text())["facts"]) == ["db_query"]


def test_a_tool_decorator_recording_without_capture_names_the_cause_and_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Tools run through the guard's ``tool`` decorator under a guard without
    ``capture_content`` (as docs/guard.md shows): their spans carry no result, and suggest
    names both ways results reach a span and how to turn each on (exit 1)."""
    path = tmp_path / "traces.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    guard = install(GuardConfig(), tracer_provider=provider, meter_provider=MeterProvider())
    tracer = provider.get_tracer("cli-test")

    @guarded_tool("warehouse.query")
    def query(window: str) -> list[dict[str, Any]]:
        return [{"campaign": "north", "ctr": 0.05}, {"campaign": "delta", "ctr": 0.03}]

    try:
        for _ in range(3):
            with tracer.start_as_current_span("request"):
                query("7d")
                chat(tracer, {"winner": "north"})
    finally:
        guard.uninstall()
        provider.shutdown()
    assert json.loads(path.read_text().splitlines()[0])  # the spans were recorded
    assert run(capsys, str(path)) == (
        1,
        "",
        "groundplane-otel: nothing to suggest: none of the 3 tool spans carries its result: "
        "content was not captured. An instrumentation writes tool results only with its content "
        "capture on (e.g. OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY); a tool "
        "the guard records in code (the tool decorator, call_and_record) writes its result only "
        "when the guard's capture_content is true (GuardConfig(capture_content=True), or "
        "capture_content: true in the policy). Record again with the one your tools use on\n",
    )


def test_answers_of_one_span_name_from_runs_calling_disjoint_tools_get_a_note(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two agents that no span names, both answering in ``chat m`` spans, one calling
    ``db.query``, the other ``config.get``: the boundary matches every such span, and the
    command says they may be two agents and how to tell them apart (stderr and the file)."""
    path = tmp_path / "traces.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    tracer = provider.get_tracer("cli-test")
    for index in range(10):
        with tracer.start_as_current_span("request"):
            if index % 2:
                rows = [{"order": f"o{index}-{n}", "amount": n + index} for n in range(3)]
                tool(tracer, "db.query", {}, {"rows": rows})
                chat(tracer, {"total": sum(row["amount"] for row in rows)})
            else:
                tool(tracer, "config.get", {}, {"currency": "EUR"})
                chat(tracer, {"currency": "EUR"})
    provider.shutdown()
    policy = tmp_path / "policy.yaml"
    code, _, err = run(capsys, "-o", str(policy), str(path))
    note = (
        "the answers of LLM span 'chat m' come from runs calling disjoint tools (config.get; "
        "db.query): two agents that no span names? The boundary below matches every span of "
        "that name; name each agent (gen_ai.agent.name, or LangChain's create_agent(name=...)) "
        "to give each its own"
    )
    assert (code, err) == (0, f"groundplane-otel: note: {note}\n")
    assert f"# Note: {note}." in policy.read_text().splitlines()


def test_no_candidate_says_no_rows_were_found_and_where_it_looked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A tool whose result holds no list of rows and answers that quote nothing it holds: no
    candidate check at all, and the message says so, what the fact is and where rows were
    looked for (not "lower --min-support", which would change nothing)."""
    path = tmp_path / "traces.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    tracer = provider.get_tracer("cli-test")
    for index in range(5):
        with tracer.start_as_current_span("request"):
            result = {"status": "ok", "data": {"total": index, "meta": {"pages": 1}}}
            tool(tracer, "report.get", {}, result)
            chat(tracer, {"summary": "fine"})
    provider.shutdown()
    assert run(capsys, str(path)) == (
        1,
        "",
        "groundplane-otel: nothing to suggest: no candidate check: no answer field equals "
        "anything the facts hold (report_get from report.get: a value; no list of rows in it "
        "(looked in the root, 'data', 'data.meta') (5 of 5 results))\n",
    )


def test_runs_whose_result_lacks_the_facts_shape_count_against_its_checks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """8 results are rows, 2 an error object: the fact's comment counts the 8 that fit, the
    note names both shapes, and the winner check held in 8 of 10 runs — the 2 the fact cannot
    be built in broke it (replay would fail closed there), their trace ids listed."""
    path = tmp_path / "traces.jsonl"
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    tracer = provider.get_tracer("cli-test")
    failed: list[str] = []
    for index in range(10):
        with tracer.start_as_current_span("request") as root:
            rows = [{"rep": rep, "amount": 10 * n + index} for n, rep in enumerate("abc")]
            if index in (3, 7):
                tool(tracer, "sales", {}, {"error": "timeout"})
                failed.append(f"{root.get_span_context().trace_id:032x}")
            else:
                tool(tracer, "sales", {}, rows)
            chat(tracer, {"top": "c"})
    provider.shutdown()
    policy = tmp_path / "policy.yaml"
    code, _, err = run(capsys, "-o", str(policy), str(path))
    note = (
        "the results of sales changed shape (rows at the root in 8, an object in 2 of 10): the "
        "fact reads rows at the root; the other 2 need a fact of their own, and a check on this "
        "fact counts their runs as broken"
    )
    assert (code, err) == (0, f"groundplane-otel: note: {note}\n")
    lines = policy.read_text().splitlines()
    assert "  sales:  # a table of rows keyed by 'rep' (8 of 10 results)" in lines
    assert f"      # held in 8 of 10 runs; broke in {', '.join(failed)}" in lines
