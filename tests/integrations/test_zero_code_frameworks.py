"""Zero-code per framework: the agent runs under ``opentelemetry-instrument`` with
GROUNDPLANE_POLICY (tests/integrations/openai_policy.yaml: one boundary, matched by agent name
only), content capture at the GenAI default (off), and one groundplane line in the app — the
framework's adapter (tests/integrations/apps/framework_app.py). The wrong winner reaches the app
the framework's way, the right one passes, each counted once.

Every instrumentation installed here loads (they share entry point names: ``langchain``,
``openai_agents``), as it would in an app that installed them all."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from fake_openai import FakeOpenAI, Turn, answer_turn, tool_call_turn
from test_zero_code_openai import points

HERE = Path(__file__).resolve().parent
ROOT = Path(__file__).resolve().parents[2]
APP = HERE / "apps" / "framework_app.py"
POLICY = HERE / "openai_policy.yaml"
INSTRUMENT = Path(sys.executable).parent / "opentelemetry-instrument"
RIGHT = {"winner": "harbour", "ctr": 0.0455}
WRONG = {"winner": "north", "ctr": 0.0412}
RAISED = {
    "langchain": "UnsupportedClaim",
    "openai_agents": "OutputGuardrailTripwireTriggered",
    "pydantic_ai": "UnsupportedClaim",
}


def app_lines(stdout: str) -> list[str]:
    """What the application printed: its ``APP:`` lines (the exporters write to the same
    stdout from their own threads, so the order of the two is not fixed)."""
    return [line for line in stdout.splitlines() if line.startswith("APP: ")]


def run_app(framework: str, answer: dict[str, Any], tmp_path: Path) -> tuple[str, str]:
    # No OPENAI_API_KEY: the Agents SDK's own exporter to OpenAI's backend then stays idle.
    prefixes = ("OTEL_", "GROUNDPLANE_", "OPENAI_")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(prefixes)}
    script: list[Turn] = [tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(answer)]
    with FakeOpenAI(script) as api:
        env = {
            **clean,
            # This checkout's package, not whichever copy the interpreter has installed.
            "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), clean.get("PYTHONPATH")))),
            "OPENAI_BASE_URL": api.base_url,
            "GROUNDPLANE_POLICY": str(POLICY),
            "OTEL_TRACES_SAMPLER": "groundplane_parentbased_traceidratio",
            "OTEL_TRACES_SAMPLER_ARG": "1",
        }
        command = [str(INSTRUMENT), "--traces_exporter", "none", "--metrics_exporter"]
        command += ["console", "--logs_exporter", "none", sys.executable, str(APP), framework]
        result = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, check=True, timeout=180
        )
    return result.stdout, result.stderr


LABELS = {
    "groundplane.boundary": "campaign_answer",
    "groundplane.mode": "enforce",
    "gen_ai.agent.name": "campaign-analyst",  # the boundary's configured match
}
FRAMEWORKS = ["langchain", "openai_agents", "pydantic_ai"]


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_wrong_winner_reaches_the_app_the_frameworks_way(framework: str, tmp_path: Path) -> None:
    """The app sees the framework's refusal (the guard's exception, or the SDK's tripwire);
    one blocked output, nothing swallowed."""
    stdout, _ = run_app(framework, WRONG, tmp_path)
    assert app_lines(stdout) == [f"APP: {RAISED[framework]}"]
    assert points(stdout, "groundplane.outputs") == [
        ({"groundplane.outcome": "blocked", **LABELS}, 1)
    ]
    assert points(stdout, "groundplane.outputs.swallowed") == []


@pytest.mark.parametrize("framework", FRAMEWORKS)
def test_right_winner_passes(framework: str, tmp_path: Path) -> None:
    """The computed winner reaches the app; one passed output."""
    stdout, _ = run_app(framework, RIGHT, tmp_path)
    assert app_lines(stdout) == ['APP: answer {"winner": "harbour", "ctr": 0.0455}']
    assert points(stdout, "groundplane.outputs") == [
        ({"groundplane.outcome": "passed", **LABELS}, 1)
    ]
