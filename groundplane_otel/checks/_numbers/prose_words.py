"""The vocabulary of numbers in prose: separator locales, magnitude words, number words.

Everything locale-dependent lives here, keyed by a locale *name* the check is given — never the
process locale (``LC_ALL``, ``locale.setlocale``): the same text reads the same on any machine.
Number words are English (zero … nineteen, the tens, hundred, thousand, million …), the
magnitudes follow the locale (a German or French ``Billion`` is 10**12, an English one 10**9).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

__all__ = [
    "LOCALES",
    "NumberLocale",
    "ORDINAL_WORDS",
    "WORD_VALUES",
    "parse_words",
]


@dataclass(frozen=True, slots=True)
class NumberLocale:
    """How one locale writes numbers: its decimal mark, its group marks, its magnitude words.

    ``magnitudes`` maps a suffix as written (``M``, ``bn``, ``million``, ``Mrd.``) to its power
    of ten; letter suffixes must touch the digits (``1.2M``), words may follow a space
    (``3 billion``). ``ordinal_suffixes`` are read after digits (``2nd``, ``2e``).
    """

    name: str
    decimal: str
    groups: tuple[str, ...]
    magnitudes: Mapping[str, int]
    ordinal_suffixes: tuple[str, ...]
    spaced_letters: tuple[str, ...] = ()  # letter magnitudes also read after a space


_LETTERS_EN: Final = {"k": 3, "K": 3, "M": 6, "mn": 6, "B": 9, "bn": 9, "T": 12}
_WORDS_EN: Final = {"thousand": 3, "million": 6, "millions": 6, "billion": 9, "billions": 9}
_WORDS_EN_TAIL: Final = {"trillion": 12, "trillions": 12}
_WORDS_DE: Final = {
    "Tsd.": 3,
    "Tsd": 3,
    "Tausend": 3,
    "Mio.": 6,
    "Mio": 6,
    "Million": 6,
    "Millionen": 6,
    "Mrd.": 9,
    "Mrd": 9,
    "Milliarde": 9,
    "Milliarden": 9,
    "Billion": 12,
    "Billionen": 12,
}
_WORDS_FR: Final = {
    "k": 3,
    "M": 6,
    "Md": 9,
    "mille": 3,
    "million": 6,
    "millions": 6,
    "milliard": 9,
    "milliards": 9,
    "billion": 12,
    "billions": 12,
}
_ORDINALS_EN: Final = ("st", "nd", "rd", "th")

LOCALES: Final[Mapping[str, NumberLocale]] = {
    "en": NumberLocale(
        "en",
        ".",
        (",",),
        {**_LETTERS_EN, **_WORDS_EN, **_WORDS_EN_TAIL},
        _ORDINALS_EN,
        ("mn", "bn", "k"),  # "$1.23 mn", "$2 bn", "$180 k"
    ),
    "de": NumberLocale("de", ",", (".",), {"k": 3, **_WORDS_DE}, _ORDINALS_EN),
    "fr": NumberLocale(
        "fr", ",", (" ", "\u00a0", "\u202f"), _WORDS_FR, ("er", "re", "e", "ème", "eme")
    ),
    "ch": NumberLocale("ch", ".", ("'", "\u2019"), {"k": 3, **_WORDS_DE}, _ORDINALS_EN),
}
"""Locale name → how it writes numbers: ``en`` 1,234.5 · ``de`` 1.234,5 · ``fr`` 1 234,5 ·
``ch`` 1'234.5."""

_ONES: Final = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
_TENS: Final = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_SCALES: Final = {"hundred": 2, "thousand": 3, "million": 6, "billion": 9, "trillion": 12}

WORD_VALUES: Final[Mapping[str, int]] = {
    **{word: value for value, word in enumerate(_ONES)},
    **{word: 20 + 10 * position for position, word in enumerate(_TENS)},
}
"""Number words worth a value on their own (scales are applied by :func:`parse_words`)."""

SCALE_WORDS: Final[Mapping[str, int]] = _SCALES

_ORDINAL_ONES: Final = [
    "first",
    "second",
    "third",
    "fourth",
    "fifth",
    "sixth",
    "seventh",
    "eighth",
    "ninth",
    "tenth",
    "eleventh",
    "twelfth",
    "thirteenth",
    "fourteenth",
    "fifteenth",
    "sixteenth",
    "seventeenth",
    "eighteenth",
    "nineteenth",
]
_ORDINAL_TENS: Final = [
    "twentieth",
    "thirtieth",
    "fortieth",
    "fiftieth",
    "sixtieth",
    "seventieth",
    "eightieth",
    "ninetieth",
]
ORDINAL_WORDS: Final[tuple[str, ...]] = (*_ORDINAL_ONES, *_ORDINAL_TENS, "hundredth")
"""Ordinal words (a position, not a quantity: never checked)."""


def parse_words(words: list[str]) -> list[tuple[int, int, Decimal, Decimal]]:
    """Split a run of number words into numbers: (first word, last word, value, quantum).

    ``["twenty", "one"]`` is 21; ``["three", "billion"]`` is 3,000,000,000 written to the
    billion (quantum 10**9); ``["five", "six"]`` is two numbers. Words are lower-cased.
    """
    found: list[tuple[int, int, Decimal, Decimal]] = []
    start = 0
    total = current = 0
    quantum = 1
    last: str | None = None  # "ones", "teen", "tens", "scale"
    for position, word in enumerate(words):
        if word in _SCALES:
            power = _SCALES[word]
            if last is None:  # a scale word cannot start a number: "hundred" alone
                start = position + 1
                continue
            if power == 2:
                current = (current or 1) * 100
            else:
                total += (current or 1) * 10**power
                current = 0
            quantum = 10**power
            last = "scale"
            continue
        value = WORD_VALUES[word]
        kind = "tens" if value >= 20 else ("teen" if value >= 10 else "ones")
        joins = last is None or last == "scale" or (last == "tens" and kind == "ones")
        if not joins:
            found.append((start, position - 1, Decimal(total + current), Decimal(quantum)))
            start, total, current, quantum = position, 0, 0, 1
        current += value
        quantum = 1
        last = kind
    if last is not None:
        found.append((start, len(words) - 1, Decimal(total + current), Decimal(quantum)))
    return found
