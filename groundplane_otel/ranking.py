"""Ranking: names ordered best-first by score, computed in code; ties keep input order.

A Ranking is frozen. What checks derive from it lives in a private ``_derived`` dict on the value,
so the cache dies with the fact. ``ranking_from_scores`` sorts (name, score) pairs stably
(``ranking_from_columns``: the same from a name and a score column).
"""

from __future__ import annotations

import copy
import math
import threading
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import eq, itemgetter
from typing import Any, Literal

from groundplane_otel._arithmetic import is_number
from groundplane_otel._frozen import draft_class
from groundplane_otel._keys import strict_key

__all__ = ["OnMissing", "Ranking", "ranking_from_columns", "ranking_from_scores"]

OnMissing = Literal["raise", "skip"]

_SCORES = frozenset({int, float})
_ATOMS = frozenset({str, int, float, bool, bytes, type(None)})
# _derived keys: every cell (or name) is an immutable atom (see _copy.flat_rows); every key
# is a plain str (its own type-strict token).
_FLAT = "flat"
_STR_KEYS = "str_keys"


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


_STR = frozenset({str})


def _tokens(names: Sequence[Any]) -> Sequence[Hashable]:
    """The type-strict key of each name (plain strings are their own key)."""
    if set(map(type, names)) <= _STR:
        return names
    return list(map(strict_key, names))


_CACHED_INTS = 257  # range(257) yields 0..256, ints CPython shares: no ``_positions`` needed


def _index_of(names: tuple[Hashable, ...]) -> dict[Hashable, int] | None:
    """``Ranking._index`` of ``names`` (type-strict key -> position); None when one repeats."""
    count = len(names)
    # For a few names, ``_positions`` is a range (one index per captured fact).
    tokens = _tokens(names)
    positions = range(count) if count <= _CACHED_INTS else _positions(count)
    # As many positions as names: no ``strict`` test needed.
    index = dict(zip(tokens, positions))  # noqa: B905
    return index if len(index) == count else None


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


def _where(fact: str | None) -> str:
    return "" if fact is None else f"fact {fact!r}: "


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
        ranking = _RankingDraft()  # built cheaply (``_frozen``); ``items`` stays unset
        ranking.key = key
        ranking.higher_is_better = higher_is_better
        ranking._names = names
        ranking._scores = scores
        ranking._index = index
        ranking._inverse = inverse
        ranking._ranks = ranks
        ranking._derived = {}
        ranking.__class__ = cls  # ``finish`` inlined: one call less per captured ranking
        built: Ranking = ranking
        return built

    @classmethod
    def _sorted(
        cls, key: str, names: list[Any], scores: list[Any], higher_is_better: bool
    ) -> Ranking:
        """Rank validated (name, score) pairs stably best-first; a repeated name is a ValueError.

        Scores already in order (tool results often come ranked) are taken as they are: a
        stable sort would keep them so. C-speed passes either way (validated scores have no
        NaN: sorted equals them exactly when they are in order, a cheaper test than pairwise).
        """
        if sorted(scores, reverse=higher_is_better) == scores:
            ordered_names, ordered_scores = tuple(names), tuple(scores)
        else:
            order = sorted(
                _positions(len(scores)), key=scores.__getitem__, reverse=higher_is_better
            )
            ordered_names, ordered_scores = _pick(names, order), _pick(scores, order)
        index = _index_of(ordered_names)
        if index is None:  # a repeated name: the validating constructor says which
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
            # A copy stands alone: it does not share a table's index (validated names: the
            # index is never None).
            index = dict(self._index) if self._inverse is None else _index_of(self._names) or {}
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

    def score_of(self, name: object) -> int | float | None:
        """The recorded score of ``name``; None when it was never ranked (or is unhashable)."""
        found = self.find(name)
        return None if found is None else self._scores[found]

    def rank_of(self, name: object) -> int | None:
        """1-based position in the computed order (ties keep input order: 1, 2, 3); None when
        ``name`` was never ranked (or is unhashable). ``competition_rank`` shares ties' rank."""
        found = self.find(name)
        return None if found is None else found + 1

    def competition_rank(self, name: object) -> int | None:
        """1-based competition rank (tied names share a rank: 1, 1, 3), None when unknown."""
        found = self.find(name)
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


class _LazyItems:
    """``Ranking.items``: its slot, filled from the names and scores on first read when unset
    (a derived Ranking). A descriptor, not ``__getattr__``: a class with ``__getattr__`` has
    every attribute read go through it, never CPython's fast slot read."""

    def __init__(self, slot: Any) -> None:
        self.slot = slot  # the slot's own member descriptor

    def __get__(self, ranking: Ranking | None, owner: type | None = None) -> Any:
        if ranking is None:
            return self
        try:
            return self.slot.__get__(ranking, owner)
        except AttributeError:  # unset: built now, once
            items = tuple(zip(ranking._names, ranking._scores, strict=True))
            self.slot.__set__(ranking, items)
            return items

    def __set__(self, ranking: Ranking, items: Any) -> None:
        self.slot.__set__(ranking, items)

    def __delete__(self, ranking: Ranking) -> None:
        self.slot.__delete__(ranking)


setattr(Ranking, "items", _LazyItems(Ranking.__dict__["items"]))  # noqa: B010 - typed a field
_RankingDraft = draft_class(Ranking)


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


def ranking_from_columns(
    key: str,
    names: list[Any],
    scores: list[Any],
    higher_is_better: bool = True,
    *,
    fact: str | None = None,
) -> Ranking:
    """``ranking_from_scores`` of ``zip(names, scores)`` (a name and a score column, read from
    rows or an object): the same ranking or the same error, without building the pairs."""
    if scores and _valid_scores(scores):
        return Ranking._sorted(key, names, scores, higher_is_better)
    pairs = list(zip(names, scores, strict=True))
    return ranking_from_scores(key, pairs, higher_is_better, fact=fact)
