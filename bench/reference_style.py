"""A reference-style baseline: the same registry and six checks, read the way groundplane reads.

groundplane (the reference) hands out a deep copy on every read, and its checks read through the
same path: each check deep-copies the whole fact, then recomputes what it needs from the copy (a
ranking sorted per call, a key lookup, a sum). This module reproduces that cost structure so the
speedup of groundplane_otel is measured side by side, in the same run, on the same machine —
not only against the figures quoted in issue 2 (4.0 / 400 ms record-then-check, 3.5 / 345 ms
repeated, at 100 / 10,000 rows).

Where the reference's exact implementation is unknown, the cheaper choice is taken (``math.fsum``
for float sums, a set for membership, a dict for the row index, no copy handed back by
``record_table``), so the baseline errs on the fast side and the ratios err low. Only the
passing path is modelled faithfully; a failure raises a bare ``UnsupportedClaim`` without the
reference's diagnosis.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from fractions import Fraction
from typing import Any

from groundplane_otel.errors import UnsupportedClaim

__all__ = ["RefRegistry", "RefTable", "ref_checks"]

RefCheck = Callable[["RefRegistry", Mapping[str, Any]], None]


def _is_number(value: object) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not (isinstance(value, float) and not math.isfinite(value))


def _matches(claimed: Any, computed: int | float | Fraction) -> bool:
    """Exact by default, as the reference: rationals when an int is on either side."""
    if not _is_number(claimed):
        return False
    if isinstance(claimed, float) and isinstance(computed, float):
        return math.isclose(claimed, computed, rel_tol=0.0, abs_tol=0.0)
    return Fraction(claimed) == Fraction(computed)


class RefRanking:
    """Names best-first with their scores; built (and sorted) from a table on every check."""

    def __init__(self, key: str, items: list[tuple[Hashable, int | float]]) -> None:
        self.key = key
        self.items = items
        self.names = [name for name, _ in items]

    def ties(self) -> list[Hashable]:
        top = self.items[0][1]
        return [name for name, score in self.items if score == top]


class RefTable:
    """Rows keyed by one column; deep-copied whole whenever anyone reads it."""

    def __init__(self, key: str, rows: list[dict[str, Any]], columns: list[str]) -> None:
        self.key = key
        self.rows = rows
        self.columns = columns
        seen: set[tuple[type, Any]] = set()
        for position, row in enumerate(rows):
            if key not in row:
                raise ValueError(f"row {position} has no key column {key!r}")
            token = (type(row[key]), row[key])
            if token in seen:
                raise ValueError(f"duplicate key {row[key]!r}")
            seen.add(token)

    @property
    def keys(self) -> list[Hashable]:
        return [row[self.key] for row in self.rows]

    def row(self, key: Hashable) -> dict[str, Any]:
        index = {(type(row[self.key]), row[self.key]): row for row in self.rows}
        return index[(type(key), key)]

    def to_ranking(self, column: str, higher_is_better: bool = True) -> RefRanking:
        scored: list[tuple[Hashable, int | float]] = []
        for row in self.rows:
            value = row[column]
            if not _is_number(value):
                raise ValueError(f"column {column!r}, row {row[self.key]!r}: not a number")
            scored.append((row[self.key], value))
        scored.sort(key=lambda item: item[1], reverse=higher_is_better)
        return RefRanking(column, scored)


class RefFact:
    def __init__(self, name: str, value: Any, tool: str | None, args: dict[str, Any]) -> None:
        self.name = name
        self.value = value
        self.tool = tool
        self.args = args


class RefRegistry:
    """Write-once; deep copies in, and a deep copy out on every read (checks included)."""

    def __init__(self) -> None:
        self._facts: dict[str, RefFact] = {}

    def record_table(
        self,
        name: str,
        rows: Sequence[Mapping[str, Any]],
        key: str,
        tool: str | None = None,
        args: Mapping[str, Any] | None = None,
    ) -> RefTable:
        if name in self._facts:
            raise ValueError(f"fact {name!r} is write-once")
        copied = [copy.deepcopy(dict(row)) for row in rows]
        columns: dict[str, None] = {}
        for row in copied:
            columns.update(dict.fromkeys(row))
        table = RefTable(key, copied, list(columns))
        self._facts[name] = RefFact(name, table, tool, copy.deepcopy(dict(args or {})))
        return table  # cheaper than the copy groundplane_otel returns: errs on the fast side

    def get(self, name: str) -> RefFact:
        return copy.deepcopy(self._facts[name])

    def table(self, name: str) -> RefTable:
        value = self.get(name).value
        if not isinstance(value, RefTable):
            raise TypeError(f"fact {name!r} is not a table")
        return value


def _fail(field: str, claimed: Any, supported: Any, fact: str) -> UnsupportedClaim:
    return UnsupportedClaim(field, claimed, supported, fact=fact)


def ref_superlative(fact: str, winner_field: str, score_field: str, column: str) -> RefCheck:
    def check(reg: RefRegistry, output: Mapping[str, Any]) -> None:
        ranking = reg.table(fact).to_ranking(column)
        claimed = output[winner_field]
        if claimed not in ranking.names:
            raise _fail(winner_field, claimed, ranking.items[0][0], fact)
        if len(ranking.ties()) > 1 or claimed != ranking.items[0][0]:
            raise _fail(winner_field, claimed, ranking.items[0][0], fact)
        if not _matches(output[score_field], ranking.items[0][1]):
            raise _fail(score_field, output[score_field], ranking.items[0][1], fact)

    return check


def ref_ranking_prefix(fact: str, field: str, k: int, column: str) -> RefCheck:
    def check(reg: RefRegistry, output: Mapping[str, Any]) -> None:
        ranking = reg.table(fact).to_ranking(column)
        claimed = output[field]
        top = ranking.names[:k]
        if not isinstance(claimed, list) or len(claimed) != k or len(set(claimed)) != k:
            raise _fail(field, claimed, top, fact)
        for name in claimed:
            if name not in ranking.names:
                raise _fail(field, claimed, top, fact)
        scores = dict(ranking.items)
        for slot, name in enumerate(claimed):
            if scores[name] != ranking.items[slot][1]:
                raise _fail(field, claimed, top, fact)
        if k < len(ranking.items) and ranking.items[k][1] == ranking.items[k - 1][1]:
            raise _fail(field, claimed, top, fact)

    return check


def ref_aggregate(fact: str, field: str, column: str) -> RefCheck:
    def check(reg: RefRegistry, output: Mapping[str, Any]) -> None:
        table = reg.table(fact)
        values = [row[column] for row in table.rows]
        if not all(_is_number(value) for value in values):
            raise ValueError(f"column {column!r} holds a non-number")
        total: int | float
        total = sum(values) if all(isinstance(v, int) for v in values) else math.fsum(values)
        if not _matches(output[field], total):
            raise _fail(field, output[field], total, fact)

    return check


def ref_entities(fields: Sequence[str], fact: str) -> RefCheck:
    def check(reg: RefRegistry, output: Mapping[str, Any]) -> None:
        known = {(type(key), key) for key in reg.table(fact).keys}
        for field in fields:
            value = output[field]
            names = value if isinstance(value, list) else [value]
            if not names:
                raise _fail(field, value, "a name", fact)
            for name in names:
                if (type(name), name) not in known:
                    raise _fail(field, name, "a recorded name", fact)

    return check


def ref_row_integrity(fact: str, key_field: str, fields: Mapping[str, str]) -> RefCheck:
    def check(reg: RefRegistry, output: Mapping[str, Any]) -> None:
        row = reg.table(fact).row(output[key_field])
        for out_field, column in fields.items():
            if not _matches(output[out_field], row[column]):
                raise _fail(out_field, output[out_field], row[column], fact)

    return check


def ref_comparison(
    fact: str, a_field: str, b_field: str, delta_field: str, column: str
) -> RefCheck:
    """kind="pct", direction="a_minus_b": (A - B) / B * 100, computed exactly."""

    def check(reg: RefRegistry, output: Mapping[str, Any]) -> None:
        table = reg.table(fact)
        left = table.row(output[a_field])[column]
        right = table.row(output[b_field])[column]
        if output[a_field] == output[b_field] or right == 0:
            raise _fail(delta_field, output[delta_field], None, fact)
        delta = (Fraction(left) - Fraction(right)) / Fraction(right) * 100
        if not _matches(output[delta_field], delta) and output[delta_field] != float(delta):
            raise _fail(delta_field, output[delta_field], float(delta), fact)

    return check


def ref_checks(spec: Mapping[str, Any]) -> list[RefCheck]:
    """The six reference-style checks for the benchmark scenario described by ``spec``."""
    fact = spec["fact"]
    return [
        ref_superlative(fact, "winner", "ctr", spec["score_column"]),
        ref_ranking_prefix(fact, "top", spec["k"], spec["score_column"]),
        ref_aggregate(fact, "total_spend", spec["sum_column"]),
        ref_entities(["winner", "top", "runner_up"], fact),
        ref_row_integrity(fact, "winner", spec["row_fields"]),
        ref_comparison(fact, "winner", "runner_up", "ctr_lift_pct", spec["score_column"]),
    ]


def run_ref_checks(reg: RefRegistry, output: Mapping[str, Any], checks: Sequence[RefCheck]) -> None:
    for check in checks:
        check(reg, output)
