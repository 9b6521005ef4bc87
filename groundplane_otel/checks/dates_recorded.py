"""dates_recorded: every date and time written in prose is one the facts record (opt-in).

The dates twin of ``numbers_recorded``: an invented due date ("Dec 31, 2027") or invented
opening hours ("10am to 8pm") fail. It is a family of its own, so it is off unless a boundary
lists it: answers carry boilerplate dates ("Prepared Nov 30, 2026") that a numbers check
should not be made to refuse.

What is read (see ``_numbers.dates``): the tokens the prose scanner skips as ``date`` and
``time`` — ISO dates and date-times, ``12/31/2027``, ``31.12.2027``, ``Dec 31, 2027``,
``31 December 2027``, ``December 31st``, ``March 2026``, ``10am``, ``10:00``, ``8 p.m.``,
both ends of ``10am to 8pm``, ``9-5pm`` and ``open 9-5``, and times in words ("nine in the
morning", "noon", "midnight"). They are compared as dates and times,
never as strings: a recorded ``2027-12-31`` (in a cell, a value or the tool's arguments, in
any of the forms above or as an ISO date-time) supports "Dec 31, 2027", "December 31st" and
"December 2027"; a retrieved document's text records the dates and times written in it. A
weekday written before a day ("Friday, Dec 31, 2027") must be that day's weekday
(``date_weekday_mismatch``), whatever the facts say.

Clock hours: ``units={"opens": "hour"}`` declares an integer column a clock hour, so a
recorded 9 supports "opens at 9am" and refuses "opens at 10am".

Periods (``_numbers.periods``): quarters, halves and fiscal years ("Q2", "Q3 2026", "H1
2025", "FY2026", "the second quarter") are checked against the periods the facts record
(spelled in a cell or a tool argument, ``quarter="Q3"``, or the calendar quarter of a recorded
day), ``period_unrecorded`` otherwise. By default only when some fact spells a period
(``periods=None``; boilerplate such as "Q3 collections were on track" in an answer about due
dates is not read); ``periods=True`` always, ``False`` never.

Not read: a bare year ("in 2026": numbers_recorded's ``years`` option decides), relative
dates ("today", "next Monday"), weekday names alone,
durations ("45-day", "2 hours": numbers). ``numbers_recorded`` never reads the digits of a
date or time token as numbers, whether this check is on or off; with it off they are not
checked at all.

Evaluation order: the field must be present and a str → scan it → each date or time, in text
order, must have a recorded reading (its weekday, if written, must match). Every miss gets a
receipt; the claim (``UnrecordedDates``) carries them all.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from groundplane_otel.checks._base import NamedCheck, describe
from groundplane_otel.checks._numbers.dates import Kind, Point, RecordedDates, points, show
from groundplane_otel.checks._numbers.periods import Period, PeriodKind, periods, show_period
from groundplane_otel.checks._numbers.prose_fields import (
    facts_argument,
    field_argument,
    field_label,
    read_texts,
)
from groundplane_otel.checks._numbers.prose_words import LOCALES
from groundplane_otel.checks._numbers.receipts import ReceiptsClaim, cap
from groundplane_otel.checks._twin import twin
from groundplane_otel.registry import FactRegistry

__all__ = ["DateReceipt", "UnrecordedDates", "check_dates_recorded", "dates_recorded"]

_BUILDER = "dates_recorded"
_DAYS: Final = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

CODES: Final[dict[str, str]] = {
    "date_unrecorded": "no fact records this date",
    "time_unrecorded": "no fact records this time",
    "date_invalid": "it is not a calendar date",
    "date_weekday_mismatch": "the weekday written is not that date's",
    "period_unrecorded": "no fact records this period",
}
"""Reason code of a date or time that fails → what it means."""


@dataclass(frozen=True, slots=True)
class DateReceipt:
    """One date or time in the text that no fact records, with the nearest recorded one."""

    text: str
    start: int
    end: int
    kind: Kind | PeriodKind
    readings: tuple[str, ...]  # every reading, ISO-like (``2027-12-31``, ``22:00``, ``2026-Q3``)
    code: str
    field: str
    nearest: str | None = None
    fact: str | None = None
    row: Hashable | None = None
    column: str | None = None

    @property
    def span(self) -> tuple[int, int]:
        return self.start, self.end

    def to_dict(self) -> dict[str, Any]:
        """Strict-JSON-safe (an odd row key as its repr)."""
        row = self.row if isinstance(self.row, (str, int, float, type(None))) else repr(self.row)
        return {
            "text": cap(self.text),
            "span": [self.start, self.end],
            "field": self.field,
            "kind": self.kind,
            "readings": list(self.readings),
            "code": self.code,
            "nearest": self.nearest,
            "fact": self.fact,
            "row": row,
            "column": self.column,
        }

    def describe(self) -> str:
        """``'Dec 31, 2027' at 12..24 (read as 2027-12-31): no fact records this date;
        nearest recorded 2027-12-30 (fact 'tickets', row 'T-1', column 'due')``."""
        line = f"{cap(self.text)!r} at {self.start}..{self.end}"
        if self.field != "*":
            line += f" of {cap(self.field)!r}"
        if self.readings:
            line += f" (read as {' or '.join(self.readings)})"
        line += f": {CODES[self.code]}"
        if self.code == "date_weekday_mismatch":
            return line
        if self.nearest is None:
            what = {"time": "time", "day": "date", "monthday": "date", "month": "date"}
            return line + f"; no {what.get(self.kind, 'period')} is recorded at all"
        where = [f"fact {self.fact!r}"]
        if self.row is not None:
            where.append(f"row {cap(repr(self.row))}")
        if self.column is not None:
            where.append(f"column {cap(self.column)!r}")
        return line + f"; nearest recorded {self.nearest} ({', '.join(where)})"


class UnrecordedDates(ReceiptsClaim):
    """Dates or times in a prose field that no fact records: one receipt each, in text order
    (``claimed``: the receipts as dicts; ``supported``: the nearest recorded value of each)."""

    receipts: tuple[DateReceipt, ...]
    what = "date or time is"
    what_plural = "dates or times are"


@dataclass(frozen=True, slots=True)
class _DatesRecorded:
    """The validated configuration of one dates_recorded check; calling it runs the check."""

    facts: tuple[str, ...]
    field: str | tuple[str, ...] | None = None
    locale: str = "en"
    times: bool = True
    day_first: bool | None = None
    hours: frozenset[str] = frozenset()
    periods: bool | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.locale, str) or self.locale not in LOCALES:
            raise ValueError(
                f"{_BUILDER}: locale must be one of {sorted(LOCALES)}, got {self.locale!r}"
            )
        if not isinstance(self.times, bool):
            raise TypeError(f"{_BUILDER}: times must be True or False, got {self.times!r}")
        if self.day_first is not None and not isinstance(self.day_first, bool):
            raise TypeError(
                f"{_BUILDER}: day_first must be True, False or None, got {self.day_first!r}"
            )
        if self.periods is not None and not isinstance(self.periods, bool):
            raise TypeError(
                f"{_BUILDER}: periods must be True, False or None, got {self.periods!r}"
            )

    @property
    def label(self) -> str:
        return field_label(self.field)

    def __call__(self, registry: FactRegistry, output: Mapping[str, Any] | str) -> None:
        stored = [registry.peek(name) for name in self.facts]
        index: RecordedDates | None = None
        receipts: list[DateReceipt] = []
        for where, text in read_texts(output, self.field):
            found: list[Point | Period] = [
                point
                for point in points(text, self.locale, self.day_first)
                if point.kind != "time" or self.times
            ]
            if self.periods is not False:
                found += periods(text)
            for point in sorted(found, key=lambda item: item.start):
                if index is None:
                    index = RecordedDates(stored, self.locale, self.hours)
                if isinstance(point, Period):
                    if self.periods or index.periods_written:
                        receipt = _judge_period(index, point, where)
                    else:
                        continue  # no fact spells a period: one said is not read
                else:
                    receipt = _judge(index, point, where)
                if receipt is not None:
                    receipts.append(receipt)
        if not receipts:
            return
        fact = receipts[0].fact or (self.facts[0] if len(self.facts) == 1 else None)
        provenance = None if fact is None else registry.peek(fact).provenance
        raise UnrecordedDates(self.label, receipts, fact=fact, provenance=provenance)


def _judge(index: RecordedDates, point: Point, where: str) -> DateReceipt | None:
    """None when the point is recorded (and its weekday, if written, is right)."""
    shown = tuple(show(point.kind, reading) for reading in point.readings)
    if point.weekday is not None and point.kind == "day" and point.readings:
        days = [dt.date(*reading).weekday() for reading in point.readings]
        if point.weekday not in days:
            return DateReceipt(
                point.text,
                point.start,
                point.end,
                point.kind,
                tuple(f"{text}, a {_DAYS[day]}" for text, day in zip(shown, days, strict=True)),
                "date_weekday_mismatch",
                where,
            )
    if point.readings and index.where(point.kind, point.readings) is not None:
        return None
    if not point.readings:
        code = "time_unrecorded" if point.kind == "time" else "date_invalid"
    else:
        code = "time_unrecorded" if point.kind == "time" else "date_unrecorded"
    near = index.nearest(point.kind, point.readings)
    value, (fact, row, column) = near if near else (None, (None, None, None))
    return DateReceipt(
        point.text,
        point.start,
        point.end,
        point.kind,
        shown,
        code,
        where,
        nearest=None if value is None else show(point.kind, value),
        fact=fact,
        row=row,
        column=column,
    )


def _judge_period(index: RecordedDates, period: Period, where: str) -> DateReceipt | None:
    """None when a fact records the period (a yearless one in any year)."""
    if index.where(period.kind, (period.value,)) is not None:
        return None
    near = index.nearest(period.kind, (period.value,))
    value, (fact, row, column) = near if near else (None, (None, None, None))
    return DateReceipt(
        period.text,
        period.start,
        period.end,
        period.kind,
        (show_period(period.kind, period.value),),
        "period_unrecorded",
        where,
        nearest=None if value is None else show_period(period.kind, (value[0], value[1])),
        fact=fact,
        row=row,
        column=column,
    )


def _hours(units: object) -> frozenset[str]:
    """Build-time check of ``units``: columns declared ``"hour"`` (an integer clock hour)."""
    if units is None:
        return frozenset()
    if not isinstance(units, Mapping):
        raise TypeError(f"{_BUILDER}: units must be a mapping of column to unit, got {units!r}")
    for column, unit in units.items():
        if not isinstance(column, str) or not column:
            raise TypeError(f"{_BUILDER}: units keys must be column names, got {column!r}")
        if unit != "hour":
            raise ValueError(
                f'{_BUILDER}: units[{column!r}] is {unit!r}; dates_recorded reads only "hour" '
                "(an integer column holding a clock hour, 9 for 9:00)"
            )
    return frozenset(units)


def _spec(
    fact: str | Sequence[str],
    field: str | Sequence[str] | None,
    locale: str,
    times: bool,
    day_first: bool | None,
    units: Mapping[str, str] | None = None,
    periods: bool | None = None,
) -> _DatesRecorded:
    return _DatesRecorded(
        facts_argument(fact, _BUILDER),
        field_argument(field, _BUILDER),
        locale=locale,
        times=times,
        day_first=day_first,
        hours=_hours(units),
        periods=periods,
    )


def dates_recorded(
    fact: str | Sequence[str],
    field: str | Sequence[str] | None = None,
    locale: str = "en",
    times: bool = True,
    day_first: bool | None = None,
    units: Mapping[str, str] | None = None,
    periods: bool | None = None,
) -> NamedCheck:
    """Every date (and, with ``times``, every time) in ``output[field]`` must be one ``fact``
    records, compared as dates and times (see the module docstring).

    ``fact`` and ``field`` as in ``numbers_recorded``. ``locale`` names the separators the
    scanner reads. ``times=False`` reads dates only. ``day_first``: how ``03/04/2027`` reads
    (True: 3 April; False: 4 March; None, the default: either). ``units={"opens": "hour"}``:
    an integer column holding a clock hour (9 records 9:00). ``periods``: quarters, halves and
    fiscal years (True: always read; None, the default: read when a fact spells a period;
    False: never). Unrecorded dates, times and periods raise ``UnrecordedDates`` with one
    receipt each.
    """
    spec = _spec(fact, field, locale, times, day_first, units, periods)
    shown: Any = spec.facts[0] if len(spec.facts) == 1 else list(spec.facts)
    name = describe(_BUILDER, fact=shown, field=spec.label)
    return NamedCheck(name, spec, family=_BUILDER, facts=spec.facts, text=spec.field is None)


check_dates_recorded = twin(dates_recorded)
