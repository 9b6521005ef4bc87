"""The span path behind Traceloop's opentelemetry-instrumentation-openai (no adapter: none is
needed for a plain call), each run in its own process (tests/integrations/apps/traceloop_app.py):
a plain call raises the guard's exception out of ``chat.completions.create``; a streamed call
ends its span inside ``@dont_throw``, so the refusal is swallowed — counted in
``groundplane.outputs.swallowed`` — and reaches the app only through an ``enforce()`` scope;
with ``TRACELOOP_TRACE_CONTENT=false`` no answer is on the span and every answer fails closed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, answer_turn, tool_call_turn
from framework_kit import CANARIES, RIGHT, WRONG

APP = Path(__file__).resolve().parent / "apps" / "traceloop_app.py"
ROOT = Path(__file__).resolve().parents[2]


def run(answer: dict[str, Any], mode: str, *, content: bool = True) -> dict[str, Any]:
    """Serve tool call + ``answer``; run the app; its JSON report."""
    script = [tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(answer)]
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "TRACELOOP_"))}
    env |= {"TRACELOOP_TRACE_CONTENT": str(content).lower(), "PYTHONPATH": str(ROOT)}
    with FakeOpenAI(script) as api:
        result = subprocess.run(
            [sys.executable, str(APP), api.base_url, mode],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=120,
        )
    report: dict[str, Any] = json.loads(result.stdout.splitlines()[-1])
    return report


def final_chat(report: dict[str, Any]) -> dict[str, Any]:
    ask, final = [span for span in report["spans"] if span["name"] == "openai.chat"]
    assert ask["outcome"] is None  # the tool-call turn is not an answer
    return final


def test_plain_wrong_winner_raises_from_the_client_call() -> None:
    """Plain call: UnsupportedClaim reaches the app; the chat span is ERROR/blocked with the
    event; one output; nothing swallowed."""
    report = run(WRONG, "plain")
    assert (report["raised"], report["answer"]) == ("UnsupportedClaim", None)
    final = final_chat(report)
    assert (final["outcome"], final["status"]) == ("blocked", "ERROR")
    assert final["events"] == ["gen_ai.guardrail.result", "gen_ai.evaluation.result"]
    assert report["outputs"] == [["blocked", 1]]
    assert report["swallowed"] == []


def test_plain_right_winner_passes() -> None:
    """Plain call, right winner: returned, passed once."""
    report = run(RIGHT, "plain")
    assert (report["raised"], report["answer"]) == (None, RIGHT)
    assert report["outputs"] == [["passed", 1]]


def test_streamed_refusal_is_swallowed_and_counted() -> None:
    """Streamed: @dont_throw swallows what the span end raises — the wrong answer reaches the
    app, and groundplane.outputs.swallowed says so (blocked stays counted once)."""
    report = run(WRONG, "stream")
    assert (report["raised"], report["answer"]) == (None, WRONG)
    assert final_chat(report)["outcome"] == "blocked"
    assert report["outputs"] == [["blocked", 1]]
    assert report["swallowed"] == [1]


def test_streamed_refusal_reaches_the_app_through_enforce() -> None:
    """Streamed inside enforce(): the scope raises the refusal on exit; nothing swallowed."""
    report = run(WRONG, "stream-enforce")
    assert report["raised"] == "UnsupportedClaim"
    assert report["outputs"] == [["blocked", 1]]
    assert report["swallowed"] == []


@pytest.mark.parametrize("answer", [WRONG, RIGHT], ids=["wrong", "right"])
def test_a_guarded_stream_refuses_before_any_text_reaches_the_app(answer: dict[str, Any]) -> None:
    """guard_stream over Traceloop's stream (a JSON answer: held whole): the wrong winner's
    text never reaches the app, the refusal does, without enforce(); counted once; nothing
    swallowed. The right winner arrives whole."""
    report = run(answer, "stream-guarded")
    if answer is WRONG:
        assert (report["raised"], report["received"]) == ("UnsupportedClaim", "")
        assert report["outputs"] == [["blocked", 1]]
        assert final_chat(report)["outcome"] == "blocked"
    else:
        assert (report["raised"], report["answer"]) == (None, RIGHT)
        assert report["outputs"] == [["passed", 1]]
    assert report["swallowed"] == []


def test_streamed_right_winner_passes() -> None:
    """Streamed, right winner: returned, passed once."""
    report = run(RIGHT, "stream")
    assert (report["raised"], report["answer"]) == (None, RIGHT)
    assert report["outputs"] == [["passed", 1]]


@pytest.mark.parametrize("answer", [WRONG, RIGHT], ids=["wrong", "right"])
def test_content_off_fails_closed_without_leaking(answer: dict[str, Any]) -> None:
    """TRACELOOP_TRACE_CONTENT=false: the answer is on no span and Traceloop has no hook, so
    every answer — right or wrong — fails closed (OutputUnchecked, outcome error); no campaign
    name anywhere in the telemetry."""
    report = run(answer, "plain", content=False)
    assert report["raised"] == "OutputUnchecked"
    assert report["outputs"] == [["error", 1]]
    assert len(report["texts"]) > 30
    assert not [text for text in report["texts"] if any(c in text for c in CANARIES)]
