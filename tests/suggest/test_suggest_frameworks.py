"""The example agents whose recordings ``suggest`` cannot backtest, as they are written: each
records its facts in code, not on a span a recording keeps, and ``suggest`` says so (exit 1, no
policy written). Their backtestable recordings are in test_suggest.py."""

from __future__ import annotations

from pathlib import Path

import pytest
import recordings_frameworks as frameworks

from groundplane_otel.cli import main


def nothing_to_suggest(capsys: pytest.CaptureFixture[str], traces: Path, policy: Path) -> str:
    """Suggest over ``traces``: it must exit 1 writing no policy; its stderr."""
    capsys.readouterr()  # what the example printed while recording
    code = main(["suggest", "-o", str(policy), str(traces)])
    captured = capsys.readouterr()
    assert (code, captured.out, policy.exists()) == (1, "", False)
    return captured.err


def test_mcp_agent_as_written_records_its_facts_in_code(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """examples/mcp_agent.py's ``call_and_record`` under its guard (content on) puts the result
    on its span but records the fact in code (``groundplane.fact.source: mcp``), which replay
    skips: nothing to infer, naming the 6 tool spans."""
    traces = tmp_path / "traces.jsonl"
    frameworks.record_mcp(traces, runs=6, as_written=True)
    assert nothing_to_suggest(capsys, traces, tmp_path / "suggested.yaml") == (
        "groundplane-otel: nothing to suggest: the results of all 6 tool spans were recorded "
        "in code (groundplane.fact.source): facts a recording cannot replay\n"
    )


def test_langgraph_state_graph_agent_has_no_tool_spans(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """examples/langgraph_agent.py's StateGraph adopts its state as a fact (``record_state``)
    and its nodes are plain functions: no tool span, nothing to infer."""
    traces = tmp_path / "traces.jsonl"
    frameworks.record_langgraph_state(traces)
    assert nothing_to_suggest(capsys, traces, tmp_path / "suggested.yaml") == (
        "groundplane-otel: nothing to suggest: no tool spans in the input: no tool result to "
        "ground answers on\n"
    )
