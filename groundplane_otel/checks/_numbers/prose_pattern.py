"""The scanner's one regular expression, built once per locale (what a match *means* is decided
in ``prose_scan``): list markers, digit-led tokens (dates, times, references, versions, numbers
with their sign, currency, exponent, percent and magnitude), and word-led tokens (month-led
dates, ordinal words, number words).
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Final

from groundplane_otel.checks._numbers.prose_words import (
    LOCALES,
    ORDINAL_WORDS,
    SCALE_WORDS,
    WORD_VALUES,
    NumberLocale,
)

__all__ = [
    "CURRENCY_CODES",
    "JOINERS",
    "MINUS",
    "PERCENT_AFTER",
    "RANGE",
    "SIGNS",
    "ordinal_suffix",
    "pattern",
]

_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_DATES = (
    r"(?<![\w.])\d{4}-\d{1,2}-\d{1,2}"
    r"(?:T\d{1,2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?(?![\w])"
    r"|(?<![\w.,])\d{1,2}[/.]\d{1,2}[/.](?:\d{4}|\d{2})(?![\w]|[.,]\d)"
    rf"|(?<![\w.,]){_DAY}\s+(?:of\s+)?{_MONTH}(?:,?\s+\d{{4}})?(?![\w])"
)
_MONTH_DATES = rf"{_MONTH}\s+{_DAY}(?:,?\s+\d{{4}})?(?![\w])|{_MONTH}\s+\d{{4}}(?![\w])"
_MERIDIEM = r"(?i:[ap]\.m\.|[ap]m(?![\w]))"
_CLOCK = rf"\d{{1,2}}(?:(?::\d{{2}}){{1,2}}(?:\s?{_MERIDIEM})?|\s?{_MERIDIEM})"  # 9:00, 9am
_HOUR = rf"\d{{1,2}}(?::\d{{2}}){{0,2}}(?:\s?{_MERIDIEM})?"
_TIMES = (
    # a range with a clock on one end is one token: "9:00-17:00", "9-5pm", "10am\u20138pm"
    rf"(?<![\w.,:])(?:{_CLOCK}\s?[-\u2013\u2014]\s?{_HOUR}|{_HOUR}\s?[-\u2013\u2014]\s?{_CLOCK})"
    r"(?![\w:])"
    rf"|(?<![\w.,:])\d{{1,2}}:\d{{2}}(?::\d{{2}})?(?:\s?{_MERIDIEM})?(?![\w:])"
    rf"|(?<![\w.,])\d{{1,2}}\s?{_MERIDIEM}"
    # opening hours without am/pm ("open 9-5", "hours: 9\u20135:30"): a range after the word
    r"|(?i:(?<=open )|(?<=opens )|(?<=hours )|(?<=hours: )|(?<=hours are ))"
    r"\d{1,2}(?::\d{2})?\s?[-\u2013\u2014]\s?\d{1,2}(?::\d{2})?(?![\w%]|[.,]\d)"
)
_MARKER = r"^[ \t]*(?:\d{1,3}[.)]|\(\d{1,3}\))(?=[ \t])"
_WORD = "|".join(sorted([*WORD_VALUES, *SCALE_WORDS], key=len, reverse=True))
_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_ORDINAL_WORD = "|".join(sorted(ORDINAL_WORDS, key=len, reverse=True))
# The letters a word-led token can start with (a month: J F M A S O N D, case-sensitive; a
# number or ordinal word, either case): every other word start fails on one character.
_WORD_START = "".join(
    sorted(
        {
            case
            for word in (*WORD_VALUES, *SCALE_WORDS, *ORDINAL_WORDS)
            for case in (word[0], word[0].upper())
        }
        | set("JFMASOND")
    )
)
_DIGIT_WORD = "zero|one|two|three|four|five|six|seven|eight|nine"
_POINT = (
    rf"[ \t]+point(?:[ \t]+(?:{_DIGIT_WORD})\b)+(?:[ \t]+(?:thousand|million|billion|trillion)\b)?"
)
"""A decimal spelled out after number words: "twelve point four", "one point two million"."""
_FRACTION = (
    r"(?i:(?:(?:one|three)[ \t]+)?(?:half|quarters?)[ \t-]+(?:of[ \t]+)?(?:a[ \t-]+)?"
    r"(?:thousand|million|billion|trillion)\b)"
)
"""A fraction of a magnitude: "half a million", "a quarter of a million", "three quarters of a
billion" (a fraction alone, "half", "a quarter", is not read: more often a period of time).
An "a" before it is taken by the scanner (a word starting with "a" never starts a match)."""
_HOURS = "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
# a clock time in words: "nine in the morning", "six p.m.", "ten o'clock", "noon", "midnight"
_HALF_TIMES = (
    rf"(?i:(?:half\s+past|(?:a\s+)?quarter\s+(?:past|to))\s+(?:{_HOURS})(?![\w])(?:\s+(?:in\s+the\s+"
    r"(?:morning|afternoon|evening)|at\s+night|[ap]\.m\.|[ap]m(?![\w])))?)|"
)
"""``half past ten``, ``quarter to six`` (only in a text holding "half" or "quarter")."""
_WORD_TIMES = (
    rf"(?i:(?:{_HOURS})(?:\s+o['\u2019]clock)?\s+(?:in\s+the\s+(?:morning|afternoon|evening)"
    rf"|at\s+night|[ap]\.m\.|[ap]m(?![\w]))|(?:{_HOURS})\s+o['\u2019]clock(?![\w])"
    r"|noon(?![\w])|midnight(?![\w]))"
)
CURRENCY_CODES: Final = frozenset(
    ["USD", "EUR", "GBP", "CHF", "JPY", "CAD", "AUD", "CNY", "INR", "SEK", "NOK", "DKK"]
)
SIGNS: Final = "-+\u2212\u2013"  # a sign touching the digits
MINUS = frozenset("-\u2212\u2013")  # an en dash before digits (not after one) is a minus
PERCENT_AFTER: Final = re.compile(r"[ \u00a0\u202f]?(?:%|(?i:percent|per[ ]?cent|pct)(?![\w]))")
"""A percent sign or word right after a number written in words ("fifty percent")."""
JOINERS = frozenset("-./_")
RANGE = re.compile(r"\s*[-\u2013\u2014]\s*|\s+to\s+|\s*\u2013\s*")


def _alternatives(words: list[str]) -> str:
    return "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))


def pattern(locale: NumberLocale, fractions: bool = False) -> re.Pattern[str]:
    """The scanner's expression; ``fractions``: also "half a million" and "half past ten" (a
    text without "half" or "quarter" is scanned without those branches, which every word start
    would try)."""
    return _compiled(locale.name, fractions)


def ordinal_suffix(locale: NumberLocale) -> re.Pattern[str]:
    """The locale's ordinal suffixes (``st``, ``nd`` …), matched right after the digits."""
    return _suffixes(locale.name)


@lru_cache(maxsize=len(LOCALES))
def _suffixes(name: str) -> re.Pattern[str]:
    return re.compile(r"(?:" + "|".join(LOCALES[name].ordinal_suffixes) + r")(?![\w])")


@lru_cache(maxsize=2 * len(LOCALES))
def _compiled(name: str, fractions: bool) -> re.Pattern[str]:
    locale = LOCALES[name]
    groups = _alternatives(list(locale.groups))
    decimal = re.escape(locale.decimal)
    touching = [word for word in locale.magnitudes if len(word) <= 2]
    spaced = [word for word in locale.magnitudes if len(word) > 2]
    grouped_dot = r"(?!\d{1,3}(?:\.\d{3})+(?![\d.]))" if "." in locale.groups else ""
    number = (
        rf"(?P<sign>[{SIGNS}])?(?P<cur>[$€£¥₹][ \u00a0]?)?"
        rf"(?:(?P<int>\d{{1,3}}(?:(?:{groups})\d{{3}})+(?!\d)|\d+)(?:{decimal}(?P<frac>\d+))?"
        rf"|(?<![\w]){decimal}(?P<bare>\d+))"
        r"(?:[eE](?P<exp>[-+]?\d{1,3})(?![\w]))?"
        r"(?:(?P<pct>[ \u00a0\u202f]?(?:%|(?i:percent|per[ ]?cent|pct)(?![\w])))"
        rf"|(?P<magt>{_alternatives(touching) or '(?!)'})(?![\w])"
        rf"|[ \u00a0]?(?P<magw>(?i:{_alternatives(spaced) or '(?!)'}))(?![\w])"
        rf"|[ \u00a0](?P<mags>{_alternatives(list(locale.spaced_letters)) or '(?!)'})(?![\w]))?"
    )
    # Three branches, so most positions fail on one character: a list marker (``^`` first),
    # what starts with a digit, sign, currency, dot or bracket, and what starts a word.
    return re.compile(
        rf"(?P<marker>{_MARKER})"
        rf"|(?=[\d$€£¥₹+\-\u2212\u2013.\[])(?:(?P<date>{_DATES})|(?P<time>{_TIMES})"
        r"|(?P<reference>\[\d{1,4}\])"
        rf"|(?P<version>(?<![\w.]){grouped_dot}\d+(?:\.\d+){{2,}}(?![\w]|\.\d))"
        rf"|(?P<num>{number}))"
        rf"|\b(?=[{_WORD_START}{'qQ' if fractions else ''}])(?:(?P<mdate>{_MONTH_DATES})"
        rf"|(?P<wtime>{_HALF_TIMES if fractions else ''}{_WORD_TIMES})"
        rf"|(?P<ordword>(?i:(?:(?:{_TENS})[- ])?(?:{_ORDINAL_WORD})\b))"
        + (rf"|(?P<fraction>{_FRACTION})" if fractions else "")
        + rf"|(?P<words>(?i:(?:{_WORD})(?:(?:[ \t]+and[ \t]+|[ \t-]+)(?:{_WORD}))*\b"
        rf"(?:{_POINT})?)))",
        re.MULTILINE,
    )
