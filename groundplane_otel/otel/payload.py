"""Strict parsing of tool results and model outputs read from span attributes.

A payload is a JSON string (or bytes) or an already structured value. Parsing never raises into
the application: it returns a :class:`Parsed` whose ``status`` says what happened.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, NoReturn

__all__ = ["Parsed", "ParseStatus", "parse_payload"]

ParseStatus = Literal["ok", "truncated", "unparseable", "rejected"]
_KEEP_BRACKETS = str.maketrans("", "", "".join(c for c in map(chr, range(128)) if c not in '[]{}"'))
_STRING = re.compile(r'"[^"]*"')
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_PAIR = re.compile(r"\[\]|\{\}")


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


_CONTAINERS = (dict, list, tuple)
_ATOMS = frozenset({str, int, bool, type(None)})


class _Refused(ValueError):
    pass


def _refuse_constant(token: str) -> NoReturn:
    raise _Refused(f"non-finite number {token} is refused")


def _finite_float(token: str) -> float:
    value = float(token)
    if not math.isfinite(value):  # 1e999 parses to inf
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


def _text_depth(text: str, limit: int) -> int:
    """Bracket nesting of JSON text, counted up to ``limit + 1`` without recursion.

    Free when the text has no more opening brackets than the limit. Otherwise escaped
    backslashes and quotes are dropped, every ASCII character but brackets and quotes is
    translated away, string literals (now quote-delimited runs) are removed, and innermost
    ``[]``/``{}`` pairs are peeled off one level per pass: all C-speed string operations.
    """
    if text.count("[") + text.count("{") <= limit:
        return 0
    skeleton = text.replace("\\\\", "").replace('\\"', "").translate(_KEEP_BRACKETS)
    brackets = _NOT_BRACKET.sub("", _STRING.sub("", skeleton))
    depth = 0
    while brackets and depth <= limit:
        peeled = _PAIR.sub("", brackets)
        if peeled == brackets:  # unbalanced: invalid JSON, which json.loads reports
            break
        brackets, depth = peeled, depth + 1
    return depth


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
    raw: Any, *, max_bytes: int, max_depth: int, length_limit: int | None = None
) -> Parsed:
    """Parse ``raw`` strictly: no NaN/Infinity, no duplicate keys, bounded size and depth.

    A string whose length equals ``length_limit`` (the span attribute length limit) and does
    not parse was cut by the SDK: its status is ``truncated``, never ``unparseable``.
    """
    if isinstance(raw, (bytes, bytearray)):
        try:
            raw = bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            return Parsed("unparseable", problem="payload bytes are not UTF-8")
    if not isinstance(raw, str):
        problem = _structured_problem(raw, max_depth)
        if problem:
            status: ParseStatus = "rejected" if problem.startswith("nested") else "unparseable"
            return Parsed(status, problem=problem)
        return Parsed("ok", _thaw(raw))
    size = len(raw.encode("utf-8")) if not raw.isascii() else len(raw)
    if size > max_bytes:
        return Parsed("rejected", size=size, problem=f"{size} bytes exceed {max_bytes}")
    if _text_depth(raw, max_depth) > max_depth:
        return Parsed("rejected", size=size, problem=f"nested deeper than {max_depth} levels")
    try:
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
    return Parsed("ok", value, size=size)
