"""Type-strict key identity: 101 != "101", 1 != True != 1.0, tuples compared element-wise.

A plain ``str`` is its own token; every other value becomes a tuple tagged with its type. A str
never equals a tuple, so an untagged str cannot collide with a tagged token, and the commonest
key (a name) costs no allocation.
"""

from __future__ import annotations

import math
from collections.abc import Hashable
from typing import Any

__all__ = ["strict_equal", "strict_key"]


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
    if type(left) is not type(right):
        return False
    if isinstance(left, dict):
        if len(left) != len(right):
            return False
        right_items = {strict_key(k): v for k, v in right.items()}
        for key, value in left.items():
            token = strict_key(key)
            if token not in right_items or not strict_equal(value, right_items[token]):
                return False
        return True
    if isinstance(left, (list, tuple)):
        return len(left) == len(right) and all(
            strict_equal(a, b) for a, b in zip(left, right, strict=True)
        )
    if isinstance(left, float) and (math.isnan(left) or math.isnan(right)):
        return False
    return bool(left == right)
