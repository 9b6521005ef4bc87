"""The memory a stored fact retains, estimated by a bounded, sampling walk.

``max_total_bytes`` and ``max_trace_bytes`` bound what the process *holds*: the parsed objects
(8 MiB of ``[{},{},…]`` JSON text are ~200 MiB of dicts), the fact's own indices, and what
checks later derive and cache on it (``_derived``). The walk adds ``sys.getsizeof`` of every
object it visits, once per object (shared keys, small ints, ``None``/``True``/``False`` cost
nothing); a container with more than ``SAMPLE`` children is measured on ``SAMPLE`` of them,
evenly spaced, scaled to all of them. Past ``BUDGET`` visits every container is measured on one
child. So the cost is bounded (a few thousand visits, whatever the size of the fact) and the
estimate stays within a small factor of what ``tracemalloc`` sees for rows, many tiny objects
and long strings (pinned in tests/otel/test_memory_accounting.py; docs/measured.md, "Memory
accounting").
"""

from __future__ import annotations

import sys
from collections.abc import Collection, Iterable, Sequence
from itertools import chain, islice
from typing import Any

__all__ = ["BUDGET", "BYTES_PER_TEXT_BYTE", "SAMPLE", "derived_size", "retained_size", "text_bound"]

SAMPLE = 8
BUDGET = 4096
# What a value parsed from JSON text retains, at most, per byte of the text: nested one-item
# arrays, the densest shape, take 64 bytes (orjson) or 88 (the standard decoder's
# over-allocated list) per 2 bytes of text ("[" and "]"); a dict per "{}" 64, per '{"a":}' 184.
# Measured on the densest shapes of every fact kind, and of the caches checks build on one
# (tests/otel/test_memory_accounting.py): at most 30x, caches at most 20x each.
BYTES_PER_TEXT_BYTE = 48
_BOUND_BASE = 4096  # the fact object, its indices' fixed parts
_FREE = (type(None), bool)
_ATOMS = frozenset({str, int, float, bytes, complex})
_getsizeof = sys.getsizeof
_refcount = sys.getrefcount
_EXCLUSIVE = 3


_SLOTS: dict[type, tuple[tuple[Any, type], ...]] = {}  # a class -> its slots' (getter, owner)


def _slot_getters(kind: type) -> tuple[tuple[Any, type], ...]:
    getters = _SLOTS.get(kind)
    if getters is None:
        getters = tuple(
            (getter, cls)
            for cls in kind.__mro__
            for name in cls.__dict__.get("__slots__", ())
            if (getter := getattr(cls.__dict__.get(name), "__get__", None)) is not None
        )
        if len(_SLOTS) < 256:  # the slotted classes facts are made of: few
            _SLOTS[kind] = getters
    return getters


def _slot_values(value: Any) -> list[Any]:
    """The set slots of an object of a slotted class (a slot never set is skipped: reading it
    would run a class's ``__getattr__``, e.g. Ranking's lazy ``items``)."""
    found = []
    for getter, cls in _slot_getters(type(value)):
        try:
            found.append(getter(value, cls))
        except AttributeError:
            continue
    return found


def _children(value: Any, size: int) -> tuple[Iterable[Any], float, int]:
    """Up to about ``size`` of the objects ``value`` references (none for an atom), the factor
    that scales their sizes to all of them, and the references to each that the iterable
    itself adds (1 for a copy, 0 when it iterates ``value``)."""
    kind = type(value)
    if kind in _ATOMS:
        return (), 1.0, 0
    if isinstance(value, dict):
        if len(value) <= size:
            return chain(value, value.values()), 1.0, 0
        keys, scale = _spaced(value, size)
        return [item for key in keys for item in (key, value[key])], scale, 1
    if isinstance(value, (list, tuple)):
        children, scale = _sample(value, size)
        return children, scale, 0 if children is value else 1
    if isinstance(value, (set, frozenset)):
        if len(value) <= size:
            return value, 1.0, 0
        members, scale = _spaced(value, size)
        return members, scale, 1
    found = _slot_values(value) if hasattr(kind, "__slots__") else []
    state = getattr(value, "__dict__", None)
    if isinstance(state, dict):
        found.append(state)
    return found, 1.0, 1


def _spaced(items: Collection[Any], size: int) -> tuple[list[Any], float]:
    """``size`` evenly spaced members of a dict or set (iterated at C speed, never copied)."""
    count = len(items)
    if count <= size:
        return list(items), 1.0
    step = count // size
    chosen = list(islice(items, 0, step * size, step))
    return chosen, count / len(chosen)


def _sample(children: Sequence[Any], size: int) -> tuple[Sequence[Any], float]:
    """Every child, or ``size`` of them evenly spaced (the positions ``_spaced`` picks, so a
    sequence and a mapping in the same order sample the same objects) and the scale."""
    count = len(children)
    if count <= size:
        return children, 1.0
    step = count // size
    return children[0 : step * size : step], count / size


def retained_size(value: Any, *, skip: Iterable[Any] = (), exclusive: bool = False) -> int:
    """Bytes ``value`` keeps alive (estimated; objects in ``skip`` are not counted). With
    ``exclusive``, a string or number is counted only when ``value`` is all that holds it
    (its reference count: one container), i.e. not a cell shared with something else.

    Containers go on a stack; their strings and numbers are counted as they are met (most of
    what a fact holds), without a stack entry each."""
    seen = set(map(id, skip))
    total = 0.0
    visits = 0
    stack: list[tuple[Any, float]] = [(value, 1.0)]
    while stack:
        item, weight = stack.pop()
        if isinstance(item, _FREE) or id(item) in seen:
            continue
        kind = type(item)
        if kind is int and -5 <= item <= 256:  # cached by CPython: shared
            continue
        # One container, ``item`` and the call's argument: held by nothing else.
        if exclusive and kind in _ATOMS and _refcount(item) > _EXCLUSIVE:
            continue
        seen.add(id(item))
        visits += 1
        total += weight * _getsizeof(item)
        children, scale, copied = _children(item, SAMPLE if visits < BUDGET else 1)
        weight *= scale
        held = _EXCLUSIVE + copied  # a child met in a copy (a sample) has one more reference
        for child in children:
            kind = type(child)
            if kind not in _ATOMS:
                if kind not in _FREE:
                    stack.append((child, weight))
                continue
            if kind is int and -5 <= child <= 256:
                continue
            if exclusive and _refcount(child) > held:
                continue
            if id(child) in seen:
                continue
            seen.add(id(child))
            visits += 1
            total += weight * _getsizeof(child)
        del children  # a sampled copy must not hold its items while they are counted
    return int(total)


def text_bound(text_bytes: int) -> int:
    """An upper bound of the bytes a fact parsed from ``text_bytes`` of JSON text retains (and
    of each result a check caches on it): charged until a limit binds (the store measures
    then), so a fact costs no walk while the limits are far."""
    return _BOUND_BASE + BYTES_PER_TEXT_BYTE * text_bytes


def derived_size(value: Any) -> int:
    """Bytes of what checks cached on a fact value (its ``_derived`` dict), not counting the
    value's own members a cached result shares (a table's key index, its rows), nor the strings
    and numbers it shares with the fact's cells (a ranking of a column holds the very cells;
    an index of case-folded names holds new strings, counted)."""
    derived = getattr(value, "_derived", None)
    if not isinstance(derived, dict) or not derived:
        return 0
    own = [item for item in _slot_values(value) if item is not derived]
    rows = getattr(value, "rows", None)
    shared: list[Any] = [value, *own, *(rows if isinstance(rows, tuple) else ())]
    return retained_size(derived, skip=shared, exclusive=True)
