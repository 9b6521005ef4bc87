"""The ``where=`` filter of aggregate_reconciles, applied: which rows it selects, and how it reads.

A mapping filter compares type-strictly (``True`` never selects a row holding ``1``; ``1.0``
never selects ``1``), and a row lacking one of its columns is not selected. A callable is called
with a read-only view of each row and must return a bool.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from itertools import compress
from types import MappingProxyType
from typing import Any

from groundplane_otel._keys import strict_equal
from groundplane_otel.checks._aggregate_args import BUILDER, Filter, RowPredicate
from groundplane_otel.facts import Table

__all__ = ["ABSENT", "Rows", "filter_text", "flags", "loose_hint", "predicate_name", "split_rows"]

Rows = Sequence[dict[str, Any]]
ABSENT = object()
# For these types, ``type(a) is type(b) and a == b`` is exactly ``strict_equal(a, b)``.
_SCALARS = frozenset({str, int, float, bool, bytes, type(None)})


def flags(rows: Rows, where: tuple[tuple[str, Any], ...]) -> list[bool]:
    """Which rows a mapping filter selects, type-strictly, one column at a time."""
    combined: list[bool] = [True] * len(rows)
    for column, value in where:
        held = [row.get(column, ABSENT) for row in rows]
        if type(value) in _SCALARS:
            kind = type(value)
            matched = [type(cell) is kind and cell == value for cell in held]
        else:
            matched = [cell is not ABSENT and strict_equal(cell, value) for cell in held]
        combined = list(map(operator.and_, combined, matched))
    return combined


def split_rows(table: Table, where: Filter, fact: str) -> tuple[Rows, Rows]:
    """(selected, rest): the rows the filter selects and the complement, in table order."""
    if isinstance(where, tuple):
        selects = flags(table.rows, where)
    else:
        selects = [_predicate(where, table, row, fact) for row in table.rows]
    selected = tuple(compress(table.rows, selects))
    rest = tuple(compress(table.rows, [not flag for flag in selects]))
    return selected, rest


def _predicate(where: RowPredicate | None, table: Table, row: dict[str, Any], fact: str) -> bool:
    assert callable(where)
    result = where(MappingProxyType(row))
    if not isinstance(result, bool):
        raise TypeError(
            f"{BUILDER}: the where predicate {predicate_name(where)} must return a bool, "
            f"got {result!r} for row {row[table.key]!r} of fact {fact!r}"
        )
    return result


def filter_text(where: Filter) -> str:
    if isinstance(where, tuple):
        return " and ".join(f"{column}={value!r}" for column, value in where)
    return f"{predicate_name(where)}(row)"


def predicate_name(where: Filter) -> str:
    return str(getattr(where, "__name__", repr(where)))


def loose_hint(where: Filter, table: Table) -> str:
    """Point at a value the type-strict filter refused although ``==`` would accept it."""
    if not isinstance(where, tuple):
        return ""
    for row in table.rows:
        for column, value in where:
            held = row.get(column, ABSENT)
            if (held == value) is True and not strict_equal(held, value):
                return (
                    f" (row {row[table.key]!r} holds {held!r} ({type(held).__name__}) in "
                    f"{column!r}, which the type-strict filter does not equate with "
                    f"{value!r} ({type(value).__name__}))"
                )
    return ""
