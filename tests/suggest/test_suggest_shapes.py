"""``suggest`` + ``replay`` on LangChain agents traced by OpenInference (issue 41): rows nested
under keys, money totals, a result whose shape changes part-way, two agents no span names with
``gen_ai.agent.name``, and a LangGraph graph. Each recording injects wrong answers; the suggested
policy, replayed, flags exactly those runs and passes every right one — all through the CLI."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import recordings_shapes as shapes
import yaml
from through_cli import flagged, replay, suggest

from groundplane_otel.cli import main


def suggested(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, runs: shapes.Iterator[shapes.Run]
) -> tuple[Path, Path, set[str], str, str]:
    """Record ``runs``, suggest a policy: (traces, policy, wrong ids, summary, stderr)."""
    traces = tmp_path / "traces.jsonl"
    wrong = shapes.record(traces, runs)
    policy = tmp_path / "suggested.yaml"
    code, out, err = suggest(capsys, policy, str(traces))
    assert code == 0, err
    assert main(["check-policy", str(policy)]) == 0
    capsys.readouterr()
    return traces, policy, wrong, out, err


def test_rows_nested_under_keys_are_found_and_the_path_said(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The rows under ``data.items`` become a table fact at that path, named in its comment;
    the agent is the one LangChain's ``create_agent(name=...)`` names in its spans' metadata;
    replay flags exactly the wrong winners and the totals a cent off."""
    traces, policy, wrong, out, err = suggested(capsys, tmp_path, shapes.nested())
    assert (len(wrong), err) == (6, "")
    assert out == f"{policy}: 30 runs read (240 spans): 1 fact, 1 boundary, 2 checks\n"
    text = policy.read_text()
    assert (
        "  sales_report:  # a table of rows keyed by 'rep' under 'data.items' (30 of 30 results)"
        in text.splitlines()
    )
    data = yaml.safe_load(text)
    assert data["facts"] == {
        "sales_report": {
            "tool": "sales_report",
            "kind": "table",
            "key": "rep",
            "path": "data.items",
        }
    }
    boundary = data["boundaries"]["sales_bot"]
    assert boundary["match"] == {"agent_name": "sales-bot"}
    assert boundary["checks"] == [
        {"superlative": {"fact": "sales_report", "column": "amount", "winner_field": "top_rep"}},
        {
            "aggregate_reconciles": {
                "fact": "sales_report",
                "field": "total",
                "column": "amount",
                "op": "sum",
            }
        },
    ]
    report = replay(capsys, policy, traces)
    assert flagged(report) == wrong
    assert report["boundaries"]["sales_bot"]["outcomes"] == {"passed": 24, "flagged": 6}


def test_money_totals_hold_in_every_right_run_and_a_cent_off_is_flagged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Ledgers of two-decimal amounts and the totals as written: the sum check holds in all
    32 right runs (some of whose binary float sums are the neighbour of the total), and
    replay flags exactly the 8 totals a cent off."""
    runs = list(shapes.ledgers())
    binary = [
        run
        for run in runs
        if not run.wrong and math.fsum(row["amount"] for row in run.result) != run.answer["total"]
    ]
    assert binary  # the recording holds totals a binary sum would have refused
    traces, policy, wrong, _, err = suggested(capsys, tmp_path, iter(runs))
    assert (len(wrong), err) == (8, "")
    data = yaml.safe_load(policy.read_text())
    assert data["boundaries"]["billing_bot"]["checks"] == [
        {
            "aggregate_reconciles": {
                "fact": "ledger",
                "field": "total",
                "column": "amount",
                "op": "sum",
            }
        }
    ]
    assert "      # held in 32 of 40 runs; broke in " in policy.read_text()
    report = replay(capsys, policy, traces)
    assert flagged(report) == wrong
    assert report["boundaries"]["billing_bot"]["outcomes"] == {"passed": 32, "flagged": 8}


def test_a_result_whose_shape_changes_part_way_is_read_in_each_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bare list of rows, then the rows under ``items``: the shapes are reported with their
    counts (stderr and the file), the fact reads each place (``path: [items, '']``) and counts
    all 40 results; replay flags exactly the wrong winners in both halves."""
    traces, policy, wrong, _, err = suggested(capsys, tmp_path, shapes.shape_change())
    note = (
        "the results of sales_report changed shape (rows at the root in 20, rows under 'items' "
        "in 20 of 40): the fact reads rows at the first of ['items', ''] the result has"
    )
    assert err == f"groundplane-otel: note: {note}\n"
    lines = policy.read_text().splitlines()
    assert f"# Note: {note}." in lines
    assert (
        "  sales_report:  # a table of rows keyed by 'rep' under 'items' in 20, at the root in 20 "
        "(40 of 40 results)" in lines
    )
    data = yaml.safe_load(policy.read_text())
    assert data["facts"]["sales_report"]["path"] == ["items", ""]
    assert "      # held in 32 of 40 runs; broke in " in lines[lines.index("    checks:") + 1]
    report = replay(capsys, policy, traces)
    assert flagged(report) == wrong
    assert report["boundaries"]["sales_bot"]["outcomes"] == {"passed": 32, "flagged": 8}


def test_two_agents_without_gen_ai_agent_names_get_a_boundary_each(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two ``create_agent`` agents interleaved in one recording, their model spans both named
    ``ChatOpenAI``: each is told by the ``lc_agent_name`` in its spans' metadata, gets its own
    boundary and facts, and replay flags exactly each one's wrong answers."""
    traces, policy, wrong, out, err = suggested(capsys, tmp_path, shapes.two_agents())
    assert (len(wrong), err) == (8, "")
    assert out == f"{policy}: 40 runs read (320 spans): 2 facts, 2 boundaries, 2 checks\n"
    boundaries = yaml.safe_load(policy.read_text())["boundaries"]
    assert {name: b["match"] for name, b in boundaries.items()} == {
        "sales_bot": {"agent_name": "sales-bot"},
        "ops_bot": {"agent_name": "ops-bot"},
    }
    assert [b["facts"] for b in boundaries.values()] == [["sales_report"], ["site_load"]]
    report = replay(capsys, policy, traces)
    assert flagged(report) == wrong
    assert {name: b["outcomes"] for name, b in report["boundaries"].items()} == {
        "sales_bot": {"passed": 16, "flagged": 4},
        "ops_bot": {"passed": 16, "flagged": 4},
    }


def test_two_langgraph_graphs_naming_no_agent_are_not_merged(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two LangGraph graphs whose spans name no agent: their answers share the span name
    ``ChatOpenAI``, so no boundary could tell them apart; suggest writes none and says why and
    how to name them (exit 1)."""
    traces = tmp_path / "traces.jsonl"
    shapes.record(traces, shapes.two_agents(graph=True))
    policy = tmp_path / "suggested.yaml"
    assert suggest(capsys, policy, str(traces)) == (
        1,
        "",
        "groundplane-otel: nothing to suggest: no boundary can be suggested; note: the answers "
        "of LLM span 'ChatOpenAI' ran in 2 LangGraph graphs (sales-bot in 20 runs, ops-bot in 20 "
        "runs) and no span names their agent, so no boundary can tell them apart: none is "
        "suggested for them. Name each agent (LangChain's create_agent(name=...) writes "
        "lc_agent_name on every span; or set gen_ai.agent.name) and record again\n",
    )
    assert not policy.exists()


def test_a_langgraph_agent_node_span_is_not_read_as_an_answer(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """One LangGraph graph: its ``agent`` node span (OpenInference kind AGENT, holding the
    graph's state) is no answer, so the one boundary is the model spans' (``ChatOpenAI``), and
    replay flags exactly the wrong answers."""
    traces, policy, wrong, _, err = suggested(capsys, tmp_path, shapes.nested(graph=True))
    assert (len(wrong), err) == (6, "")
    boundaries = yaml.safe_load(policy.read_text())["boundaries"]
    assert {name: b["match"] for name, b in boundaries.items()} == {
        "chatopenai": {"span_name": "ChatOpenAI"}
    }
    report = replay(capsys, policy, traces)
    assert flagged(report) == wrong
    assert report["boundaries"]["chatopenai"]["outcomes"] == {"passed": 24, "flagged": 6}
