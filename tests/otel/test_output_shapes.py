"""Malformed and unusual output shapes: each is read to an exact status and problem, never an
exception (the guard counts what it cannot read as an unreadable output and fails closed)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from groundplane_otel.otel._engine.output import OutputRead, read_output
from groundplane_otel.otel.config import Limits

TEXT_PART_NO_CONTENT = (
    "a text part has no content; "
    "content capture is probably off in the instrumentation: set "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY (util-genai instrumentations; "
    "true for the older ones), or OTEL_INSTRUMENTATION_GENAI_COMPLETION_HOOK=groundplane to hand "
    "the guard the messages with content capture off"
)

LIMITS = Limits()
ANSWER = '{"winner": "EU"}'
FINISH_REASONS = "gen_ai.response.finish_reasons"


def read(attributes: dict[str, Any]) -> OutputRead:
    return read_output(attributes, LIMITS)


def messages(*parts: dict[str, Any], **message: Any) -> dict[str, Any]:
    return {
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": list(parts), **message}]
        )
    }


TOOL_CALL = {"type": "tool_call", "id": "c1", "name": "top_sales", "arguments": {}}


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        (
            messages({"type": "text", "content": ANSWER}, finish_reason=["stop", 1]),
            OutputRead("unreadable", problem="finish_reason is not a string"),
        ),
        (
            messages(TOOL_CALL, finish_reason=["tool_calls"]),
            OutputRead("unreadable", problem="finish_reason is not a string"),
        ),
        (
            {**messages({"type": "text", "content": ANSWER}), FINISH_REASONS: ("stop", 1)},
            OutputRead("unreadable", problem="the finish reasons are not strings"),
        ),
        (
            messages({"type": ["text"], "content": ANSWER}),
            OutputRead("unreadable", problem="a part has no string type"),
        ),
        (
            messages("text"),  # type: ignore[arg-type]
            OutputRead("unreadable", problem="a part is not an object"),
        ),
        (
            {"output.value": json.dumps({"choices": [{"message": ANSWER}]})},
            OutputRead("unreadable", problem="output.value choices[0].message is not an object"),
        ),
        (
            {
                "output.value": json.dumps(
                    {"choices": [{"message": {"content": ANSWER}, "finish_reason": ["stop"]}]}
                )
            },
            OutputRead(
                "unreadable", problem="output.value choices[0].finish_reason is not a string"
            ),
        ),
        (
            {"output.value": json.dumps({"choices": [{"message": ["a", "b"]}]})},
            OutputRead("unreadable", problem="output.value choices[0].message is not an object"),
        ),
        (
            {"output.value": json.dumps({"choices": "x"})},
            OutputRead("unreadable", problem="output.value choices is not a list of objects"),
        ),
        (
            {"output.value": json.dumps({"choices": [{"message": {"content": ["x"]}}]})},
            OutputRead("unreadable", problem="message content is not a string"),
        ),
        (
            {"llm.output_messages.².message.content": ANSWER},
            OutputRead("unreadable", problem="flattened key with index '²'"),
        ),
        (
            {"llm.output_messages.x.message.content": ANSWER},
            OutputRead("unreadable", problem="flattened key with index 'x'"),
        ),
    ],
    ids=[
        "finish-reason-list-with-junk",
        "finish-reason-list-tool-calls",
        "span-finish-reasons-with-junk",
        "part-type-is-a-list",
        "part-is-a-string",
        "choices-message-is-a-string",
        "choices-finish-reason-is-a-list",
        "choices-message-is-a-list",
        "choices-not-a-list",
        "message-content-not-a-string",
        "flattened-non-ascii-digit",
        "flattened-non-digit",
    ],
)
def test_malformed_shapes_read_to_an_exact_status(
    attributes: dict[str, Any], expected: OutputRead
) -> None:
    """A malformed shape is an exact read status (unreadable with its problem), not a crash."""
    assert read(attributes) == expected


def test_text_part_without_content_is_unreadable_not_absent() -> None:
    """pydantic-ai with content off writes a text part with no content: unreadable content
    (an answer was given), flagged as missing content — never "no output"."""
    found = read(messages({"type": "text"}))
    assert found == OutputRead(
        "unreadable",
        problem=TEXT_PART_NO_CONTENT,
        missing_content=True,
    )


def test_a_json_answer_sent_alongside_a_tool_call_is_an_output() -> None:
    """Text part + tool_call part: a JSON answer in the text is checked, whatever the
    finish reason; prose without JSON there is the tool turn's preamble."""
    both = messages({"type": "text", "content": ANSWER}, TOOL_CALL, finish_reason="tool_calls")
    assert read(both) == OutputRead("output", {"winner": "EU"})
    preamble = messages({"type": "text", "content": "Let me look."}, TOOL_CALL)
    assert read(preamble) == OutputRead("not_output")


def test_openai_content_alongside_tool_calls_is_an_output() -> None:
    """OpenAI shape (content + tool_calls, finish_reason tool_calls) is checked too."""
    value = {
        "choices": [
            {
                "message": {"content": ANSWER, "tool_calls": [{"id": "c1"}]},
                "finish_reason": "tool_calls",
            }
        ]
    }
    assert read({"output.value": json.dumps(value)}) == OutputRead("output", {"winner": "EU"})
    flattened = {
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": ANSWER,
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "c1",
        "llm.finish_reason": "tool_calls",
    }
    assert read(flattened) == OutputRead("output", {"winner": "EU"})


def test_two_different_fenced_answers_are_ambiguous() -> None:
    """Two fenced JSON objects that differ fail closed; the same one twice is that answer."""
    two = f'```json\n{ANSWER}\n```\nor rather\n```json\n{{"winner": "US"}}\n```'
    assert read(messages({"type": "text", "content": two})) == OutputRead(
        "unreadable", problem="ambiguous: 2 different JSON objects"
    )
    same = f"```json\n{ANSWER}\n```\nagain:\n```json\n{ANSWER}\n```"
    assert read(messages({"type": "text", "content": same})).value == {"winner": "EU"}


def test_an_answer_streamed_over_several_text_parts_is_joined() -> None:
    """Text parts that together hold one JSON object are read as that object."""
    found = read(
        messages({"type": "text", "content": '{"winner": '}, {"type": "text", "content": '"EU"}'})
    )
    assert found == OutputRead("output", {"winner": "EU"})


def test_openinference_finish_reason_tells_a_tool_turn() -> None:
    """llm.finish_reason (OpenInference) counts like gen_ai.response.finish_reasons."""
    flattened = {
        "llm.output_messages.0.message.role": "assistant",
        "llm.finish_reason": "tool_calls",
    }
    assert read(flattened) == OutputRead("not_output")
