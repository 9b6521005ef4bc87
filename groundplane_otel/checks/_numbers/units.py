"""Units and currencies: what unit a number in prose names, what a column declares, and whether
the two agree.

A declaration (numbers_recorded's ``units={"change": "pp", "revenue": "USD", "distance":
"km"}``) maps a column (a Table column, a Ranking key, a path in a plain value, or its last
key) or a whole fact name to one unit of :data:`UNITS`. A number in prose names a unit when it
is written with one: a currency symbol or code before or after it (``$``, ``US$``, ``C$``,
``A$``, ``€``, ``£``, ``¥``, ``₹``, ``USD``, ``EUR`` …, ``dollars``, ``euros``), a percent
(``%``, ``percent``), or a unit word right after it (``pp``, ``percentage points``, ``points``,
``bps``, ``basis points``, ``km``, ``miles``, ``kg``, ``lb``, ``days``, ``hours``, ``ms``,
``L``, ``mL``, ``gal``, ``bytes``, ``KB``…``TB``, ``KiB``…``TiB``, ``°C``, ``°F``,
``degrees Celsius`` …, see :data:`_WORDS`). ``$`` names any dollar (USD, CAD, AUD), ``¥``
JPY or CNY.

Agreement: the unit named is the declared one, or (the only conversions, exact by definition)
a basis-point claim of a ``pp`` column at a hundredth (``50 bps`` = 0.5 pp), a point claim of a
``bps`` column at a hundred times, a percent claim of a ``ratio`` column at a hundredth
(``4.55%`` = 0.0455), and the metric prefixes of one unit (``0.23 seconds`` = 230 ms,
``1.5 L`` = 1,500 mL, ``2 TB`` = 2,000 GB). Nothing else converts: ``10 miles`` for 10 km,
``6.2 miles`` for 10 km and ``0.5%`` for a 0.5 pp change all disagree.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from groundplane_otel.checks._numbers.prose_pattern import CURRENCY_CODES, SIGNS
from groundplane_otel.checks._numbers.prose_scan import Numeral

__all__ = ["Conversion", "UNITS", "agrees", "claimed_unit", "conversions", "declared_units"]

_CURRENCIES: Final = tuple(sorted(CURRENCY_CODES))
UNITS: Final = (
    "pp",
    "bps",
    "percent",
    "ratio",
    *_CURRENCIES,
    "km",
    "mi",
    "m",
    "kg",
    "lb",
    "g",
    "day",
    "hour",
    "minute",
    "second",
    "ms",
    "week",
    "month",
    "year",
    "L",
    "mL",
    "gal",
    "B",
    "KB",
    "MB",
    "GB",
    "TB",
    "KiB",
    "MiB",
    "GiB",
    "TiB",
    "celsius",
    "fahrenheit",
)
"""The units a column may declare (their canonical names)."""

_WORDS: Final[Mapping[str, str]] = {
    **dict.fromkeys(("pp", "p.p.", "points", "point", "pts"), "pp"),
    **dict.fromkeys(("percentage points", "percentage point", "percentage-points"), "pp"),
    **dict.fromkeys(("bps", "bp", "basis points", "basis point", "basis-points"), "bps"),
    **dict.fromkeys(("%", "percent", "per cent", "pct"), "percent"),
    **{code.lower(): code for code in _CURRENCIES},
    "dollars": "$", "dollar": "$", "euros": "EUR", "euro": "EUR", "yen": "JPY",
    "rupees": "INR", "rupee": "INR", "francs": "CHF",
    "€": "EUR", "£": "GBP", "₹": "INR", "$": "$", "¥": "¥",
    "km": "km", "kilometers": "km", "kilometres": "km", "kilometer": "km", "kilometre": "km",
    "mi": "mi", "miles": "mi", "mile": "mi",
    "meters": "m", "metres": "m", "meter": "m", "metre": "m",
    "kg": "kg", "kgs": "kg", "kilograms": "kg", "kilogram": "kg", "kilos": "kg",
    "lb": "lb", "lbs": "lb",
    "grams": "g", "gram": "g",
    "days": "day", "day": "day", "hours": "hour", "hour": "hour", "hrs": "hour", "hr": "hour",
    "minutes": "minute", "minute": "minute", "mins": "minute", "min": "minute",
    "seconds": "second", "secs": "second", "sec": "second",
    "weeks": "week", "week": "week", "months": "month", "month": "month",
    "years": "year", "year": "year", "h": "hour",
    "ms": "ms", "msec": "ms", "millisecond": "ms", "milliseconds": "ms",
    "liters": "L", "litres": "L", "liter": "L", "litre": "L",
    "ml": "mL", "milliliters": "mL", "millilitres": "mL", "milliliter": "mL", "millilitre": "mL",
    "gal": "gal", "gallons": "gal", "gallon": "gal",
    "bytes": "B", "byte": "B",
    "kb": "KB", "kilobytes": "KB", "kilobyte": "KB", "mb": "MB", "megabytes": "MB",
    "megabyte": "MB", "gb": "GB", "gigabytes": "GB", "gigabyte": "GB", "tb": "TB",
    "terabytes": "TB", "terabyte": "TB",
    "kib": "KiB", "kibibytes": "KiB", "mib": "MiB", "mebibytes": "MiB", "gib": "GiB",
    "gibibytes": "GiB", "tib": "TiB", "tebibytes": "TiB",
    "°c": "celsius", "ºc": "celsius", "degrees celsius": "celsius", "degree celsius": "celsius",
    "celsius": "celsius", "degrees c": "celsius", "°f": "fahrenheit", "ºf": "fahrenheit",
    "degrees fahrenheit": "fahrenheit", "degree fahrenheit": "fahrenheit",
    "fahrenheit": "fahrenheit", "degrees f": "fahrenheit",
}  # fmt: skip
"""A unit as written (lower case) → the unit it names; ``$`` and ``¥`` stand for several."""
_FAMILIES: Final[Mapping[str, frozenset[str]]] = {
    "$": frozenset({"USD", "CAD", "AUD"}),
    "¥": frozenset({"JPY", "CNY"}),
}
_SYMBOLS: Final = {"$": "$", "€": "EUR", "£": "GBP", "¥": "¥", "₹": "INR"}
_PREFIXED: Final = {"US": "USD", "C": "CAD", "A": "AUD"}
_AFTER: Final = re.compile(
    r"[ \u00a0]?(?P<unit>"
    + "|".join(re.escape(word) for word in sorted(_WORDS, key=len, reverse=True) if word != "%")
    + r")(?![\w])",
    re.IGNORECASE,
)
_CASED: Final = re.compile(r"[ \u00a0]?(?P<unit>L)(?![\w])")  # "2 L": never a lower-case l
_CODE_BEFORE: Final = re.compile(r"(?<![\w])(?P<code>" + "|".join(_CURRENCIES) + r")[ \u00a0]?$")

Conversion = tuple[int, str]
"""(power of ten applied to the value written, the declared unit it must land in)."""


def declared_units(builder: str, units: object) -> dict[str, str]:
    """Build-time check of ``units``: a mapping of column or fact names to units of
    :data:`UNITS` (a unit may be written as prose writes it: ``%``, ``points``, ``miles``)."""
    if units is None:
        return {}
    if not isinstance(units, Mapping):
        raise TypeError(f"{builder}: units must be a mapping of column to unit, got {units!r}")
    found: dict[str, str] = {}
    for column, unit in units.items():
        if not isinstance(column, str) or not column:
            raise TypeError(f"{builder}: units keys must be column or fact names, got {column!r}")
        canonical = _canonical(unit)
        if canonical is None:
            raise ValueError(
                f"{builder}: units[{column!r}] is {unit!r}, which is not a unit; use one of "
                f"{', '.join(UNITS)}"
            )
        found[column] = canonical
    return found


def _canonical(unit: object) -> str | None:
    if not isinstance(unit, str):
        return None
    if unit in UNITS:
        return unit
    if unit.upper() in _CURRENCIES:
        return unit.upper()
    named = _WORDS.get(unit.lower())
    return named if named in UNITS else None


def claimed_unit(text: str, numeral: Numeral) -> str | None:
    """The unit ``numeral`` is written with in ``text`` (see the module docstring), else None."""
    written = numeral.text
    head = written.lstrip(SIGNS)
    if head[:1] in _SYMBOLS:
        symbol = _SYMBOLS[head[:1]]
        start = numeral.start + len(written) - len(head)
        for prefix, code in _PREFIXED.items():
            if symbol == "$" and text[max(0, start - len(prefix)) : start] == prefix:
                before = start - len(prefix) - 1
                if before < 0 or not text[before].isalnum():
                    return code
        return symbol
    if numeral.percent:
        return "percent"
    code_before = _CODE_BEFORE.search(text, max(0, numeral.start - 4), numeral.start)
    if code_before:
        return code_before.group("code")
    after = _AFTER.match(text, numeral.end)
    if after:
        return _WORDS[after.group("unit").lower()]
    return "L" if _CASED.match(text, numeral.end) else None


_SCALED: Final[dict[str, tuple[Conversion, ...]]] = {
    "bps": ((-2, "pp"),),
    "pp": ((2, "bps"),),
    "percent": ((-2, "ratio"),),
    "second": ((3, "ms"),),
    "ms": ((-3, "second"),),
    "L": ((3, "mL"),),
    "mL": ((-3, "L"),),
    **{
        unit: tuple((3 * (power - other), target)
                    for other, target in enumerate(("B", "KB", "MB", "GB", "TB")) if other != power)
        for power, unit in enumerate(("B", "KB", "MB", "GB", "TB"))
    },
}  # fmt: skip
"""Conversions exact by definition: a hundredth (bps, pp, percent of a ratio), and the metric
prefixes of one unit (ms and s, mL and L, B to TB in powers of 1,000). Never across kinds or
systems (miles, gallons, °F, GiB: their factors are not powers of ten, and never guessed)."""


def conversions(claimed: str) -> tuple[Conversion, ...]:
    """The exact conversions a claim in ``claimed`` may land in (see ``_SCALED``)."""
    return _SCALED.get(claimed, ())


def agrees(claimed: str, declared: str) -> bool:
    """Whether a number written in ``claimed`` may be a value declared in ``declared``."""
    return claimed == declared or declared in _FAMILIES.get(claimed, frozenset())
