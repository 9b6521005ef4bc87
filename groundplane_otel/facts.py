"""Typed fact values — Ranking, Table, Domain — and the Provenance that says where they came from.

Values are frozen. What a fact implies (a table's key index, its ranking per column, what checks
derive from it) is computed once and kept on the value itself, in a private ``_derived`` dict,
so checks read recorded evidence without copying it and the cache dies with the value.

The public constructors validate everything. Values the library builds from data it has already
validated (a ranking of a table column, the copy ``record_table`` returns) go through private
``_trusted`` constructors that skip re-validation.
"""

from __future__ import annotations

import copy
import math
import threading
import warnings
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from operator import eq, itemgetter
from typing import TYPE_CHECKING, Any, Literal

from groundplane_otel._copy import copy_out, flat_rows
from groundplane_otel._keys import strict_key
from groundplane_otel._numbers import is_number
from groundplane_otel.errors import SparseColumnWarning

__all__ = ["Domain", "Fact", "Provenance", "Ranking", "Table"]

OnMissing = Literal["raise", "skip"]

_SCORES = frozenset({int, float})
_ATOMS = frozenset({str, int, float, bool, bytes, type(None)})
# _derived keys: every cell (or name) is an immutable atom (see _copy.flat_rows); every key
# is a plain str (its own type-strict token).
_FLAT = "flat"
_STR_KEYS = "str_keys"


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


def _valid_scores(scores: list[Any], finite: bool = False) -> bool:
    """Every score is a finite int or float (bools are not numbers), in C-speed passes.

    ``finite``: every float is already known to be finite (cells the registry validated).
    """
    kinds = set(map(type, scores))
    if not kinds <= _SCORES:
        return False
    if finite or float not in kinds:
        return True
    try:
        if math.isfinite(sum(scores)):  # NaN/±inf survive any sum
            return True
    except OverflowError:
        pass
    return all(map(is_number, scores))


_SHARED_POSITIONS = 1 << 16
_positions_cache: list[int] = list(range(1024))
_positions_lock = threading.Lock()


def _positions(count: int) -> Sequence[int]:
    """``range(count)`` as shared int objects: key indices and rankings of every table reuse
    them instead of allocating an int per row (ints above 256 are not cached by Python).

    Up to 65,536 positions are kept (about 2.3 MB at most); larger tables get a plain range.
    """
    cache = _positions_cache
    if count > len(cache):
        if count > _SHARED_POSITIONS:
            return range(count)
        with _positions_lock:
            cache.extend(range(len(cache), count))  # no-op when another thread got there first
    return cache[:count]


def _pick(values: Sequence[Any], positions: Sequence[int]) -> tuple[Any, ...]:
    """``values`` at ``positions``, as a tuple (one C call)."""
    if len(positions) == 1:
        return (values[positions[0]],)
    return tuple(itemgetter(*positions)(values)) if positions else ()


def _tokens(names: Sequence[Any]) -> Sequence[Hashable]:
    """The type-strict key of each name (plain strings are their own key)."""
    if set(map(type, names)) <= {str}:
        return names
    return list(map(strict_key, names))


def _competition_ranks(scores: Sequence[int | float]) -> Sequence[int]:
    """1-based competition ranks of best-first scores (ties share a rank: 1, 1, 3)."""
    if not any(map(eq, scores, scores[1:])):  # no two neighbours tie: ranks are positions
        return range(1, len(scores) + 1)
    ranks: list[int] = []
    previous: Any = None
    for position, score in enumerate(scores):
        ranks.append(ranks[-1] if position and score == previous else position + 1)
        previous = score
    return tuple(ranks)


@dataclass(frozen=True, slots=True)
class Ranking:
    """Names ordered best-first by score; ties keep their input order.

    ``items`` are the (name, score) pairs. A Ranking the library derives from a table column
    keeps names and scores as two tuples and builds the pairs only when something reads
    ``items`` (checks read ``names`` and ``scores``), which saves a tuple per row. It also
    shares the table's key index (key -> row) and maps a row to its position through
    ``_inverse`` (-1: the row is not ranked), instead of hashing every name again.
    """

    key: str
    items: tuple[tuple[Hashable, int | float], ...]
    higher_is_better: bool = True
    _names: tuple[Hashable, ...] = field(init=False, repr=False, compare=False, default=())
    _scores: tuple[int | float, ...] = field(init=False, repr=False, compare=False, default=())
    _index: dict[Hashable, int] = field(init=False, repr=False, compare=False, default_factory=dict)
    _inverse: Sequence[int] | None = field(init=False, repr=False, compare=False, default=None)
    _ranks: Sequence[int] | None = field(init=False, repr=False, compare=False, default=None)
    _derived: dict[Hashable, Any] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        object.__setattr__(self, "_inverse", None)
        items = tuple((name, score) for name, score in self.items)
        if not items:
            raise ValueError(f"ranking on {self.key!r} is empty")
        index: dict[Hashable, int] = {}
        ranks: list[int] = []
        sign = 1 if self.higher_is_better else -1
        for position, (name, score) in enumerate(items):
            if not is_number(score):
                raise _score_error(f"ranking on {self.key!r}, name {name!r}", score)
            token = strict_key(name)
            if token in index:
                raise ValueError(f"ranking on {self.key!r}: duplicate name {name!r}")
            index[token] = position
            if position and sign * (score - items[position - 1][1]) > 0:
                raise ValueError(f"ranking on {self.key!r} is not ordered best-first at {name!r}")
            tied = position and score == items[position - 1][1]
            ranks.append(ranks[-1] if tied else position + 1)
        object.__setattr__(self, "items", items)
        object.__setattr__(self, "_names", tuple(name for name, _ in items))
        object.__setattr__(self, "_scores", tuple(score for _, score in items))
        object.__setattr__(self, "_index", index)
        object.__setattr__(self, "_ranks", tuple(ranks))
        object.__setattr__(self, "_derived", {})

    if not TYPE_CHECKING:  # hidden from type checkers, so a misspelt attribute stays an error

        def __getattr__(self, attribute: str) -> Any:
            # Called only when normal lookup fails: ``items`` of a derived Ranking, first read.
            if attribute != "items":
                raise AttributeError(
                    f"{type(self).__name__!r} object has no attribute {attribute!r}"
                )
            items = tuple(zip(self._names, self._scores, strict=True))
            object.__setattr__(self, "items", items)
            return items

    @classmethod
    def _trusted(
        cls,
        key: str,
        names: tuple[Hashable, ...],
        scores: tuple[int | float, ...],
        higher_is_better: bool,
        index: dict[Hashable, int],
        ranks: Sequence[int] | None = None,
        inverse: Sequence[int] | None = None,
    ) -> Ranking:
        """A Ranking from data already validated and ordered (no checks run).

        ``index`` maps a name's type-strict key to its position, or, with ``inverse``, to a
        row whose position is ``inverse[row]`` (-1 when that row is not ranked). ``ranks``
        (None: computed when first needed) are the competition ranks.
        """
        ranking = object.__new__(cls)
        setattr_ = object.__setattr__
        setattr_(ranking, "key", key)
        setattr_(ranking, "higher_is_better", higher_is_better)
        setattr_(ranking, "_names", names)
        setattr_(ranking, "_scores", scores)
        setattr_(ranking, "_index", index)
        setattr_(ranking, "_inverse", inverse)
        setattr_(ranking, "_ranks", ranks)
        setattr_(ranking, "_derived", {})
        return ranking

    @classmethod
    def _sorted(
        cls,
        key: str,
        names: list[Any],
        scores: list[Any],
        higher_is_better: bool,
        tokens: list[Hashable] | None = None,
    ) -> Ranking:
        """Rank validated (name, score) pairs stably best-first; a repeated name is a ValueError.

        ``tokens`` (the names' type-strict keys, when the caller already has them) are taken
        as unique.
        """
        order = sorted(_positions(len(scores)), key=scores.__getitem__, reverse=higher_is_better)
        ordered_names = tuple([names[position] for position in order])
        ordered_scores = tuple([scores[position] for position in order])
        if tokens is None:
            ordered_tokens: Sequence[Hashable] = _tokens(ordered_names)
        elif tokens is names:
            ordered_tokens = ordered_names
        else:
            ordered_tokens = [tokens[position] for position in order]
        index = dict(zip(ordered_tokens, _positions(len(order)), strict=True))
        if len(index) != len(order):  # a repeated name: let the validating constructor say so
            return cls(
                key, tuple(zip(ordered_names, ordered_scores, strict=True)), higher_is_better
            )
        return cls._trusted(key, ordered_names, ordered_scores, higher_is_better, index)

    def __deepcopy__(self, memo: dict[int, Any]) -> Ranking:
        flat = self._derived.get(_FLAT)
        if flat is None:
            flat = set(map(type, self._names)) <= _ATOMS
            self._derived[_FLAT] = flat
        if flat:  # names and scores are immutable atoms: they can be shared
            if self._inverse is None:
                index = dict(self._index)
            else:  # a copy stands alone: it does not share a table's index
                names = self._names
                index = dict(zip(_tokens(names), _positions(len(names)), strict=True))
            return Ranking._trusted(
                self.key, self._names, self._scores, self.higher_is_better, index, self._ranks
            )
        return Ranking(self.key, copy.deepcopy(self.items, memo), self.higher_is_better)

    def _rank_table(self) -> Sequence[int]:
        """The competition ranks, computed on first use (most checks never need them)."""
        ranks = self._ranks
        if ranks is None:
            ranks = _competition_ranks(self._scores)
            object.__setattr__(self, "_ranks", ranks)
        return ranks

    @property
    def winner(self) -> Hashable:
        """The first-ranked name (the first supplied among tied leaders)."""
        return self._names[0]

    @property
    def winning_score(self) -> int | float:
        return self._scores[0]

    @property
    def names(self) -> tuple[Hashable, ...]:
        """The names, best first."""
        return self._names

    @property
    def scores(self) -> tuple[int | float, ...]:
        """The scores, best first (``scores[i]`` belongs to ``names[i]``)."""
        return self._scores

    @property
    def ties(self) -> tuple[Hashable, ...]:
        """Names sharing the top score, in order (one name when there is no tie)."""
        return self._names[: self.block_of(0)[1]]

    @property
    def tie_blocks(self) -> tuple[tuple[Hashable, ...], ...]:
        """Runs of names with equal scores, best first."""
        blocks: list[tuple[Hashable, ...]] = []
        start = 0
        while start < len(self._names):
            end = self.block_of(start)[1]
            blocks.append(self._names[start:end])
            start = end
        return tuple(blocks)

    def __contains__(self, name: object) -> bool:
        return self.find(name) is not None

    def find(self, name: object) -> int | None:
        """0-based position of ``name`` (type-strict), None when unknown or unhashable."""
        try:
            found = self._index.get(name if type(name) is str else strict_key(name))
        except TypeError:
            return None
        if found is None or self._inverse is None:
            return found
        position = self._inverse[found]
        return None if position < 0 else position

    def score_of(self, name: Hashable) -> int | float | None:
        """The recorded score of ``name``, or None when it was never ranked."""
        found = self.position_of(name)
        return None if found is None else self._scores[found]

    def rank_of(self, name: Hashable) -> int | None:
        """1-based competition rank (tied names share a rank: 1, 1, 3), None when unknown."""
        found = self.position_of(name)
        return None if found is None else self._rank_table()[found]

    def position_of(self, name: Hashable) -> int | None:
        """0-based position in the ordering, None when unknown."""
        hash(name)  # an unhashable name is a TypeError here, as it always was
        return self.find(name)

    def block_of(self, position: int) -> tuple[int, int]:
        """The [start, end) positions of the tie block holding ``position``."""
        scores = self._scores
        score = scores[position]
        before = position > 0 and scores[position - 1] == score
        if not before and (position + 1 == len(scores) or scores[position + 1] != score):
            return position, position + 1  # no tie around it: no rank table needed
        ranks = self._rank_table()
        rank = ranks[position]
        end = position + 1
        while end < len(ranks) and ranks[end] == rank:
            end += 1
        return rank - 1, end


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
            raise ValueError(
                f"{_where(fact)}unknown column {column!r}; columns: {list(self.columns)}"
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
            keys = [row[key] for row in rows]
            plain = set(map(type, keys)) <= {str}
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


def _where(fact: str | None) -> str:
    return "" if fact is None else f"fact {fact!r}: "


@dataclass(frozen=True, slots=True)
class Domain:
    """A closed set of names (strings)."""

    members: frozenset[str]
    label: str | None = None
    _derived: dict[Hashable, Any] = field(
        init=False, repr=False, compare=False, default_factory=dict
    )

    def __post_init__(self) -> None:
        members = frozenset(self.members)
        for member in members:
            if not isinstance(member, str):
                raise TypeError(f"domain members must be strings, got {member!r}")
        if not members:
            raise ValueError("a domain needs at least one member")
        object.__setattr__(self, "members", members)
        object.__setattr__(self, "_derived", {})

    def __deepcopy__(self, memo: dict[int, Any]) -> Domain:
        # Members are strings in a frozenset: immutable, so shared; the cache starts empty.
        domain = object.__new__(Domain)
        object.__setattr__(domain, "members", self.members)
        object.__setattr__(domain, "label", self.label)
        object.__setattr__(domain, "_derived", {})
        return domain

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
    if set(map(type, pairs)) == {tuple} and set(map(len, pairs)) == {2}:
        names = list(map(itemgetter(0), pairs))
        values = list(map(itemgetter(1), pairs))
        if _valid_scores(values):
            return Ranking._sorted(key, names, values, higher_is_better)
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2:
            raise TypeError(f"{_where(fact)}expected (name, score) pairs, got {pair!r}")
        name, score = pair
        if not is_number(score):
            raise _score_error(f"{_where(fact)}column {key!r}, row {name!r}", score)
    pairs.sort(key=lambda item: item[1], reverse=higher_is_better)
    return Ranking(key, tuple(pairs), higher_is_better)
