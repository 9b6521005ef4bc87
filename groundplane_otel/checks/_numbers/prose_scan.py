"""Finding the numbers in a text: one regex pass, then explicit rules for what is not a quantity.

Read as numbers (each one must be recorded): integers, decimals, thousands separators (of the
locale given), a sign (``-``, ``+``, the Unicode minus U+2212, an en dash U+2013 not after a
digit: ``\u20133.2%`` is -3.2), an exponent (``1e6``), percents (``4.5%``, ``4.5 percent``, ``fifty
percent``), currency amounts (``$1,000``, ``USD 1,000``, ``10 €``: the
currency is a unit, the amount is checked), magnitudes (``1.2M``, ``3 billion``, ``2,5 Mio.``),
English number words (``nine``, ``twenty-one``, ``three hundred``), and both ends of a range
(``10-12``, ``10 to 12``, an en or em dash; ``10-12%`` and ``1-2 million`` share the suffix,
unless the first end has one of its own: ``12.4% to $1.23M`` keeps 12.4 a percent).

Never read as numbers (each is reported as ``Skipped`` with its rule, never as support):
``date`` (``2026-11-30``, ``30/11/2026``, ``30.11.2026``, ``Nov 30, 2026``, ``30 November``,
``March 2026``), ``time`` (``10:45``, ``10:45:30``, ``9am``, ``9 p.m.``, ``9:00-17:00``,
``nine in the morning``, ``noon``), ``ordinal``
(``2nd``, ``third``, ``twenty-first``), ``list_marker`` (``1.``, ``1)``, ``(1)`` opening a
line), ``reference`` (``[3]``), ``identifier`` (digits touching a letter or ``_`` before them,
or joined to one by ``-``, ``.``, ``/``: ``Q3``, ``SKU-1234``, ``v2.1``, ``gpt-4o``, ``x86_64``;
``#12``; a dotted run of three or more integers: ``1.2.3``, ``10.0.0.1``), ``pronoun`` (the
word ``one`` alone), and ``year`` (a bare four-digit 1900 to 2100, only with ``years="skip"``).
Digits followed by letters are a number with a unit (``10km``, ``3x``): checked.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import lru_cache
from typing import Final, Literal

from groundplane_otel.checks._numbers.prose_fields import shifted
from groundplane_otel.checks._numbers.prose_pattern import (
    CURRENCY_CODES,
    JOINERS,
    MINUS,
    PERCENT_AFTER,
    RANGE,
    ordinal_suffix,
    pattern,
)
from groundplane_otel.checks._numbers.prose_words import (
    LOCALES,
    SCALE_WORDS,
    WORD_VALUES,
    NumberLocale,
    parse_words,
)

_POINT: Final = re.compile(r"[ \t]+point(?=[ \t])", re.IGNORECASE)
_ARTICLE: Final = re.compile(r"(?<![\w])[aA][ \t]$")
_WHOLE_AND: Final = re.compile(
    r"(?<![\w])(one|two|three|four|five|six|seven|eight|nine|ten)[ \t]+and[ \t]+$", re.IGNORECASE
)

__all__ = ["Numeral", "Rule", "Scan", "Skipped", "scan_numbers", "scanner"]

Rule = Literal[
    "date", "time", "year", "ordinal", "list_marker", "reference", "identifier", "pronoun"
]
Years = Literal["check", "skip"]


@dataclass(frozen=True, slots=True)
class Numeral:
    """A number as written: its text and span, its exact value, the precision written.

    ``quantum`` is the unit of the last digit written (``1.20`` → 0.01, ``1.2M`` → 100000,
    ``three billion`` → 10**9); ``percent`` marks ``%``/``percent`` (the value stays as
    written: ``4.5%`` is 4.5); ``magnitude`` is the power of ten of a magnitude written after
    the digits (``1.2M`` → 6, ``three billion`` → 9; 0 without one).
    """

    text: str
    start: int
    end: int
    value: Decimal
    quantum: Decimal
    percent: bool = False
    magnitude: int = 0


@dataclass(frozen=True, slots=True)
class Skipped:
    """Digits or number words that are not a quantity, and the rule that says so."""

    text: str
    start: int
    end: int
    rule: Rule


@dataclass(frozen=True, slots=True)
class Scan:
    numerals: tuple[Numeral, ...]
    skipped: tuple[Skipped, ...]


_WORD_RUN: Final = re.compile(r"(?:[\w]|[-./](?=\w))*")


@lru_cache(maxsize=64)
def _quantum(exponent: int) -> Decimal:
    """The unit of a last digit written at ``exponent`` (10**exponent), exactly."""
    return Decimal((0, (1,), exponent))


def _digits(match: re.Match[str], locale: NumberLocale) -> tuple[str, str]:
    whole = match.group("int") or ""
    for mark in locale.groups:
        whole = whole.replace(mark, "")
    return whole or "0", match.group("frac") or match.group("bare") or ""


def _magnitude(match: re.Match[str], locale: NumberLocale) -> int:
    word = match.group("magt") or match.group("magw") or match.group("mags")
    if not word:
        return 0
    if word in locale.magnitudes:
        return locale.magnitudes[word]
    lowered = {key.lower(): power for key, power in locale.magnitudes.items()}
    return lowered[word.lower()]


class _Scanner:
    """One scan of one text (state: what was found so far, for joins and ranges)."""

    def __init__(self, text: str, locale: NumberLocale, years: Years) -> None:
        self.text = text
        self.locale = locale
        self.years = years
        self.numerals: list[Numeral] = []
        self.skipped: list[Skipped] = []
        self.last: Numeral | Skipped | None = None
        self.resume = 0  # an identifier ran on past its match: ignore matches inside it

    def run(self) -> Scan:
        text = self.text
        fractions = "alf" in text or "uarter" in text or "ALF" in text or "UARTER" in text
        for match in pattern(self.locale, fractions).finditer(text):
            if match.start() < self.resume:
                continue
            kind = match.lastgroup
            if kind == "num":
                self._number(match)
            elif kind == "words":
                self._words(match)
            elif kind == "fraction":
                self._fraction(match)
            else:
                rule: Rule = {
                    "date": "date",
                    "mdate": "date",
                    "time": "time",
                    "wtime": "time",
                    "marker": "list_marker",
                    "reference": "reference",
                    "version": "identifier",
                    "ordword": "ordinal",
                }[str(kind)]  # type: ignore[assignment]
                self._skip(match.start(), match.end(), rule)
        return Scan(tuple(self.numerals), tuple(self.skipped))

    def _skip(self, start: int, end: int, rule: Rule) -> None:
        skipped = Skipped(self.text[start:end], start, end, rule)
        self.skipped.append(skipped)
        self.last = skipped

    def _identifier_before(self, start: int) -> bool:
        """Whether the digits at ``start`` belong to an identifier (see the module doc)."""
        text = self.text
        before = text[start - 1] if start else ""
        if before == "#":
            return True
        if before.isalnum() or before == "_":
            code = text[max(0, start - 3) : start]
            return not (code in CURRENCY_CODES and (start < 4 or not text[start - 4].isalnum()))
        if before in JOINERS and start >= 2:
            joined = text[start - 2]
            if joined.isalpha() or joined == "_":
                return True
            last = self.last
            return isinstance(last, Skipped) and last.rule == "identifier" and last.end == start - 1
        return False

    def _number(self, match: re.Match[str]) -> None:
        text, start, end = self.text, match.start(), match.end()
        sign = match.group("sign")
        negative = False
        if sign:
            before = text[start - 1] if start else ""
            if before and (before.isalnum() or before in ")]%_"):  # "10-12", "SKU-1234"
                start += 1
            else:
                negative = sign in MINUS
        if self._identifier_before(start):
            self.resume = self._word_end(end)
            self._skip(start, self.resume, "identifier")
            return
        suffix = ordinal_suffix(self.locale).match(text, end)
        if suffix and not (
            match.group("pct") or match.group("magt") or match.group("magw") or match.group("mags")
        ):
            self._skip(start, suffix.end(), "ordinal")
            return
        whole, fraction = _digits(match, self.locale)
        exponent = -len(fraction) + int(match.group("exp") or 0)
        power = _magnitude(match, self.locale)
        percent = bool(match.group("pct"))
        if (
            self.years == "skip"
            and len(whole) == 4
            and not (sign or match.group("cur") or fraction or percent or power)
            and 1900 <= int(whole) <= 2100
            and text[start:end] == whole
        ):
            self._skip(start, end, "year")
            return
        value = Decimal(f"{'-' if negative else ''}{whole}{fraction}E{exponent + power}")
        quantum = _quantum(exponent + power)
        numeral = Numeral(text[start:end], start, end, value, quantum, percent, power)
        self._append(numeral)

    def _word_end(self, end: int) -> int:
        """The end of an identifier: it runs on through letters, digits and inner joiners."""
        found = _WORD_RUN.match(self.text, end)
        return found.end() if found else end

    def _fraction(self, match: re.Match[str]) -> None:
        """ "half a million" (5 * 10**5), "a quarter of a million", "three quarters of a
        billion": written to the precision of the fraction (one or two digits)."""
        lowered = match.group().lower()
        power = SCALE_WORDS[lowered.rsplit(maxsplit=1)[-1].rsplit("-", 1)[-1]]
        if "half" in lowered:
            digits, exponent = 5, power - 1
        elif lowered.startswith("three"):
            digits, exponent = 75, power - 2
        else:
            digits, exponent = 25, power - 2
        value = Decimal(digits).scaleb(exponent)
        quantum = _quantum(exponent)
        start, end = match.start(), match.end()
        if article := _ARTICLE.search(self.text, max(0, start - 2), start):
            start = article.start()  # "a quarter of a million": the "a" is part of it
            whole = _WHOLE_AND.search(self.text, max(0, start - 16), start)
            if whole is not None and digits == 5:  # "two and a half million": 2.5 million
                value += Decimal(WORD_VALUES[whole.group(1).lower()]).scaleb(power)
                self._drop_word(whole.start(1), whole.end(1))
                start = whole.start()
        self._append(Numeral(self.text[start:end], start, end, value, quantum, False, power))

    def _drop_word(self, start: int, end: int) -> None:
        """Forget the number word just read at ``[start, end)`` (it joins the next number)."""
        if self.numerals and (self.numerals[-1].start, self.numerals[-1].end) == (start, end):
            self.numerals.pop()
        elif self.skipped and (self.skipped[-1].start, self.skipped[-1].end) == (start, end):
            self.skipped.pop()
        self.last = None

    def _words(self, match: re.Match[str]) -> None:
        spelled = match.group()
        point = _POINT.search(spelled) if "oint" in spelled or "OINT" in spelled else None
        if point is not None and self._point(match, point):
            return
        words = [w for w in re.finditer(r"[A-Za-z]+", spelled) if w.group().lower() != "and"]
        lowered = [w.group().lower() for w in words]
        runs = [(0, len(words))]
        if point is not None:  # "five six point two": the words before and after, each alone
            cut = next(i for i, word in enumerate(lowered) if word == "point")
            runs = [(0, cut), (cut + 1, len(words))]
        base = match.start()
        for begin, stop in runs:
            self._run(base, words[begin:stop], lowered[begin:stop])

    def _run(self, base: int, words: list[re.Match[str]], lowered: list[str]) -> None:
        for first, last, value, quantum in parse_words(lowered):
            start, end = base + words[first].start(), base + words[last].end()
            percent = PERCENT_AFTER.match(self.text, end)  # "fifty percent", "one percent"
            if percent:
                end = percent.end()
            elif first == last and lowered[first] == "one":
                self._skip(start, end, "pronoun")
                continue
            power = 0
            if lowered[last] in SCALE_WORDS and lowered[last] != "hundred":
                power = SCALE_WORDS[lowered[last]]
            numeral = Numeral(
                self.text[start:end], start, end, value, quantum, bool(percent), power
            )
            self._append(numeral)

    def _point(self, match: re.Match[str], point: re.Match[str]) -> bool:
        """ "twelve point four percent", "one point two million": the number words before
        "point" and one digit word per decimal place after it (and a scale word). False when
        the words before are not one whole number (then each is read on its own)."""
        base = match.start()
        head = list(re.finditer(r"[A-Za-z]+", match.group()[: point.start()]))
        lowered = [w.group().lower() for w in head if w.group().lower() != "and"]
        parsed = parse_words(lowered)
        if len(parsed) != 1:
            return False
        tail = match.group()[point.start() :].lower().split()[1:]
        power = SCALE_WORDS.get(tail[-1], 0)
        digits = tail[:-1] if power else tail
        fraction = "".join(str(WORD_VALUES[word]) for word in digits)
        whole = parsed[0][2]
        value = Decimal(f"{whole}.{fraction}").scaleb(power)
        quantum = _quantum(power - len(fraction))
        start, end = base, match.end()
        percent = PERCENT_AFTER.match(self.text, end)
        if percent:
            end = percent.end()
        numeral = Numeral(self.text[start:end], start, end, value, quantum, bool(percent), power)
        self._append(numeral)
        return True

    def _append(self, numeral: Numeral) -> None:
        """Record a numeral; the first end of a range takes the suffix of the second."""
        previous = self.last
        if isinstance(previous, Numeral) and RANGE.fullmatch(
            self.text[previous.end : numeral.start]
        ):
            self._share_suffix(numeral)
        self.numerals.append(numeral)
        self.last = numeral

    def _share_suffix(self, second: Numeral) -> None:
        """``10-12%``: 10 is a percent too; ``1-2 million``: 1 is a million too. A first end
        with a suffix of its own keeps it: in ``rose 12.4% to $1.23M`` 12.4 stays a percent."""
        first = changed = self.numerals[-1]
        if second.percent and not (first.percent or first.magnitude):
            changed = replace(changed, percent=True)
        power = second.magnitude
        if power and not (first.magnitude or first.percent):
            changed = replace(
                changed,
                value=shifted(first.value, power),
                quantum=shifted(first.quantum, power),
                magnitude=power,
            )
        self.numerals[-1] = changed


def scan_numbers(text: str, locale: str = "en", *, years: Years = "check") -> Scan:
    """Every number in ``text`` and every digit run that is not a quantity (with its rule).

    ``locale`` names the separators (``en`` 1,234.5 · ``de`` 1.234,5 · ``fr`` 1 234,5 ·
    ``ch`` 1'234.5), never read from the process. See the module docstring for the rules.
    """
    return scanner(locale, years=years)(text)


def scanner(locale: str = "en", *, years: Years = "check") -> Callable[[str], Scan]:
    """``scan_numbers`` with ``locale`` and ``years`` validated once (for many texts)."""
    if locale not in LOCALES:
        raise ValueError(f"locale must be one of {sorted(LOCALES)}, got {locale!r}")
    if years not in ("check", "skip"):
        raise ValueError(f'years must be "check" or "skip", got {years!r}')
    found = LOCALES[locale]
    return lambda text: _Scanner(text, found, years).run()
