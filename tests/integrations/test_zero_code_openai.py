"""Zero-code: an OpenAI agent that never imports the guard, run under ``opentelemetry-instrument``
with GROUNDPLANE_POLICY, against the fake OpenAI server in this process.

Both OpenAI instrumentations in this environment register the entry point name ``openai``, so
``opentelemetry-instrument`` loads both (and OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=openai would
disable both): each call yields a GenAI ``chat`` span and an OpenInference ``ChatCompletion`` span.
The assertions hold whichever of the two wraps the other.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from fake_openai import FakeOpenAI, answer_turn, tool_call_turn

HERE = Path(__file__).resolve().parent
APP = HERE / "apps" / "openai_app.py"
POLICY = HERE / "openai_policy.yaml"
INSTRUMENT = Path(sys.executable).parent / "opentelemetry-instrument"
WRONG_LINE = (
    "APP: UnsupportedClaim: unsupported claim in field 'winner': model said 'north', registered "
    "facts support 'harbour' | fact='campaign_ctr' | provenance=warehouse_query(window='7d') | "
    "computed argmax on 'score' is 'harbour' (0.0455); 'north' ranked #2 at 0.0412"
)


def run_app(answer: dict[str, Any], tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Any]:
    """Serve tool-call turn + ``answer`` and run the app under opentelemetry-instrument."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "GROUNDPLANE_"))}
    script = [tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(answer)]
    with FakeOpenAI(script) as api:
        env = {
            **clean,
            "OPENAI_BASE_URL": api.base_url,
            "GROUNDPLANE_POLICY": str(POLICY),
            "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
            "OTEL_TRACES_SAMPLER": "groundplane_parentbased_traceidratio",
            "OTEL_TRACES_SAMPLER_ARG": "1",
        }
        command = [str(INSTRUMENT), "--traces_exporter", "console", "--metrics_exporter"]
        command += ["console", "--logs_exporter", "none", sys.executable, str(APP)]
        result = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, check=True, timeout=120
        )
        return result, api


def documents(text: str) -> Iterator[dict[str, Any]]:
    decoder, position = json.JSONDecoder(), text.find("{")
    while position != -1:
        document, end = decoder.raw_decode(text, position)
        yield document
        position = text.find("{", end)


def spans(text: str) -> list[dict[str, Any]]:
    return [doc for doc in documents(text) if "context" in doc]


def verdicts(text: str) -> set[str]:
    found = set()
    for doc in documents(text):
        for resource in doc.get("resource_metrics", []):
            for scope in resource["scope_metrics"]:
                for metric in scope["metrics"]:
                    if metric["name"] == "groundplane.claims":
                        points = metric["data"]["data_points"]
                        found |= {p["attributes"]["groundplane.verdict"] for p in points}
    return found


def test_wrong_answer_raises_in_the_app_and_the_chat_span_carries_the_event(
    tmp_path: Path,
) -> None:
    """The app gets UnsupportedClaim from the client call; the exported GenAI chat span of the
    final answer is ERROR/blocked with the guardrail event pointing at the execute_tool span."""
    result, api = run_app({"winner": "north", "ctr": 0.0412}, tmp_path)
    assert result.stdout.splitlines()[0] == WRONG_LINE
    assert api.remaining == 0
    exported = spans(result.stdout)
    (tool,) = [s for s in exported if s["name"] == "execute_tool warehouse_query"]
    ask, final = [s for s in exported if s["name"] == "chat gpt-fake-1"]
    assert "groundplane.outcome" not in ask["attributes"]
    assert final["status"]["status_code"] == "ERROR"
    assert final["attributes"]["groundplane.outcome"] == "blocked"
    (event,) = final["events"]
    assert event["name"] == "gen_ai.guardrail.result"
    assert {
        k: event["attributes"][k] for k in ("groundplane.fact", "groundplane.fact.span_id")
    } == {
        "groundplane.fact": "campaign_ctr",
        "groundplane.fact.span_id": tool["context"]["span_id"].removeprefix("0x"),
    }
    assert verdicts(result.stdout) == {"unsupported"}


def test_right_answer_is_accepted_and_passes(tmp_path: Path) -> None:
    """The right answer reaches the app and the chat span's outcome is passed."""
    result, _ = run_app({"winner": "harbour", "ctr": 0.0455}, tmp_path)
    assert result.stdout.splitlines()[0] == (
        'APP: answer accepted {"winner": "harbour", "ctr": 0.0455}'
    )
    final = [s for s in spans(result.stdout) if s["name"] == "chat gpt-fake-1"][-1]
    assert (final["attributes"]["groundplane.outcome"], final["events"]) == ("passed", [])
    assert verdicts(result.stdout) == {"supported"}
    assert result.stderr == ""
