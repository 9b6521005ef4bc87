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
_BRACKETS = re.compile(r'[\[\]{}"]')


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


class _Refused(ValueError):
    pass


def _refuse_constant(token: str) -> NoReturn:
    raise _Refused(f"non-finite number {token} is refused")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _Refused(f"duplicate key {key!r}")
        result[key] = value
    return result


def _text_depth(text: str, limit: int) -> int:
    """Maximum bracket nesting of JSON text, stopping early once past ``limit``.

    Free when the text cannot be that deep (no more opening brackets than the limit).
    Escaped backslashes and quotes are removed first, so every ``"`` left opens or closes a
    string and brackets inside strings are skipped.
    """
    if text.count("[") + text.count("{") <= limit:
        return 0
    text = text.replace("\\\\", "").replace('\\"', "")
    depth = deepest = 0
    in_string = False
    for match in _BRACKETS.finditer(text):
        char = match.group()
        if char == '"':
            in_string = not in_string
        elif in_string:
            continue
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > limit:
                return deepest
        else:
            depth -= 1
    return deepest


def _structured_problem(value: Any, limit: int) -> str:
    """Walk a structured value iteratively: non-finite floats and nesting past ``limit``."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return f"non-finite number {item!r} is refused"
        if isinstance(item, (Mapping, list, tuple)):
            if depth >= limit:
                return f"nested deeper than {limit} levels"
            children = item.values() if isinstance(item, Mapping) else item
            stack.extend((child, depth + 1) for child in children)
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
        value = json.loads(raw, parse_constant=_refuse_constant, object_pairs_hook=_no_duplicates)
    except _Refused as refused:
        return Parsed("unparseable", size=size, problem=str(refused))
    except (ValueError, RecursionError) as exc:
        if length_limit is not None and len(raw) == length_limit:
            return Parsed("truncated", size=size, problem=f"cut at {length_limit} characters")
        return Parsed("unparseable", size=size, problem=f"invalid JSON: {type(exc).__name__}")
    problem = _structured_problem(value, max_depth)  # huge ints/floats like 1e999 -> inf
    if problem:
        return Parsed("unparseable", size=size, problem=problem)
    return Parsed("ok", value, size=size)
