"""A per-fact memo for what checks derive from recorded evidence (lookup tables, value indices).

A recorded Fact is frozen and its value is never mutated, so anything computed from it stays
valid for the fact's lifetime: build it once, on first use, instead of on every check. Facts are
slotted (no weak references, and not hashable since their values hold dicts), so the memo is
keyed by ``id(fact)`` and holds the fact itself next to what was derived from it — that pins the
id, so it can never be reused by another object while the entry lives. At most ``MAX_FACTS``
facts are kept, least recently used out first, so memory stays bounded when per-trace registries
come and go.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from groundplane_otel.facts import Fact

__all__ = ["MAX_FACTS", "clear", "derived"]

MAX_FACTS = 128

T = TypeVar("T")

_lock = threading.Lock()
_entries: OrderedDict[int, tuple[Fact, dict[Hashable, Any]]] = OrderedDict()


def derived(fact: Fact, key: Hashable, build: Callable[[], T]) -> T:
    """``build()`` computed once per (fact, key); later calls return the stored result.

    ``build`` runs outside the lock: two threads may both build on a first miss, and the first
    result stored wins (builds are pure, so either is correct).
    """
    with _lock:
        entry = _entries.get(id(fact))
        if entry is not None and entry[0] is fact:
            _entries.move_to_end(id(fact))
            if key in entry[1]:
                found: T = entry[1][key]
                return found
    value = build()
    with _lock:
        entry = _entries.get(id(fact))
        if entry is None or entry[0] is not fact:
            entry = (fact, {})
            _entries[id(fact)] = entry
            while len(_entries) > MAX_FACTS:
                _entries.popitem(last=False)
        stored: T = entry[1].setdefault(key, value)
        return stored


def clear() -> None:
    """Forget everything derived so far (tests and benchmarks use it to measure a cold start)."""
    with _lock:
        _entries.clear()
