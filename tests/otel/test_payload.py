"""Strict payload parsing: NaN/Infinity, duplicate keys, size, depth and truncation become a typed
outcome, never an exception in the application."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundplane_otel.otel._engine.payload import Parsed, parse_payload

LIMITS = {"max_bytes": 1_000, "max_depth": 8}


def parse(raw: object, length_limit: int | None = None) -> Parsed:
    return parse_payload(raw, length_limit=length_limit, **LIMITS)


def test_json_string_parses() -> None:
    """A JSON string parses to plain lists and dicts, with its size in bytes."""
    assert parse('{"a": [1, 2.5, "x"]}') == Parsed("ok", {"a": [1, 2.5, "x"]}, size=20)


@pytest.mark.parametrize("token", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_tokens_are_unparseable(token: str) -> None:
    """NaN and infinities are refused at parse time, wherever they sit."""
    result = parse(f'{{"rows": [{{"total": {token}}}]}}')
    assert (result.status, result.problem) == (
        "unparseable",
        f"non-finite number {token} is refused",
    )


def test_overflowing_number_is_unparseable() -> None:
    """1e999 parses to inf in Python: refused too."""
    assert parse('{"total": 1e999}').status == "unparseable"


def test_duplicate_keys_are_unparseable() -> None:
    """Two values under one key are ambiguous evidence."""
    result = parse('{"winner": "EU", "winner": "US"}')
    assert (result.status, result.problem) == ("unparseable", "duplicate key 'winner'")


def test_oversized_payload_is_rejected() -> None:
    """A payload over max_bytes is rejected before parsing."""
    result = parse(json.dumps({"x": "y" * 2_000}))
    assert result.status == "rejected"


def test_oversized_non_ascii_payload_is_rejected_by_length_before_encoding() -> None:
    """A non-ASCII payload longer than max_bytes characters is refused without encoding it."""
    text = json.dumps({"x": "é" * 2_000}, ensure_ascii=False)
    result = parse_payload(text, max_bytes=1_000, max_depth=64)
    assert (result.status, result.size) == ("rejected", len(text))
    assert result.problem == f"{len(text)} characters (at least as many bytes) exceed 1000"


def test_non_ascii_payload_is_measured_in_utf8_bytes() -> None:
    """A non-ASCII payload under max_bytes characters but over it in UTF-8 bytes is rejected."""
    text = json.dumps({"x": "é" * 600}, ensure_ascii=False)
    result = parse_payload(text, max_bytes=1_000, max_depth=64)
    size = len(text.encode("utf-8"))
    assert len(text) < 1_000 < size
    assert (result.status, result.problem) == ("rejected", f"{size} bytes exceed 1000")


@pytest.mark.parametrize("depth", [9, 100_000])
def test_deep_text_is_rejected_without_recursion_error(depth: int) -> None:
    """Nesting past max_depth is rejected by a scan, never by a RecursionError."""
    result = parse_payload("[" * depth + "]" * depth, max_bytes=10**6, max_depth=8)
    assert result.status == "rejected"


def test_brackets_inside_strings_do_not_count_as_depth() -> None:
    """Brackets and escaped quotes inside strings are text, not nesting."""
    text = json.dumps({"a": '[[[[[[[[[[\\" {{{{{{{{{{'})
    assert parse(text).ok


def test_deep_structured_value_is_rejected_without_recursion() -> None:
    """A structured value nested past the limit is rejected by an iterative walk."""
    value: object = []
    for _ in range(10_000):
        value = [value]
    assert parse(value).status == "rejected"


def test_structured_value_is_thawed_and_checked() -> None:
    """Span attributes hand tuples; they become lists, and a NaN inside is refused."""
    assert parse(({"a": (1, 2)},)) == Parsed("ok", [{"a": [1, 2]}])
    assert parse(({"a": float("nan")},)).status == "unparseable"


def test_value_cut_at_the_length_limit_is_truncated() -> None:
    """A string exactly as long as the attribute limit that does not parse was cut by the SDK."""
    assert parse('{"rows": [1, 2', length_limit=14).status == "truncated"
    assert parse('{"rows": [1, 2', length_limit=15).status == "unparseable"
    assert parse('{"rows": [1]}', length_limit=13).ok


def test_invalid_utf8_bytes_are_unparseable() -> None:
    """Bytes must be UTF-8 JSON."""
    assert parse(b"\xff\xfe").status == "unparseable"


def _reference(raw: str) -> tuple[str, object]:
    """The strict parse done the slow way: every float and every object through a hook."""

    def refuse(token: str) -> float:
        raise ValueError(token)

    def finite(token: str) -> float:
        value = float(token)
        if value in (float("inf"), float("-inf")):
            raise ValueError(token)
        return value

    def unique(pairs: list[tuple[str, object]]) -> dict[str, object]:
        if len({key for key, _ in pairs}) != len(pairs):
            raise ValueError("duplicate")
        return dict(pairs)

    try:
        value = json.loads(raw, parse_constant=refuse, parse_float=finite, object_pairs_hook=unique)
    except ValueError:
        return "unparseable", None
    return "ok", value


TRICKY = {
    "long-mantissa-2-digit-exponent": '{"x": 1' + "0" * 250 + "e99}",
    "long-mantissa-no-exponent": '{"x": 1' + "0" * 320 + ".5}",
    "big-exponent-with-sign": '{"x": 1.5E+308, "y": 2e+308}',
    "big-exponent-in-a-string-only": '{"case2024": "e123", "x": 1.5}',
    "tiny-exponent": '{"x": 1e-999}',
    "duplicate-in-nested-object": '{"a": {"k": 1, "k": 2}, "b": 3}',
    "colons-and-quotes-in-strings": '{"a\\":": "x:y\\"z", "b:": "\\\\", "c": ":"}',
    "duplicate-after-escaped-quote-key": '{"q\\"": 1, "q\\"": 2}',
    "empty-strings-and-keys": '{"": "", "e": ["", ":", "[", "{"]}',
    "brackets-in-strings": '{"a": "[[[{{{", "b": ["]]]", {"c": "}}"}]}',
    "same-key-in-sibling-objects": '[{"k": 1}, {"k": 2}, {"k": {"k": 3}}]',
    "unicode": '{"région": "Zürich: 1€", "n": 2}',
    # orjson keeps 64-bit integers exact and turns longer ones into floats: those go the slow way.
    "integer-past-64-bits": '{"id": 123456789012345678901234567890, "n": -18446744073709551616}',
    "integer-at-64-bits": "[9223372036854775807, -9223372036854775808, 18446744073709551615]",
    "integer-past-64-bits-at-the-start": "123456789012345678901234567890",
    "long-fraction-digits": '{"ctr": 0.00026954177897574123, "r": 1.00000000000000011102230246}',
    "long-integer-part-of-a-float": '{"x": 12345678901234567890.5, "y": 12345678901234567890e3}',
    "long-digits-in-a-string": '{"id": "123456789012345678901234567890"}',
    "lone-surrogate-escape": '{"s": "\\ud800"}',
    "byte-order-mark": '\ufeff{"a": 1}',
    "control-character-in-a-string": '{"a": "x\x01y"}',
    "true-one-and-one-point-zero": '{"a": true, "b": 1, "c": 1.0, "d": -0.0, "e": 0}',
}


@pytest.mark.parametrize("name", list(TRICKY))
def test_fast_path_agrees_with_the_slow_strict_parse(name: str) -> None:
    """Floats, duplicate keys, colons, quotes and brackets inside strings: the C-speed parse
    decides exactly like a parse that hooks every float and every object."""
    raw = TRICKY[name]
    result = parse_payload(raw, max_bytes=100_000, max_depth=8)
    status, value = _reference(raw)
    # repr: type-strict (1 is not 1.0 is not True), unlike ==
    expected = repr(value) if status == "ok" else None
    assert (result.status, repr(result.value) if result.ok else None) == (status, expected)


_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.integers(min_value=-(2**64), max_value=2**64),
    st.floats(allow_nan=False, allow_infinity=False).map(repr),  # shortest round-trip text
    st.tuples(st.floats(allow_nan=False, allow_infinity=False), st.integers(0, 25)).map(
        lambda pair: f"{pair[0]:.{pair[1]}e}"  # long mantissas, many exponents
    ),
    st.text(alphabet=':"\\{}[]x1 é', max_size=6),
)


def _render(value: object) -> str:
    """JSON text of a generated value: a list of pairs is an object (keys may repeat)."""
    if isinstance(value, list) and value and isinstance(value[0], tuple):
        return "{" + ", ".join(f"{json.dumps(k)}: {_render(v)}" for k, v in value) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_render(item) for item in value) + "]"
    if isinstance(value, str) and not value[:1].isdigit() and value[:1] not in "-":
        return json.dumps(value)
    return value if isinstance(value, str) else json.dumps(value)


_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.lists(
            st.tuples(st.sampled_from(["a", "b", "a:b", 'q"']), inner), min_size=1, max_size=4
        )
    ),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES)
def test_any_json_text_parses_exactly_like_the_hooked_standard_parse(value: object) -> None:
    """Whatever the mix of big integers, long floats, repeated keys and string contents, the
    orjson path gives the standard library's verdict and the very same values (type-strict)."""
    raw = _render(value)
    result = parse_payload(raw, max_bytes=1_000_000, max_depth=64)
    status, expected = _reference(raw)
    assert result.status == status, (raw, result.problem)
    if status == "ok":
        assert repr(result.value) == repr(expected)


def _nested(depth: int) -> str:
    """``depth`` levels alternating arrays and objects, e.g. ``[{"k": [{"k": 1}]}]``."""
    text = "1"
    for level in range(depth):
        text = f"[{text}]" if level % 2 else f'{{"k": {text}}}'
    return text


@pytest.mark.parametrize("depth", [7, 8, 9, 16, 17])
def test_depth_limit_is_exact_for_alternating_brackets(depth: int) -> None:
    """Depth up to the limit parses, one more level is rejected, whatever the bracket mix (the
    fast peel removes up to two levels a pass; the verdict stays exact)."""
    raw = f"[{_nested(depth - 1)}, {_nested(3)}, {_nested(2)}, {_nested(1)}, 1, 2, 3, 4, 5]"
    result = parse(raw)
    assert result.status == ("ok" if depth <= 8 else "rejected")
