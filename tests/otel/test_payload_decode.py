"""``decode_payload`` (no ``Parsed`` for the usual case) against ``parse_payload``, and the
message parts read in plain loops against the list-by-list reading they replace."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import orjson
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine.output import OutputRead, parse_answer, read_output
from groundplane_otel.otel._engine.payload import Parsed, decode_payload, parse_payload
from groundplane_otel.otel.config import Limits

TEXT_PART_NO_CONTENT = (
    "a text part has no content; "
    "content capture is probably off in the instrumentation: set "
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY (util-genai instrumentations; "
    "true for the older ones), or OTEL_INSTRUMENTATION_GENAI_COMPLETION_HOOK=groundplane to hand "
    "the guard the messages with content capture off"
)

_SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=6)
_KEYS = st.sampled_from(["a", "b", "a:", "\\u003a", "+"])
_JSON = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=12,
)


def _texts(value: Any, repeat: bool) -> str:
    """``value`` as JSON text (NaN and infinities included), a key repeated when asked."""
    text = json.dumps(value)
    return text.replace("{", '{"a": 1, "a": 2, ', 1) if repeat and "{" in text else text


@settings(max_examples=400, deadline=None)
@given(_JSON, st.booleans(), st.integers(0, 4), st.sampled_from([str, bytes, None]))
def test_decode_payload_is_parse_payload_without_the_parsed(
    value: Any, repeat: bool, max_depth: int, form: type | None
) -> None:
    """For text, bytes or a structured value, ``decode_payload`` gives ``(value, size)`` exactly
    when ``parse_payload`` is ok (its value and size), else the very ``Parsed`` it returns."""
    text = _texts(value, repeat)
    raw: Any = value if form is None else text if form is str else text.encode()
    parsed = parse_payload(raw, max_bytes=10**6, max_depth=max_depth)
    decoded = decode_payload(raw, 10**6, max_depth)
    if parsed.ok:
        assert decoded == (parsed.value, parsed.size)
    else:
        assert decoded == parsed


def test_a_repeated_key_and_a_rounded_integer_are_refused_by_decode_payload() -> None:
    """The usual-case entry point keeps every refusal: a repeated key, a 19+ digit integer,
    nesting past the limit, each with parse_payload's exact message."""
    assert decode_payload('{"a": 1, "a": 2}', 100, 4) == Parsed(
        "unparseable", size=16, problem="duplicate key 'a'"
    )
    assert decode_payload("[10000000000000000000000]", 100, 4) == ([10**22], 25)
    assert decode_payload("[[1]]", 100, 1) == Parsed(
        "rejected", size=5, problem="nested deeper than 1 levels"
    )


def _reference(message: Mapping[str, Any], limits: Limits) -> OutputRead | None:
    """The parts of a GenAI message read list by list (the reading before the loops); None
    for several text parts that are not one answer (tests/otel/test_output_shapes.py)."""
    tool_turn = message.get("finish_reason") == "tool_calls"
    parts = message["parts"]
    if not all(isinstance(part, Mapping) for part in parts):
        return OutputRead("unreadable", problem="a part is not an object")
    kinds = [part.get("type") for part in parts]
    if not all(isinstance(kind, str) for kind in kinds):
        return OutputRead("unreadable", problem="a part has no string type")
    calls = not {"tool_call", "function_call"}.isdisjoint(kinds)
    contents = [part.get("content") for part, kind in zip(parts, kinds) if kind == "text"]
    if not contents:
        if calls or tool_turn:
            return OutputRead("not_output")
        return OutputRead("refusal") if "refusal" in kinds else OutputRead("absent")
    if not all(isinstance(content, str) for content in contents):
        if calls:
            return OutputRead("not_output")
        problem = TEXT_PART_NO_CONTENT
        return OutputRead("unreadable", problem=problem, missing_content=True)
    read = parse_answer("".join(contents), limits)
    if read.status != "output" and len(contents) > 1:
        return None
    if (calls or tool_turn) and read.problem == "no JSON object in the answer text":
        return OutputRead("not_output")
    return read


_PARTS = st.lists(
    st.sampled_from(["not a part", 3])
    | st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "tool_call", "function_call", "refusal", "image", 7])},
        optional={"content": st.sampled_from(['{"winner": "r1"}', "prose", None, 5])},
    ),
    max_size=3,
)


@settings(max_examples=400, deadline=None)
@given(_PARTS, st.sampled_from(["stop", "tool_calls"]))
def test_parts_read_in_loops_as_they_were_read_list_by_list(parts: list[Any], finish: str) -> None:
    """Any mix of parts (not objects, non-string types, tool calls, refusals, text with or
    without content) reads to the status and problem the list-by-list reading gave."""
    message = {"role": "assistant", "parts": parts, "finish_reason": finish}
    limits = Limits()
    read = read_output({sc.GEN_AI_OUTPUT_MESSAGES: json.dumps([message])}, limits)
    expected = _reference(message, limits)
    assume(expected is not None)
    assert expected is not None
    assert (read.status, read.value, read.problem, read.missing_content) == (
        expected.status,
        expected.value,
        expected.problem,
        expected.missing_content,
    )


_NESTED = st.recursive(
    st.none() | st.integers(-9, 9) | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=2) | st.dictionaries(st.text(max_size=2), inner, max_size=2)
    ),
    max_leaves=10,
)


@settings(max_examples=500, deadline=None)
@given(_NESTED, st.integers(1, 6))
def test_a_line_max_depth_levels_down_needs_max_depth_squared_bytes(
    value: Any, max_depth: int
) -> None:
    """Wherever orjson's indented output has a line ``2 * max_depth`` spaces in, it is at least
    ``max_depth ** 2`` bytes long (so shorter output skips looking for that line)."""
    shown = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    if b"\n" + b" " * (2 * max_depth) in shown:
        assert len(shown) >= max_depth * max_depth


def test_the_shortest_output_with_a_line_max_depth_levels_down() -> None:
    """The tightest case, arrays nested max_depth deep around one digit, is longer than the
    bound: it holds for every limit up to 64, the default."""
    for max_depth in range(1, 65):
        shown = orjson.dumps(
            json.loads("[" * max_depth + "1" + "]" * max_depth), option=orjson.OPT_INDENT_2
        )
        assert b"\n" + b" " * (2 * max_depth) in shown
        assert len(shown) >= max_depth * max_depth
