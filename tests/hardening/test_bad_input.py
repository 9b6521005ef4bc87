"""Bad input, end to end through real spans, the guard and the exported telemetry: each case has
its exact outcome and reason code in telemetry, fails closed in enforce (the app's exception has a
``.code`` saying why), crashes nothing, and loses nothing (every output counted, every span
exported). test_payload.py pins the parser on these inputs; here they arrive as a host app sends
them. Prose answers and a missing fact are pinned one by one in tests/otel/test_guard_paths.py;
here they run in the mixed stream."""

from __future__ import annotations

import json
import sys
import threading
import time
import tracemalloc
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hardening_kit import Pipeline, install_guard, metric_points, tally
from opentelemetry.context import Context
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode, Tracer
from otel_harness import SALES_ROWS, Harness, answer, evaluations, guardrail_events, sales_config

from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.otel import active_guard, submit_output, tool
from groundplane_otel.otel.policy import PolicyError, load_policy

DEPTH = 10_000
DEEP = "[" * DEPTH + "]" * DEPTH
CONFIG = sales_config(report_mode="first")  # the app's exception is the claim: it has .code


def text_answer(text: str) -> str:
    """``gen_ai.output.messages`` of a final answer whose text part is ``text`` verbatim."""
    part = {"type": "text", "content": text}
    return json.dumps([{"role": "assistant", "parts": [part], "finish_reason": "stop"}])


def parts_answer(parts: list[dict[str, Any]], finish: object = "stop") -> str:
    """``gen_ai.output.messages`` of one assistant message with these parts."""
    return json.dumps([{"role": "assistant", "parts": parts, "finish_reason": finish}])


TOOL_PART = {"type": "tool_call", "id": "c9", "name": "top_sales", "arguments": {}}


def rows_result(rows: object) -> str:
    return json.dumps({"rows": rows})


@dataclass(frozen=True)
class Case:
    """One bad input: the tool result (None: no tool call), the final messages, and what must
    come out: the app's exception code, the output outcome, the fact outcome (None: no fact
    counted), the claim verdict (None: no check ran)."""

    tool_result: str | None
    final: str
    code: str
    outcome: str
    fact: str | None
    verdict: str | None


GOOD_ANSWER = answer({"winner": "EU"})
CASES: dict[str, Case] = {
    "invalid-json-tool-result": Case(
        '{"rows": [{"region": "EU", "total": 10}', GOOD_ANSWER,
        "fact_unparseable", "error", "unparseable", "error",
    ),
    "infinity-in-tool-result": Case(
        '{"rows": [{"region": "EU", "total": Infinity}, {"region": "US", "total": 7}]}',
        GOOD_ANSWER, "fact_unparseable", "error", "unparseable", "error",
    ),
    "minus-infinity-in-tool-result": Case(
        '{"rows": [{"region": "EU", "total": 10}, {"region": "US", "total": -Infinity}]}',
        GOOD_ANSWER, "fact_unparseable", "error", "unparseable", "error",
    ),
    "overflowing-number-in-tool-result": Case(
        '{"rows": [{"region": "EU", "total": 1e999}, {"region": "US", "total": 7}]}',
        GOOD_ANSWER, "fact_unparseable", "error", "unparseable", "error",
    ),
    "deep-tool-result": Case(
        DEEP, GOOD_ANSWER, "fact_rejected", "error", "rejected", "error"
    ),
    "score-is-a-string": Case(
        rows_result([{"region": "EU", "total": "10"}, {"region": "US", "total": 7}]),
        GOOD_ANSWER, "fact_unparseable", "error", "unparseable", "error",
    ),
    "rows-are-not-objects": Case(
        rows_result([["EU", 10], ["US", 7]]),
        GOOD_ANSWER, "fact_unparseable", "error", "unparseable", "error",
    ),
    "rows-are-not-a-list": Case(
        rows_result({"region": "EU", "total": 10}),
        GOOD_ANSWER, "fact_unparseable", "error", "unparseable", "error",
    ),
    "nan-in-answer": Case(
        json.dumps(SALES_ROWS), text_answer('{"winner": "EU", "share": NaN}'),
        "output_unreadable", "error", "recorded", None,
    ),
    "infinity-in-answer": Case(
        json.dumps(SALES_ROWS), text_answer('{"winner": "EU", "share": Infinity}'),
        "output_unreadable", "error", "recorded", None,
    ),
    # A last-key-wins parser would read "EU" and pass a model that also said "US".
    "duplicate-key-in-answer": Case(
        json.dumps(SALES_ROWS), text_answer('{"winner": "US", "winner": "EU"}'),
        "output_unreadable", "error", "recorded", None,
    ),
    "deep-answer": Case(
        json.dumps(SALES_ROWS), text_answer('{"winner": "EU", "detail": ' + DEEP + "}"),
        "output_unreadable", "error", "recorded", None,
    ),
    "answer-is-an-array": Case(
        json.dumps(SALES_ROWS), text_answer('["EU"]'),
        "output_unreadable", "error", "recorded", None,
    ),
    "messages-are-invalid-json": Case(
        json.dumps(SALES_ROWS), '[{"role": "assistant", "parts": [{"type": "text", "cont',
        "output_unreadable", "error", "recorded", None,
    ),
    # Malformed output shapes (issue: an internal error used to let the answer through).
    "finish-reason-is-a-list": Case(  # a message's finish_reason is a string: fail closed
        json.dumps(SALES_ROWS),
        parts_answer([{"type": "text", "content": '{"winner": "EU"}'}], ["stop"]),
        "output_unreadable", "error", "recorded", None,
    ),
    "part-type-is-a-list": Case(
        json.dumps(SALES_ROWS),
        parts_answer([{"type": ["text"], "content": '{"winner": "US"}'}]),
        "output_unreadable", "error", "recorded", None,
    ),
    "text-part-without-content": Case(
        json.dumps(SALES_ROWS),
        parts_answer([{"type": "text"}]),
        "output_unreadable", "error", "recorded", None,
    ),
    "two-different-fenced-answers": Case(
        json.dumps(SALES_ROWS),
        text_answer('```json\n{"winner": "EU"}\n```\n```json\n{"winner": "US"}\n```'),
        "output_unreadable", "error", "recorded", None,
    ),
    "answer-beside-a-tool-call": Case(
        json.dumps(SALES_ROWS),
        parts_answer([{"type": "text", "content": '{"winner": "US"}'}, TOOL_PART], "tool_call"),
        "wrong_winner", "blocked", "recorded", "unsupported",
    ),
    "winner-of-the-wrong-type": Case(
        json.dumps(SALES_ROWS), answer({"winner": 10}),
        "not_ranked", "blocked", "recorded", "unsupported",
    ),
}  # fmt: skip
STREAM_ONLY: dict[str, Case] = {
    "prose-answer": Case(
        json.dumps(SALES_ROWS), text_answer("EU had the best quarter."),
        "output_unreadable", "error", "recorded", None,
    ),
    "fact-no-tool-produced": Case(
        None, GOOD_ANSWER, "fact_missing", "error", None, "error"
    ),
    "good": Case(json.dumps(SALES_ROWS), GOOD_ANSWER, "", "passed", "recorded", "supported"),
}  # fmt: skip


def emit(tracer: Tracer, case: Case) -> str | None:
    """invoke_agent analyst -> execute_tool -> chat, in a new trace, the way an instrumented
    framework writes them. Returns the ``.code`` of the exception the app got, or None."""
    try:
        with tracer.start_as_current_span(
            "invoke_agent analyst",
            context=Context(),
            attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "analyst"},
        ):
            if case.tool_result is not None:
                with tracer.start_as_current_span(
                    "execute_tool top_sales",
                    attributes={
                        "gen_ai.operation.name": "execute_tool",
                        "gen_ai.tool.name": "top_sales",
                    },
                ) as tool_span:
                    tool_span.set_attribute("gen_ai.tool.call.result", case.tool_result)
            with tracer.start_as_current_span(
                "chat gpt-test", attributes={"gen_ai.operation.name": "chat"}
            ) as chat:
                chat.set_attribute("gen_ai.output.messages", case.final)
    except UnsupportedClaim as error:
        return error.code
    return None


def assert_exported_and_counted(otel: Harness, case: Case, guard: Any) -> None:
    """The exact telemetry of one guarded output: spans, event, status and every metric."""
    names = [span.name for span in otel.spans()]
    expected_names = ["chat gpt-test", "invoke_agent analyst"]
    if case.tool_result is not None:
        expected_names.append("execute_tool top_sales")
    assert sorted(names) == sorted(expected_names)
    (chat,) = otel.spans("chat gpt-test")
    assert chat.attributes["groundplane.outcome"] == case.outcome
    assert chat.status.status_code is StatusCode.ERROR
    (event,) = guardrail_events(chat)
    assert event.attributes["gen_ai.guardrail.result.reason"] == case.code
    assert evaluations(chat) == ([("superlative", case.verdict)] if case.verdict else [])
    assert len(chat.events) == 1 + len(evaluations(chat))
    result = "unsupported" if case.outcome == "blocked" else "error"
    assert event.attributes["gen_ai.guardrail.result.value"] == result
    points = otel.metrics()
    assert tally(points, "groundplane.outputs", "groundplane.outcome") == {case.outcome: 1}
    facts = tally(points, "groundplane.facts", "groundplane.fact.outcome")
    assert facts == ({case.fact: 1} if case.fact else {})
    verdicts = tally(points, "groundplane.claims", "groundplane.verdict")
    assert verdicts == ({case.verdict: 1} if case.verdict else {})
    assert points["groundplane.traces.active"] == [({}, 0)]
    assert guard.processor.internal_errors == 0


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_fails_closed_with_its_reason_and_is_counted(
    otel: Harness, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Each bad tool result or answer ends in its exact outcome and reason code, the app gets
    an exception with that code, and every span and count is there."""
    case = CASES[name]
    guard = install_guard(otel, CONFIG)
    assert emit(otel.tracer, case) == case.code
    assert_exported_and_counted(otel, case, guard)
    assert "RecursionError" not in caplog.text


@pytest.mark.parametrize(
    ("where", "code", "fact"), [("tool-result", "fact_truncated", "truncated"),
                                ("answer", "output_unreadable", "recorded")]
)  # fmt: skip
def test_values_cut_by_the_attribute_length_limit_fail_closed(
    where: str, code: str, fact: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT set, a tool result or answer the SDK cut is never
    read as data: fact_truncated / output_unreadable, counted, and the app gets the code."""
    monkeypatch.setenv("OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT", "200")
    otel = Harness()  # its TracerProvider reads the limit from the environment
    try:
        guard = install_guard(otel, CONFIG)
        many = [{"region": "EU", "total": 10}] + [
            {"region": f"R{i}", "total": 1} for i in range(20)
        ]
        case = Case(
            rows_result(many) if where == "tool-result" else json.dumps(SALES_ROWS),
            GOOD_ANSWER if where == "tool-result" else answer({"winner": "EU", "why": "x" * 300}),
            code, "error", fact, "error" if where == "tool-result" else None,
        )  # fmt: skip
        assert emit(otel.tracer, case) == code
        assert_exported_and_counted(otel, case, guard)
        (chat,) = otel.spans("chat gpt-test")
        assert len(chat.attributes["gen_ai.output.messages"]) <= 200
    finally:
        otel.close()


MIB = 1024 * 1024


@pytest.mark.parametrize(
    ("where", "char"), [("tool-result", "x"), ("tool-result", "\u4e2d"), ("answer", "x")]
)
def test_a_fifty_megabyte_payload_is_refused_quickly_without_ballooning(
    otel: Harness, where: str, char: str
) -> None:
    """A 50 MB tool result or answer is refused by the payload limit (fact_rejected /
    output_unreadable) in under 2 s, with a traced peak below twice the payload's own size."""
    guard = install_guard(otel, CONFIG)
    pad = char * (50 * MIB)
    if where == "tool-result":
        payload = '{"rows": [{"region": "EU", "total": 10}], "pad": "' + pad + '"}'
        case = Case(payload, GOOD_ANSWER, "fact_rejected", "error", "rejected", "error")
    else:
        payload = answer({"winner": "EU", "pad": pad})
        case = Case(json.dumps(SALES_ROWS), payload, "output_unreadable", "error", "recorded", None)
    del pad
    held = sys.getsizeof(payload)  # what the app already holds: 50 MiB, or 100 MiB for UCS-2
    tracemalloc.start()
    try:
        started = time.perf_counter()
        got = emit(otel.tracer, case)
        took = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    print(
        f"\n50 MiB {where} ({char!r}): refused in {took * 1000:.0f} ms, peak {peak / MIB:.1f} MiB"
    )
    assert got == case.code
    assert_exported_and_counted(otel, case, guard)
    assert took < 2.0
    assert peak < 2 * held
    if char.isascii():
        assert peak < held / 8  # ASCII is sized without a copy: nothing near the payload size


def test_a_tool_returning_ten_thousand_deep_data_is_refused_without_recursion_error(
    otel: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """A decorated tool returning 10,000-deep data records no fact (unparseable, counted), the
    tool still returns to the app, and the answer that needed the fact fails closed."""
    guard = install_guard(otel, CONFIG)
    deep: Any = []
    for _ in range(DEPTH):
        deep = [deep]

    @tool("top_sales", guard=guard)
    def top_sales() -> dict[str, Any]:
        return {"rows": deep}

    returned: list[Any] = []

    def agent() -> None:
        with otel.agent():
            returned.append(top_sales())
            otel.chat(GOOD_ANSWER)

    with pytest.raises(UnsupportedClaim) as raised:
        agent()
    assert raised.value.code == "fact_unparseable"
    assert returned[0]["rows"] is deep  # the app got its own result back, untouched
    points = otel.metrics()
    assert tally(points, "groundplane.facts", "groundplane.fact.outcome") == {"unparseable": 1}
    assert tally(points, "groundplane.outputs", "groundplane.outcome") == {"error": 1}
    assert guard.processor.internal_errors == 0
    assert "RecursionError" not in caplog.text


def _deep_output() -> dict[str, Any]:
    deep: Any = []
    for _ in range(DEPTH):
        deep = [deep]
    return {"winner": "US", "detail": deep}


def _cyclic_output() -> dict[str, Any]:
    output: dict[str, Any] = {"winner": "US"}
    output["self"] = output
    return output


UNSERIALIZABLE: dict[str, Callable[[], dict[Any, Any]]] = {
    "ten-thousand-deep": _deep_output,
    "mixed-key-types": lambda: {"winner": "US", 1: "one"},
    "cyclic": _cyclic_output,
}


@pytest.mark.parametrize("name", list(UNSERIALIZABLE))
def test_a_submitted_output_json_cannot_encode_still_fails_closed(otel: Harness, name: str) -> None:
    """A wrong answer submitted in code that JSON cannot encode (under an agent span, where the
    guard fingerprints answers to check each once) is still refused and counted, never let
    through by a guard error (regression: it used to fail open)."""
    guard = install_guard(otel, CONFIG)
    output = UNSERIALIZABLE[name]()

    def agent() -> None:
        with otel.agent():
            otel.tool(SALES_ROWS)
            with otel.tracer.start_as_current_span(
                "chat gpt-test", attributes={"gen_ai.operation.name": "chat"}
            ):
                submit_output(output, guard=guard)

    with pytest.raises(UnsupportedClaim) as raised:
        agent()
    assert raised.value.code == "wrong_winner"
    assert tally(otel.metrics(), "groundplane.outputs", "groundplane.outcome") == {"blocked": 1}
    assert guard.processor.internal_errors == 0


def test_a_mixed_stream_of_bad_input_loses_nothing() -> None:
    """Every bad case plus prose, a missing fact and good answers, interleaved on 4 threads
    behind a BatchSpanProcessor: every output counted once by outcome and reason, every app
    exception carries its code, every span exported, no guard error."""
    cases = [*CASES.values(), *STREAM_ONLY.values()]
    stream = [cases[number % len(cases)] for number in range(4 * 3 * len(cases))]
    exporter = InMemorySpanExporter()
    pipeline = Pipeline(exporter, config=CONFIG, max_queue_size=4096, schedule_delay_millis=50)
    got: dict[int, str | None] = {}
    lock = threading.Lock()

    def worker(start: int) -> None:
        for number in range(start, len(stream), 4):
            code = emit(pipeline.tracer, stream[number])
            with lock:
                got[number] = code

    try:
        threads = [threading.Thread(target=worker, args=(start,)) for start in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=60)
        assert not any(thread.is_alive() for thread in threads)
        assert pipeline.tracer_provider.force_flush(timeout_millis=30_000)
        assert got == {number: (case.code or None) for number, case in enumerate(stream)}
        spans = exporter.get_finished_spans()
        assert len(spans) == sum(3 if case.tool_result is not None else 2 for case in stream)
        reasons = Counter(
            event.attributes["gen_ai.guardrail.result.reason"]
            for span in spans
            for event in span.events
            if event.name == "gen_ai.guardrail.result"
        )
        assert reasons == Counter(case.code for case in stream if case.code)
        points = metric_points(pipeline.reader)
        assert tally(points, "groundplane.outputs", "groundplane.outcome") == dict(
            Counter(case.outcome for case in stream)
        )
        assert tally(points, "groundplane.facts", "groundplane.fact.outcome") == dict(
            Counter(case.fact for case in stream if case.fact)
        )
        assert points["groundplane.traces.active"] == [({}, 0)]
        assert pipeline.guard is not None
        assert pipeline.guard.processor.internal_errors == 0
    finally:
        pipeline.close()


POLICY = """version: 1
mode: enforce
facts:
  sales: {tool: top_sales, kind: ranking, key: region, score: total, path: rows}
boundaries:
  answer:
    facts: [sales]
    match: {agent_name: analyst}
    checks:
      - superlative: {fact: sales, winner_field: winner}
"""
LEVELS = ["&a [lol, lol, lol, lol, lol, lol, lol, lol, lol]"] + [
    f"&{chr(98 + i)} [{', '.join([f'*{chr(97 + i)}'] * 9)}]" for i in range(8)
]
BROKEN_POLICIES = {
    # A deploy that wrote half of the file.
    "half-written": (
        POLICY[: POLICY.index("    match:")],
        ":6: boundaries.answer: missing required key 'checks'. Fix: add `checks:` here",
    ),
    "ten-thousand-deep": (
        "version: 1\nboundaries: " + "[" * DEPTH + "]" * DEPTH + "\n",
        ": <top level>: the document is nested too deeply to read. Fix: flatten the policy",
    ),
    # "Billion laughs": 9^9 names if expanded; refused at the alias that crosses the bound.
    "alias-bomb": (
        POLICY.replace("facts: [sales]", f"facts: [{', '.join(LEVELS)}]"),
        ":7: boundaries.answer.facts[4][0]: aliases expand the policy past 10,000 values (an "
        "alias bomb?). Fix: write the values out, or reuse fewer and smaller anchors",
    ),
}


@pytest.mark.parametrize("name", list(BROKEN_POLICIES))
def test_a_broken_policy_file_stops_install_and_the_app_keeps_running(
    otel: Harness, tmp_path: Path, name: str
) -> None:
    """A broken policy raises PolicyError naming the file, line and key within seconds, install
    is never reached, and the app's traffic still flows (unguarded) to the exporter."""
    valid = tmp_path / "valid.yaml"
    valid.write_text(POLICY)
    assert load_policy(valid).boundaries[0].name == "answer"  # the unbroken file is fine
    text, message = BROKEN_POLICIES[name]
    path = tmp_path / f"{name}.yaml"
    path.write_text(text)
    started = time.perf_counter()
    with pytest.raises(PolicyError) as raised:
        install_guard(otel, load_policy(path))
    assert time.perf_counter() - started < 10
    assert str(raised.value).startswith(f"{path}{message}")
    assert otel.guards == []
    assert active_guard() is None
    otel.add_exporter()
    with otel.agent():
        otel.tool(SALES_ROWS)
        otel.chat(answer({"winner": "US"}))  # wrong, but nothing is installed to say so
    assert len(otel.spans()) == 3
    assert not any(
        key.startswith("groundplane.") for span in otel.spans() for key in span.attributes
    )
    assert otel.metrics() == {}
