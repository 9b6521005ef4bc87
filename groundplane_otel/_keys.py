"""Type-strict key identity: 101 != "101", 1 != True != 1.0, tuples compared element-wise;
and structural equality of values (``value_equal``: numbers by value, everything else typed).

A plain ``str`` is its own token; every other value becomes a tuple tagged with its type. A str
never equals a tuple, so an untagged str cannot collide with a tagged token, and the commonest
key (a name) costs no allocation.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

__all__ = ["strict_equal", "strict_key", "value_equal"]


def strict_key(value: Any) -> Hashable:
    """A hashable token equal for two values only when they are equal *and* of the same type.

    A plain str is returned as is (a str subclass is tagged like any other type).
    """
    kind = type(value)
    if kind is str:
        token: str = value
        return token
    if isinstance(value, tuple):
        return (tuple, tuple(strict_key(item) for item in value))
    if isinstance(value, frozenset):
        return (frozenset, frozenset(strict_key(item) for item in value))
    return (kind, value)


def strict_equal(left: Any, right: Any) -> bool:
    """Structural equality that never conflates bools, ints and floats, lists and tuples.

    Mappings compare their keys type-strictly too; NaN never equals anything.
    """
    return _equal(left, right, False)


def value_equal(left: Any, right: Any) -> bool:
    """``strict_equal``, except that numbers compare by value: ``3 == 3.0``, ``[1, 2.0] ==
    [1, 2]``. A bool is still never a number, a list never a tuple, and mapping keys stay
    type-strict (they are keys); NaN never equals anything.
    """
    return _equal(left, right, True)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _equal(left: Any, right: Any, numbers_by_value: bool) -> bool:
    if numbers_by_value and _is_number(left) and _is_number(right):
        return bool(left == right)  # exact by value; NaN equals nothing
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        if len(left) != len(right):
            return False
        right_items = {strict_key(k): v for k, v in right.items()}
        for key, value in left.items():
            token = strict_key(key)
            if token not in right_items or not _equal(value, right_items[token], numbers_by_value):
                return False
        return True
    if isinstance(left, (list, tuple)):
        return len(left) == len(right) and all(
            _equal(a, b, numbers_by_value) for a, b in zip(left, right, strict=True)
        )
    if isinstance(left, float) and (math.isnan(left) or math.isnan(right)):
        return False
    return bool(left == right)
