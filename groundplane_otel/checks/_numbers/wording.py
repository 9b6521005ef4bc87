"""What the words around a number say about it: its direction and its unit, judged against the
recorded values (numbers_recorded's direction and unit rules; see ``direction`` and ``units``).

For a numeral with a bound direction or (with declared ``units``) a unit written, :func:`judge`
returns ``SUPPORTED``, a :class:`Refusal` (its code, the recorded value it contradicts, what
was expected), or the numeral to check as usual (signed by its direction: ``fell 3.2%`` is
-3.2); None when no word around it bears on it (checked as today).

Direction: the signed claim is supported → supported; else its opposite is supported only by
recorded *changes* → ``number_direction_false``; also by a value that is not a change (a level:
``lost 3 deals`` for a recorded 3) → supported, the magnitude matches and the direction is not
judged; else the signed claim is checked (and diagnosed) as usual.

Units (only with a claimed unit, and declared ``units`` or ``documents``): a recorded value
matching a reading of the claim in an agreeing unit, or in an undeclared column → supported;
only in columns declaring another unit → ``number_unit_mismatch``; else, when retrieved
documents spell the value: without a unit or in an agreeing one → supported, only in other
units → ``number_unit_mismatch`` (``$12`` against "12 months"); none → the usual path.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Final, Literal, Protocol

from groundplane_otel.checks._numbers.direction import Bound, ChangeColumns
from groundplane_otel.checks._numbers.documents import WithDocuments
from groundplane_otel.checks._numbers.prose_fields import negated, shifted
from groundplane_otel.checks._numbers.prose_scan import Numeral
from groundplane_otel.checks._numbers.recorded import Recorded, RecordedNumbers, Rounding, rounds_to
from groundplane_otel.checks._numbers.units import agrees, claimed_unit, conversions

__all__ = ["SUPPORTED", "Refusal", "Spec", "judge"]

SUPPORTED: Final = "supported"


@dataclass(frozen=True, slots=True)
class Refusal:
    """A numeral whose words contradict a recorded value: the code, the value, the why."""

    code: str
    record: Recorded
    expected: str


class Spec(Protocol):
    """What the judgment needs from the check's configuration."""

    @property
    def rounding(self) -> Rounding | None: ...

    @property
    def percent_as_ratio(self) -> bool: ...

    def _readings(self, numeral: Numeral) -> list[tuple[Decimal, Decimal]]: ...

    def _supported(self, index: RecordedNumbers, numeral: Numeral) -> bool: ...


def _records(
    index: RecordedNumbers, value: Decimal, quantum: Decimal, rounding: Rounding | None
) -> Iterator[Recorded]:
    """The recorded values ``value`` (written to ``quantum``) reads as: exactly (one lookup), or
    any that rounds to it under the declared ``rounding`` (a pass over the values)."""
    if rounding is None:
        return iter(index.every(value))
    return (
        record
        for record in index.located()
        if record.exact == value or rounds_to(record.exact, value, quantum, rounding)
    )


def judge(
    text: str,
    numeral: Numeral,
    bound: Bound | None,
    index: RecordedNumbers,
    spec: Spec,
    units: Mapping[str, str],
    changes: frozenset[str],
) -> Numeral | Refusal | Literal["supported"] | None:
    """The verdict of the words around ``numeral`` (see the module docstring)."""
    documents = isinstance(index, WithDocuments)
    claimed = claimed_unit(text, numeral) if units or documents else None
    if bound is None and claimed is None:
        return None
    signed = numeral
    if bound is not None and bound.sign < 0:
        signed = replace(numeral, value=negated(numeral.value))
    if claimed is not None:
        verdict = _units(signed, claimed, index, spec, units)
        if verdict is not None or bound is None:
            return verdict
    assert bound is not None
    if spec._supported(index, signed):
        return SUPPORTED
    opposite = replace(signed, value=negated(signed.value))
    if signed.value and spec._supported(index, opposite):
        record = _change(opposite, index, spec, changes)
        if record is None:
            return SUPPORTED
        said = "a rise" if bound.sign > 0 else "a fall"
        was = "a fall" if record.exact < 0 else "a rise"
        expected = f"{bound.word!r} says {said}; the recorded change is {record.value!r}, {was}"
        return Refusal("number_direction_false", record, expected)
    return signed


def _change(
    numeral: Numeral, index: RecordedNumbers, spec: Spec, changes: frozenset[str]
) -> Recorded | None:
    """The first recorded value ``numeral`` (the opposite of the claim) reads as, when every
    one it reads as is a change; None when one is not (a level: the direction is not judged)."""
    columns = ChangeColumns(changes, index)
    found: Recorded | None = None
    readings = spec._readings(numeral)
    for value, quantum in readings:
        for record in _records(index, value, quantum, spec.rounding):
            if not columns.holds(record):
                return None
            found = found or record
    if found is None:  # no fact holds it: a retrieved document's text does (a change if < 0)
        for value, quantum in readings:
            spelled = index.find(value)
            if spelled is None and spec.rounding is not None:
                spelled = index.rounded(value, quantum, spec.rounding)
            if spelled is not None:
                return spelled if columns.holds(spelled) else None
    return found


def _unit_of(record: Recorded, units: Mapping[str, str]) -> str | None:
    column = record.column
    if column is not None:
        declared = units.get(column) or units.get(column.rsplit(".", 1)[-1])
        if declared is not None:
            return declared
    return units.get(record.fact)


def _units(
    numeral: Numeral, claimed: str, index: RecordedNumbers, spec: Spec, units: Mapping[str, str]
) -> Refusal | Literal["supported"] | None:
    """The unit verdict: an agreeing (or undeclared) match, else a mismatch, else None."""
    readings: list[tuple[Decimal, Decimal, str | None]] = [(numeral.value, numeral.quantum, None)]
    for power, converted in conversions(claimed):
        readings.append((shifted(numeral.value, power), shifted(numeral.quantum, power), converted))
    mismatch: tuple[Recorded, str] | None = None
    for value, quantum, target in readings:
        for record in _records(index, value, quantum, spec.rounding):
            unit = _unit_of(record, units)
            if target is None:
                if unit is None or agrees(claimed, unit):
                    return SUPPORTED
                mismatch = mismatch or (record, unit)
            elif unit == target or (unit is None and target == "ratio" and spec.percent_as_ratio):
                return SUPPORTED
    if mismatch is None:
        return _document_units(numeral, claimed, index)
    record, declared = mismatch
    where = record.column if record.column is not None else record.fact
    expected = f"written in {claimed}; {where!r} is declared in {declared}"
    return Refusal("number_unit_mismatch", record, expected)


def _document_units(
    numeral: Numeral, claimed: str, index: RecordedNumbers
) -> Refusal | Literal["supported"] | None:
    """A number no fact records, spelled by retrieved documents: supported when one spells
    it without a unit or in an agreeing one; a mismatch when every spelling names another."""
    if not isinstance(index, WithDocuments):
        return None
    spelled = index.spelled_units(numeral.value)
    if not spelled:
        return None
    for unit, _ in spelled:
        if unit is None or agrees(claimed, unit) or agrees(unit, claimed):
            return SUPPORTED
    unit, record = spelled[0]
    expected = f"written in {claimed}; document {record.document!r} spells it in {unit}"
    return Refusal("number_unit_mismatch", record, expected)
