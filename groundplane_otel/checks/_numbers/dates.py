"""Dates and times as values: the scanner's ``date``/``time`` tokens read as calendar points.

The tokens are the ones ``prose_scan`` skips as ``date`` and ``time`` (one grammar: what
numbers_recorded does not read as numbers, dates_recorded reads as dates), each read as points:

- a **day**: ``2027-12-31``, ``Dec 31, 2027``, ``31 December 2027``, ``12/31/2027``,
  ``31.12.2027``, ``12/31/27`` (a two-digit year is 20yy);
- a **month-day** (no year written): ``December 31st``, ``31 Dec``, ``the 31st of December``;
- a **month**: ``March 2026``;
- a **time** (hour and minute; seconds and time zones are not compared): ``10am``,
  ``10:00``, ``8 p.m.``, ``10:00 AM``; each end of ``9-5pm`` / ``open 9-5``; the time of an
  ISO date-time (``2027-12-31T10:00Z``); in words: ``nine in the morning``, ``six p.m.``,
  ``ten o'clock``, ``noon``, ``midnight``.

Ambiguity is read leniently, as every reading: ``03/04/2027`` is 3 April or 4 March (unless
``day_first`` says which), a time without am/pm at 12 or below is that hour or the same hour
after noon (``10:00`` is 10:00 or 22:00; recorded ``22:00`` supports "closes at 10:00"); a
range's first end without am/pm takes the second's (``9-11am``) unless that puts it after
the second (``9-5pm`` is 9am-5pm). A token with no valid reading (``2027-02-30``) supports
nothing.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from groundplane_otel._arithmetic import is_number
from groundplane_otel.checks._base import dotted_leaves
from groundplane_otel.checks._memo import derived
from groundplane_otel.checks._numbers.periods import PeriodKind, argument_years, of_day, periods
from groundplane_otel.checks._numbers.prose_scan import scan_numbers
from groundplane_otel.documents import Documents
from groundplane_otel.facts import Domain, Fact, Ranking, Table

__all__ = ["Kind", "Point", "RecordedDates", "DateSource", "points", "show"]

_WRITTEN: Final = "period_written"  # a pseudo-kind: the facts spell a period somewhere

Kind = Literal["day", "monthday", "month", "time"]
Value = tuple[int, ...]  # day (y, m, d) · monthday (m, d) · month (y, m) · time (h, m)
DateSource = tuple[str, Hashable | None, str | None]  # fact, row, column

_MONTHS: Final = {
    name: number
    for number, names in enumerate(
        [
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ],
        1,
    )
    for name in names
}
_WEEKDAYS: Final = {
    name: number
    for number, names in enumerate(
        [
            ("mon", "monday"),
            ("tue", "tues", "tuesday"),
            ("wed", "wednesday"),
            ("thu", "thur", "thurs", "thursday"),
            ("fri", "friday"),
            ("sat", "saturday"),
            ("sun", "sunday"),
        ]
    )
    for name in names
}
_ISO = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:T(\d{1,2}):(\d{2}))?")
_NUMERIC = re.compile(r"(\d{1,2})[/.](\d{1,2})[/.](\d{4}|\d{2})$")
_NAMED = re.compile(r"[A-Za-z]+|\d+")
_TIME = re.compile(r"(\d{1,2})(?::(\d{2}))?(?::\d{2})?\s?(?:([aApP])\.?[mM]\.?)?")
_WEEKDAY_BEFORE = re.compile(r"([A-Za-z]{3,9})\.?,?\s+$")
_DAY_SUFFIX = re.compile(r"(\d{1,2})(?:st|nd|rd|th)?$")


@dataclass(frozen=True, slots=True)
class Point:
    """One date or time written in a text: its token, its span, and every reading of it."""

    text: str
    start: int
    end: int
    kind: Kind
    readings: tuple[Value, ...]  # empty: no valid reading
    weekday: int | None = None  # a weekday written before a day (Monday = 0)


def _valid_day(year: int, month: int, day: int) -> bool:
    try:
        dt.date(year, month, day)
    except ValueError:
        return False
    return True


def _day_readings(first: int, second: int, year: int, day_first: bool | None) -> list[Value]:
    if day_first is None:
        orders = [(first, second), (second, first)]
    else:
        orders = [(first, second) if day_first else (second, first)]
    return [(year, m, d) for d, m in dict.fromkeys(orders) if _valid_day(year, m, d)]


def _named(token: str) -> tuple[Kind, list[Value]]:
    """``Dec 31, 2027`` / ``31st of December`` / ``March 2026``."""
    month = day = year = None
    for part in _NAMED.findall(token):
        lowered = part.lower()
        if lowered in _MONTHS:
            month = _MONTHS[lowered]
        elif part.isdigit():
            if len(part) == 4:
                year = int(part)
            else:
                day = int(part)
    assert month is not None
    if day is None:
        return "month", [(year or 0, month)]
    if year is None:
        return "monthday", [(month, day)] if _valid_day(2000, month, day) else []
    return "day", [(year, month, day)] if _valid_day(year, month, day) else []


def _date_points(token: str, day_first: bool | None) -> Iterator[tuple[Kind, list[Value]]]:
    iso = _ISO.match(token)
    if iso:
        year, month, day = (int(group) for group in iso.groups()[:3])
        yield "day", [(year, month, day)] if _valid_day(year, month, day) else []
        if iso.group(4):
            hour, minute = int(iso.group(4)), int(iso.group(5))
            yield "time", [(hour, minute)] if hour < 24 and minute < 60 else []
        return
    numeric = _NUMERIC.match(token)
    if numeric:
        first, second, year_text = numeric.groups()
        year = int(year_text) + (2000 if len(year_text) == 2 else 0)
        yield "day", _day_readings(int(first), int(second), year, day_first)
        return
    yield _named(token)


def _clock(hour: int, minute: int, meridiem: str | None) -> list[Value]:
    if minute >= 60 or hour > 24 or (meridiem and not 1 <= hour <= 12):
        return []
    if meridiem:
        return [((hour % 12) + (12 if meridiem == "p" else 0), minute)]
    if 1 <= hour <= 12:
        return list(dict.fromkeys([(hour % 24, minute), ((hour % 12) + 12, minute)]))
    return [(hour % 24, minute)]


_HOURS: Final = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                  "eleven", "twelve")  # fmt: skip
_HOUR_WORDS: Final = {word: hour for hour, word in enumerate(_HOURS, 1)}
_LATER: Final = ("afternoon", "evening", "night", "p.m.", "pm")


def _word_time(token: str) -> list[Value]:
    """``nine in the morning`` 9:00, ``six in the evening`` 18:00, ``ten o'clock`` either,
    ``half past ten`` 10:30 or 22:30, ``quarter to six`` 5:45 or 17:45, ``noon`` 12:00,
    ``midnight`` 0:00."""
    lowered = token.lower()
    if lowered in ("noon", "midnight"):
        return [(12 if lowered == "noon" else 0, 0)]
    words = lowered.split()
    minute = 0
    if words[0] in ("half", "quarter", "a"):  # "half past ten", "(a) quarter to six"
        past = "past" in words[:3]
        minute = 30 if words[0] == "half" else (15 if past else 45)
        words = words[words.index("past" if past else "to") + 1 :]
        if not past:
            hour_word = _HOUR_WORDS[words[0]]
            words[0] = _HOURS[(hour_word - 2) % 12]  # "quarter to six" is 5:45
    hour = _HOUR_WORDS[words[0]]
    if "morning" in lowered or lowered.endswith(("a.m.", "am")):
        return _clock(hour, minute, "a")
    if any(lowered.endswith(word) for word in _LATER):
        return _clock(hour, minute, "a" if hour == 12 and "night" in lowered else "p")
    return _clock(hour, minute, None)


def _time_points(token: str) -> Iterator[list[Value]]:
    if not token[0].isdigit():
        yield _word_time(token)
        return
    ends = list(_TIME.finditer(token))
    ends = [end for end in ends if end.group(1)]
    marks = [(end.group(3) or "").lower() or None for end in ends]
    if len(ends) == 2 and marks[0] is None and marks[1] is not None:
        first, second = int(ends[0].group(1)), int(ends[1].group(1))
        inherits = (first % 12) <= (second % 12)
        marks[0] = marks[1] if inherits else ("a" if marks[1] == "p" else "p")
    for end, mark in zip(ends, marks, strict=True):
        yield _clock(int(end.group(1)), int(end.group(2) or 0), mark)


def points(text: str, locale: str = "en", day_first: bool | None = None) -> list[Point]:
    """Every date and time written in ``text`` (see the module docstring)."""
    found: list[Point] = []
    for token in scan_numbers(text, locale).skipped:
        if token.rule == "time":
            for readings in _time_points(token.text):
                found.append(Point(token.text, token.start, token.end, "time", tuple(readings)))
        elif token.rule == "date":
            weekday = _weekday_before(text, token.start)
            for kind, readings in _date_points(token.text, day_first):
                day = weekday if kind == "day" else None
                found.append(Point(token.text, token.start, token.end, kind, tuple(readings), day))
    return found


def _weekday_before(text: str, start: int) -> int | None:
    found = _WEEKDAY_BEFORE.search(text, max(0, start - 12), start)
    return None if found is None else _WEEKDAYS.get(found.group(1).lower())


def show(kind: Kind, value: Value) -> str:
    """A reading as ISO-like text: ``2027-12-31``, ``--12-31``, ``2027-12``, ``22:00``."""
    if kind == "day":
        return "{:04d}-{:02d}-{:02d}".format(*value)
    if kind == "monthday":
        return "--{:02d}-{:02d}".format(*value)
    if kind == "month":
        return "{:04d}-{:02d}".format(*value)
    return "{:02d}:{:02d}".format(*value)


def _strings(fact: Fact) -> Iterator[tuple[str, Hashable | None, str | None]]:
    """Every string a fact records (cells, names, values, arguments): (text, row, column)."""
    value = fact.value
    if isinstance(value, Table):
        for row in value.rows:
            key = row.get(value.key)
            for column in value.columns:
                for path, text in dotted_leaves(row.get(column), _is_text, column):
                    yield text, key, path
    elif isinstance(value, Ranking):
        for name in value.names:
            if isinstance(name, str):
                yield name, name, None
    elif isinstance(value, Domain):
        for name in value.names:
            yield name, name, None
    elif isinstance(value, Documents):  # a retrieved document's text (its id is the row)
        for document in value.documents:
            if document.content is not None:
                yield document.content, document.id, "content"
    else:
        for path, text in dotted_leaves(value, _is_text, ""):
            yield text, None, path or None
    for path, text in dotted_leaves(dict(fact.provenance.args), _is_text, "args"):
        yield text, None, path


def _is_text(value: object) -> bool:
    return isinstance(value, str)


_DERIVED = {"monthday": (1, 3), "month": (0, 2)}  # what a recorded day also records


Found = dict[str, dict[Value, DateSource]]


def _recorded(fact: Fact, locale: str) -> Found:
    """Every date, time and period recorded in one fact's strings, with where it first
    appears (a day or month also records its calendar quarter and half)."""
    found: Found = {"day": {}, "monthday": {}, "month": {}, "time": {}}
    years = argument_years(fact.provenance.args.values())
    for text, row, column in _strings(fact):
        if not any(char.isdigit() for char in text):
            continue
        where = (fact.name, row, column)
        for period in periods(text):
            found.setdefault(_WRITTEN, {})[(0, 0)] = where
            kinds = found.setdefault(period.kind, {})
            kinds.setdefault(period.value, where)
            kinds.setdefault((0, period.value[1]), where)
            if not period.value[0] and column is not None and column.startswith("args"):
                for year in years:  # quarter="Q3", year=2026: Q3 2026
                    kinds.setdefault((year, period.value[1]), where)
        for point in points(text, locale, day_first=None):
            if point.kind == "time" and len(point.readings) > 1:  # "9:00" recorded is 9:00
                readings: Sequence[Value] = point.readings[:1]
            else:
                readings = point.readings
            for reading in readings:
                found[point.kind].setdefault(reading, where)
                if point.kind == "day":
                    for kind, (low, high) in _DERIVED.items():
                        found[kind].setdefault(reading[low:high], where)
                if point.kind in ("day", "month") and reading[0]:
                    for kind, value in of_day(reading[0], reading[1]):
                        found.setdefault(kind, {}).setdefault(value, where)
    return found


def clock_hours(fact: Fact, columns: frozenset[str]) -> Iterator[tuple[Value, DateSource]]:
    """The integer cells 0-23 of the columns declared clock hours (``opens``: 9 is 9:00)."""
    value = fact.value
    if isinstance(value, Table):
        cells: Iterable[tuple[Hashable | None, str, object]] = (
            (row.get(value.key), column, row.get(column))
            for row in value.rows
            for column in value.columns
            if column in columns
        )
    elif isinstance(value, (Ranking, Domain, Documents)):
        return
    else:
        cells = (
            (None, path, leaf)
            for path, leaf in dotted_leaves(value, is_number, "")
            if path in columns or path.rsplit(".", 1)[-1] in columns
        )
    for row, column, cell in cells:
        if type(cell) is int and 0 <= cell <= 23:
            yield (cell, 0), (fact.name, row, column)


def _builder(fact: Fact, locale: str) -> Callable[[], Found]:
    return lambda: _recorded(fact, locale)


class RecordedDates:
    """The dates and times some facts record (built once per Table, Ranking or Domain and
    kept on it): ``where`` a reading is recorded, ``nearest`` for a receipt."""

    def __init__(
        self, facts: Sequence[Fact], locale: str, hours: frozenset[str] = frozenset()
    ) -> None:
        self._found: Found = {"day": {}, "monthday": {}, "month": {}, "time": {}}
        for fact in facts:
            value: Any = fact.value
            if isinstance(value, (Table, Ranking, Domain)):
                each = derived(value, ("dates_recorded", locale), _builder(fact, locale))
            else:
                each = _recorded(fact, locale)
            for kind, readings in each.items():
                for reading, where in readings.items():
                    self._found.setdefault(kind, {}).setdefault(reading, where)
            if hours:
                for reading, where in clock_hours(fact, hours):
                    self._found["time"].setdefault(reading, where)

    @property
    def periods_written(self) -> bool:
        """Whether a fact spells a period (a quarter, half or fiscal year) anywhere."""
        return bool(self._found.get(_WRITTEN))

    def where(self, kind: Kind | PeriodKind, readings: Sequence[Value]) -> DateSource | None:
        """Where the first recorded reading lives; None when none is recorded."""
        recorded = self._found.get(kind, {})
        for reading in readings:
            if reading in recorded:
                return recorded[reading]
        return None

    def nearest(
        self, kind: Kind | PeriodKind, readings: Sequence[Value]
    ) -> tuple[Value, DateSource] | None:
        """The recorded value of this kind closest to the first reading (None: none)."""
        recorded = self._found.get(kind, {})
        if not recorded or not readings:
            return next(iter(recorded.items()), None)
        target = _ordinal(kind, readings[0])
        best = min(recorded, key=lambda value: abs(_ordinal(kind, value) - target))
        return best, recorded[best]


def _ordinal(kind: Kind | PeriodKind, value: Value) -> int:
    """A point as a number on its own axis (days, months, minutes, periods) for "nearest"."""
    if kind not in ("day", "month", "monthday", "time"):
        return value[0] * 4 + value[1]
    if kind == "day":
        return dt.date(*value).toordinal()
    if kind == "month":
        return value[0] * 12 + value[1]
    if kind == "monthday":
        return value[0] * 31 + value[1]
    return value[0] * 60 + value[1]
