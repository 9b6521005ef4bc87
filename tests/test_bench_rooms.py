"""A guarded span end's decision enters each engine room once (issue 38), as ``python -m
bench.rooms`` measures it (docs/development.md, "One span, from start to verdict")."""

from __future__ import annotations

from bench_command import run_bench


def test_the_decision_returns_only_to_the_payload_decoder() -> None:
    """The chat span's decision returns only to ``payload`` (a GenAI answer is JSON inside
    JSON: the messages document, then the answer text it carries); the agent span's to none.
    The chain's spans are read in one visit to ``sdk``."""
    done = run_bench("bench.rooms", timeout=120, check=True)
    lines = done.stdout.splitlines()
    assert lines[0] == "the app got: ClaimsUnsupported"
    chat = lines[1].partition("Engine.decide: ")[2]
    agent = lines[2].partition("Engine.decide: ")[2]
    assert lines[1].startswith("'chat model-x' end: ")
    assert chat == "13 stops in 12 engine rooms, 1 returns (otel/_engine/payload)"
    assert lines[2].startswith("'invoke_agent analyst' end: ")
    assert agent == "7 stops in 7 engine rooms, 0 returns"


def test_a_mistyped_option_is_named_not_ignored() -> None:
    """``--al1`` is no option of the tool: it says so and exits 2, rather than run without it."""
    done = run_bench("bench.rooms", "--al1", timeout=120, check=False)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == (
        "python -m bench.rooms: error: unrecognized arguments: --al1"
    )
    steps = run_bench("bench.replay_steps", "--smkoe", timeout=120, check=False)
    assert steps.returncode == 2
    assert steps.stderr.splitlines()[-1] == (
        "python -m bench.replay_steps: error: unrecognized arguments: --smkoe"
    )
