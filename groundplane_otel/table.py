"""Table: retrieved rows keyed by one column, with a type-strict key index built once.

``exhaustive=False`` marks a truncated result set. A column's ranking is computed once and
cached on the table (``_derived``), sharing the key index.
"""

from __future__ import annotations

import warnings
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from operator import itemgetter
from typing import Any

from groundplane_otel._arithmetic import is_number
from groundplane_otel._copy import copy_out, flat_rows
from groundplane_otel._keys import strict_key
from groundplane_otel.errors import SparseColumnWarning, UnknownColumn
from groundplane_otel.ranking import (
    _FLAT,
    _STR,
    _STR_KEYS,
    OnMissing,
    Ranking,
    _pick,
    _positions,
    _score_error,
    _valid_scores,
    _where,
)

__all__ = ["Table"]


@dataclass(frozen=True, slots=True)
class Table:
    """Rows keyed by one column; ``exhaustive=False`` marks a truncated result set."""

    key: str
    rows: tuple[dict[str, Any], ...]
    columns: tuple[str, ...]
    exhaustive: bool = True
    _index: dict[Hashable, int] = field(init=False, repr=False, compare=False, default_factory=dict)
    _derived: dict[Hashable, Any] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        self._validate(dicts=False)

    def _validate(self, *, dicts: bool) -> None:
        rows = tuple(self.rows)
        columns = tuple(self.columns)
        if self.key not in columns:
            raise ValueError(f"key column {self.key!r} is not among the columns {list(columns)}")
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "columns", columns)
        index, plain = _key_index(rows, self.key, dicts)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_derived", {_STR_KEYS: plain})

    @classmethod
    def _trusted(
        cls,
        key: str,
        rows: tuple[dict[str, Any], ...],
        columns: tuple[str, ...],
        exhaustive: bool,
        index: dict[Hashable, int],
    ) -> Table:
        """A Table from rows already validated, with their key index (no checks run)."""
        table = object.__new__(cls)
        setattr_ = object.__setattr__
        setattr_(table, "key", key)
        setattr_(table, "rows", rows)
        setattr_(table, "columns", columns)
        setattr_(table, "exhaustive", exhaustive)
        setattr_(table, "_index", index)
        setattr_(table, "_derived", {})
        return table

    @classmethod
    def _recorded(
        cls,
        key: str,
        rows: tuple[dict[str, Any], ...],
        columns: tuple[str, ...],
        exhaustive: bool,
        flat: bool,
    ) -> Table:
        """A Table of freshly copied plain-dict rows: validated like any other, minus the row
        type check, plus what the copy learnt (``flat``: every cell an immutable atom)."""
        table = object.__new__(cls)
        object.__setattr__(table, "key", key)
        object.__setattr__(table, "rows", rows)
        object.__setattr__(table, "columns", columns)
        object.__setattr__(table, "exhaustive", exhaustive)
        table._validate(dicts=True)
        table._derived[_FLAT] = flat
        return table

    def _copy(self) -> Table:
        """A deep copy: plain rows are copied at C speed and the key index is reused."""
        flat = self._derived.get(_FLAT)
        if flat is None:  # plain dict rows of atoms (a dict subclass keeps its deepcopy)
            flat = set(map(type, self.rows)) <= {dict} and flat_rows(self.rows)[0]
            self._derived[_FLAT] = flat
        if not flat:
            rows = tuple(map(copy_out, self.rows))
            return Table(self.key, rows, self.columns, self.exhaustive)
        # Every cell is an immutable atom: a copy of each dict is a deep copy, and the copied
        # keys are the very same objects, so the index stays valid.
        table = Table._trusted(
            self.key, tuple(map(dict, self.rows)), self.columns, self.exhaustive, dict(self._index)
        )
        table._derived[_FLAT] = True
        table._derived[_STR_KEYS] = self._derived.get(_STR_KEYS, False)
        return table

    def __deepcopy__(self, memo: dict[int, Any]) -> Table:
        return self._copy()

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)

    @property
    def keys(self) -> tuple[Hashable, ...]:
        return tuple(row[self.key] for row in self.rows)

    def has_key(self, key: object) -> bool:
        return self.find_row(key) is not None

    def find_row(self, key: object) -> dict[str, Any] | None:
        """The row whose key column equals ``key`` (type-strict), None when absent."""
        try:
            position = self._index.get(key if type(key) is str else strict_key(key))
        except TypeError:
            return None
        return None if position is None else self.rows[position]

    def row(self, key: object) -> dict[str, Any] | None:
        """The row whose key column equals ``key`` (type-strict); None when absent."""
        return self.find_row(key)

    def cell(self, key: Hashable, column: str, *, fact: str | None = None) -> Any:
        """One cell; an absent row is a KeyError, a row lacking the column a ValueError."""
        row = self.find_row(key)
        if row is None:
            raise KeyError(f"{_where(fact)}no row with {self.key}={key!r}")
        if column not in row:
            raise ValueError(f"{_where(fact)}row {key!r} has no column {column!r}")
        return row[column]

    def column(self, name: str) -> tuple[Any, ...]:
        """Every row's value in column ``name``; a row lacking it is a ValueError naming it."""
        if name not in self.columns:
            raise UnknownColumn(f"unknown column {name!r}; columns: {list(self.columns)}", name)
        try:
            return tuple(map(itemgetter(name), self.rows))
        except KeyError:
            lacking = next(row for row in self.rows if name not in row)
            raise ValueError(f"row {lacking[self.key]!r} has no column {name!r}") from None

    def to_ranking(
        self, column: str, higher_is_better: bool = True, on_missing: OnMissing = "raise"
    ) -> Ranking:
        """Rank the rows' keys by ``column``; rows lacking it raise, or warn and drop on "skip"."""
        return self.ranking(column, higher_is_better, on_missing)

    def ranking(
        self,
        column: str,
        higher_is_better: bool = True,
        on_missing: OnMissing = "raise",
        *,
        fact: str | None = None,
    ) -> Ranking:
        """``to_ranking`` computed once per column and direction; messages name ``fact``."""
        cached = self._derived.get(("ranking", column, higher_is_better))
        if cached is not None and not cached[1] and on_missing in ("raise", "skip"):
            ranking: Ranking = cached[0]
            return ranking
        if on_missing not in ("raise", "skip"):
            raise ValueError(f'on_missing must be "raise" or "skip", got {on_missing!r}')
        if column not in self.columns:
            raise UnknownColumn(
                f"{_where(fact)}unknown column {column!r}; columns: {list(self.columns)}", column
            )
        if cached is None:
            cached = self._derived.setdefault(
                ("ranking", column, higher_is_better),
                self._build_ranking(column, higher_is_better, fact),
            )
        ranking, missing = cached
        if missing:
            if on_missing == "raise":
                raise ValueError(
                    f"{_where(fact)}column {column!r} is missing in row {missing[0]!r}"
                    f" ({len(missing)} row(s) lack it); pass on_missing='skip' to drop them"
                )
            warnings.warn(
                f"{_where(fact)}column {column!r} is missing in {len(missing)} row(s), "
                f"first {missing[0]!r}; they were left out of the ranking",
                SparseColumnWarning,
                stacklevel=3,
            )
        return ranking

    def _build_ranking(
        self, column: str, higher_is_better: bool, fact: str | None
    ) -> tuple[Ranking, tuple[Hashable, ...]]:
        rows = self.rows
        key = self.key
        held: list[int] | None = None  # the rows holding the column, when some do not
        missing: tuple[Hashable, ...] = ()
        try:
            scores = [row[column] for row in rows]
        except KeyError:
            held = [slot for slot, row in enumerate(rows) if column in row]
            missing = tuple(row[key] for row in rows if column not in row)
            scores = [rows[slot][column] for slot in held]
        if not scores:
            raise ValueError(f"{_where(fact)}column {column!r} has no values to rank")
        if not _valid_scores(scores, finite=self._derived.get(_FLAT) is True):
            for slot, value in zip(held or range(len(rows)), scores, strict=True):
                if not is_number(value):
                    where = f"{_where(fact)}column {column!r}, row {rows[slot][key]!r}"
                    raise _score_error(where, value)
        order = sorted(_positions(len(scores)), key=scores.__getitem__, reverse=higher_is_better)
        slots = order if held is None else [held[position] for position in order]
        # The index was built in row order; with plain-str keys its tokens are the names.
        names = list(self._index) if self._derived.get(_STR_KEYS) else [row[key] for row in rows]
        inverse = [-1] * len(rows)
        for position, slot in zip(_positions(len(slots)), slots, strict=True):
            inverse[slot] = position
        ranking = Ranking._trusted(
            column,
            _pick(names, slots),
            _pick(scores, order),
            higher_is_better,
            self._index,
            None,
            inverse,
        )
        return ranking, missing


def _key_index(
    rows: tuple[Any, ...], key: str, dicts: bool = False
) -> tuple[dict[Hashable, int], bool]:
    """(type-strict key -> row position, whether every key is a plain str).

    A row that is not a dict, a missing, unhashable or repeated key raises. C-speed passes for
    plain dict rows (``dicts``: the caller knows they are); the row-by-row loop runs only to
    name a problem.
    """
    if dicts or not rows or set(map(type, rows)) == {dict}:
        try:
            keys = list(map(itemgetter(key), rows))
            plain = set(map(type, keys)) <= _STR
            tokens = keys if plain else list(map(strict_key, keys))
            index = dict(zip(tokens, _positions(len(rows)), strict=True))
        except (KeyError, TypeError):
            pass
        else:
            if len(index) == len(rows):
                return index, plain
    index = {}
    for position, row in enumerate(rows):
        if not isinstance(row, dict):
            raise TypeError(f"row {position} must be a dict, got {type(row).__name__}")
        if key not in row:
            raise ValueError(f"row {position} has no key column {key!r}")
        try:
            token = strict_key(row[key])
            duplicate = token in index
        except TypeError:
            raise TypeError(
                f"row {position}: key {row[key]!r} in column {key!r} is unhashable"
            ) from None
        if duplicate:
            raise ValueError(f"duplicate key {row[key]!r} in column {key!r}")
        index[token] = position
    return index, all(type(token) is str for token in index)
