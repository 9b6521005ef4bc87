"""The numbers written in a free text, by value: ``numeric_values_in(text)``.

A small, self-contained matcher for the restricted-value check (``no_restricted_values``): it
finds where a text writes a number and what that number is worth, so 1234.5 is found in
"1,234.50", "$1,234.5" and "1.2345k". It should be merged with the prose-number scanner of the
``numbers`` check family once that lands (one scanner, one set of rules).

Rules (each pinned by a test):

- digits with an optional decimal part; thousands separators only in groups of three
  ("1,234,567"); the separators are an argument (``decimal="."`` reads "1,234.5",
  ``decimal=","`` reads "1.234,5"), never the process locale;
- a sign ("-", U+2212 minus) counts when it does not follow a letter or digit ("SKU-12" is
  12, not -12);
- a digit run touching a letter is part of an identifier or an ordinal ("A12", "2nd", "v2"),
  not a number — except the scale suffixes k/K, M, bn/B and the words thousand, million,
  billion, which multiply ("1.2M" is 1,200,000);
- "%" after a number: the number as written (4.55) and the ratio (0.0455) are both its values;
  a scaled number's values are the scaled and the written one (1,200,000 and 1.2);
- number words from zero to twenty ("nine") are numbers;
- dates, times and ranges are read as the numbers they are made of ("2026-12-01" is 2026, 12
  and 1; "10-12" or "10 to 12" are 10 and 12).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation

__all__ = ["WrittenNumber", "decimal_of", "numeric_values_in"]

_WORDS = (
    *("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"),
    *("eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen"),
    *("eighteen", "nineteen", "twenty"),
)
_WORD_VALUES = {word: Decimal(value) for value, word in enumerate(_WORDS)}
_SCALES = {
    "k": Decimal(1000),
    "thousand": Decimal(1000),
    "m": Decimal(10**6),
    "million": Decimal(10**6),
    "b": Decimal(10**9),
    "bn": Decimal(10**9),
    "billion": Decimal(10**9),
}


def _pattern(decimal: str) -> re.Pattern[str]:
    group = re.escape("," if decimal == "." else ".")
    point = re.escape(decimal)
    return re.compile(
        rf"(?P<sign>[-\u2212])?"
        rf"(?P<int>\d{{1,3}}(?:{group}\d{{3}})+(?!\d)|\d+)?"
        rf"(?:{point}(?P<frac>\d+))?"
        rf"(?:\s?(?P<scale>[kKMB]|bn|thousand|million|billion)(?![^\W\d_]))?"
        rf"(?P<pct>\s?%)?",
    )


_PATTERNS = {".": _pattern("."), ",": _pattern(",")}
_DIGIT = re.compile(r"\d")
_WORD_NUMBER = re.compile(r"(?<![^\W\d_])(" + "|".join(_WORDS) + r")(?![^\W\d_])", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class WrittenNumber:
    """A number in a text: its ``[start, end)`` span and its values (the first is the number
    read with its scale; then the others it may stand for: as written, as a ratio)."""

    start: int
    end: int
    values: tuple[Decimal, ...]


def decimal_of(value: int | float) -> Decimal:
    """The decimal a recorded number stands for: an int exactly, a float as its shortest
    repr (0.1 is 0.1, not 0.1000000000000000055…)."""
    return Decimal(value) if isinstance(value, int) else Decimal(repr(value))


def numeric_values_in(text: str, *, decimal: str = ".") -> Iterator[WrittenNumber]:
    """Every number ``text`` writes, in order (see the module docstring for the rules)."""
    if decimal not in _PATTERNS:
        raise ValueError(f'decimal must be "." or ",", got {decimal!r}')
    found = list(_digits(text, decimal))
    found.extend(
        WrittenNumber(word.start(), word.end(), (_WORD_VALUES[word.group().lower()],))
        for word in _WORD_NUMBER.finditer(text)
    )
    found.sort(key=lambda number: number.start)
    return iter(found)


def _digits(text: str, decimal: str) -> Iterator[WrittenNumber]:
    pattern = _PATTERNS[decimal]
    position, length = 0, len(text)
    while position < length:
        found = _DIGIT.search(text, position)
        if found is None:
            break
        start = found.start()
        if start > 0 and text[start - 1] == decimal and not _touches_digit(text, start - 1):
            start -= 1  # ".5"
        if start > 0 and text[start - 1] in "-\u2212" and not _is_alnum(text, start - 2):
            start -= 1
        match = pattern.match(text, start)
        if match is None or match.end() == start or not (match["int"] or match["frac"]):
            position = found.end()
            continue
        end = match.end()
        if (start > 0 and _is_letter(text[start - 1])) or (
            not match["scale"] and not match["pct"] and end < length and _is_letter(text[end])
        ):
            position = _skip_identifier(text, end)  # part of an identifier or an ordinal
            continue
        number = _value(match, decimal)
        if number is not None:
            yield WrittenNumber(start, end, number)
        position = end


def _value(match: re.Match[str], decimal: str) -> tuple[Decimal, ...] | None:
    digits = (match["int"] or "0").replace("," if decimal == "." else ".", "")
    try:
        written = Decimal(f"{digits}.{match['frac']}" if match["frac"] else digits)
    except InvalidOperation:  # pragma: no cover - the pattern only admits digits
        return None
    if match["sign"]:
        written = -written
    values = [written]
    scale = match["scale"]
    if scale:
        values.insert(0, written * _SCALES[scale.lower()])
    if match["pct"]:
        values.append(written / 100)
    return tuple(values)


def _is_letter(char: str) -> bool:
    return char.isalpha()


def _is_alnum(text: str, index: int) -> bool:
    return index >= 0 and text[index].isalnum()


def _touches_digit(text: str, index: int) -> bool:
    return index > 0 and text[index - 1].isdigit()


def _skip_identifier(text: str, position: int) -> int:
    while position < len(text) and (text[position].isalnum() or text[position] == "_"):
        position += 1
    return position
