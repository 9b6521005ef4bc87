"""Zero-code: an OpenAI agent that never imports the guard, run under ``opentelemetry-instrument``
with GROUNDPLANE_POLICY, against the fake OpenAI server in this process.

Every OpenAI instrumentation in this environment registers the entry point name ``openai``, so
``opentelemetry-instrument`` loads them all (and OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=openai would
disable all): each call yields a GenAI ``chat`` span, an OpenInference ``ChatCompletion`` span and
(with the ``traceloop`` extra) a Traceloop ``openai.chat`` span, one inside the other. The answer is
checked and counted once, at the innermost span, whichever wraps the others
(tests/integrations/test_nested_llm_spans.py pins both orders in-process).
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
ROOT = Path(__file__).resolve().parents[2]
APP = HERE / "apps" / "openai_app.py"
POLICY = HERE / "openai_policy.yaml"
INSTRUMENT = Path(sys.executable).parent / "opentelemetry-instrument"
WRONG_LINE = (
    "APP: UnsupportedClaim: unsupported claim in field 'winner': model said 'north', registered "
    "facts support 'harbour' | fact='campaign_ctr' | provenance=warehouse_query(window='7d') | "
    "computed argmax on 'score' is 'harbour' (0.0455); 'north' ranked #2 at 0.0412"
)


def app_lines(stdout: str) -> list[str]:
    """What the application printed: its ``APP:`` lines (the exporters write to the same
    stdout from their own threads, so the order of the two is not fixed)."""
    return [line for line in stdout.splitlines() if line.startswith("APP: ")]


def run_app(answer: dict[str, Any], tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Any]:
    """Serve tool-call turn + ``answer`` and run the app under opentelemetry-instrument."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "GROUNDPLANE_"))}
    script = [tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(answer)]
    with FakeOpenAI(script) as api:
        env = {
            **clean,
            # This checkout's package, not whichever copy the interpreter has installed.
            "PYTHONPATH": os.pathsep.join(filter(None, (str(ROOT), clean.get("PYTHONPATH")))),
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


def points(text: str, name: str) -> list[tuple[dict[str, Any], Any]]:
    """(attributes, value) of metric ``name`` in its last export (cumulative: the totals)."""
    found: list[tuple[dict[str, Any], Any]] = []
    for doc in documents(text):
        for resource in doc.get("resource_metrics", []):
            for scope in resource["scope_metrics"]:
                for metric in scope["metrics"]:
                    if metric["name"] == name:
                        found = [
                            (p["attributes"], p["value"]) for p in metric["data"]["data_points"]
                        ]
    return found


LLM_SPANS = ("chat gpt-fake-1", "ChatCompletion", "openai.chat")  # genai, OpenInference, Traceloop


def final_call(exported: list[dict[str, Any]]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """(inner, outers): the nested LLM spans of the final model call, whichever
    instrumentation wraps the others (each one's parent is the next one out)."""
    llm = [s for s in exported if s["name"] in LLM_SPANS]
    by_id = {s["context"]["span_id"]: s for s in llm}
    parents = {s["parent_id"] for s in llm}
    inners = [s for s in llm if s["context"]["span_id"] not in parents]
    assert len(inners) == 2  # the tool-call turn and the final answer
    chains = []
    for inner in sorted(inners, key=lambda span: span["start_time"]):
        chain = [inner]
        while chain[-1]["parent_id"] in by_id:
            chain.append(by_id[chain[-1]["parent_id"]])
        chains.append(chain)
    ask, final = chains
    assert {span["name"] for span in ask} == {"chat gpt-fake-1", "ChatCompletion"} | (
        {"openai.chat"} if any(span["name"] == "openai.chat" for span in llm) else set()
    )
    return final[0], final[1:]


def guarded(exported: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [s for s in exported if any(k.startswith("groundplane.") for k in s["attributes"])]


def evaluation(span: dict[str, Any], label: str, explanation: str | None = None) -> dict[str, Any]:
    """The exported gen_ai.evaluation.result of the superlative check on ``span`` (with the
    span's response id when it has one, and the explanation: content capture is on)."""
    attributes = {"gen_ai.evaluation.name": "superlative", "gen_ai.evaluation.score.label": label}
    if explanation is not None:
        attributes["gen_ai.evaluation.explanation"] = explanation
    if "gen_ai.response.id" in span["attributes"]:
        attributes["gen_ai.response.id"] = span["attributes"]["gen_ai.response.id"]
    return {"name": "gen_ai.evaluation.result", "attributes": attributes}


LABELS = {
    "groundplane.boundary": "campaign_answer",
    "groundplane.mode": "enforce",
    "gen_ai.agent.name": "campaign-analyst",  # the boundary's configured match
}


def test_wrong_answer_raises_in_the_app_and_is_checked_once_at_the_inner_llm_span(
    tmp_path: Path,
) -> None:
    """The app gets UnsupportedClaim from the client call; of the two LLM spans of the final
    call only the inner one is checked (ERROR/blocked, one guardrail event pointing at the
    execute_tool span): one output, one claim counted."""
    result, api = run_app({"winner": "north", "ctr": 0.0412}, tmp_path)
    assert app_lines(result.stdout) == [WRONG_LINE]
    assert api.remaining == 0
    exported = spans(result.stdout)
    (tool,) = [s for s in exported if s["name"] == "execute_tool warehouse_query"]
    inner, outers = final_call(exported)
    assert guarded(exported) == [inner]
    assert [outer["events"] for outer in outers] == [[] for _ in outers]
    assert inner["status"]["status_code"] == "ERROR"
    assert inner["attributes"]["groundplane.outcome"] == "blocked"
    event, evaluated = inner["events"]
    assert event["name"] == "gen_ai.guardrail.result"
    message = event["attributes"]["groundplane.message"]
    assert {k: evaluated[k] for k in ("name", "attributes")} == evaluation(
        inner, "unsupported", message
    )
    assert {
        k: event["attributes"][k] for k in ("groundplane.fact", "groundplane.fact.span_id")
    } == {
        "groundplane.fact": "campaign_ctr",
        "groundplane.fact.span_id": tool["context"]["span_id"].removeprefix("0x"),
    }
    assert points(result.stdout, "groundplane.claims") == [
        ({"groundplane.check": "superlative", "groundplane.verdict": "unsupported", **LABELS}, 1)
    ]
    assert points(result.stdout, "groundplane.outputs") == [
        ({"groundplane.outcome": "blocked", **LABELS}, 1)
    ]


def test_right_answer_is_accepted_and_passes_once(tmp_path: Path) -> None:
    """The right answer reaches the app; only the inner LLM span of the final call is checked
    (passed, no guardrail event, one supported evaluation): one output, one supported claim."""
    result, _ = run_app({"winner": "harbour", "ctr": 0.0455}, tmp_path)
    assert app_lines(result.stdout) == ['APP: answer accepted {"winner": "harbour", "ctr": 0.0455}']
    exported = spans(result.stdout)
    inner, _ = final_call(exported)
    assert guarded(exported) == [inner]
    assert inner["attributes"]["groundplane.outcome"] == "passed"
    assert [{k: e[k] for k in ("name", "attributes")} for e in inner["events"]] == [
        evaluation(inner, "supported")
    ]
    assert points(result.stdout, "groundplane.claims") == [
        ({"groundplane.check": "superlative", "groundplane.verdict": "supported", **LABELS}, 1)
    ]
    assert points(result.stdout, "groundplane.outputs") == [
        ({"groundplane.outcome": "passed", **LABELS}, 1)
    ]
    assert result.stderr == ""
