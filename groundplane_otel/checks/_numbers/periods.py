"""Periods as values for ``dates_recorded``: quarters, halves and fiscal years.

Written (in the answer or in a fact's strings and arguments): ``Q3``, ``Q3 2026``, ``2026-Q3``,
``the second quarter``, ``the second quarter of 2026`` (a quarter), ``Q3 FY26`` (a fiscal
quarter: never read as a calendar one), ``H1``, ``H1 2025``, ``the first half of 2025`` (a
half), ``FY2026``, ``FY26``, ``fiscal 2026``, ``fiscal year 2026`` (a fiscal year). A two-digit
year is 20yy.

Recorded: a period a fact's strings or its tool's arguments spell (``quarter="Q3"``; a period
without a year in an argument also takes a year the arguments hold: ``quarter="Q3", year=2026``
records Q3 2026), and the calendar quarter and half of every day and month a fact records (a
date range records the quarters it touches at its ends). A fiscal year is recorded only as
written (a fiscal year's calendar is never guessed).

A period written without a year is supported by the same period of any year; one written with
a year needs that year (the year is never invented).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Final, Literal

__all__ = ["Period", "PeriodKind", "periods", "show_period"]

PeriodKind = Literal["quarter", "half", "fiscal_quarter", "fiscal_half", "fiscal_year"]

_ORDINALS: Final = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3,
                    "fourth": 4, "4th": 4}  # fmt: skip


def _year_group(name: str) -> str:
    """A year after a period: ``2026``, ``FY26``, ``FY2026``, ``'26`` (two digits only after
    ``FY`` or an apostrophe: "Q3 12 stores" holds no year)."""
    return rf"(?:\s(?:of\s)?(?:(?P<{name}>\d{{4}})|(?:FY\s?'?|')(?P<{name}2>\d{{4}}|\d{{2}})))?"


_PATTERN: Final = re.compile(
    r"(?<![\w-])(?:"
    r"(?P<qy>\d{4})\s?-?\s?Q(?P<qyq>[1-4])"
    rf"|Q(?P<q>[1-4]){_year_group('qyear')}"
    rf"|H(?P<h>[12]){_year_group('hyear')}"
    r"|(?:the\s)?(?P<word>first|second|third|fourth|1st|2nd|3rd|4th)\s(?:fiscal\s)?"
    r"(?P<unit>quarter|half)(?:\sof\s(?:(?:fiscal|FY)\s?)?(?P<wyear>\d{4}))?"
    r"|(?:FY\s?'?|fiscal\s(?:year\s)?)(?P<fy>\d{4}|\d{2})"
    r")(?![\w-])",
    re.IGNORECASE,
)
_YEAR_ARGUMENT: Final = re.compile(r"^(?:19|20)\d{2}$")

Value = tuple[int, int]  # (year or 0, number): a quarter 1-4, a half 1-2, a fiscal year (y, 0)


@dataclass(frozen=True, slots=True)
class Period:
    """One period written in a text: its token, its span, what it reads as."""

    text: str
    start: int
    end: int
    kind: PeriodKind
    value: Value


def _year(text: str | None) -> int:
    if not text:
        return 0
    return int(text) + (2000 if len(text) == 2 else 0)


def periods(text: str) -> Iterator[Period]:
    """Every quarter, half and fiscal year written in ``text`` (see the module docstring)."""
    for found in _PATTERN.finditer(text):
        groups = found.groupdict()
        if groups["qy"]:
            kind: PeriodKind = "quarter"
            value = (int(groups["qy"]), int(groups["qyq"]))
        elif groups["q"]:
            year = _year(groups["qyear"] or groups["qyear2"])
            kind, value = "quarter", (year, int(groups["q"]))
        elif groups["h"]:
            kind, value = "half", (_year(groups["hyear"] or groups["hyear2"]), int(groups["h"]))
        elif groups["word"]:
            number = _ORDINALS[groups["word"].lower()]
            kind = "quarter" if groups["unit"].lower() == "quarter" else "half"
            if kind == "half" and number > 2:
                continue
            value = (_year(groups["wyear"]), number)
        else:
            kind, value = "fiscal_year", (_year(groups["fy"]), 0)
        written = found.group()
        if kind in ("quarter", "half") and re.search(r"(?i)\bfy|fiscal", written):
            kind = "fiscal_quarter" if kind == "quarter" else "fiscal_half"  # never a calendar's
        yield Period(written, found.start(), found.end(), kind, value)


def of_day(year: int, month: int) -> Iterator[tuple[PeriodKind, Value]]:
    """The calendar quarter and half a recorded day or month falls in (with and without its
    year: a yearless claim is supported by any year)."""
    quarter, half = (month - 1) // 3 + 1, 1 if month <= 6 else 2
    yield "quarter", (year, quarter)
    yield "quarter", (0, quarter)
    yield "half", (year, half)
    yield "half", (0, half)


def argument_years(values: Iterable[object]) -> list[int]:
    """The years a tool's arguments hold (an int or a string 1900-2099)."""
    found = []
    for value in values:
        if isinstance(value, bool):
            continue
        if isinstance(value, int) and 1900 <= value <= 2099:
            found.append(value)
        elif isinstance(value, str) and _YEAR_ARGUMENT.match(value.strip()):
            found.append(int(value.strip()))
    return found


def show_period(kind: PeriodKind, value: Value) -> str:
    """``2026-Q3``, ``Q3``, ``2025-H1``, ``H1``, ``FY2026``."""
    year, number = value
    if kind == "fiscal_year":
        return f"FY{year}"
    label = f"{'Q' if kind.endswith('quarter') else 'H'}{number}"
    if kind.startswith("fiscal"):
        return f"FY{year}-{label}" if year else f"fiscal {label}"
    return f"{year}-{label}" if year else label
