"""row_integrity: resolve the named row first, then read every other field off that one row.

It catches attribute swap — the right row named, with a neighbouring row's value in another
field — and names the row the claimed value really belongs to ("88000 belongs to row 'north'").

Evaluation order: the fact must be a Table → every mapped column must exist (a developer
mistake otherwise: ValueError) → the key field must be present and name a row (type-strict) →
each mapped field, in order: present → the row holds the column (ValueError naming fact, row
and column otherwise — a data gap, never blamed on the model) → a number claimed against an
empty (``None``) cell is a ValueError too (the table can neither support nor refute it) → equal
to the cell (numbers within the tolerances, anything else by structural equality: numbers by
value, everything else type-strict).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from groundplane_otel._arithmetic import as_fraction, is_number, matches, validate_tolerances
from groundplane_otel._keys import strict_key, value_equal
from groundplane_otel.checks._base import Answer, NamedCheck, describe, field_value, require_json
from groundplane_otel.checks._memo import derived
from groundplane_otel.checks._names import kind_of, name_index
from groundplane_otel.checks._ranked import offset, quote_names, require_name
from groundplane_otel.checks._resolve import resolve_table
from groundplane_otel.checks._twin import twin
from groundplane_otel.errors import UnknownColumn, UnsupportedClaim
from groundplane_otel.facts import Fact, Table
from groundplane_otel.registry import FactRegistry

__all__ = ["check_row_integrity", "row_integrity"]

_BUILDER = "row_integrity"

Mapped = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class _ColumnIndex:
    """Which rows hold which value in one column, built once per (fact, column).

    ``exact`` maps a number (by exact value: 88000 and 88000.0 meet, as they do in ``matches``)
    or any other cell's type-strict key to the row keys holding it; ``numbers`` is the column's
    numeric cells sorted, for the rows within a tolerance of a claim.
    """

    exact: Mapping[Hashable, tuple[Hashable, ...]]
    numbers: tuple[tuple[int | float, int], ...]
    keys: tuple[Hashable, ...]


@dataclass(frozen=True, slots=True)
class _RowIntegrity:
    """The validated configuration of one row_integrity check; calling it runs the check."""

    fact: str
    key_field: str
    fields: Mapped | None = None
    tolerance: int | float = 0
    rel_tolerance: int | float | None = None

    def __post_init__(self) -> None:
        require_name(_BUILDER, "fact", self.fact)
        require_name(_BUILDER, "key_field", self.key_field)
        validate_tolerances(self.tolerance, self.rel_tolerance, where=_BUILDER)

    def __call__(self, registry: FactRegistry, output: Answer) -> None:
        output = require_json(_BUILDER, output)
        table, stored = resolve_table(registry, self.fact)
        mapped = self._mapped(table, output)
        claimed_key = field_value(output, self.key_field)
        row = table.find_row(claimed_key)
        if row is None:
            raise self._row_not_found(registry, table, stored, claimed_key)
        for name, column in mapped:
            claimed = field_value(output, name)
            if column not in row:
                raise ValueError(
                    f"{_BUILDER}: fact {self.fact!r}: row {claimed_key!r} has no column "
                    f"{column!r} (compared with field {name!r}); the recorded row is "
                    "incomplete, so this claim cannot be checked"
                )
            cell = row[column]
            if cell is None and _is_number(claimed):
                raise ValueError(
                    f"{_BUILDER}: fact {self.fact!r}: column {column!r}, row {claimed_key!r} is "
                    f"empty (None), so the number {claimed!r} in field {name!r} can be neither "
                    "supported nor refuted; record the value, or leave the field out of fields"
                )
            if not self._same(claimed, cell):
                raise self._mismatch(
                    table, stored, row, field=name, column=column, claimed=claimed, cell=cell
                )

    def _mapped(self, table: Table, output: Mapping[str, Any]) -> Mapped:
        """Explicit ``fields`` (their columns must exist), else every output field that is a
        table column, except the key field."""
        if self.fields is None:
            columns = set(table.columns)
            return tuple(
                (name, name) for name in output if name != self.key_field and name in columns
            )
        for name, column in self.fields:
            if column not in table.columns:
                raise UnknownColumn(
                    f"{_BUILDER}: fact {self.fact!r} has no column {column!r} (mapped from "
                    f"field {name!r}); columns: {list(table.columns)}",
                    column,
                )
        return self.fields

    def _same(self, claimed: Any, cell: Any) -> bool:
        kind, claimed_kind = type(cell), type(claimed)
        if kind is claimed_kind is str:
            return bool(claimed == cell)
        numbers = (int, float)
        if kind in numbers and claimed_kind in numbers and claimed == cell:
            return True  # ints and floats compare by exact value
        if is_number(cell):
            return matches(claimed, cell, self.tolerance, self.rel_tolerance)
        return value_equal(claimed, cell)

    def _fail(
        self, stored: Fact, field: str, claimed: Any, supported: Any, *, reason: str, code: str
    ) -> UnsupportedClaim:
        return UnsupportedClaim(
            field,
            claimed,
            supported,
            fact=self.fact,
            provenance=stored.provenance,
            reason=reason,
            code=code,
        )

    def _row_not_found(
        self, registry: FactRegistry, table: Table, stored: Fact, claimed: Any
    ) -> UnsupportedClaim:
        index = name_index(registry, self.fact, stored)
        reason = (
            f"no row has {table.key}={claimed!r} ({len(table)} rows, keys compare type-strictly)"
        )
        hint = index.hint(claimed)
        if hint:
            reason += f"; {hint}"
        if not table.exhaustive:
            reason += "; the table is not exhaustive (a truncated result), so the row may exist"
        return self._fail(
            stored, self.key_field, claimed, index.listing(), reason=reason, code="row_not_found"
        )

    def _mismatch(
        self,
        table: Table,
        stored: Fact,
        row: Mapping[str, Any],
        *,
        field: str,
        column: str,
        claimed: Any,
        cell: Any,
    ) -> UnsupportedClaim:
        key = row[table.key]
        reason = f"row {key!r} has {column}={cell!r}"
        owners = self._owners(table, stored, column, claimed, key)
        if owners:
            plural = "row" if len(owners) == 1 else "rows"
            reason += f"; {claimed!r} belongs to {plural} {quote_names(owners)}"
            return self._fail(stored, field, claimed, cell, reason=reason, code="swapped_value")
        elsewhere = [
            other
            for other in table.columns
            if other not in (column, table.key) and other in row and self._same(claimed, row[other])
        ]
        if elsewhere:
            reason += f"; {claimed!r} is that row's {elsewhere[0]}, not its {column}"
            return self._fail(stored, field, claimed, cell, reason=reason, code="swapped_value")
        if is_number(cell) and is_number(claimed):
            reason += f"; the claim is off by {offset(claimed, cell)}{self._tolerance_note()}"
        elif type(claimed) is not type(cell):
            reason += (
                f"; the claim is {kind_of(claimed)}, the cell {kind_of(cell)}"
                " (values compare type-strictly; numeric-looking strings are never numbers)"
            )
        return self._fail(stored, field, claimed, cell, reason=reason, code="value_mismatch")

    def _owners(
        self, table: Table, stored: Fact, column: str, claimed: Any, exclude: Hashable
    ) -> list[Hashable]:
        """Keys of the other rows whose ``column`` holds the claimed value."""
        index = derived(table, ("row_integrity.column", column), lambda: _index(table, column))
        if is_number(claimed):
            found: Sequence[Hashable] = index.exact.get(claimed, ())
            if self.tolerance or self.rel_tolerance:
                found = self._near(index, claimed)
        else:
            try:
                found = index.exact.get(strict_key(claimed), ())
            except TypeError:  # an unhashable claim (a list) is held by no indexed cell
                found = ()
        skip = strict_key(exclude)
        return [key for key in found if strict_key(key) != skip]

    def _near(self, index: _ColumnIndex, claimed: int | float) -> list[Hashable]:
        """Row keys whose numeric cell matches ``claimed`` within the tolerances, in row order."""
        value = as_fraction(claimed)
        rel = as_fraction(self.rel_tolerance or 0)
        reach = as_fraction(self.tolerance)
        if rel >= 1:
            low = high = None
        else:  # |v - c| <= rel * max(|v|, |c|) implies |v - c| <= rel * |c| / (1 - rel)
            reach = max(reach, rel * abs(value) / (1 - rel))
            low, high = value - reach, value + reach
        numbers = index.numbers
        start = 0 if low is None else bisect_left(numbers, (low, -1))
        stop = len(numbers) if high is None else bisect_right(numbers, (high, len(index.keys)))
        positions = sorted(
            position
            for cell, position in numbers[start:stop]
            if matches(claimed, cell, self.tolerance, self.rel_tolerance)
        )
        return [index.keys[position] for position in positions]

    def _tolerance_note(self) -> str:
        if not self.tolerance and not self.rel_tolerance:
            return " (exact comparison)"
        return f" (tolerance={self.tolerance!r}, rel_tolerance={self.rel_tolerance!r})"


def _is_number(value: object) -> bool:
    """An int or float claim (never a bool), finite or not: what a None cell cannot judge."""
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _index(table: Table, column: str) -> _ColumnIndex:
    # Numbers are keyed by themselves: Python compares and hashes int and float by exact value
    # (88000 == 88000.0, 2**63 + 1 != 2.0**63), which is what ``matches`` does at zero
    # tolerance; every other cell by its type-strict key, a tuple no number can equal.
    exact: dict[Hashable, list[Hashable]] = {}
    numbers: list[tuple[int | float, int]] = []
    keys: list[Hashable] = []
    for position, row in enumerate(table.rows):
        keys.append(row[table.key])
        if column not in row:
            continue
        cell = row[column]
        if is_number(cell):
            numbers.append((cell, position))
            exact.setdefault(cell, []).append(row[table.key])
            continue
        try:
            exact.setdefault(strict_key(cell), []).append(row[table.key])
        except TypeError:  # an unhashable cell (a list) cannot be looked up by value
            continue
    numbers.sort()
    return _ColumnIndex(
        exact={token: tuple(owners) for token, owners in exact.items()},
        numbers=tuple(numbers),
        keys=tuple(keys),
    )


def _as_mapping(fields: object) -> Mapped | None:
    """``fields`` as (output field, column) pairs; a list of names maps each to itself."""
    if fields is None:
        return None
    if isinstance(fields, Mapping):
        pairs = list(fields.items())
    elif isinstance(fields, Sequence) and not isinstance(fields, (str, bytes)):
        pairs = [(name, name) for name in fields]
    else:
        raise TypeError(
            f"{_BUILDER}: fields must be None, a mapping of output field -> column, or a list "
            f"of names present in both, got {fields!r}"
        )
    if not pairs:
        raise ValueError(
            f"{_BUILDER}: fields must not be empty (pass None to compare every output field "
            "that is also a table column)"
        )
    for name, column in pairs:
        require_name(_BUILDER, "every output field in fields", name)
        require_name(_BUILDER, f"the column mapped from {name!r}", column)
    return tuple(pairs)


def _spec(
    fact: str,
    key_field: str,
    fields: object,
    tolerance: int | float,
    rel_tolerance: int | float | None,
) -> _RowIntegrity:
    mapped = _as_mapping(fields)
    if mapped is not None and any(name == key_field for name, _ in mapped):
        raise ValueError(
            f"{_BUILDER}: key_field {key_field!r} names the row; it cannot also be in fields"
        )
    return _RowIntegrity(fact, key_field, mapped, tolerance, rel_tolerance)


def row_integrity(
    fact: str,
    key_field: str,
    fields: Mapping[str, str] | Sequence[str] | None = None,
    *,
    tolerance: int | float = 0,
    rel_tolerance: int | float | None = None,
) -> NamedCheck:
    """The output's ``key_field`` names a row of the Table ``fact``; every mapped field must
    equal that one row's cell.

    ``fields`` maps output field → table column (a list of names maps each to itself). With
    ``fields=None`` every output field that is also a table column is compared, except
    ``key_field``; only explicitly mapped fields are required to be present. Keys match
    type-strictly; numbers within ``tolerance``/``rel_tolerance`` (exact by default), anything
    else by type-strict structural equality. On a mismatch the reason names the row the claimed
    value belongs to. A row lacking a mapped column is a ValueError (a data gap, not the
    model's mistake). Arguments are validated here.
    """
    spec = _spec(fact, key_field, fields, tolerance, rel_tolerance)
    return NamedCheck(
        describe(_BUILDER, fact=fact, key_field=key_field), spec, family=_BUILDER, facts=(fact,)
    )


check_row_integrity = twin(row_integrity)
