"""Strict parsing of tool results and model outputs read from span attributes.

A payload is a JSON string (or bytes) or an already structured value. Parsing never raises into
the application: it returns a :class:`Parsed` whose ``status`` says what happened. ``orjson``
decodes and its indented re-encoding shows depth and repeated keys; whatever that leaves in
doubt is decided on the text's structure (its brackets and key colons), and the standard
library's decoder explains what orjson refused.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, NoReturn

import orjson

from groundplane_otel._frozen import draft_class, finish

__all__ = ["Decoded", "ParseStatus", "Parsed", "as_parsed", "decode_payload", "parse_payload"]

ParseStatus = Literal["ok", "truncated", "unparseable", "rejected"]
# Every byte but the JSON structure ([]{}:) and string delimiters, deleted by bytes.translate.
_NOT_STRUCTURE = bytes(byte for byte in range(256) if chr(byte) not in '[]{}":')
_STRING = re.compile(rb'"[^"]*"')
# Number literals seen from afar: digits -> 0, e/E -> e, "." kept, signs dropped, anything else
# a space.
_NUMBERS = bytes(
    ord("0")
    if chr(byte).isdigit() and byte < 128
    else ord("e")
    if chr(byte) in "eE"
    else ord(".")
    if byte == ord(".")
    else ord(" ")
    for byte in range(256)
)
_BIG_EXPONENT = b"e000"  # an exponent of 3+ digits
# An integer literal of 19+ digits, which orjson may turn into a float (it keeps 64-bit integers
# exact): in the ``_NUMBERS`` translation, 19 digits after a space (a fraction's or an exponent's
# digits follow "." or "e"), or at the start.
_LONG_DIGITS = b"0" * 19
_LONG_INTEGER = b" " + _LONG_DIGITS
_LONG_MANTISSA = b"0" * 210  # 210+ digits: overflows float even with a 2-digit exponent
_PAIR = re.compile(rb"\[\]|\{\}")
# "+" as a byte value: bytes ``in`` looks an int up at C speed, while a bytes needle is first
# tried as an integer (an exception raised and cleared).
_PLUS = ord("+")


@dataclass(frozen=True, slots=True)
class Parsed:
    """The outcome of parsing one payload; ``value`` is meaningful only when ``status == "ok"``.

    ``problem`` is a short, content-free explanation for logs and exception messages.
    """

    status: ParseStatus
    value: Any = None
    size: int = 0
    problem: str = ""

    @property
    def ok(self) -> bool:
        return self.status == "ok"


Decoded = tuple[Any, int]
"""A payload parsed: its value and its size in bytes (``decode_payload``)."""


_ParsedDraft = draft_class(Parsed)
_CONTAINERS = (dict, list, tuple)
_DICT_BYTES = sys.getsizeof({})  # the least a parsed object or array retains
_LIST_BYTES = sys.getsizeof([])
_CONTAINER_BYTES = max(_DICT_BYTES, _LIST_BYTES)  # each bracket costs at least a byte of text
_ATOMS = frozenset({str, int, bool, type(None)})


class _Refused(ValueError):
    pass


def _refuse_constant(token: str) -> NoReturn:
    raise _Refused(f"non-finite number {token} is refused")


_INFINITIES = frozenset({math.inf, -math.inf})


def _finite_float(token: str) -> float:
    value = float(token)
    if value in _INFINITIES:  # 1e999 parses to inf (NaN never reaches here: it is a constant)
        raise _Refused(f"non-finite number {token} is refused")
    return value


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Refused(f"duplicate key {key!r}")
            seen.add(key)
    return result


def _skeleton(data: bytes) -> bytes:
    """The structure of JSON text (UTF-8 bytes): its brackets and key colons, strings removed.

    Escaped backslashes and quotes are dropped, every byte but ``[]{}":`` is deleted
    (``bytes.translate``), then string literals (now quote-delimited runs of the structure
    characters they contained, mostly ``""``) are removed. Quotes alternate open/close, so
    deleting adjacent ``""`` pairs only drops empty strings or merges two strings into one:
    what was inside a string stays inside one. All C-speed operations.
    """
    if b"\\" in data:
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    skeleton = data.translate(None, _NOT_STRUCTURE).replace(b'""', b"")
    return _STRING.sub(b"", skeleton) if b'"' in skeleton else skeleton


def _depth(skeleton: bytes, limit: int) -> int:
    """Bracket nesting of a skeleton (or a bound on it within ``limit``), counted up to
    ``limit + 1`` without recursion. Free when the skeleton has no more opening brackets than
    the limit. Otherwise innermost pairs are peeled off with ``bytes.replace``, ``[]`` then
    ``{}`` per pass: a pass removes one or two levels, so ``2 * passes`` bounds the depth;
    only when that bound exceeds the limit is the depth counted exactly, one level per regex
    pass."""
    if skeleton.count(b"[") + skeleton.count(b"{") <= limit:
        return 0
    brackets = skeleton.replace(b":", b"")
    passes, rest = 0, brackets
    while rest and 2 * passes <= limit:
        peeled = rest.replace(b"[]", b"").replace(b"{}", b"")
        if peeled == rest:  # unbalanced: invalid JSON, which json.loads reports
            return 0
        rest, passes = peeled, passes + 1
    if not rest and 2 * passes <= limit:
        return 2 * passes  # a bound on the depth, within the limit
    depth = 0
    while brackets and depth <= limit:
        peeled = _PAIR.sub(b"", brackets)
        if peeled == brackets:
            break
        brackets, depth = peeled, depth + 1
    return depth


def _may_overflow(numbers: bytes) -> bool:
    """Could a number literal in this text (its ``_NUMBERS`` translation) overflow to infinity?
    (False positives only cost the slower parse that checks every float.)"""
    return _BIG_EXPONENT in numbers or _LONG_MANTISSA in numbers


class _PairCount:
    """An ``object_hook`` adding up the sizes of the objects json builds (duplicate keys
    collapse, so the total falls short of the key colons in the text)."""

    __slots__ = ("pairs",)

    def __init__(self) -> None:
        self.pairs = 0

    def __call__(self, obj: dict[str, Any]) -> dict[str, Any]:
        self.pairs += len(obj)
        return obj


def _structured_problem(value: Any, limit: int) -> str:
    """Walk a structured value iteratively: non-finite floats and nesting past ``limit``."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if kind is float and not math.isfinite(item):
            return f"non-finite number {item!r} is refused"
        if kind in _CONTAINERS or isinstance(item, (Mapping, list, tuple)):
            if depth >= limit:
                return f"nested deeper than {limit} levels"
            children = item.values() if isinstance(item, Mapping) else item
            stack.extend((child, depth + 1) for child in children if type(child) not in _ATOMS)
    return ""


def _thaw(value: Any) -> Any:
    """Span attributes turn lists into tuples; give checks the JSON shapes they expect."""
    if isinstance(value, Mapping):
        return {key: _thaw(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_thaw(item) for item in value]
    return value


def parse_payload(
    raw: Any,
    *,
    max_bytes: int,
    max_depth: int,
    length_limit: int | None = None,
    max_retained: int | None = None,
) -> Parsed:
    """Parse ``raw`` strictly: no NaN/Infinity, no duplicate keys, bounded size and depth.

    Text is parsed once by ``orjson`` and re-encoded indented (C speed). No line indented
    ``2 * max_depth`` spaces or more: the depth is within the limit (else it is counted on the
    text's structure). As many colons as the text: no key was lost, none repeated (a
    ``\\u003a`` escape decodes to a colon: then key colons are counted on both structures). No
    ``+`` (every float of 1e16 or more prints ``e+``): no integer orjson rounded (19+ digits).
    Refused or doubtful text goes to the standard library's decoder, whose hooks name the
    problem (the same statuses and messages either way).

    A string whose length equals ``length_limit`` (the span attribute length limit) and does
    not parse was cut by the SDK: its status is ``truncated``, never ``unparseable``.

    ``max_retained``: text whose objects and arrays alone would take more memory once parsed
    (counted on the structure, strings removed: each ``{}`` is at least a 64-byte dict) is
    ``rejected`` before parsing, so 8 MiB of ``[{},{},…]`` never becomes 200 MiB, even briefly.
    """
    return as_parsed(decode_payload(raw, max_bytes, max_depth, length_limit, max_retained))


def as_parsed(decoded: Decoded | Parsed) -> Parsed:
    """``decode_payload``'s answer as a ``Parsed``."""
    if isinstance(decoded, Parsed):
        return decoded
    parsed = _ParsedDraft()  # Parsed("ok", value, size), built cheaply (``_frozen``)
    parsed.status = "ok"
    parsed.value, parsed.size = decoded
    parsed.problem = ""
    return finish(parsed, Parsed)


def decode_payload(
    raw: Any,
    max_bytes: int,
    max_depth: int,
    length_limit: int | None = None,
    max_retained: int | None = None,
) -> Decoded | Parsed:
    """``parse_payload`` for a reader that looks at the outcome once: ``(value, size)`` when
    it is ``ok``, else the ``Parsed`` saying why (never an ok one: none is built for the usual
    case)."""
    if type(raw) is not str:
        if isinstance(raw, (bytes, bytearray)):
            try:
                raw = bytes(raw).decode("utf-8")
            except UnicodeDecodeError:
                return Parsed("unparseable", problem="payload bytes are not UTF-8")
        elif not isinstance(raw, str):
            problem = _structured_problem(raw, max_depth)
            if problem:
                status: ParseStatus = "rejected" if problem.startswith("nested") else "unparseable"
                return Parsed(status, problem=problem)
            return _thaw(raw), 0
    if raw.isascii():  # read in place (orjson takes a str; the counts below run on it)
        data = None  # encoded only where the text's structure is needed
        size = len(raw)
    elif len(raw) > max_bytes:  # refuse before encoding: no transient copy
        return Parsed(
            "rejected",
            size=len(raw),
            problem=f"{len(raw)} characters (at least as many bytes) exceed {max_bytes}",
        )
    else:
        data = raw.encode("utf-8", "surrogatepass")
        size = len(data)
    if size > max_bytes:
        return Parsed("rejected", size=size, problem=f"{size} bytes exceed {max_bytes}")
    skeleton: bytes | None = None  # computed only when the cheap checks leave a doubt
    if max_retained is not None and _CONTAINER_BYTES * size > max_retained:
        data = _utf8(raw, data)
        skeleton = _structure(data, max_depth)  # the floor may exceed the limit: depth first
        if skeleton is None:
            return _too_deep(size, max_depth)
        floor = skeleton.count(b"{") * _DICT_BYTES + skeleton.count(b"[") * _LIST_BYTES
        if floor > max_retained:
            return Parsed(
                "rejected",
                size=size,
                problem=f"parsed, it would retain at least {floor} bytes (limit {max_retained})",
            )
    try:
        value = orjson.loads(raw if data is None else data)
        shown = orjson.dumps(value, option=orjson.OPT_INDENT_2)
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        return _decode_strictly(raw, _utf8(raw, data), skeleton, size, max_depth, length_limit)
    if skeleton is None and (
        max_depth < 1 or (len(shown) >= max_depth * max_depth and _indented(shown, max_depth))
    ):
        data = _utf8(raw, data)
        skeleton = _structure(data, max_depth)  # as deep as the limit, maybe deeper: count it
        if skeleton is None:
            return _too_deep(size, max_depth)
    if _PLUS in shown:
        data = _utf8(raw, data)
        if _long_integer(data.translate(_NUMBERS, b"+-")):
            return _decode_strictly(raw, data, skeleton, size, max_depth, length_limit)
    if "\\" in raw and "\\u003" in raw:  # an escaped colon (a one-byte test first)
        data = _utf8(raw, data)
        structure = _skeleton(data) if skeleton is None else skeleton
        unique = structure.count(b":") == _skeleton(shown).count(b":")
    else:
        unique = raw.count(":") == shown.count(b":")
    if unique:
        return value, size
    # A repeated key: the value lost the first one, maybe a deeper one than the value shows.
    return _decode_strictly(raw, _utf8(raw, data), skeleton, size, max_depth, length_limit)


def _indented(shown: bytes, max_depth: int) -> bool:
    """Does a line of ``orjson``'s indented output hold a value ``max_depth`` levels down (a
    newline and ``2 * max_depth`` spaces: raw newlines only appear as its formatting, strings
    escape theirs)? Such a line follows one line per enclosing level, each at least its
    indent, a bracket and a newline: the output then has at least ``max_depth ** 2`` bytes,
    which the caller checks first. (``find``: bytes ``in`` first tries a needle as an integer.)"""
    needle = _INDENTS.get(max_depth)
    if needle is None:
        needle = b"\n" + b" " * (2 * max_depth)
        if len(_INDENTS) < _KEPT_INDENTS:  # a policy's limit or two
            _INDENTS[max_depth] = needle
    return shown.find(needle) >= 0


_INDENTS: dict[int, bytes] = {}
_KEPT_INDENTS = 8


def _utf8(raw: str, data: bytes | None) -> bytes:
    """The text's bytes (``data``, or ``raw`` encoded: ASCII)."""
    return raw.encode("ascii") if data is None else data


def _structure(data: bytes, max_depth: int) -> bytes | None:
    """The text's structure (``_skeleton``), or None when it nests deeper than ``max_depth``."""
    skeleton = _skeleton(data)
    return None if _depth(skeleton, max_depth) > max_depth else skeleton


def _too_deep(size: int, max_depth: int) -> Parsed:
    return Parsed("rejected", size=size, problem=f"nested deeper than {max_depth} levels")


def _long_integer(numbers: bytes) -> bool:
    """Does the text (its ``_NUMBERS`` translation) hold an integer literal of 19+ digits?"""
    return _LONG_INTEGER in numbers or numbers.startswith(_LONG_DIGITS)


def _decode_strictly(
    raw: str,
    data: bytes,
    skeleton: bytes | None,
    size: int,
    max_depth: int,
    length_limit: int | None,
) -> Decoded | Parsed:
    """The standard library's decoder, with hooks that name what is refused: text orjson
    refused (invalid, NaN, infinity, a lone surrogate, nesting past its limit), may have rounded
    (an integer past 64 bits) or collapsed (a repeated key). ``skeleton``: the text's structure,
    already checked for depth; if None, it is computed and checked first."""
    if skeleton is None:
        skeleton = _structure(data, max_depth)
        if skeleton is None:
            return _too_deep(size, max_depth)
    counted = _PairCount()
    try:
        value = json.JSONDecoder(
            object_hook=counted,
            parse_constant=_refuse_constant,
            parse_float=_finite_float if _may_overflow(data.translate(_NUMBERS, b"+-")) else None,
        ).decode(raw)
        if counted.pairs != skeleton.count(b":"):  # a key repeated: find it, name it
            value = json.loads(
                raw,
                parse_constant=_refuse_constant,
                parse_float=_finite_float,
                object_pairs_hook=_no_duplicates,
            )
    except _Refused as refused:
        return Parsed("unparseable", size=size, problem=str(refused))
    except (ValueError, RecursionError) as exc:
        if length_limit is not None and len(raw) == length_limit:
            return Parsed("truncated", size=size, problem=f"cut at {length_limit} characters")
        return Parsed("unparseable", size=size, problem=f"invalid JSON: {type(exc).__name__}")
    return value, size
