"""aggregate_reconciles: recompute a stated sum/count/mean/min/max/median over a recorded Table.

Evaluation order (it decides which message a user sees): the fact must be a Table and every
column the check names must exist (developer mistakes, ``ValueError``/``TypeError``) → the field
must be present → the table must be exhaustive (``not_exhaustive``) → the filter must select a
row (``empty_filter``) → every selected row must hold the column (``partial_column``) → the
cells must be numbers (a ``ValueError`` naming fact, column, row) → the claim must be a number (a
count: an int, ``not_an_integer``) → it must equal the exact result (a count exactly, whatever
the tolerances: it is an exact integer). Cells, the claim and the tolerances read as the decimals
they print as (``_numbers.printed``): a money total written ``491551.22`` passes, a cent off is
refused, and ``tolerance: 0.01`` is exactly a cent. A mismatch is diagnosed: an
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

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal, TypeVar

from groundplane_otel._arithmetic import equals_exact, is_number
from groundplane_otel.checks._aggregate_args import (
    BUILDER as _BUILDER,
)
from groundplane_otel.checks._aggregate_args import (
    OPS,
    Filter,
    Op,
    RowFilter,
    RowPredicate,
    validate,
)
from groundplane_otel.checks._aggregate_filter import (
    ABSENT as _ABSENT,
)
from groundplane_otel.checks._aggregate_filter import (
    Rows,
    filter_text,
    loose_hint,
    split_rows,
)
from groundplane_otel.checks._aggregate_math import Cells, exact_result, plural
from groundplane_otel.checks._aggregate_math import read_cells as _read_cells  # tests patch it here
from groundplane_otel.checks._base import Answer, NamedCheck, describe, field_value, require_json
from groundplane_otel.checks._memo import derived
from groundplane_otel.checks._numbers.printed import printed, printed_matches
from groundplane_otel.checks._numbers.sums import represent, show
from groundplane_otel.checks._resolve import resolve_table
from groundplane_otel.checks._twin import twin
from groundplane_otel.errors import UnknownColumn, UnsupportedClaim
from groundplane_otel.facts import Fact, Table
from groundplane_otel.registry import FactRegistry

__all__ = ["OPS", "Op", "RowPredicate", "aggregate_reconciles", "check_aggregate_reconciles"]

Part = Literal["selected", "rest", "all"]
T = TypeVar("T")


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
    where: Filter
    weight_column: str | None
    tolerance: int | float
    rel_tolerance: int | float | None
    token: Hashable | None  # memo key of a mapping filter; None: a callable or unhashable one
    result_key: Hashable | None  # memo key of the computed result; None: never memoised

    def __call__(self, registry: FactRegistry, output: Answer) -> None:
        output = require_json(_BUILDER, output)
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
                "an aggregate over an exhaustive table",
                f"fact {self.fact!r} is not exhaustive: {tool} returned a truncated result set, "
                f"so no {self.op} over it can be verified",
                "not_exhaustive",
            )
        run = _Run(stored, table)
        selected = self._rows(run, "selected")
        if not selected:
            raise self._claim(
                stored,
                claimed,
                "an aggregate over a non-empty selection",
                self._empty_reason(table),
                "empty_filter",
            )
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
            f"the claim is off by {_offset(claimed, computed)}{self._exact_count_note()}"
        )
        diagnosis, code = self._diagnose(run, claimed)
        raise self._claim(stored, claimed, supported, reason + diagnosis, code)

    def _supports(self, claimed: Any, nearest: int | float, exact: Fraction) -> bool:
        """Whether the claim passes against a known result (False: let the full path judge)."""
        if self.op == "count":
            return type(claimed) is int and claimed == nearest
        if equals_exact(claimed, nearest):
            return True
        tolerant = bool(self.tolerance or self.rel_tolerance)
        return tolerant and self._matches(claimed, exact)

    # -- the rows and cells an aggregate reads (memoised per fact) ---------------------------

    def _check_columns(self, table: Table) -> None:
        named = [self.column, self.weight_column]
        if isinstance(self.where, tuple):
            named.extend(column for column, _ in self.where)
        for column in named:
            if column is not None and column not in table.columns:
                raise UnknownColumn(
                    f"fact {self.fact!r}: unknown column {column!r}; columns: "
                    f"{list(table.columns)}",
                    column,
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
            ("aggregate.split", self.token),
            self._shared(part),
            lambda: split_rows(run.table, self.where, self.fact),
        )
        return split[0] if part == "selected" else split[1]

    def _cells(self, run: _Run, part: Part, column: str) -> Cells:
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
        rows = self._rows(run, part)
        count = len(rows)
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
                    f"an aggregate over a complete column {column!r}",
                    f"column {column!r} is missing in {read.lacking} of {plural(count)} selected "
                    f"(first {read.first_lacking!r}): an aggregate over a partial column is not "
                    "verifiable",
                    "partial_column",
                )
        if self.op == "count":
            return Fraction(count)
        return exact_result(
            self.fact, self.op, self.weight_column, columns, cells, run.table, rows, strict
        )

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
                        f"; the claim equals the {self.op} over {label} ({plural(rows)}: "
                        f"{show(other)}): taken over the wrong subset",
                        "wrong_subset",
                    )
        return "", "value_mismatch"

    def _matches(self, claimed: int | float, computed: Fraction) -> bool:
        if not is_number(claimed):
            return False
        if self.op == "count":  # a count is an exact integer: no tolerance applies
            return printed_matches(claimed, computed)
        return printed_matches(claimed, computed, self.tolerance, self.rel_tolerance)

    # -- wording -----------------------------------------------------------------------------

    def _exact_count_note(self) -> str:
        if self.op != "count" or not (self.tolerance or self.rel_tolerance):
            return ""
        return " (a count is compared exactly: tolerance and rel_tolerance do not apply to it)"

    def _what(self) -> str:
        if self.op == "count":
            having = "" if self.column is None else f" with {self.column!r}"
            return f"count of rows{having}"
        weighted = "" if self.weight_column is None else f" weighted by {self.weight_column!r}"
        return f"{self.op} of {self.column!r}{weighted}"

    def _scope(self, count: int) -> str:
        over = "" if self.op == "count" else f" over {plural(count)}"
        return over + ("" if self.where is None else f" where {self._filter_text()}")

    def _filter_text(self) -> str:
        return filter_text(self.where)

    def _empty_reason(self, table: Table) -> str:
        if self.where is None:
            return f"fact {self.fact!r} has no rows: no {self.op} over it can be verified"
        reason = (
            f"no row of fact {self.fact!r} ({plural(len(table.rows))}) matches where "
            f"{self._filter_text()}: an aggregate over an empty selection is not verifiable"
        )
        return reason + loose_hint(self.where, table)

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


def _offset(claimed: int | float, computed: Fraction) -> str:
    """How far the claim (as it prints) is from the computed value, signed: ``+490``,
    ``-0.01``."""
    offset = printed(claimed) - computed
    return ("+" if offset > 0 else "") + show(offset)


def _validated(
    *,
    fact: str,
    field: str,
    column: str | None,
    op: Op,
    where: RowFilter | None,
    weight_column: str | None,
    tolerance: int | float,
    rel_tolerance: int | float | None,
) -> _Aggregate:
    """Check every argument now (a misconfigured check fails when built, not when run)."""
    pairs, token = validate(
        fact=fact,
        field=field,
        column=column,
        op=op,
        where=where,
        weight_column=weight_column,
        tolerance=tolerance,
        rel_tolerance=rel_tolerance,
    )
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


def aggregate_reconciles(
    fact: str,
    field: str,
    column: str | None = None,
    op: Op = "sum",
    where: RowFilter | None = None,
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


check_aggregate_reconciles = twin(aggregate_reconciles)
