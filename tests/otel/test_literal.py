"""Tool result text read as JSON, else as a bounded Python literal (what the OpenAI Agents SDK
sends the model for a dict result): plain data is read exactly, anything else is refused with a
content-free reason, and nothing is ever evaluated."""

from __future__ import annotations

from typing import Any

import pytest

from groundplane_otel.otel._engine.literal import MAX_LITERAL_CHARS, parse_literal, parse_tool_text


def read(text: str, *, max_depth: int = 64) -> tuple[str, Any, str]:
    parsed = parse_literal(text, max_chars=MAX_LITERAL_CHARS, max_depth=max_depth)
    return parsed.status, parsed.value, parsed.problem


@pytest.mark.parametrize(
    "value",
    [
        {"harbour": 0.0455, "north": 0.0412, "delta": 0.0301},
        {"rows": [{"id": 1, "ok": True, "note": None, "delta": -2.5e-7}], "it's": 'a "q"'},
        {"pair": (1, -2), "nested": {"a": [[], {}]}, 7: "int key", -1: "negative key"},
        ["a", "list", ["of", 2.0]],
        -3,
    ],
)
def test_the_repr_of_plain_data_reads_back_exactly(value: Any) -> None:
    """str(value) — what the Agents SDK sends — reads back as an equal value of the same
    types (tuples stay tuples: the object the tool returned, as the adapter records it)."""
    status, read_back, problem = read(str(value))
    assert (status, problem) == ("ok", "")
    assert read_back == value
    assert repr(read_back) == repr(value)


@pytest.mark.parametrize(
    ("text", "status", "problem"),
    [
        ("Answer(winner='x', ctr=0.1)", "unparseable", "a Call is not plain data"),
        ("winner='x' ctr=0.1", "unparseable", "invalid syntax (SyntaxError)"),
        ("sunny", "unparseable", "a Name is not plain data"),
        ("{'a', 'b'}", "unparseable", "a Set is not plain data"),
        ("b'raw'", "unparseable", "a bytes constant is not plain data"),
        ("1 + 2j", "unparseable", "a BinOp is not plain data"),
        ("...", "unparseable", "a ellipsis constant is not plain data"),
        ("{'ctr': 1e999}", "unparseable", "a non-finite number is refused"),
        ("[-1e999]", "unparseable", "a non-finite number is refused"),
        ("{'a': 1, 'a': 2}", "unparseable", "a repeated dict key"),
        ("{1: 'int', True: 'bool'}", "unparseable", "a repeated dict key"),
        ("{**other}", "unparseable", "a dict key is not a constant"),
        ("{(1, 2): 'tuple key'}", "unparseable", "a dict key is not a constant"),
        ("[*items]", "unparseable", "a Starred is not plain data"),
        ("{'a': 1}\x00", "unparseable", "invalid syntax (SyntaxError)"),
        ("9" * 5000, "unparseable", "invalid syntax (SyntaxError)"),
        ("[" * 65 + "]" * 65, "rejected", "nested deeper than 64 levels"),
        ("[" * 250 + "]" * 250, "rejected", "too deeply nested to parse"),
        ("-" * 60_000 + "1", "rejected", "too deeply nested to parse"),
        ("a" + ".b" * 30_000, "rejected", "too deeply nested to parse"),
    ],
)
def test_anything_but_plain_data_is_refused_with_a_bounded_reason(
    text: str, status: str, problem: str
) -> None:
    """Calls, names, sets, bytes, operators, non-finite numbers, repeated keys and runaway
    nesting are refused with a fixed, content-free reason (none quotes the text)."""
    assert read(text) == (status, None, f"Python literal: {problem}")


def test_the_depth_limit_is_the_json_one() -> None:
    """max_depth containers nest; one more is refused (as parse_payload counts JSON)."""
    assert read("[[[1]]]", max_depth=3)[0] == "ok"
    assert read("[[[[1]]]]", max_depth=3) == (
        "rejected",
        None,
        "Python literal: nested deeper than 3 levels",
    )


def test_text_past_the_length_cap_is_refused_before_parsing() -> None:
    """One character over MAX_LITERAL_CHARS is rejected by its length alone (the parser's
    tree would cost about 200 bytes a character)."""
    text = "[" + "0," * (MAX_LITERAL_CHARS // 2 - 1) + "0]"
    assert len(text) == MAX_LITERAL_CHARS + 1
    parsed = parse_literal(text, max_chars=MAX_LITERAL_CHARS, max_depth=64)
    assert (parsed.status, parsed.size, parsed.problem) == (
        "rejected",
        MAX_LITERAL_CHARS + 1,
        f"Python literal: {MAX_LITERAL_CHARS + 1} characters exceed {MAX_LITERAL_CHARS}",
    )


def test_nothing_is_ever_evaluated(capsys: pytest.CaptureFixture[str]) -> None:
    """A text that would run code if evaluated is refused, and runs nothing."""
    status, _, problem = read("print('ran') or __import__('os').getcwd()")
    assert (status, problem) == ("unparseable", "Python literal: a BoolOp is not plain data")
    assert capsys.readouterr().out == ""


def test_json_is_read_first_and_its_refusals_stand() -> None:
    """JSON text is parsed as JSON (``true``, not a Python name); a Python repr falls back to
    the literal reader; JSON refused for a reason other than syntax (here: too big) is never
    retried; bytes are decoded; max_bytes bounds a literal too."""
    assert parse_tool_text('{"ok": true}', max_bytes=100, max_depth=4).value == {"ok": True}
    assert parse_tool_text("{'ok': True}", max_bytes=100, max_depth=4).value == {"ok": True}
    assert parse_tool_text(b"{'ok': True}", max_bytes=100, max_depth=4).value == {"ok": True}
    big = parse_tool_text('{"ok": true}', max_bytes=5, max_depth=4)
    assert (big.status, big.problem) == ("rejected", "12 bytes exceed 5")
    nan = parse_tool_text('{"x": NaN}', max_bytes=100, max_depth=4)
    assert (nan.status, nan.problem) == ("unparseable", "non-finite number NaN is refused")
    capped = parse_tool_text("{'ok':  True}", max_bytes=12, max_depth=4)
    assert (capped.status, capped.problem) == ("rejected", "13 bytes exceed 12")
