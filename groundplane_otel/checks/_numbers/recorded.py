"""The numbers a set of facts records, and where each one lives: exact lookup, rounding, nearest.

What counts as recorded: every int or float (never a bool) in a fact's value — a Table's cells
(key column included), a Ranking's scores and numeric names, numbers anywhere inside a plain
value (mappings, lists) — and in the fact's provenance arguments (what the tool was asked:
``year=2026``). Strings are never numbers, even numeric-looking ones. A retrieval (Documents)
records none: its scores, ids and arguments (``top_k``) are metadata, never evidence; its text
is evidence only when declared (``_numbers.documents``).

What a recorded number *reads as*, exactly: an int is itself; a float is the decimal its
shortest ``repr`` spells (``0.1`` is 0.1, not 0.1000000000000000055…; ``0.1 + 0.2`` is
0.30000000000000004), which is what the tool printed and what a JSON payload said.

Arithmetic runs in one fixed context (1,000 digits), never the thread's decimal context.

Cost: a passing text costs one set lookup per numeral against the raw recorded values (built
once per Table or Ranking and kept on it). Only a miss, or declared rounding, sorts the raw
values (kept on the fact too); only a receipt locates them (one pass over the cells).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Hashable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Context, Decimal, InvalidOperation
from itertools import chain, repeat
from typing import Any, Final, Literal

from groundplane_otel.checks._base import dotted_leaves
from groundplane_otel.checks._memo import derived
from groundplane_otel.documents import Documents
from groundplane_otel.facts import Domain, Fact, Ranking, Table

__all__ = ["CONTEXT", "Recorded", "RecordedNumbers", "Rounding", "as_decimal", "rounds_to"]

Rounding = Literal["half_even", "half_up"]
_MODES: Final = {"half_even": ROUND_HALF_EVEN, "half_up": ROUND_HALF_UP}
_CONTEXT: Final = Context(prec=1000, Emin=-(10**6), Emax=10**6, traps=[InvalidOperation])
CONTEXT: Final = _CONTEXT
"""The one fixed arithmetic context of prose numbers (never the thread's)."""
_SAFE: Final = 2**53  # below this, an integral float's binary value is its shortest repr
_FAST, _SORTED = "numbers_recorded.values", "numbers_recorded.sorted"


def as_decimal(value: int | float) -> Decimal:
    """What a recorded number reads as: an int exactly, a float by its shortest repr (an int
    or float subclass as its int or float value)."""
    kind = type(value)
    if kind is int:
        return Decimal(value)
    if kind is float:
        return Decimal(repr(value))
    return Decimal(int(value)) if isinstance(value, int) else Decimal(repr(float(value)))


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
    document: str | None = None  # the document id, when a retrieved document's text spells it


_NUMBERS: Final = frozenset({int, float})
_NO_NUMBERS: Final = frozenset({str, bytes, bool, type(None)})


def _is_number(value: object) -> bool:
    return type(value) is int or type(value) is float


def _walk(value: Any, path: str) -> Iterator[tuple[str, Any]]:
    """Every number inside a plain value, with its dotted path."""
    return dotted_leaves(value, _is_number, path)


def _located(fact: Fact) -> Iterator[tuple[int | float, Hashable | None, str | None]]:
    """Every number a fact records, in recording order: (number, row, column)."""
    value = fact.value
    if isinstance(value, Documents):
        return
    if isinstance(value, Table):
        for row in value.rows:
            key = row.get(value.key)
            for column in value.columns:
                cell = row.get(column)
                if type(cell) is int or type(cell) is float:
                    yield cell, key, column
                elif isinstance(cell, (Mapping, list, tuple)):
                    for path, number in _walk(cell, column):
                        yield number, key, path
    elif isinstance(value, Ranking):
        for entity, score in zip(value.names, value.scores, strict=True):
            if _is_number(entity):
                yield entity, entity, None  # type: ignore[misc]
            yield score, entity, value.key
    elif not isinstance(value, Domain):
        for path, number in _walk(value, ""):
            yield number, None, path or None
    for path, number in _walk(dict(fact.provenance.args), "args"):
        yield number, None, path


def _raw_values(fact: Fact) -> frozenset[int | float]:
    """The recorded numbers as raw ints and floats, for the fast membership test."""
    value = fact.value
    if isinstance(value, Documents):
        return frozenset()
    if isinstance(value, Table):
        found: set[int | float] = set()
        for column in value.columns:
            cells: list[Any] = list(map(dict.get, value.rows, repeat(column)))
            kinds = set(map(type, cells))
            if kinds <= _NUMBERS:
                found.update(cells)
            elif not kinds <= _NO_NUMBERS:  # numbers, or containers that may hold them
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
    and ``find`` / ``nearest`` / ``scaled`` for the receipt of a number that is not recorded.

    Lookups beyond the fast set bisect the raw values sorted by their binary value (ints and
    floats compare exactly), widened by a float step either way (a float's shortest repr lies
    within half a step of it), and decide on the exact reading of each candidate.
    """

    def __init__(self, facts: Sequence[Fact]) -> None:
        self._facts = tuple(facts)
        self._raw = [_cached(fact, _FAST, lambda fact=fact: _raw_values(fact)) for fact in facts]
        self._natives: list[int | float] | None = None
        self._where: dict[tuple[bool, int | float], tuple[str, Hashable, str | None]] | None = None
        self._locator: Iterator[tuple[str, int | float, Hashable | None, str | None]] = iter(())

    def _fast(self, target: Decimal) -> bool | None:
        """Whether the raw values prove ``target`` recorded (True) or absent (False); None
        when only the exact lookup can tell.

        A float reading exactly as a non-integral ``target`` *is* ``float(target)`` (a shortest
        repr round-trips), so a miss is final; so is a miss on an integral ``target`` below
        2**53. Above it, a float may read as ``target`` without equalling it: ask ``find``.
        """
        try:
            integral = target == target.to_integral_value(context=_CONTEXT)
            key: int | float = int(target) if integral else float(target)
        except (InvalidOperation, OverflowError, ValueError):
            return None
        small = abs(key) < _SAFE
        if not any(key in raw for raw in self._raw):
            return False if small or not integral else None
        if integral:
            return True if small else None
        return True if Decimal(repr(key)) == target else None

    def _sorted(self) -> list[int | float]:
        if self._natives is None:
            if len(self._facts) == 1:
                raw = self._raw[0]
                self._natives = _cached(self._facts[0], _SORTED, lambda: sorted(raw))
            else:  # no set union: 2**60 and float(2**60) are equal but read differently
                self._natives = sorted(chain.from_iterable(self._raw))
        return self._natives

    def _window(self, low: Decimal, high: Decimal) -> list[int | float]:
        """Raw values whose exact reading may lie in ``[low, high]``."""
        natives = self._sorted()
        start = bisect.bisect_left(natives, _step(low, -math.inf))
        end = bisect.bisect_right(natives, _step(high, math.inf))
        return natives[start:end]

    def _record(self, number: int | float) -> Recorded:
        """Where ``number`` is first recorded: the cells are read only as far as needed."""
        key = (type(number) is float, number)
        where = self._where
        if where is None:
            where = self._where = {}
            self._locator = (
                (fact.name, *found) for fact in self._facts for found in _located(fact)
            )
        while key not in where:
            name, found, row, column = next(self._locator)
            where.setdefault((type(found) is float, found), (name, row, column))
        name, row, column = where[key]
        return Recorded(number, as_decimal(number), name, row, column)

    def holds(self, target: Decimal) -> bool:
        """Whether some recorded number reads exactly as ``target``."""
        fast = self._fast(target)
        return fast if fast is not None else self.find(target) is not None

    def find(self, target: Decimal) -> Recorded | None:
        """The recorded number that reads exactly as ``target``, and where it lives."""
        if self._fast(target) is False:
            return None
        for number in self._window(target, target):
            if as_decimal(number) == target:
                return self._record(number)
        return None

    def rounded(self, target: Decimal, quantum: Decimal, mode: Rounding) -> Recorded | None:
        """A recorded number that rounds (``mode``) to ``target`` at ``quantum``."""
        half = _CONTEXT.divide(quantum, 2)
        low, high = _CONTEXT.subtract(target, half), _CONTEXT.add(target, half)
        for number in self._window(low, high):
            if rounds_to(as_decimal(number), target, quantum, mode):
                return self._record(number)
        return None

    def nearest(self, target: Decimal) -> Recorded | None:
        """The recorded number closest to ``target`` (the lower one on a tie)."""
        natives = self._sorted()
        if not natives:
            return None
        position = bisect.bisect_left(natives, target)
        candidates = natives[max(0, position - 2) : position + 2]
        best = min(candidates, key=lambda n: abs(_CONTEXT.subtract(as_decimal(n), target)))
        return self._record(best)

    def scaled(self, target: Decimal) -> Recorded | None:
        """A recorded number with the same digits and sign at another power of ten (up to
        10**15 either way): 1,000 for a recorded 10,000, 1.2M for a recorded 1.2."""
        sign, digits, exponent = target.as_tuple()
        assert isinstance(exponent, int)
        if target.is_zero() or len(digits) > _SCALE_DIGITS:
            return None
        for power in _POWERS:
            shifted = Decimal((sign, digits, exponent + power))
            if self.holds(shifted):
                return self.find(shifted)
        return None


_SCALE_DIGITS: Final = 40  # longer numerals are not probed at other powers of ten
_POWERS: Final = tuple(sorted((p for p in range(-15, 16) if p), key=abs))


def _step(value: Decimal, towards: float) -> float:
    """``value`` as a float, two float steps further out (a bound no reading escapes)."""
    try:
        bound = float(value)
    except OverflowError:  # pragma: no cover - Decimal → float saturates to inf instead
        return towards
    return math.nextafter(math.nextafter(bound, towards), towards)
