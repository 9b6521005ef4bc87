"""The arithmetic of aggregate_reconciles: a column's cells read and validated once, and the
exact sum, mean, min, max, median or weighted mean over them.

Every cell reads as the decimal it prints as (``_numbers.printed``, the semantics of
``numbers_recorded``): two-decimal money amounts add up as a person adds them, so ``491551.22``
is their total, not its binary neighbour ``491551.22000000003``. Results are exact
``Fraction``s; each is kept on the cells it was computed from, so a repeated check over the same
(memoised) cells computes nothing.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from groundplane_otel._arithmetic import is_number
from groundplane_otel.checks._aggregate_filter import Rows
from groundplane_otel.checks._numbers.printed import printed, printed_dot, printed_sum
from groundplane_otel.facts import Table

__all__ = ["Cells", "compute", "exact_result", "plural", "read_cells", "weighted_mean"]


def plural(count: int) -> str:
    return f"{count} row" if count == 1 else f"{count} rows"


@dataclass(frozen=True, slots=True, eq=False)
class Cells:
    """One column read over a set of rows, validated once: what an aggregate needs of it."""

    rows: int
    lacking: int = 0
    first_lacking: Any = None
    bad: tuple[Any, Any] | None = None  # (row key, cell) of the first cell that is no number
    values: Sequence[int | float] = ()
    kinds: set[type] | None = None  # the values' types, when every one is a plain int/float
    results: dict[Hashable, Fraction] = field(default_factory=dict)  # op -> exact result


def read_cells(rows: Rows, column: str, key: str) -> Cells:
    """The column's cells; C-speed passes when every cell is a plain int or float."""
    try:
        values = [row[column] for row in rows]
    except KeyError:
        lacking = [row for row in rows if column not in row]
        return Cells(len(rows), len(lacking), lacking[0][key])
    kinds = set(map(type, values))
    if kinds <= {int}:
        return Cells(len(rows), values=values, kinds=kinds)
    if kinds <= {int, float}:
        floats = values if kinds == {float} else [v for v in values if type(v) is float]
        if all(map(math.isfinite, floats)):  # the registry refuses NaN/inf; stay defensive
            return Cells(len(rows), values=values, kinds=kinds)
    for row, value in zip(rows, values, strict=True):
        if not is_number(value):
            return Cells(len(rows), bad=(row[key], value))
    return Cells(len(rows), values=values)


def exact_result(
    fact: str,
    op: str,
    weight_column: str | None,
    columns: Sequence[str],
    cells: Sequence[Cells],
    table: Table,
    rows: Rows,
    strict: bool,
) -> Fraction | None:
    """The exact non-count aggregate over complete columns (the value, then any weights).

    When ``strict`` a bad cell or weight is a ValueError; otherwise either just gives None.
    """
    for column, read in zip(columns, cells, strict=True):
        if read.bad is not None:
            if not strict:
                return None
            key, value = read.bad
            raise ValueError(
                f"fact {fact!r}: column {column!r}, row {key!r}: expected a finite int "
                f"or float, got {value!r} ({type(value).__name__}); an aggregate reads every "
                "selected cell as a number"
            )
    values = cells[0]
    memo_key: Hashable = op if len(cells) == 1 else ("weighted", weight_column)
    found = values.results.get(memo_key)
    if found is None:
        if len(cells) == 2:
            found = weighted_mean(fact, weight_column, table, rows, values, cells[1], strict)
            if found is None:
                return None
        else:
            found = compute(op, values.values, values.kinds)
        values.results[memo_key] = found
    return found


def weighted_mean(
    fact: str,
    weight_column: str | None,
    table: Table,
    rows: Rows,
    values: Cells,
    weights: Cells,
    strict: bool,
) -> Fraction | None:
    if min(weights.values) < 0:
        if not strict:
            return None
        position, weight = next((i, w) for i, w in enumerate(weights.values) if w < 0)
        raise ValueError(
            f"fact {fact!r}: column {weight_column!r}, row "
            f"{rows[position][table.key]!r}: a weight must be >= 0, got {weight!r}"
        )
    total = printed_sum(weights.values)
    if not total:
        if not strict:
            return None
        raise ValueError(
            f"fact {fact!r}: the weights in column {weight_column!r} sum to 0 over "
            f"the {plural(len(rows))} selected; a weighted mean is undefined"
        )
    return printed_dot(values.values, weights.values) / total


def compute(op: str, values: Sequence[int | float], kinds: set[type] | None = None) -> Fraction:
    """sum, mean, min, max or median of validated numbers, exactly, as the decimals they print
    as (reading a float as its shortest repr keeps the order: min, max and median pick the same
    cells either way)."""
    if op == "sum":
        return printed_sum(values, kinds)
    if op == "mean":
        return printed_sum(values, kinds) / len(values)
    if op == "min":
        return printed(min(values))  # int/float comparisons are exact in Python
    if op == "max":
        return printed(max(values))
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return printed(ordered[middle])
    return (printed(ordered[middle - 1]) + printed(ordered[middle])) / 2
