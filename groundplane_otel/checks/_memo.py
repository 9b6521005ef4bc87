"""What checks derive from recorded evidence (lookup tables, value indices, results), kept on
the evidence itself.

A recorded value (Table, Ranking, Domain) is frozen and never mutated, so anything computed
from it stays valid for its lifetime: build it once, on first use, instead of on every check.
The result lives in the value's private ``_derived`` dict, so it is freed together with the
fact: a per-trace registry that is dropped takes its derived data with it, and nothing global
pins a fact in memory.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import TypeVar

from groundplane_otel.facts import Domain, Ranking, Table

__all__ = ["derived"]

T = TypeVar("T")
_ABSENT = object()


def derived(value: Table | Ranking | Domain, key: Hashable, build: Callable[[], T]) -> T:
    """``build()`` computed once per (value, key); later calls return the stored result.

    Two threads may both build on a first miss; the first result stored wins (builds are pure,
    so either is correct, and ``dict.setdefault`` is atomic).
    """
    cache = value._derived
    found: T = cache.get(key, _ABSENT)
    if found is _ABSENT:
        found = cache.setdefault(key, build())
    return found
