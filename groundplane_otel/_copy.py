"""One pass that deep-copies a value entering the registry and refuses what cannot be a fact."""

from __future__ import annotations

import copy
import math
from typing import Any

__all__ = ["MAX_DEPTH", "copy_in"]

MAX_DEPTH = 200
_ATOMS = frozenset({str, int, bool, type(None), bytes})


class _Refused(Exception):
    def __init__(self, problem: str) -> None:
        self.problem = problem
        self.path: list[str] = []


def copy_in(value: Any, *, fact: str, where: str = "value") -> Any:
    """Deep-copy ``value``; a NaN/±inf anywhere or nesting deeper than MAX_DEPTH is a ValueError.

    JSON-shaped data (dict, list, tuple, str, numbers) is copied by a fast path; anything else
    goes through ``copy.deepcopy`` and is then scanned.
    """
    try:
        return _copy(value, 0)
    except _Refused as refused:
        path = where + "".join(reversed(refused.path))
        raise ValueError(f"fact {fact!r}: {path} {refused.problem}") from None


def _copy(value: Any, depth: int) -> Any:
    kind = type(value)
    if kind in _ATOMS:
        return value
    if kind is float:
        if not math.isfinite(value):
            raise _Refused(f"is {value!r}; non-finite numbers are refused")
        return value
    if depth >= MAX_DEPTH:
        raise _Refused(f"is nested deeper than {MAX_DEPTH} levels")
    if kind is dict:
        out: dict[Any, Any] = {}
        for key, item in value.items():
            try:
                out[key] = _copy(item, depth + 1)
            except _Refused as refused:
                refused.path.append(f"[{key!r}]")
                raise
        return out
    if kind is list or kind is tuple:
        items = []
        for position, item in enumerate(value):
            try:
                items.append(_copy(item, depth + 1))
            except _Refused as refused:
                refused.path.append(f"[{position}]")
                raise
        return items if kind is list else tuple(items)
    copied = copy.deepcopy(value)
    _scan(copied, depth)
    return copied


def _scan(value: Any, depth: int) -> None:
    """Refuse non-finite floats inside an object that took the slow ``deepcopy`` path."""
    if isinstance(value, float) and not math.isfinite(value):
        raise _Refused(f"is {value!r}; non-finite numbers are refused")
    if depth >= MAX_DEPTH:
        raise _Refused(f"is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        for item in value.values():
            _scan(item, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _scan(item, depth + 1)
