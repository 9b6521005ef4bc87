"""Decided again, not echoed (issue 21 item 11): a boundary the recording guard matched is
marked ``groundplane.boundary_matched`` and matched again on replay, so a renamed boundary finds
the wrong winner; a boundary the app set on its span still names it; ``--rematch`` ignores every
recorded boundary (recordings made before the mark)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from otel_harness import SALES_ROWS, Harness, answer, sales_config
from replay_recording import ALLOW_ITS_ERRORS, POLICY, live_and_recorded

from groundplane_otel.cli import main
from groundplane_otel.errors import ClaimsUnsupported
from groundplane_otel.otel.otlp_files import OtlpFileExporter
from groundplane_otel.otel.policy import load_policy
from groundplane_otel.otel.replay.coverage import CAPTURE_HINT
from groundplane_otel.otel.replay.records import replayable_attributes

RENAMED = POLICY.replace("  answer:\n", "  answer_v2:\n")
# Two boundaries whose match rules both hold for agent ``analyst``: the first one wins, unless
# the span names the other.
TWO = POLICY + (
    "  audit:\n"
    "    facts: [sales]\n"
    "    match: {agent_name: analyst}\n"
    "    checks:\n"
    "      - superlative: {winner_field: winner}\n"
)


def replay_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], policy: str, path: Path, *extra: str
) -> tuple[int, dict[str, Any]]:
    file = tmp_path / "policy.yaml"
    file.write_text(policy)
    code = main(["replay", "--policy", str(file), str(path), "--json", "--quiet", *extra])
    return code, json.loads(capsys.readouterr().out)


def guarded_attributes(path: Path) -> list[dict[str, Any]]:
    """The attributes of every recorded span the guard summarised, as the file holds them."""
    found = []
    for line in path.read_text().splitlines():
        for resource in json.loads(line)["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    keys = {pair["key"]: pair["value"] for pair in span.get("attributes", [])}
                    if "groundplane.outcome" in keys:
                        found.append(keys)
    return found


def unmarked(path: Path, tmp_path: Path) -> Path:
    """The recording as a guard made it before the mark: ``groundplane.boundary_matched`` cut."""
    out = tmp_path / "unmarked.jsonl"
    lines = []
    for line in path.read_text().splitlines():
        request = json.loads(line)
        for resource in request["resourceSpans"]:
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    span["attributes"] = [
                        pair
                        for pair in span.get("attributes", [])
                        if pair["key"] != "groundplane.boundary_matched"
                    ]
        lines.append(json.dumps(request))
    out.write_text("\n".join(lines) + "\n")
    return out


def test_the_live_guard_marks_the_boundary_it_matched(tmp_path: Path) -> None:
    """Every span the guard summarised live, matched by agent name, carries the boundary and
    ``groundplane.boundary_matched = true`` in the recording."""
    _, path = live_and_recorded(tmp_path)
    guarded = guarded_attributes(path)
    assert len(guarded) == 7
    assert all(keys["groundplane.boundary"] == {"stringValue": "answer"} for keys in guarded)
    assert all(keys["groundplane.boundary_matched"] == {"boolValue": True} for keys in guarded)


def test_a_renamed_boundary_is_matched_again_and_finds_the_wrong_winner(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Replaying the live recording with the boundary renamed gives the live verdicts under
    the new name: the wrong winner found, no ``answer`` output echoed from the recording."""
    _, path = live_and_recorded(tmp_path)
    code, report = replay_json(tmp_path, capsys, RENAMED, path, *ALLOW_ITS_ERRORS)
    assert code == 0
    assert list(report["boundaries"]) == ["answer_v2"]
    assert report["boundaries"]["answer_v2"]["outcomes"] == {
        "passed": 4,
        "blocked": 1,
        "error": 2,
    }
    reasons = sorted(finding["reason"] for finding in report["findings"])
    assert reasons == ["fact_missing", "no_output", "wrong_winner"]


def test_a_recording_without_the_mark_needs_rematch(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without the mark the recorded boundary is read as the app's: the renamed boundary gets
    only ``no_output`` errors (the recorded name is unknown, so no answer is checked) — the
    symptom of item 11, which fails the gate (issue 36: every error fails it by default) — and
    ``--rematch`` decides every span's boundary again."""
    _, path = live_and_recorded(tmp_path)
    old = unmarked(path, tmp_path)
    code, report = replay_json(tmp_path, capsys, RENAMED, old)
    assert code == 1
    assert report["gate"]["failures"] == [
        "4 of 6 outputs could not be checked (error: no_output 4) > 0 allowed (--max-errors 0, "
        "--max-error-rate 0)"
    ]
    assert report["boundaries"]["answer_v2"]["outcomes"] == {"error": 4, "skipped": 2}
    assert {finding["reason"] for finding in report["findings"]} == {"no_output"}
    assert not any(finding["reason"] == "wrong_winner" for finding in report["findings"])
    code, report = replay_json(tmp_path, capsys, RENAMED, old, "--rematch", *ALLOW_ITS_ERRORS)
    assert code == 0
    assert report["boundaries"]["answer_v2"]["outcomes"] == {
        "passed": 4,
        "blocked": 1,
        "error": 2,
    }


def app_named_recording(tmp_path: Path) -> tuple[dict[str, dict[str, int]], Path]:
    """A live run under the two-boundary policy: the app names ``audit`` on its chat span
    (a wrong winner), the next run is left to the match rules (``answer`` wins)."""
    policy = tmp_path / "two.yaml"
    policy.write_text(TWO)
    otel = Harness()
    path = tmp_path / "named.jsonl"
    otel.tracer_provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    otel.install(load_policy(str(policy)))

    def run(extra: dict[str, str]) -> None:
        with otel.agent():
            otel.tool(SALES_ROWS)
            otel.chat(answer({"winner": "US"}), **extra)

    for extra in ({"groundplane.boundary": "audit"}, {}):
        with pytest.raises(ClaimsUnsupported):  # enforce: the wrong winner raises
            run(extra)
    live: dict[str, dict[str, int]] = {}
    for labels, value in otel.metrics()["groundplane.outputs"]:
        live.setdefault(labels["groundplane.boundary"], {})[labels["groundplane.outcome"]] = value
    otel.close()
    return live, path


def test_a_boundary_the_app_named_still_names_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The chat span that named ``audit`` is replayed under ``audit`` (no mark was written for
    it), the matched spans under ``answer``: the live run's outputs exactly; ``--rematch``
    puts every span under the first match."""
    live, path = app_named_recording(tmp_path)
    marks = [keys.get("groundplane.boundary_matched") for keys in guarded_attributes(path)]
    assert marks == [None, {"boolValue": True}, {"boolValue": True}]
    assert live == {"answer": {"blocked": 1, "skipped": 1}, "audit": {"blocked": 1}}
    code, report = replay_json(tmp_path, capsys, TWO, path)
    assert code == 0
    assert {name: entry["outcomes"] for name, entry in report["boundaries"].items()} == live
    code, report = replay_json(tmp_path, capsys, TWO, path, "--rematch")
    assert {name: entry["outcomes"] for name, entry in report["boundaries"].items()} == {
        "answer": {"blocked": 2}
    }


def test_the_stripping_rule_keeps_the_apps_boundary_and_drops_the_guards() -> None:
    """``replayable_attributes``: the guard's summary always goes; the boundary goes only with
    the mark (``--rematch`` drops it in ``SpanRecord``, pinned above); every other attribute
    stays."""
    summary = {
        "groundplane.outcome": "blocked",
        "groundplane.violations": 1,
        "groundplane.facts": ("sales",),
        "groundplane.mode": "enforce",
        "groundplane.fact.links": ("sales@a:b",),
    }
    own = {"gen_ai.operation.name": "chat", "groundplane.boundary": "answer"}
    assert replayable_attributes({**own, **summary}) == own
    marked = {**own, **summary, "groundplane.boundary_matched": True}
    assert replayable_attributes(marked) == {"gen_ai.operation.name": "chat"}
    assert replayable_attributes({**own, "groundplane.boundary_matched": "yes"}) == own


@pytest.mark.parametrize("capture_content", [True, False], ids=["content-on", "content-off"])
def test_facts_the_app_recorded_in_code_are_read_from_the_result_on_their_span(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], capture_content: bool
) -> None:
    """The ``tool`` decorator records its fact in code and marks its span
    (``groundplane.fact.source``) so the live guard does not record it twice; the mark is the
    guard's own and replay leaves it out: with content on the result on the span is the fact
    (the wrong winner is found again), with content off there is none (``fact_missing``,
    counted as an error, never a pass)."""
    from groundplane_otel.otel import tool

    otel = Harness()
    path = tmp_path / "traces.jsonl"
    otel.tracer_provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    otel.install(sales_config(mode="observe", capture_content=capture_content))

    @tool("top_sales")
    def top_sales() -> dict[str, Any]:
        return SALES_ROWS

    for winner in ("EU", "US"):
        with otel.tracer.start_as_current_span(
            "invoke_agent analyst",
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "analyst"},
        ):
            top_sales()
            otel.chat(answer({"winner": winner}))
    live = {
        labels["groundplane.outcome"]: value
        for labels, value in otel.metrics()["groundplane.outputs"]
    }
    assert live == {"passed": 1, "flagged": 1}
    otel.close()
    code, report = replay_json(tmp_path, capsys, POLICY, path)
    outcomes = report["boundaries"]["answer"]["outcomes"]
    if capture_content:
        assert (code, outcomes) == (0, {"passed": 1, "blocked": 1})  # no threshold given
    else:
        assert (code, outcomes) == (1, {"error": 2})  # issue 36: errors fail the gate
        assert {finding["reason"] for finding in report["findings"]} == {"fact_missing"}
        assert report["gate"]["failures"] == [
            "2 of 2 outputs could not be checked (error: fact_missing 2) > 0 allowed "
            f"(--max-errors 0, --max-error-rate 0); content not captured: {CAPTURE_HINT}",
            "fact 'sales': 2 calls of its tool 'top_sales', none with its result on the span "
            "(content not captured) (--allow-unmatched to pass)",
        ]
