"""Reading the structured output of an LLM span: GenAI messages (string or structured),
OpenInference and Traceloop flattening, fences, refusals and tool-call-only turns."""

from __future__ import annotations

import json
from typing import Any

import pytest

from groundplane_otel.otel._engine.output import OutputRead, read_output
from groundplane_otel.otel.config import Limits

SPAN_NO_CONTENT = (
    "the span carries no output content; "
    "content capture is probably off in the instrumentation: set "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY (util-genai instrumentations; "
    "true for the older ones), or OTEL_INSTRUMENTATION_GENAI_COMPLETION_HOOK=groundplane to hand "
    "the guard the messages with content capture off"
)

LIMITS = Limits()


def text_message(content: str, finish: str = "stop") -> dict[str, Any]:
    return {
        "role": "assistant",
        "parts": [{"type": "text", "content": content}],
        "finish_reason": finish,
    }


def read(attributes: dict[str, Any], length_limit: int | None = None) -> OutputRead:
    return read_output(attributes, LIMITS, length_limit)


def genai(*messages: dict[str, Any]) -> dict[str, Any]:
    return {"gen_ai.output.messages": json.dumps(list(messages))}


def test_json_string_messages() -> None:
    """The JSON object in the text part of the assistant message is the output."""
    assert read(genai(text_message('{"winner": "EU"}'))) == OutputRead("output", {"winner": "EU"})


def test_structured_messages_as_the_sdk_stores_them() -> None:
    """A structured attribute value (tuples of mappings) reads the same."""
    value = ({"role": "assistant", "parts": ({"type": "text", "content": '{"winner": "EU"}'},)},)
    assert read({"gen_ai.output.messages": value}).value == {"winner": "EU"}


@pytest.mark.parametrize(
    "content",
    [
        '```json\n{"winner": "EU"}\n```',
        '```\n{"winner": "EU"}```',
        'Here is the answer:\n```json\n{"winner": "EU"}\n```\nAnything else?',
        'The answer is {"winner": "EU"}.',
    ],
    ids=["fenced", "bare-fence", "fence-in-prose", "embedded"],
)
def test_fences_and_surrounding_prose_are_tolerated(content: str) -> None:
    """Markdown fences and prose around the JSON object do not hide it."""
    assert read(genai(text_message(content))).value == {"winner": "EU"}


def test_last_assistant_message_is_read_and_two_different_json_parts_are_ambiguous() -> None:
    """With several messages, the last assistant one is read; two text parts holding
    different JSON objects are ambiguous (fail closed), the same one twice is that answer."""
    first = text_message('{"winner": "US"}')
    last = {
        "role": "assistant",
        "parts": [
            {"type": "reasoning", "content": "thinking"},
            {"type": "text", "content": '{"winner": "US"}'},
            {"type": "text", "content": '{"winner": "EU"}'},
        ],
    }
    ambiguous = read(genai(first, last))
    assert (ambiguous.status, ambiguous.problem) == (
        "unreadable",
        "ambiguous: 2 different JSON objects",
    )
    last["parts"][2]["content"] = '{"winner": "US"}'  # type: ignore[index]
    assert read(genai(first, last)).value == {"winner": "US"}
    first = text_message('{"winner": "EU"}')
    assert read(genai(first, last)).value == {"winner": "US"}


def test_tool_call_only_turn_is_not_an_output() -> None:
    """A turn whose parts are only tool calls is not an output."""
    message = {
        "role": "assistant",
        "parts": [{"type": "tool_call", "id": "c1", "name": "t", "arguments": {}}],
    }
    assert read(genai(message)).status == "not_output"


def test_tool_call_finish_reason_is_not_an_output() -> None:
    """finish_reason tool_call marks a tool turn even when text accompanies the call."""
    assert (
        read(genai(text_message("let me look that up", finish="tool_call"))).status == "not_output"
    )


def test_finish_reasons_attribute_without_content() -> None:
    """Without content capture, gen_ai.response.finish_reasons still tells a tool turn from
    an answer whose content is missing (unreadable, never "no output")."""
    assert read({"gen_ai.response.finish_reasons": ("tool_calls",)}).status == "not_output"
    assert read({"llm.finish_reason": "tool_calls"}).status == "not_output"
    missing = read({"gen_ai.response.finish_reasons": ("stop",)})
    assert (missing.status, missing.missing_content) == ("unreadable", True)
    assert missing.problem == SPAN_NO_CONTENT
    assert read({}).status == "absent"


def test_refusal_part_is_a_refusal() -> None:
    """A refusal part without any JSON text is a refusal, not an unreadable output."""
    message = {"role": "assistant", "parts": [{"type": "refusal", "content": "I can't"}]}
    assert read(genai(message)).status == "refusal"


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ("EU, I think", "no JSON object in the answer text"),
        ('{"winner": NaN}', "unparseable: non-finite number NaN is refused"),
        ('{"winner": "EU", "winner": "US"}', "unparseable: duplicate key 'winner'"),
        ('["EU"]', "no JSON object in the answer text"),
    ],
    ids=["prose", "nan", "duplicate-key", "array"],
)
def test_unreadable_answers_name_the_problem(content: str, problem: str) -> None:
    """Text without a usable JSON object is unreadable, with a content-free problem."""
    assert read(genai(text_message(content))) == OutputRead("unreadable", problem=problem)


def test_truncated_messages_are_unreadable() -> None:
    """Messages cut by the attribute length limit are unreadable (truncated)."""
    raw = json.dumps([text_message('{"winner": "EU"}')])[:40]
    result = read({"gen_ai.output.messages": raw}, length_limit=40)
    assert (result.status, result.problem) == ("unreadable", "truncated: cut at 40 characters")


def test_openinference_flattened_messages() -> None:
    """llm.output_messages.{i}.message.content of the last assistant message is read."""
    attributes = {
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": '{"winner": "EU"}',
    }
    assert read(attributes).value == {"winner": "EU"}


def test_openinference_tool_calls_only() -> None:
    """An OpenInference message with tool calls and no content is not an output."""
    attributes = {
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "top_sales",
    }
    assert read(attributes).status == "not_output"


def test_openinference_output_value_response() -> None:
    """output.value holding a chat completion response: choices[0].message.content."""
    response = {
        "choices": [
            {
                "message": {"role": "assistant", "content": '{"winner": "EU"}'},
                "finish_reason": "stop",
            }
        ]
    }
    assert read({"output.value": json.dumps(response)}).value == {"winner": "EU"}
    tool_turn = {
        "choices": [
            {
                "message": {"role": "assistant", "tool_calls": [{"id": "c1"}]},
                "finish_reason": "tool_calls",
            }
        ]
    }
    assert read({"output.value": json.dumps(tool_turn)}).status == "not_output"


def test_output_value_plain_object() -> None:
    """output.value holding the answer object itself (an AGENT span) is the output."""
    assert read({"output.value": '{"winner": "EU"}'}).value == {"winner": "EU"}


def test_traceloop_legacy_completion() -> None:
    """Legacy Traceloop gen_ai.completion.{i}.content is read."""
    attributes = {
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": '{"winner": "EU"}',
    }
    assert read(attributes).value == {"winner": "EU"}


def test_nothing_to_read_is_absent() -> None:
    """A span without any output attribute is absent."""
    assert read({"gen_ai.operation.name": "chat"}) == OutputRead("absent")
