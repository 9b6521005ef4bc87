"""aggregate_reconciles: recompute a stated sum/count/mean/min/max/median over a recorded Table.

Evaluation order (it decides which message a user sees): the fact must be a Table and every
column the check names must exist (developer mistakes, ``ValueError``/``TypeError``) → the field
must be present → the table must be exhaustive (``not_exhaustive``) → the filter must select a
row (``empty_filter``) → every selected row must hold the column (``partial_column``) → the
cells must be numbers (a ``ValueError`` naming fact, column, row) → the claim must be a number (a
count: an int, ``not_an_integer``) → it must equal the exact result. A mismatch is diagnosed: an
unweighted mean given as a weighted one (``unweighted_mean``), the aggregate over the whole table
or over the rows the filter leaves out (``wrong_subset``), else ``value_mismatch`` with the offset.

``where`` is a mapping column → required value, compared type-strictly (``True`` never selects a
row holding ``1``; ``1.0`` never selects ``1``); a row lacking a ``where`` column is not selected.
It may also be a callable predicate, called with a read-only view of each row and required to
return a bool (a row is evidence; a predicate must not be able to change it).

Speed: the selection, each column's validated cells and each result are derived once per fact
(and per mapping filter) and memoised, so a repeated check costs O(1); a callable filter is
re-run every time, since nothing says it is pure.
"""

from __future__ import annotations

import copy
import math
import operator
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from itertools import compress
from types import MappingProxyType
from typing import Any, Literal, TypeVar, Union, get_args

from groundplane_otel._keys import strict_equal, strict_key
from groundplane_otel._numbers import equals_exact, is_number, matches, validate_tolerances
from groundplane_otel.checks._base import NamedCheck, describe, field_value
from groundplane_otel.checks._memo import derived
from groundplane_otel.checks._numeric import (
    exact_dot,
    exact_sum,
    offset_text,
    represent,
    require_name,
    show,
)
from groundplane_otel.checks._resolve import resolve_table
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.facts import Fact, Table
from groundplane_otel.registry import FactRegistry

__all__ = ["OPS", "Op", "RowPredicate", "aggregate_reconciles", "check_aggregate_reconciles"]

Op = Literal["sum", "count", "mean", "min", "max", "median"]
OPS: tuple[str, ...] = get_args(Op)
RowPredicate = Callable[[Mapping[str, Any]], bool]
Where = Union[Mapping[str, Any], RowPredicate]  # noqa: UP007 - evaluated at runtime on 3.10
Rows = Sequence[dict[str, Any]]
Part = Literal["selected", "rest", "all"]

_BUILDER = "aggregate_reconciles"
T = TypeVar("T")
_ABSENT = object()
# For these types, ``type(a) is type(b) and a == b`` is exactly ``strict_equal(a, b)``.
_SCALARS = frozenset({str, int, float, bool, bytes, type(None)})


def _plural(count: int) -> str:
    return f"{count} row" if count == 1 else f"{count} rows"


@dataclass(frozen=True, slots=True, eq=False)
class _Cells:
    """One column read over a set of rows, validated once: what an aggregate needs of it."""

    rows: int
    lacking: int = 0
    first_lacking: Any = None
    bad: tuple[Any, Any] | None = None  # (row key, cell) of the first cell that is no number
    values: Sequence[int | float] = ()
    kinds: set[type] | None = None  # the values' types, when every one is a plain int/float
    results: dict[Hashable, Fraction] = field(default_factory=dict)  # op -> exact result


def _read_cells(rows: Rows, column: str, key: str) -> _Cells:
    """The column's cells; C-speed passes when every cell is a plain int or float."""
    try:
        values = [row[column] for row in rows]
    except KeyError:
        lacking = [row for row in rows if column not in row]
        return _Cells(len(rows), len(lacking), lacking[0][key])
    kinds = set(map(type, values))
    if kinds <= {int}:
        return _Cells(len(rows), values=values, kinds=kinds)
    if kinds <= {int, float}:
        floats = values if kinds == {float} else [v for v in values if type(v) is float]
        if all(map(math.isfinite, floats)):  # the registry refuses NaN/inf; stay defensive
            return _Cells(len(rows), values=values, kinds=kinds)
    for row, value in zip(rows, values, strict=True):
        if not is_number(value):
            return _Cells(len(rows), bad=(row[key], value))
    return _Cells(len(rows), values=values)


def _flags(rows: Rows, where: tuple[tuple[str, Any], ...]) -> list[bool]:
    """Which rows a mapping filter selects, type-strictly, one column at a time."""
    combined: list[bool] = [True] * len(rows)
    for column, value in where:
        held = [row.get(column, _ABSENT) for row in rows]
        if type(value) in _SCALARS:
            kind = type(value)
            flags = [type(cell) is kind and cell == value for cell in held]
        else:
            flags = [cell is not _ABSENT and strict_equal(cell, value) for cell in held]
        combined = list(map(operator.and_, combined, flags))
    return combined


@dataclass(slots=True)
class _Run:
    """One run of a check: the fact it reads, and scratch space that lives for this run only."""

    stored: Fact
    table: Table
    local: dict[Hashable, Any] = field(default_factory=dict)

    def derive(self, key: Hashable, shared: bool, build: Callable[[], T]) -> T:
        """``build()`` once: memoised per fact when ``shared``, else for this run only."""
        if shared:
            return derived(self.table, key, build)
        if key not in self.local:
            self.local[key] = build()
        found: T = self.local[key]
        return found


@dataclass(frozen=True, slots=True, eq=False)
class _Aggregate:
    """A validated aggregate check; compared by identity (``where`` values may be unhashable)."""

    fact: str
    field: str
    column: str | None
    op: Op
    where: tuple[tuple[str, Any], ...] | RowPredicate | None
    weight_column: str | None
    tolerance: int | float
    rel_tolerance: int | float | None
    token: Hashable | None  # memo key of a mapping filter; None: a callable or unhashable one
    result_key: Hashable | None  # memo key of the computed result; None: never memoised

    def __call__(self, registry: FactRegistry, output: Mapping[str, Any]) -> None:
        table, stored = resolve_table(registry, self.fact)
        if self.result_key is not None:
            # Seen this fact before: every column existed, the table is exhaustive and the
            # selection non-empty and numeric; only the claim is new. A miss runs it all.
            known = table._derived.get(self.result_key)
            if known is not None:
                claimed = field_value(output, self.field)
                if self._supports(claimed, *known):
                    return
        self._check_columns(table)
        claimed = field_value(output, self.field)
        if not table.exhaustive:
            tool = stored.provenance.tool or "<unknown tool>"
            raise self._claim(
                stored,
                claimed,
                None,
                f"fact {self.fact!r} is not exhaustive: {tool} returned a truncated result set, "
                f"so no {self.op} over it can be verified",
                "not_exhaustive",
            )
        run = _Run(stored, table)
        selected = self._rows(run, "selected")
        if not selected:
            raise self._claim(stored, claimed, None, self._empty_reason(table), "empty_filter")
        computed = self._aggregate(run, "selected", claimed=claimed)
        assert computed is not None  # on the selection, every problem raises instead
        count = len(selected)
        supported = represent(
            computed, lambda: f"fact {self.fact!r}: {self._what()}{self._scope(count)}"
        )
        if self.result_key is not None:
            table._derived.setdefault(self.result_key, (supported, computed))
        self._require_number(stored, claimed, supported, count)
        if equals_exact(claimed, supported) or self._matches(claimed, computed):
            return
        scope = self._scope(count)
        reason = (
            f"computed {self._what()}{scope} is {show(computed)}; "
            f"the claim is off by {offset_text(claimed, computed)}"
        )
        diagnosis, code = self._diagnose(run, claimed)
        raise self._claim(stored, claimed, supported, reason + diagnosis, code)

    def _supports(self, claimed: Any, nearest: int | float, exact: Fraction) -> bool:
        """Whether the claim passes against a known result (False: let the full path judge)."""
        if self.op == "count" and type(claimed) is not int:
            return False
        if equals_exact(claimed, nearest):
            return True
        tolerant = bool(self.tolerance or self.rel_tolerance)
        return tolerant and matches(claimed, exact, self.tolerance, self.rel_tolerance)

    # -- the rows and cells an aggregate reads (memoised per fact) ---------------------------

    def _check_columns(self, table: Table) -> None:
        named = [self.column, self.weight_column]
        if isinstance(self.where, tuple):
            named.extend(column for column, _ in self.where)
        for column in named:
            if column is not None and column not in table.columns:
                raise ValueError(
                    f"fact {self.fact!r}: unknown column {column!r}; columns: {list(table.columns)}"
                )

    def _shared(self, part: Part) -> bool:
        """Whether a row set may be memoised per fact (not when a callable filter decides it)."""
        return part == "all" or self.where is None or self.token is not None

    def _rows(self, run: _Run, part: Part) -> Rows:
        if part == "all" or (self.where is None and part == "selected"):
            return run.table.rows
        if self.where is None:
            return ()
        split = run.derive(
            ("aggregate.split", self.token), self._shared(part), lambda: self._split(run.table)
        )
        return split[0] if part == "selected" else split[1]

    def _split(self, table: Table) -> tuple[Rows, Rows]:
        """(selected, rest): the rows the filter selects and the complement, in table order."""
        if isinstance(self.where, tuple):
            flags = _flags(table.rows, self.where)
        else:
            flags = [self._predicate(table, row) for row in table.rows]
        selected = tuple(compress(table.rows, flags))
        rest = tuple(compress(table.rows, [not flag for flag in flags]))
        return selected, rest

    def _predicate(self, table: Table, row: dict[str, Any]) -> bool:
        assert callable(self.where)
        result = self.where(MappingProxyType(row))
        if not isinstance(result, bool):
            raise TypeError(
                f"{_BUILDER}: the where predicate {self._predicate_name()} must return a bool, "
                f"got {result!r} for row {row[table.key]!r} of fact {self.fact!r}"
            )
        return result

    def _cells(self, run: _Run, part: Part, column: str) -> _Cells:
        every = part == "all" or (self.where is None and part == "selected")
        return run.derive(
            ("aggregate.cells", None, "all", column)
            if every
            else ("aggregate.cells", self.token, part, column),
            self._shared(part),
            lambda: _read_cells(self._rows(run, part), column, run.table.key),
        )

    # -- computing --------------------------------------------------------------------------

    def _aggregate(
        self,
        run: _Run,
        part: Part,
        *,
        claimed: Any = _ABSENT,
        weighted: bool = True,
    ) -> Fraction | None:
        """The exact aggregate over a row set.

        On the selection (``claimed`` given) a partial column is an UnsupportedClaim and a bad
        cell a ValueError; for a diagnosis (no claim) either just gives None.
        """
        strict = claimed is not _ABSENT
        count = len(self._rows(run, part))
        if not count:
            return None
        columns = [self.column] if self.column is not None else []
        if weighted and self.weight_column is not None:
            columns.append(self.weight_column)
        cells = [self._cells(run, part, column) for column in columns]
        for column, read in zip(columns, cells, strict=True):
            if read.lacking:
                if not strict:
                    return None
                raise self._claim(
                    run.stored,
                    claimed,
                    None,
                    f"column {column!r} is missing in {read.lacking} of {_plural(count)} selected "
                    f"(first {read.first_lacking!r}): an aggregate over a partial column is not "
                    "verifiable",
                    "partial_column",
                )
        if self.op == "count":
            return Fraction(count)
        for column, read in zip(columns, cells, strict=True):
            if read.bad is not None:
                if not strict:
                    return None
                key, value = read.bad
                raise ValueError(
                    f"fact {self.fact!r}: column {column!r}, row {key!r}: expected a finite int "
                    f"or float, got {value!r} ({type(value).__name__}); an aggregate reads every "
                    "selected cell as a number"
                )
        values = cells[0]
        memo_key: Hashable = self.op if len(cells) == 1 else ("weighted", self.weight_column)
        found = values.results.get(memo_key)
        if found is None:
            if len(cells) == 2:
                rows = self._rows(run, part)
                found = self._weighted_mean(run.table, rows, values, cells[1], strict)
                if found is None:
                    return None
            else:
                found = _compute(self.op, values.values, values.kinds)
            values.results[memo_key] = found
        return found

    def _weighted_mean(
        self, table: Table, rows: Rows, values: _Cells, weights: _Cells, strict: bool
    ) -> Fraction | None:
        if min(weights.values) < 0:
            if not strict:
                return None
            position, weight = next((i, w) for i, w in enumerate(weights.values) if w < 0)
            raise ValueError(
                f"fact {self.fact!r}: column {self.weight_column!r}, row "
                f"{rows[position][table.key]!r}: a weight must be >= 0, got {weight!r}"
            )
        total = exact_sum(weights.values)
        if not total:
            if not strict:
                return None
            raise ValueError(
                f"fact {self.fact!r}: the weights in column {self.weight_column!r} sum to 0 over "
                f"the {_plural(len(rows))} selected; a weighted mean is undefined"
            )
        return exact_dot(values.values, weights.values) / total

    # -- judging the claim -------------------------------------------------------------------

    def _require_number(
        self, stored: Fact, claimed: Any, supported: int | float, count: int
    ) -> None:
        if self.op == "count":
            if type(claimed) is not int:
                raise self._claim(
                    stored,
                    claimed,
                    supported,
                    f"a count must be an int, got {type(claimed).__name__} {claimed!r}; "
                    f"computed {self._what()}{self._scope(count)} is {supported!r}",
                    "not_an_integer",
                )
        elif not is_number(claimed):
            raise self._claim(
                stored,
                claimed,
                supported,
                f"the claim is not a number ({type(claimed).__name__}); "
                f"computed {self._what()}{self._scope(count)} is {supported!r}",
                "not_a_number",
            )

    def _diagnose(self, run: _Run, claimed: int | float) -> tuple[str, str]:
        """Which known mistake the claim matches: (text to append, reason code)."""
        if self.weight_column is not None:
            plain = self._aggregate(run, "selected", weighted=False)
            if plain is not None and self._matches(claimed, plain):
                return (
                    f"; the claim equals the unweighted mean ({show(plain)}): an unweighted "
                    f"mean given as one weighted by {self.weight_column!r}",
                    "unweighted_mean",
                )
        if self.where is not None:
            parts: tuple[tuple[Part, str], ...] = (
                ("all", "the whole table"),
                ("rest", f"the rows not matching {self._filter_text()}"),
            )
            for part, label in parts:
                other = self._aggregate(run, part)
                if other is not None and self._matches(claimed, other):
                    rows = len(self._rows(run, part))
                    return (
                        f"; the claim equals the {self.op} over {label} ({_plural(rows)}: "
                        f"{show(other)}): taken over the wrong subset",
                        "wrong_subset",
                    )
        return "", "value_mismatch"

    def _matches(self, claimed: int | float, computed: Fraction) -> bool:
        return matches(claimed, computed, self.tolerance, self.rel_tolerance)

    # -- wording -----------------------------------------------------------------------------

    def _what(self) -> str:
        if self.op == "count":
            having = "" if self.column is None else f" with {self.column!r}"
            return f"count of rows{having}"
        weighted = "" if self.weight_column is None else f" weighted by {self.weight_column!r}"
        return f"{self.op} of {self.column!r}{weighted}"

    def _scope(self, count: int) -> str:
        over = "" if self.op == "count" else f" over {_plural(count)}"
        return over + ("" if self.where is None else f" where {self._filter_text()}")

    def _filter_text(self) -> str:
        if isinstance(self.where, tuple):
            return " and ".join(f"{column}={value!r}" for column, value in self.where)
        return f"{self._predicate_name()}(row)"

    def _predicate_name(self) -> str:
        return str(getattr(self.where, "__name__", repr(self.where)))

    def _empty_reason(self, table: Table) -> str:
        if self.where is None:
            return f"fact {self.fact!r} has no rows: no {self.op} over it can be verified"
        reason = (
            f"no row of fact {self.fact!r} ({_plural(len(table.rows))}) matches where "
            f"{self._filter_text()}: an aggregate over an empty selection is not verifiable"
        )
        return reason + self._loose_hint(table)

    def _loose_hint(self, table: Table) -> str:
        """Point at a value the type-strict filter refused although ``==`` would accept it."""
        if not isinstance(self.where, tuple):
            return ""
        for row in table.rows:
            for column, value in self.where:
                held = row.get(column, _ABSENT)
                if (held == value) is True and not strict_equal(held, value):
                    return (
                        f" (row {row[table.key]!r} holds {held!r} ({type(held).__name__}) in "
                        f"{column!r}, which the type-strict filter does not equate with "
                        f"{value!r} ({type(value).__name__}))"
                    )
        return ""

    def _claim(
        self, stored: Fact, claimed: Any, supported: Any, reason: str, code: str
    ) -> UnsupportedClaim:
        return UnsupportedClaim(
            self.field,
            claimed,
            supported,
            fact=self.fact,
            provenance=stored.provenance,
            reason=reason,
            code=code,
        )


def _compute(op: str, values: Sequence[int | float], kinds: set[type] | None = None) -> Fraction:
    """sum, mean, min, max or median of validated numbers, exactly."""
    if op == "sum":
        return exact_sum(values, kinds)
    if op == "mean":
        return exact_sum(values, kinds) / len(values)
    if op == "min":
        return Fraction(min(values))  # int/float comparisons are exact in Python
    if op == "max":
        return Fraction(max(values))
    ordered = sorted(values)
    middle = len(ordered) // 2
    if len(ordered) % 2:
        return Fraction(ordered[middle])
    return (Fraction(ordered[middle - 1]) + Fraction(ordered[middle])) / 2


def _validated(
    *,
    fact: str,
    field: str,
    column: str | None,
    op: Op,
    where: Where | None,
    weight_column: str | None,
    tolerance: int | float,
    rel_tolerance: int | float | None,
) -> _Aggregate:
    """Check every argument now (a misconfigured check fails when built, not when run)."""
    require_name(_BUILDER, "fact", fact)
    require_name(_BUILDER, "field", field)
    require_name(_BUILDER, "column", column, optional=True)
    require_name(_BUILDER, "weight_column", weight_column, optional=True)
    if op not in OPS:
        raise ValueError(f"{_BUILDER}: op must be one of {list(OPS)}, got {op!r}")
    if column is None and op != "count":
        raise ValueError(f"{_BUILDER}: op={op!r} needs column= (only 'count' works without one)")
    if weight_column is not None and op != "mean":
        raise ValueError(f"{_BUILDER}: weight_column= applies to op='mean' only, got op={op!r}")
    validate_tolerances(tolerance, rel_tolerance, where=_BUILDER)
    pairs = _validated_where(where)
    token = _token(pairs)
    memoised = pairs is None or token is not None
    return _Aggregate(
        fact,
        field,
        column,
        op,
        pairs,
        weight_column,
        tolerance,
        rel_tolerance,
        token,
        ("aggregate.result", column, op, token, weight_column) if memoised else None,
    )


def _validated_where(where: Where | None) -> tuple[tuple[str, Any], ...] | RowPredicate | None:
    """A mapping becomes a private copy of its (column, value) pairs; a callable is kept."""
    if where is None:
        return None
    if isinstance(where, Mapping):
        if not where:
            raise ValueError(
                f"{_BUILDER}: where must be None or a non-empty mapping, got {{}} "
                "(pass where=None to aggregate every row)"
            )
        for column in where:
            if not isinstance(column, str) or not column:
                raise TypeError(
                    f"{_BUILDER}: where keys must be non-empty column names, got {column!r}"
                )
        return tuple((column, copy.deepcopy(value)) for column, value in where.items())
    if callable(where):
        return where
    raise TypeError(
        f"{_BUILDER}: where must be None, a mapping column -> value, or a callable "
        f"predicate(row) -> bool, got {where!r}"
    )


def _token(where: tuple[tuple[str, Any], ...] | RowPredicate | None) -> Hashable | None:
    """A type-strict memo key for a mapping filter (None for a callable or unhashable one)."""
    if not isinstance(where, tuple):
        return None
    token = ("where", tuple((column, strict_key(value)) for column, value in sorted(where)))
    try:
        hash(token)
    except TypeError:
        return None
    return token


def aggregate_reconciles(
    fact: str,
    field: str,
    column: str | None = None,
    op: Op = "sum",
    where: Where | None = None,
    weight_column: str | None = None,
    tolerance: int | float = 0,
    rel_tolerance: int | float | None = None,
) -> NamedCheck:
    """Recompute a stated aggregate over a recorded Table; validated now, run per output."""
    spec = _validated(
        fact=fact,
        field=field,
        column=column,
        op=op,
        where=where,
        weight_column=weight_column,
        tolerance=tolerance,
        rel_tolerance=rel_tolerance,
    )
    return NamedCheck(
        describe(_BUILDER, fact=fact, field=field), spec, family=_BUILDER, facts=(fact,)
    )


def check_aggregate_reconciles(
    registry: FactRegistry,
    output: Mapping[str, Any],
    fact: str,
    field: str,
    column: str | None = None,
    op: Op = "sum",
    where: Where | None = None,
    weight_column: str | None = None,
    tolerance: int | float = 0,
    rel_tolerance: int | float | None = None,
) -> None:
    """The imperative twin of ``aggregate_reconciles``: validate, then check ``output`` now."""
    spec = _validated(
        fact=fact,
        field=field,
        column=column,
        op=op,
        where=where,
        weight_column=weight_column,
        tolerance=tolerance,
        rel_tolerance=rel_tolerance,
    )
    spec(registry, output)
