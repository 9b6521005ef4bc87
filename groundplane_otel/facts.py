"""Typed fact values — Ranking, Table, Domain — and the Provenance that says where they came from.

Values are frozen. What a fact implies (a table's key index, its ranking per column) is computed
once and cached on the value, so checks read recorded evidence without copying it.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from groundplane_otel._keys import strict_key
from groundplane_otel._numbers import is_number
from groundplane_otel.errors import SparseColumnWarning

__all__ = ["Domain", "Fact", "Provenance", "Ranking", "Table"]

OnMissing = Literal["raise", "skip"]


@dataclass(frozen=True, slots=True)
class Provenance:
    """Where a fact came from: the tool, its arguments and, under OpenTelemetry, the tool span."""

    tool: str | None
    args: Mapping[str, Any] = field(default_factory=dict)
    trace_id: str | None = None
    span_id: str | None = None
    tool_call_id: str | None = None

    def __str__(self) -> str:
        inner = ", ".join(f"{key}={self.args[key]!r}" for key in sorted(self.args))
        return f"{self.tool if self.tool is not None else '<unknown tool>'}({inner})"


@dataclass(frozen=True, slots=True)
class Fact:
    """A recorded value under a name, with its provenance."""

    name: str
    value: Any
    provenance: Provenance


def _score_error(where: str, score: object) -> ValueError:
    return ValueError(f"{where}: score must be a finite int or float, got {score!r}")


@dataclass(frozen=True, slots=True)
class Ranking:
    """Names ordered best-first by score; ties keep their input order."""

    key: str
    items: tuple[tuple[Hashable, int | float], ...]
    higher_is_better: bool = True
    _index: dict[Hashable, tuple[int, int | float]] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )
    _ranks: tuple[int, ...] = field(init=False, repr=False, compare=False, default=())

    def __post_init__(self) -> None:
        items = tuple((name, score) for name, score in self.items)
        if not items:
            raise ValueError(f"ranking on {self.key!r} is empty")
        index: dict[Hashable, tuple[int, int | float]] = {}
        ranks: list[int] = []
        sign = 1 if self.higher_is_better else -1
        for position, (name, score) in enumerate(items):
            if not is_number(score):
                raise _score_error(f"ranking on {self.key!r}, name {name!r}", score)
            token = strict_key(name)
            if token in index:
                raise ValueError(f"ranking on {self.key!r}: duplicate name {name!r}")
            index[token] = (position, score)
            if position and sign * (score - items[position - 1][1]) > 0:
                raise ValueError(f"ranking on {self.key!r} is not ordered best-first at {name!r}")
            tied = position and score == items[position - 1][1]
            ranks.append(ranks[-1] if tied else position + 1)
        object.__setattr__(self, "items", items)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_ranks", tuple(ranks))

    def __deepcopy__(self, memo: dict[int, Any]) -> Ranking:
        return Ranking(self.key, copy.deepcopy(self.items, memo), self.higher_is_better)

    @property
    def winner(self) -> Hashable:
        """The first-ranked name (the first supplied among tied leaders)."""
        return self.items[0][0]

    @property
    def winning_score(self) -> int | float:
        return self.items[0][1]

    @property
    def names(self) -> tuple[Hashable, ...]:
        return tuple(name for name, _ in self.items)

    @property
    def ties(self) -> tuple[Hashable, ...]:
        """Names sharing the top score, in order (one name when there is no tie)."""
        return self.tie_blocks[0]

    @property
    def tie_blocks(self) -> tuple[tuple[Hashable, ...], ...]:
        """Runs of names with equal scores, best first."""
        blocks: list[list[Hashable]] = []
        for position, (name, _) in enumerate(self.items):
            if position and self._ranks[position] == self._ranks[position - 1]:
                blocks[-1].append(name)
            else:
                blocks.append([name])
        return tuple(tuple(block) for block in blocks)

    def __contains__(self, name: object) -> bool:
        try:
            return strict_key(name) in self._index
        except TypeError:
            return False

    def score_of(self, name: Hashable) -> int | float | None:
        """The recorded score of ``name``, or None when it was never ranked."""
        found = self._index.get(strict_key(name))
        return None if found is None else found[1]

    def rank_of(self, name: Hashable) -> int | None:
        """1-based competition rank (tied names share a rank: 1, 1, 3), None when unknown."""
        found = self._index.get(strict_key(name))
        return None if found is None else self._ranks[found[0]]

    def position_of(self, name: Hashable) -> int | None:
        """0-based position in the ordering, None when unknown."""
        found = self._index.get(strict_key(name))
        return None if found is None else found[0]

    def block_of(self, position: int) -> tuple[int, int]:
        """The [start, end) positions of the tie block holding ``position``."""
        start = self._ranks[position] - 1
        end = position + 1
        while end < len(self.items) and self._ranks[end] == self._ranks[position]:
            end += 1
        return start, end


@dataclass(frozen=True, slots=True)
class Table:
    """Rows keyed by one column; ``exhaustive=False`` marks a truncated result set."""

    key: str
    rows: tuple[dict[str, Any], ...]
    columns: tuple[str, ...]
    exhaustive: bool = True
    _index: dict[Hashable, int] = field(init=False, repr=False, compare=False, default_factory=dict)
    _rankings: dict[tuple[str, bool], tuple[Ranking, tuple[Hashable, ...]]] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        rows = tuple(self.rows)
        columns = tuple(self.columns)
        if self.key not in columns:
            raise ValueError(f"key column {self.key!r} is not among the columns {list(columns)}")
        index: dict[Hashable, int] = {}
        for position, row in enumerate(rows):
            if not isinstance(row, dict):
                raise TypeError(f"row {position} must be a dict, got {type(row).__name__}")
            if self.key not in row:
                raise ValueError(f"row {position} has no key column {self.key!r}")
            try:
                token = strict_key(row[self.key])
                duplicate = token in index
            except TypeError:
                raise TypeError(
                    f"row {position}: key {row[self.key]!r} in column {self.key!r} is unhashable"
                ) from None
            if duplicate:
                raise ValueError(f"duplicate key {row[self.key]!r} in column {self.key!r}")
            index[token] = position
        object.__setattr__(self, "rows", rows)
        object.__setattr__(self, "columns", columns)
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_rankings", {})

    def __deepcopy__(self, memo: dict[int, Any]) -> Table:
        return Table(self.key, copy.deepcopy(self.rows, memo), self.columns, self.exhaustive)

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return iter(self.rows)

    @property
    def keys(self) -> tuple[Hashable, ...]:
        return tuple(row[self.key] for row in self.rows)

    def has_key(self, key: object) -> bool:
        try:
            return strict_key(key) in self._index
        except TypeError:
            return False

    def row(self, key: Hashable) -> dict[str, Any]:
        """The row whose key column equals ``key`` (type-strict); KeyError when absent."""
        position = self._index.get(strict_key(key))
        if position is None:
            raise KeyError(f"no row with {self.key}={key!r}")
        return self.rows[position]

    def cell(self, key: Hashable, column: str, *, fact: str | None = None) -> Any:
        """One cell; a row lacking the column is a named data error (ValueError)."""
        row = self.row(key)
        if column not in row:
            raise ValueError(f"{_where(fact)}row {key!r} has no column {column!r}")
        return row[column]

    def column(self, name: str) -> tuple[Any, ...]:
        """Every row's value in column ``name``; a row lacking it is a ValueError naming it."""
        if name not in self.columns:
            raise KeyError(f"unknown column {name!r}; columns: {list(self.columns)}")
        for row in self.rows:
            if name not in row:
                raise ValueError(f"row {row[self.key]!r} has no column {name!r}")
        return tuple(row[name] for row in self.rows)

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
        if on_missing not in ("raise", "skip"):
            raise ValueError(f'on_missing must be "raise" or "skip", got {on_missing!r}')
        if column not in self.columns:
            raise ValueError(
                f"{_where(fact)}unknown column {column!r}; columns: {list(self.columns)}"
            )
        cached = self._rankings.get((column, higher_is_better))
        if cached is None:
            cached = self._build_ranking(column, higher_is_better, fact)
            self._rankings[(column, higher_is_better)] = cached
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
        scored: list[tuple[Hashable, int | float]] = []
        missing: list[Hashable] = []
        for row in self.rows:
            if column not in row:
                missing.append(row[self.key])
                continue
            value = row[column]
            if not is_number(value):
                raise _score_error(f"{_where(fact)}column {column!r}, row {row[self.key]!r}", value)
            scored.append((row[self.key], value))
        if not scored:
            raise ValueError(f"{_where(fact)}column {column!r} has no values to rank")
        scored.sort(key=lambda item: item[1], reverse=higher_is_better)
        return Ranking(column, tuple(scored), higher_is_better), tuple(missing)


def _where(fact: str | None) -> str:
    return "" if fact is None else f"fact {fact!r}: "


@dataclass(frozen=True, slots=True)
class Domain:
    """A closed set of names (strings)."""

    members: frozenset[str]
    label: str | None = None

    def __post_init__(self) -> None:
        members = frozenset(self.members)
        for member in members:
            if not isinstance(member, str):
                raise TypeError(f"domain members must be strings, got {member!r}")
        if not members:
            raise ValueError("a domain needs at least one member")
        object.__setattr__(self, "members", members)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self.members))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and name in self.members

    def __len__(self) -> int:
        return len(self.members)

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)


def ranking_from_scores(
    key: str,
    scores: Mapping[Any, Any] | Sequence[tuple[Any, Any]],
    higher_is_better: bool = True,
    *,
    fact: str | None = None,
) -> Ranking:
    """Sort (name, score) pairs stably best-first; a bad score is a ValueError naming the row."""
    pairs = list(scores.items()) if isinstance(scores, Mapping) else list(scores)
    if not pairs:
        raise ValueError(f"{_where(fact)}ranking needs at least one (name, score) pair")
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"{_where(fact)}expected (name, score) pairs, got {pair!r}")
        name, score = pair
        if not is_number(score):
            raise _score_error(f"{_where(fact)}column {key!r}, row {name!r}", score)
    pairs.sort(key=lambda item: item[1], reverse=higher_is_better)
    return Ranking(key, tuple(pairs), higher_is_better)
