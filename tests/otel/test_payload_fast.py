"""The orjson path of strict parsing: depth read off the indented re-encoding, repeated keys off
colon counts, rounded integers off a ``+``; every doubt goes back to the text's structure with
the same statuses, messages and sizes."""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundplane_otel.otel._engine.payload import Parsed, parse_payload

BIG = 1_000_000


def parse(raw: str, max_depth: int = 3, max_retained: int | None = None) -> Parsed:
    return parse_payload(raw, max_bytes=BIG, max_depth=max_depth, max_retained=max_retained)


def too_deep(raw: str, max_depth: int = 3) -> Parsed:
    return Parsed("rejected", size=len(raw), problem=f"nested deeper than {max_depth} levels")


# Each pair: a text exactly 3 levels deep, and the same shape one level deeper.
DEPTH_CASES = {
    "arrays": ("[[[1]]]", "[[[[1]]]]"),
    "objects": ('{"a": {"b": {"c": 1}}}', '{"a": {"b": {"c": {"d": 1}}}}'),
    "empty-innermost-array": ("[[[]]]", "[[[[]]]]"),
    "empty-innermost-object": ('{"a": {"b": {}}}', '{"a": {"b": {"c": {}}}}'),
    "mixed": ('[{"a": [1, 2]}, 3]', '[{"a": [{"b": 1}, 2]}, 3]'),
    "mixed-empty": ('{"a": [{}], "b": 1}', '{"a": [{"c": []}], "b": 1}'),
    "deepest-last": ("[1, [2], [[3, 4]]]", "[1, [2], [[3, []]]]"),
}


@pytest.mark.parametrize("name", list(DEPTH_CASES))
def test_depth_at_the_limit_parses_and_one_more_level_is_rejected(name: str) -> None:
    """At max_depth levels the text parses; one level more is rejected with the exact message,
    whether the innermost container is empty (printed inline) or not."""
    at_limit, past_limit = DEPTH_CASES[name]
    assert parse(at_limit) == Parsed("ok", json.loads(at_limit), size=len(at_limit))
    assert parse(past_limit) == too_deep(past_limit)


@pytest.mark.parametrize(
    ("raw", "max_depth", "status"),
    [
        ("1", 0, "ok"),
        ('"[[[["', 0, "ok"),
        ("[]", 0, "rejected"),
        ("{}", 0, "rejected"),
        ("[1]", 0, "rejected"),
        ("[]", 1, "ok"),
        ("[1, 2]", 1, "ok"),
        ("[[]]", 1, "rejected"),
        ('{"a": {}}', 1, "rejected"),
        ('{"a": 1}', 1, "ok"),
    ],
)
def test_top_level_scalars_and_containers_at_tiny_limits(
    raw: str, max_depth: int, status: str
) -> None:
    """A scalar is 0 levels deep, an empty container 1 (also at max_depth 0, where no line of
    the re-encoding is indented)."""
    result = parse(raw, max_depth=max_depth)
    expected = (
        too_deep(raw, max_depth)
        if status == "rejected"
        else Parsed("ok", json.loads(raw), size=len(raw))
    )
    assert result == expected


def test_a_huge_depth_limit_costs_no_memory() -> None:
    """A limit far past any text's nesting never builds an indentation that long."""
    assert parse("[[1]]", max_depth=10**12) == Parsed("ok", [[1]], size=5)


@pytest.mark.parametrize(("depth", "max_depth"), [(300, 64), (1_025, 64), (1_025, 1_024)])
def test_nesting_orjson_refuses_is_still_measured_on_the_text(depth: int, max_depth: int) -> None:
    """Nesting orjson cannot re-encode (past 255) or decode (past 1024) is rejected by the text's
    structure with the usual message."""
    raw = "[" * depth + "]" * depth
    assert parse(raw, max_depth=max_depth) == too_deep(raw, max_depth)


def test_nesting_orjson_cannot_re_encode_parses_under_a_high_limit() -> None:
    """300 levels under a limit of 1000: orjson's re-encoding refuses it, the standard decoder
    parses it."""
    raw = "[" * 300 + "]" * 300
    result = parse(raw, max_depth=1_000)
    assert (result.status, result.size) == ("ok", 600)


@pytest.mark.parametrize(
    "raw",
    [
        '{"a": [[[[1]]]], "a": 1}',
        '{"a": [[[[1]]]], "a": "\\u003a"}',
        '{"a": {"a": [[[1]]], "a": 2}}',
        '[{"k": [[[{}]]], "k": 1}, 123456789012345678901234567890]',
    ],
)
def test_a_repeated_key_does_not_hide_the_depth_of_the_value_it_drops(raw: str) -> None:
    """The first value of a repeated key is gone from the parsed value but not from the text:
    nesting past the limit there is still rejected, before the key is named."""
    assert parse(raw) == too_deep(raw)


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ('{"k": 1, "k": "\\u003a"}', "k"),  # the escape's colon makes up for the lost key colon
        ('{"k\\u003a": 1, "k:": 2}', "k:"),
        ('{"a": "\\u003A", "a": 2}', "a"),
        ('{"a": {"b": "x:y", "b": "z"}}', "b"),
        ('{"k": 1, "k": "x:"}', "k"),
    ],
)
def test_a_repeated_key_is_refused_whatever_colons_the_strings_hold(raw: str, key: str) -> None:
    """Colons inside strings, literal or escaped as \\u003a, never hide a repeated key."""
    assert parse(raw) == Parsed("unparseable", size=len(raw), problem=f"duplicate key {key!r}")


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ('{"a\\u003a": 1, "a:": 2}', None),  # two keys, one a repeat only once decoded
        ('{"a\\u003a": "\\u003A:"}', {"a:": "::"}),
        ('{"a": "\\\\u003a"}', {"a": "\\u003a"}),  # an escaped backslash, then text
        ('{"a": "\\\\", "b:": ":"}', {"a": "\\", "b:": ":"}),
    ],
)
def test_escaped_colons_parse_to_what_they_encode(raw: str, value: object) -> None:
    """A \\u003a escape is a colon in the decoded key or value: unique keys parse, and a key
    that only repeats once decoded is refused."""
    result = parse(raw)
    if value is None:
        assert result == Parsed("unparseable", size=len(raw), problem="duplicate key 'a:'")
    else:
        assert result == Parsed("ok", value, size=len(raw))


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        ('{"s": "a+b", "n": 1}', {"s": "a+b", "n": 1}),
        (
            '{"s": "a+b", "id": "1234567890123456789012"}',
            {"s": "a+b", "id": "1234567890123456789012"},
        ),
        ("[1e+20, -2.5E+17, 1e16]", [1e20, -2.5e17, 1e16]),
        ("[18446744073709551615, -9223372036854775808]", [2**64 - 1, -(2**63)]),
        ("[-9223372036854775809, 18446744073709551616]", [-(2**63) - 1, 2**64]),
        ('{"a": [1, {"b": 123456789012345678901}]}', {"a": [1, {"b": 123456789012345678901}]}),
    ],
)
def test_integers_stay_exact_whatever_else_prints_a_plus(raw: str, value: object) -> None:
    """A ``+`` from a string or a large float sends the text to the digit check; an integer
    past 64 bits (which orjson rounds to a float) parses exactly, as an int."""
    result = parse(raw)
    assert (result.status, repr(result.value), result.size) == ("ok", repr(value), len(raw))


@pytest.mark.parametrize(
    ("raw", "max_retained", "expected"),
    [
        # 64 * size > 1_000: the structure is counted, depth first, then the floor.
        ("[" * 5 + "]" * 5, 100, "nested deeper than 3 levels"),
        ("[{}, {}, [], [], {}]", 300, "parsed, it would retain at least 360 bytes (limit 300)"),
        ("[{}, {}, [], [], {}]", 360, ""),
        ("{" * 20, 1_279, "parsed, it would retain at least 1280 bytes (limit 1279)"),
        ("{" * 20, 1_280, "invalid JSON: JSONDecodeError"),
        ('[{"a": NaN}]', 150, "non-finite number NaN is refused"),
        ('[{"a": 1, "a": 2}]', 150, "duplicate key 'a'"),
        ('[{"a": 123456789012345678901}]', 150, ""),
        ('[[{"a": 1}]]', 500, ""),
    ],
)
def test_the_retained_floor_is_counted_when_it_could_exceed_the_limit(
    raw: str, max_retained: int, expected: str
) -> None:
    """Text that could retain more than the limit (64 bytes a bracket) has its structure
    counted before parsing: nesting, then the floor, then the parse's own verdict."""
    result = parse(raw, max_retained=max_retained)
    assert (result.problem, result.size) == (expected, len(raw))
    if not expected:
        assert repr(result.value) == repr(json.loads(raw))


@dataclass(frozen=True)
class _Raw:
    text: str  # a JSON snippet rendered as is


@dataclass(frozen=True)
class _Object:
    pairs: tuple[tuple[str, object], ...]  # keys as JSON text: escapes and repeats allowed


_KEYS = ['"a"', '"b"', '"a:"', '"a\\u003a"', '"a\\u003A"', '"q\\""', '"\\\\u003a"', '":"']
_ATOMS = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.sampled_from(["1e+20", "2.5E17", "1e16", "-0.5", "true", "null"]).map(_Raw),
    st.sampled_from(['"\\u003a"', '"x\\u003A:"', '"\\\\u003a"', '"+"', '"\\n  "']).map(_Raw),
    st.text(alphabet=':"\\{}[]x+ ', max_size=4),
)
_VALUES = st.recursive(
    _ATOMS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.lists(st.tuples(st.sampled_from(_KEYS), inner), max_size=3).map(
            lambda pairs: _Object(tuple(pairs))
        )
    ),
    max_leaves=12,
)


def _render(value: object) -> str:
    if isinstance(value, _Object):
        return "{" + ", ".join(f"{key}: {_render(item)}" for key, item in value.pairs) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_render(item) for item in value) + "]"
    return value.text if isinstance(value, _Raw) else json.dumps(value)


def _depth(value: object) -> int:
    children = (
        [item for _, item in value.pairs]
        if isinstance(value, _Object)
        else value
        if isinstance(value, list)
        else None
    )
    if children is None:
        return 0
    return 1 + max((_depth(child) for child in children), default=0)


def _floor(value: object) -> int:
    if isinstance(value, _Object):
        return 64 + sum(_floor(item) for _, item in value.pairs)
    if isinstance(value, list):
        return 56 + sum(_floor(item) for item in value)
    return 0


def _unique(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [key for key, _ in pairs]
    for index, key in enumerate(keys):
        if key in keys[:index]:
            raise ValueError(f"duplicate key {key!r}")
    return dict(pairs)


@settings(max_examples=1000, deadline=None)
@given(_VALUES, st.integers(0, 5), st.none() | st.integers(0, 1_500))
def test_any_text_gets_the_verdict_of_its_structure_then_the_strict_parse(
    value: object, max_depth: int, max_retained: int | None
) -> None:
    """Whatever the nesting, the escaped colons, the repeated keys and the big integers: nesting
    past the limit, then a floor over ``max_retained``, then the hooked standard parse decide,
    with the exact message and the same values (type-strict)."""
    raw = _render(value)
    result = parse(raw, max_depth=max_depth, max_retained=max_retained)
    floor = _floor(value)
    if _depth(value) > max_depth:
        expected = (f"nested deeper than {max_depth} levels", None)
    elif max_retained is not None and floor > max_retained:
        expected = (f"parsed, it would retain at least {floor} bytes (limit {max_retained})", None)
    else:
        try:
            expected = ("", repr(json.loads(raw, object_pairs_hook=_unique)))
        except ValueError as refused:
            expected = (str(refused), None)
    assert (result.problem, repr(result.value) if result.ok else None) == expected, raw
    assert result.size == len(raw.encode("utf-8"))


@pytest.mark.parametrize(
    "raw",
    [
        '{"winner": "r0"}',
        '{"a": 1, "b": true, "c": null, "d": ""}',
        '{"a": "x:y", "b": 2}',  # a colon in a string: the re-encoding decides
        '{"a": 1.5, "b": 2}',
        '{"a": 123456789012345678901}',  # rounded by orjson: parsed exactly
        '{"a\\u003a": 1}',
        "{}",
    ],
)
def test_a_flat_object_parses_as_the_strict_decoder_reads_it(raw: str) -> None:
    """A flat object (no nesting, no float) parses to the standard library's reading, with the
    same size."""
    result = parse(raw)
    expected = json.loads(raw)
    assert (result.status, repr(result.value), result.size) == ("ok", repr(expected), len(raw))


@pytest.mark.parametrize(
    ("raw", "max_depth", "expected"),
    [
        ('{"a": 1, "a": 2}', 3, Parsed("unparseable", size=16, problem="duplicate key 'a'")),
        (
            '{"a": 1, "b": 2, "a": 3}',
            3,
            Parsed("unparseable", size=24, problem="duplicate key 'a'"),
        ),
        ('{"a": 1}', 0, Parsed("rejected", size=8, problem="nested deeper than 0 levels")),
    ],
)
def test_a_flat_object_with_a_repeated_key_or_past_the_depth_is_refused(
    raw: str, max_depth: int, expected: Parsed
) -> None:
    """A flat object's repeated key is named, and past a depth limit of 0 it is too deep."""
    assert parse(raw, max_depth=max_depth) == expected
