"""The framework examples recorded as they are written: behind their adapter with the guard on (the
boundary keeps the name the recording gives it), MCP's ``call_and_record`` (its fact is read
from the result on its span), and LangGraph's StateGraph example, which makes no tool span and
which ``suggest`` says it cannot backtest (exit 1, no policy written). Their unguarded
recordings are backtested in test_suggest.py."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
import recordings_frameworks as frameworks
import yaml
from through_cli import flagged, replay, suggest

from groundplane_otel.cli import main


@pytest.mark.parametrize("openinference", [False, True], ids=["genai", "openinference"])
def test_a_guarded_agents_sdk_recording_keeps_the_boundary_name_the_guard_wrote(
    openinference: bool,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """examples/openai_agents_agent.py behind ``guard(...)`` (observe): the adapter names its
    boundary on the agent's (GenAI) or guardrail's (OpenInference) span, not on the answer's;
    the suggestion takes that name, so replay knows every boundary the spans name (no "unknown
    boundary" warning) and flags exactly the injected wrong answers."""
    traces = tmp_path / "traces.jsonl"
    wrong = frameworks.record_openai_agents(traces, guarded=True, openinference=openinference)
    assert len(wrong) == 5
    policy = tmp_path / "suggested.yaml"
    assert suggest(capsys, policy, str(traces))[::2] == (0, "")
    assert list(yaml.safe_load(policy.read_text())["boundaries"]) == ["campaign_answer"]
    assert main(["check-policy", str(policy)]) == 0
    capsys.readouterr()
    caplog.clear()  # what the instrumentations logged while recording
    with caplog.at_level(logging.WARNING, logger="groundplane_otel"):
        report = replay(capsys, policy, traces)
    assert [r.getMessage() for r in caplog.records if r.name.startswith("groundplane_otel")] == []
    assert flagged(report) == wrong
    assert report["boundaries"]["campaign_answer"]["outcomes"] == {"passed": 25, "flagged": 5}


def nothing_to_suggest(capsys: pytest.CaptureFixture[str], traces: Path, policy: Path) -> str:
    """Suggest over ``traces``: it must exit 1 writing no policy; its stderr."""
    capsys.readouterr()  # what the example printed while recording
    code = main(["suggest", "-o", str(policy), str(traces)])
    captured = capsys.readouterr()
    assert (code, captured.out, policy.exists()) == (1, "", False)
    return captured.err


def test_mcp_agent_as_written_is_backtested_from_the_result_on_its_span(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """examples/mcp_agent.py's ``call_and_record`` under its guard (content on) records the
    fact in code and puts the result on its span (``groundplane.fact.source: mcp``): the mark
    is the guard's own and is left out, so suggest and replay read the fact from the span and
    flag exactly the injected wrong answers."""
    traces = tmp_path / "traces.jsonl"
    wrong = frameworks.record_mcp(traces, as_written=True)
    assert len(wrong) == 5
    policy = tmp_path / "suggested.yaml"
    assert suggest(capsys, policy, str(traces))[::2] == (0, "")
    assert main(["check-policy", str(policy)]) == 0
    capsys.readouterr()
    report = replay(capsys, policy, traces)
    assert flagged(report) == wrong
    assert [entry["outcomes"] for entry in report["boundaries"].values()] == [
        {"passed": 25, "flagged": 5}
    ]


def test_langgraph_state_graph_agent_has_no_tool_spans(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """examples/langgraph_agent.py's StateGraph adopts its state as a fact (``record_state``)
    and its nodes are plain functions: no tool span, nothing to infer."""
    traces = tmp_path / "traces.jsonl"
    frameworks.record_langgraph_state(traces)
    assert nothing_to_suggest(capsys, traces, tmp_path / "suggested.yaml") == (
        "groundplane-otel: nothing to suggest: no tool spans among the 18 spans read: no tool "
        "result to ground answers on\n"
    )


def test_the_traceloop_recording_leaves_the_openai_client_as_it_found_it(tmp_path: Path) -> None:
    """Traceloop's ``uninstrument`` leaves its wrappers on the openai client's methods (its
    dotted unwrap paths do not resolve): the recorder undoes them, so an OpenAI instrumentation
    installed later in the same process (tests/integrations/test_openinference.py) is the only
    one wrapping the client."""
    from openai.resources.chat.completions import AsyncCompletions, Completions

    frameworks.record_traceloop(tmp_path / "traces.jsonl", runs=2, wrong_every=2)
    assert frameworks.unwrap_left_by(frameworks.TRACELOOP_WRAPPERS) == 0  # nothing left to undo
    assert type(vars(Completions)["create"]).__name__ == "function"
    assert type(vars(AsyncCompletions)["create"]).__name__ == "function"
