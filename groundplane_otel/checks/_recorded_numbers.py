"""The numbers a set of facts records, and where each one lives: exact lookup, rounding, nearest.

What counts as recorded: every int or float (never a bool) in a fact's value — a Table's cells
(key column included), a Ranking's scores and numeric names, numbers anywhere inside a plain
value (mappings, lists) — and in the fact's provenance arguments (what the tool was asked:
``year=2026``). Strings are never numbers, even numeric-looking ones.

What a recorded number *reads as*, exactly: an int is itself; a float is the decimal its
shortest ``repr`` spells (``0.1`` is 0.1, not 0.1000000000000000055…; ``0.1 + 0.2`` is
0.30000000000000004), which is what the tool printed and what a JSON payload said.

Arithmetic runs in one fixed context (1,000 digits), never the thread's decimal context.

Cost: a passing text costs one set lookup per numeral against the raw recorded values (built
once per Table or Ranking and kept on it). Only a miss, or declared rounding, builds the sorted
exact list (one ``Decimal`` per recorded number, also kept on the fact).
"""

from __future__ import annotations

import bisect
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Context, Decimal, InvalidOperation
from typing import Any, Final, Literal

from groundplane_otel.checks._memo import derived
from groundplane_otel.facts import Domain, Fact, Ranking, Table

__all__ = ["Recorded", "RecordedNumbers", "Rounding", "as_decimal", "rounds_to"]

Rounding = Literal["half_even", "half_up"]
_MODES: Final = {"half_even": ROUND_HALF_EVEN, "half_up": ROUND_HALF_UP}
_CONTEXT: Final = Context(prec=1000, Emin=-(10**6), Emax=10**6, traps=[InvalidOperation])
_SAFE: Final = 2**53  # below this, an integral float's binary value is its shortest repr
_FAST, _SORTED = "numbers_recorded.values", "numbers_recorded.sorted"


def as_decimal(value: int | float) -> Decimal:
    """What a recorded number reads as: an int exactly, a float by its shortest repr."""
    return Decimal(value) if type(value) is int else Decimal(repr(value))


def rounds_to(value: Decimal, target: Decimal, quantum: Decimal, mode: Rounding) -> bool:
    """Whether ``value`` rounded to ``quantum`` (``mode``) is ``target`` (exact arithmetic)."""
    try:
        return value.quantize(quantum, rounding=_MODES[mode], context=_CONTEXT) == target
    except InvalidOperation:
        return False


@dataclass(frozen=True, slots=True)
class Recorded:
    """One recorded number: as recorded, what it reads as, and where it lives."""

    value: int | float
    exact: Decimal
    fact: str
    row: Hashable | None  # the Table row key, the Ranking name; None in a plain value
    column: str | None  # the Table column, the Ranking key, the path in a value / "args.k"


def _is_number(value: object) -> bool:
    return type(value) is int or type(value) is float


def _walk(value: Any, path: str) -> Iterator[tuple[str, int | float]]:
    """Every number inside a plain value, with its dotted path."""
    if _is_number(value):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from _walk(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, (list, tuple)):
        for position, item in enumerate(value):
            yield from _walk(item, f"{path}.{position}" if path else str(position))


def _located(fact: Fact) -> Iterator[Recorded]:
    """Every number a fact records, in recording order."""
    name, value = fact.name, fact.value
    if isinstance(value, Table):
        for row in value.rows:
            key = row.get(value.key)
            for column in value.columns:
                for path, number in _walk(row.get(column), column):
                    yield Recorded(number, as_decimal(number), name, key, path)
    elif isinstance(value, Ranking):
        for entity, score in zip(value.names, value.scores, strict=True):
            if _is_number(entity):
                yield Recorded(entity, as_decimal(entity), name, entity, None)  # type: ignore[arg-type]
            yield Recorded(score, as_decimal(score), name, entity, value.key)
    elif not isinstance(value, Domain):
        for path, number in _walk(value, ""):
            yield Recorded(number, as_decimal(number), name, None, path or None)
    for path, number in _walk(dict(fact.provenance.args), "args"):
        yield Recorded(number, as_decimal(number), name, None, path)


def _raw_values(fact: Fact) -> frozenset[int | float]:
    """The recorded numbers as raw ints and floats, for the fast membership test."""
    value = fact.value
    if isinstance(value, Table):
        found: set[int | float] = set()
        for column in value.columns:
            cells: list[Any] = [row.get(column) for row in value.rows]
            kinds = set(map(type, cells))
            if kinds <= {int, float}:
                found.update(cells)
            elif kinds & {int, float, dict, list, tuple}:
                found.update(number for cell in cells for _, number in _walk(cell, ""))
    elif isinstance(value, Ranking):
        found = set(value.scores)
        found.update(name for name in value.names if _is_number(name))  # type: ignore[misc]
    elif isinstance(value, Domain):
        found = set()
    else:
        found = {number for _, number in _walk(value, "")}
    found.update(number for _, number in _walk(dict(fact.provenance.args), ""))
    return frozenset(found)


def _cached(fact: Fact, key: str, build: Any) -> Any:
    value = fact.value
    if isinstance(value, (Table, Ranking)):  # each recorded value belongs to one fact
        return derived(value, key, build)
    return build()


class RecordedNumbers:
    """The numbers recorded by some facts: ``holds`` (exact), ``rounded`` (declared rounding),
    and ``nearest`` / ``scaled`` / ``find`` for the receipt of a number that is not recorded."""

    def __init__(self, facts: Sequence[Fact]) -> None:
        self._facts = tuple(facts)
        self._raw = [_cached(fact, _FAST, lambda fact=fact: _raw_values(fact)) for fact in facts]
        self._sorted: list[Recorded] | None = None
        self._keys: list[Decimal] = []
        self._shapes: dict[tuple[int, tuple[int, ...]], Recorded] | None = None

    def _fast(self, target: Decimal) -> bool | None:
        """True when a raw value proves ``target`` recorded; None when only the exact list
        can tell (a miss, or a large integral value a float may stand for)."""
        try:
            integral = target == target.to_integral_value(context=_CONTEXT)
            key: int | float = int(target) if integral else float(target)
        except (InvalidOperation, OverflowError, ValueError):
            return None
        if not any(key in raw for raw in self._raw):
            return None
        if integral:
            return True if abs(key) < _SAFE else None
        return True if Decimal(repr(key)) == target else None

    def _ordered(self) -> list[Recorded]:
        if self._sorted is None:
            merged: list[Recorded] = []
            for fact in self._facts:
                merged.extend(_cached(fact, _SORTED, lambda fact=fact: _sorted_of(fact)))
            if len(self._facts) > 1:
                merged.sort(key=_exact)
            self._sorted = merged
            self._keys = [entry.exact for entry in merged]
        return self._sorted

    def find(self, target: Decimal) -> Recorded | None:
        """The first recorded number that reads exactly as ``target``."""
        ordered = self._ordered()
        position = bisect.bisect_left(self._keys, target)
        if position < len(ordered) and self._keys[position] == target:
            return ordered[position]
        return None

    def holds(self, target: Decimal) -> bool:
        """Whether some recorded number reads exactly as ``target``."""
        fast = self._fast(target)
        return fast if fast is not None else self.find(target) is not None

    def rounded(self, target: Decimal, quantum: Decimal, mode: Rounding) -> Recorded | None:
        """A recorded number that rounds (``mode``) to ``target`` at ``quantum``."""
        ordered = self._ordered()
        half = _CONTEXT.divide(quantum, 2)
        low = bisect.bisect_left(self._keys, _CONTEXT.subtract(target, half))
        high = bisect.bisect_right(self._keys, _CONTEXT.add(target, half))
        for entry in ordered[low:high]:
            if rounds_to(entry.exact, target, quantum, mode):
                return entry
        return None

    def nearest(self, target: Decimal) -> Recorded | None:
        """The recorded number closest to ``target`` (the lower one on a tie)."""
        ordered = self._ordered()
        if not ordered:
            return None
        position = bisect.bisect_left(self._keys, target)
        candidates = ordered[max(0, position - 1) : position + 1]
        return min(candidates, key=lambda entry: abs(_CONTEXT.subtract(entry.exact, target)))

    def scaled(self, target: Decimal) -> Recorded | None:
        """A recorded number with the same digits and sign at another power of ten."""
        if self._shapes is None:
            self._shapes = {}
            for entry in self._ordered():
                self._shapes.setdefault(_shape(entry.exact), entry)
        if target.is_zero():
            return None
        found = self._shapes.get(_shape(target))
        return None if found is None or found.exact == target else found


def _exact(entry: Recorded) -> Decimal:
    return entry.exact


def _sorted_of(fact: Fact) -> list[Recorded]:
    return sorted(_located(fact), key=_exact)


def _shape(value: Decimal) -> tuple[int, tuple[int, ...]]:
    sign, digits, _ = value.normalize(context=_CONTEXT).as_tuple()
    return sign, digits
