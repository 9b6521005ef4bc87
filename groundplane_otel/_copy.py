"""Copying values into and out of the registry, and refusing what cannot be a fact.

``copy_in`` deep-copies a value entering the registry in one pass and refuses NaN/±inf and
runaway nesting. ``copy_rows`` does the same for a table's rows with C-speed passes when the
rows are plain dicts of immutable atoms (the common case: a copy of each dict is then a deep
copy, and validation is a type check per column). ``copy_out`` deep-copies stored evidence on
its way out, without validating it again.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from itertools import chain
from typing import Any

__all__ = ["MAX_DEPTH", "NON_FINITE_HINT", "copy_in", "copy_out", "copy_rows", "flat_rows"]

MAX_DEPTH = 200
NON_FINITE_HINT = (
    "non-finite numbers are refused (drop the cell, or replace it with None, before recording)"
)
_ATOMS = frozenset({str, int, bool, type(None), bytes})
_FLAT = _ATOMS | {float}
_NUMBERS = frozenset({int, float, bool})


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
            raise _Refused(f"is {value!r}; {NON_FINITE_HINT}")
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
        raise _Refused(f"is {value!r}; {NON_FINITE_HINT}")
    if depth >= MAX_DEPTH:
        raise _Refused(f"is nested deeper than {MAX_DEPTH} levels")
    if isinstance(value, dict):
        for item in value.values():
            _scan(item, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            _scan(item, depth + 1)


# -- table rows ------------------------------------------------------------------------------


def copy_rows(
    rows: Sequence[Any], *, fact: str
) -> tuple[list[dict[Any, Any]], bool, tuple[Any, ...] | None]:
    """Deep-copy a table's rows in: ``(rows, flat, shared_columns)``.

    ``flat`` says every cell is an immutable atom (str, int, bool, None, bytes, finite float),
    so a shallow copy of a row is a deep one. ``shared_columns`` is the column order when every
    row holds exactly the same columns (None otherwise, or when unknown). A row that is not a
    mapping is a TypeError, a bad cell a ValueError naming the row, as ``copy_in`` says it.
    """
    if rows and set(map(type, rows)) == {dict}:
        copied: list[dict[Any, Any]] = list(map(dict, rows))
        flat, shared = flat_rows(copied)
        if flat:
            return copied, True, shared
    copied = []
    for position, row in enumerate(rows):
        if not isinstance(row, Mapping):
            raise TypeError(
                f"fact {fact!r}: row {position} must be a mapping, got {type(row).__name__}"
            )
        copied.append(copy_in(dict(row), fact=fact, where=f"row {position}"))
    return copied, False, None


def flat_rows(rows: Sequence[dict[Any, Any]]) -> tuple[bool, tuple[Any, ...] | None]:
    """Whether every cell of these dicts is an immutable, finite atom; plus the shared columns.

    Column by column when every row has the same columns (the cells' types first, the cells
    themselves only for a column holding floats), else over all cells at once. A NaN/±inf cell
    makes the rows not flat (the caller then takes the slow path, which names the bad cell).
    """
    if not rows:
        return True, None
    first = rows[0]
    if set(map(len, rows)) == {len(first)}:
        try:
            for column in first:
                kinds = {type(row[column]) for row in rows}
                if not kinds <= _ATOMS and not _atoms([row[column] for row in rows], kinds):
                    return False, tuple(first)
        except KeyError:  # same widths, different columns
            pass
        else:
            return True, tuple(first)
    return _atoms(list(chain.from_iterable(map(dict.values, rows)))), None


def _atoms(cells: list[Any], kinds: set[type] | None = None) -> bool:
    """Every cell is an atom, and every float among them is finite."""
    if kinds is None:
        kinds = set(map(type, cells))
    if kinds <= _ATOMS:
        return True
    if not kinds <= _FLAT:
        return False
    numbers = cells if kinds <= _NUMBERS else [cell for cell in cells if type(cell) is float]
    try:
        # NaN and ±inf survive any sum (inf - inf is NaN): a finite total proves them absent.
        if math.isfinite(sum(numbers)):
            return True
    except OverflowError:  # an int too large for a float: decide float by float
        pass
    return all(math.isfinite(cell) for cell in numbers if type(cell) is float)


# -- copying out -----------------------------------------------------------------------------


class _TooDeep(Exception):
    pass


def copy_out(value: Any) -> Any:
    """A deep copy of stored evidence: dicts, lists and tuples by a fast path, the rest by
    ``copy.deepcopy`` (also the fallback for structures nested deeper than MAX_DEPTH)."""
    try:
        return _out(value, 0)
    except _TooDeep:
        return copy.deepcopy(value)


def _out(value: Any, depth: int) -> Any:
    kind = type(value)
    if kind in _FLAT:
        return value
    if depth >= MAX_DEPTH:
        raise _TooDeep
    if kind is dict:
        return {key: _out(item, depth + 1) for key, item in value.items()}
    if kind is list:
        return [_out(item, depth + 1) for item in value]
    if kind is tuple:
        return tuple([_out(item, depth + 1) for item in value])
    return copy.deepcopy(value)
