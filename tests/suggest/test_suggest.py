"""``groundplane-otel suggest`` on recordings of the example agents with wrong answers injected:
the policy it writes is valid as written, and ``replay`` with it flags exactly the injected
wrong answers and passes every right one (issue 24) — all through the real CLI."""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pytest
import recordings
import recordings_frameworks as frameworks
import yaml
from through_cli import flagged, replay, suggest

from groundplane_otel.cli import main

RECORDERS: dict[str, tuple[Callable[[Path], set[str]], int]] = {
    "demo": (recordings.record_demo, 60),
    "demo_prose": (recordings.record_demo_prose, 30),
    "langchain": (recordings.record_langchain, 30),
    "langgraph": (frameworks.record_langgraph, 30),
    "mcp": (frameworks.record_mcp, 30),
    "openai": (recordings.record_openai, 30),
    "openai_agents": (frameworks.record_openai_agents, 30),
    "openinference": (functools.partial(frameworks.record_openai_agents, openinference=True), 30),
    "pydantic_ai": (recordings.record_pydantic_ai, 30),
    "traceloop": (frameworks.record_traceloop, 30),
}


@pytest.mark.parametrize("example", sorted(RECORDERS))
def test_replay_with_the_suggested_policy_flags_exactly_the_injected_wrong_answers(
    example: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Suggest over the example's recording, check-policy accepts the file, and replay flags
    the injected wrong runs and no other (observe mode: flagged, never blocked)."""
    record, runs = RECORDERS[example]
    traces = tmp_path / "traces.jsonl"
    wrong = record(traces)
    assert 5 <= len(wrong) <= 6
    policy = tmp_path / "suggested.yaml"
    code, out, err = suggest(capsys, policy, str(traces))
    assert (code, err) == (0, "")
    assert out.startswith(f"{policy}: {runs} runs read")
    assert main(["check-policy", str(policy)]) == 0
    assert ": ok (mode observe; " in capsys.readouterr().out
    report = replay(capsys, policy, traces)
    assert flagged(report) == wrong
    (boundary,) = report["boundaries"].values()
    assert boundary["outcomes"] == {"passed": runs - len(wrong), "flagged": len(wrong)}


def test_the_demo_policy_names_its_facts_checks_support_and_broken_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo's suggested policy: the table under ``rows`` keyed by campaign, the agent's
    boundary, the four checks its answers pass, each with its support and the broken runs."""
    traces = tmp_path / "traces.jsonl"
    wrong = recordings.record_demo(traces)
    policy = tmp_path / "suggested.yaml"
    assert suggest(capsys, policy, str(traces))[0] == 0
    text = policy.read_text()
    data = yaml.safe_load(text)
    assert data["mode"] == "observe"
    assert data["facts"] == {
        "warehouse_query": {
            "tool": "warehouse.query",
            "kind": "table",
            "key": "campaign",
            "path": "rows",
        }
    }
    boundary = data["boundaries"]["campaign_analyst"]
    assert boundary["match"] == {"agent_name": "campaign-analyst"}
    assert boundary["answer"] == "json"
    assert boundary["checks"] == [
        {"superlative": {"fact": "warehouse_query", "column": "ctr", "winner_field": "winner"}},
        {"ranking_prefix": {"fact": "warehouse_query", "column": "ctr", "field": "top3", "k": 3}},
        {
            "aggregate_reconciles": {
                "fact": "warehouse_query",
                "field": "total_clicks",
                "column": "clicks",
                "op": "sum",
            }
        },
        {
            "row_integrity": {
                "fact": "warehouse_query",
                "key_field": "winner",
                "fields": {"ctr": "ctr"},
            }
        },
    ]
    supports = [line.strip() for line in text.splitlines() if "# held in" in line]
    assert [line.split(";")[0] for line in supports] == [
        "# held in 58 of 60 runs",
        "# held in 59 of 60 runs",
        "# held in 58 of 60 runs",
        "# held in 59 of 60 runs",
    ]
    listed = {tid for line in supports for tid in line.split("broke in ")[1].split(", ")}
    assert listed == wrong


def test_a_higher_min_support_drops_the_checks_below_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--min-support 0.98``: the checks that held in 58 of 60 runs (96.7%) are not kept; the
    file lists them as not kept, with their counts."""
    traces = tmp_path / "traces.jsonl"
    recordings.record_demo(traces)
    policy = tmp_path / "suggested.yaml"
    assert suggest(capsys, policy, str(traces), "--min-support", "0.98")[0] == 0
    data = yaml.safe_load(policy.read_text())
    families = [next(iter(c)) for c in data["boundaries"]["campaign_analyst"]["checks"]]
    assert families == ["ranking_prefix", "row_integrity"]
    assert "# not kept (58 of 60 runs): superlative: " in policy.read_text()


def test_inference_from_the_first_runs_tallies_every_run_and_caps_the_ids_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--max-runs-kept 10``: the policy is inferred from 10 runs held in memory but every
    one of the 60 is tallied; ``--max-listed 1`` lists one broken run and counts the other."""
    traces = tmp_path / "traces.jsonl"
    recordings.record_demo(traces)
    policy = tmp_path / "suggested.yaml"
    args = (str(traces), "--max-runs-kept", "10", "--max-listed", "1")
    assert suggest(capsys, policy, *args)[0] == 0
    text = policy.read_text()
    assert "# Inferred from the first 10 runs, tallied over all of them" in text
    superlative = next(line for line in text.splitlines() if "held in 58 of 60" in line)
    assert superlative.endswith("(and 1 more)")


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ("0", "must be a number between 0.01 and 1, got '0'"),
        ("nan", "must be a number between 0.01 and 1, got 'nan'"),
        ("1.5", "must be a number between 0.01 and 1, got '1.5'"),
    ],
)
def test_an_out_of_range_min_support_is_a_usage_error(
    value: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--min-support`` outside [0.01, 1] (or nan) exits 2 naming the value."""
    with pytest.raises(SystemExit) as exited:
        main(["suggest", "--min-support", value, str(tmp_path / "x.jsonl")])
    assert exited.value.code == 2
    assert f"argument --min-support: {message}" in capsys.readouterr().err


def test_a_missing_input_file_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A file that does not exist exits 2 with its name, and no policy is written."""
    policy = tmp_path / "suggested.yaml"
    code, _, err = suggest(capsys, policy, str(tmp_path / "missing.jsonl"))
    assert code == 2
    assert err == f"groundplane-otel: {tmp_path / 'missing.jsonl'}: no such file\n"
    assert not policy.exists()


def test_spans_in_any_order_over_several_files_and_formats_give_the_same_policy(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo's lines shuffled over three files — OTLP/JSON, gzip-compressed JSON and the
    length-prefixed protobuf format — give the policy the ordered single file gives (trace ids
    listed in a different order aside: the support counts are the same)."""
    import gzip
    import random
    import struct

    from groundplane_otel.otel.otlp_files import request_from_json

    traces = tmp_path / "traces.jsonl"
    recordings.record_demo(traces)
    reference = tmp_path / "reference.yaml"
    assert suggest(capsys, reference, str(traces))[0] == 0
    lines = traces.read_text().splitlines()
    requests = [request_from_json(line) for line in lines]
    order = list(range(len(lines)))
    random.Random(5).shuffle(order)
    parts = [order[0::3], order[1::3], order[2::3]]
    plain = tmp_path / "a.jsonl"
    plain.write_text("".join(lines[i] + "\n" for i in parts[0]))
    packed = tmp_path / "b.jsonl.gz"
    packed.write_bytes(gzip.compress("".join(lines[i] + "\n" for i in parts[1]).encode()))
    proto = tmp_path / "c.binpb"
    proto.write_bytes(
        b"".join(
            struct.pack(">I", len(body)) + body
            for body in (requests[i].SerializeToString() for i in parts[2])
        )
    )
    policy = tmp_path / "suggested.yaml"
    assert suggest(capsys, policy, str(plain), str(packed), str(proto))[0] == 0

    def without_ids(text: str) -> list[str]:
        return [line.split("; broke in")[0] for line in text.splitlines()]

    assert without_ids(policy.read_text()) == without_ids(reference.read_text())


def test_spans_over_the_per_trace_cap_are_counted_in_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--max-spans-per-trace 4`` on 5-span runs: the span that arrives last in each trace
    (its root) is left out, and the file counts the 60 left out; the checks are the same."""
    traces = tmp_path / "traces.jsonl"
    recordings.record_demo(traces)
    policy = tmp_path / "suggested.yaml"
    assert suggest(capsys, policy, str(traces), "--max-spans-per-trace", "4")[0] == 0
    text = policy.read_text()
    assert "# Left out: 60 spans over --max-spans-per-trace." in text.splitlines()
    assert len(yaml.safe_load(text)["boundaries"]["campaign_analyst"]["checks"]) == 4


def test_a_recording_made_with_the_guard_on_is_inferred_again_not_echoed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The demo recorded with its own policy installed (observe): the boundary the guard's
    match rules chose is not taken over (the boundary is named after the agent, as replay
    decides it again), and replay with the suggestion flags exactly the wrong runs."""
    traces = tmp_path / "traces.jsonl"
    wrong = recordings.record_demo(traces, guarded=True)
    assert "groundplane.boundary_matched" in traces.read_text()
    policy = tmp_path / "suggested.yaml"
    assert suggest(capsys, policy, str(traces))[0] == 0
    assert list(yaml.safe_load(policy.read_text())["boundaries"]) == ["campaign_analyst"]
    report = replay(capsys, policy, traces)
    assert flagged(report) == wrong
    assert report["boundaries"]["campaign_analyst"]["outcomes"] == {"passed": 54, "flagged": 6}
