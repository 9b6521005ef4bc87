"""What a restricted document's text holds that must not be said on its own: salient names and
numbers.

A restricted Documents fact is evidence the model may read but never reveal. Its ids and whole
contents are restricted values (``_restricted_values``); so are the terms inside its content
that identify something, said alone — the salience rules keep ordinary words out:

- *names*: a run of two or more capitalised words ("Project Falcon", "Maria Lopez", "Harbour
  Kit Pro"), a leading function word dropped ("The Falcon Launch" → "Falcon Launch"); runs of
  month or weekday names only are not names. A single capitalised word ("Falcon", "Berlin",
  "Refunds") is not one: a sentence start, a product word and a place look alike.
- *codes*: a token of five or more characters that starts with a letter and holds a digit
  ("SKU-1234", "HR-2291", "PX7741"); ``Q3``, ``v2`` and ``2nd`` are too short.
- *e-mail addresses*.
- *numbers* (the prose-number scanner, the check's locale; a bare year 1900-2100 is not one):
  a number written with fraction digits, a percent, a magnitude or a currency sign, or of at
  least 100 — "30 days", "3 weeks", "12 months" are too common to be secrets.

A term that the unrestricted evidence of the request also holds (a public fact's value, an
approved document's text) is not a leak from the restricted document: said alone, it may come
from there (``_public_values``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Final

from groundplane_otel.checks._numbers.prose_scan import Numeral, scan_numbers
from groundplane_otel.checks._numbers.recorded import CONTEXT

__all__ = ["Terms", "terms_of"]

_CAPITAL: Final = r"[A-Z][A-Za-z0-9'\u2019&]*[A-Za-z0-9]"
_NAME_RUN: Final = re.compile(rf"(?<![\w-]){_CAPITAL}(?:[ \t]+{_CAPITAL})+(?![\w-])")
_CODE: Final = re.compile(r"(?<![\w-])(?=[A-Za-z][\w-]*\d)[A-Za-z][\w-]{3,}[A-Za-z0-9](?![\w-])")
_EMAIL: Final = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_FUNCTION: Final = frozenset((
    "a", "an", "the", "this", "that", "these", "those", "our", "your", "their", "its", "his",
    "her", "my", "we", "you", "they", "it", "i", "in", "on", "at", "for", "from", "to", "of",
    "by", "with", "as", "if", "when", "while", "all", "any", "each", "every", "no", "not",
    "please", "note", "per", "and", "or", "but", "so", "dear", "hi", "hello", "re", "fw", "fwd",
    "subject", "internal", "confidential",
))  # fmt: skip
_CALENDAR: Final = frozenset((
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep",
    "sept", "oct", "nov", "dec", "monday", "tuesday", "wednesday", "thursday", "friday",
    "saturday", "sunday", "mon", "tue", "wed", "thu", "fri", "sat", "sun",
))  # fmt: skip
_CURRENCY: Final = frozenset("$€£¥₹")
_HUNDRED: Final = CONTEXT.create_decimal(100)  # not Decimal(100): that sets the thread's
# decimal context variable at import, and every OpenTelemetry context switch then copies it


@dataclass(frozen=True, slots=True)
class Terms:
    """The salient names (as written) and numbers (by value) of one text."""

    names: tuple[str, ...]
    numbers: tuple[Decimal, ...]


def _names(text: str) -> list[str]:
    found: list[str] = []
    for run in _NAME_RUN.finditer(text):
        words = run.group().split()
        while words and words[0].lower() in _FUNCTION:
            words.pop(0)
        if len(words) >= 2 and not all(w.lower() in _CALENDAR for w in words):
            found.append(" ".join(words))
    found += [code.group() for code in _CODE.finditer(text)]
    found += [mail.group() for mail in _EMAIL.finditer(text)]
    return found


def salient(numeral: Numeral) -> bool:
    """Whether a number in a restricted text is specific enough to be a secret."""
    if numeral.percent or numeral.magnitude or numeral.quantum < 1:
        return True
    if numeral.text[:1] in _CURRENCY or numeral.text[1:2] in _CURRENCY:
        return True
    return abs(numeral.value) >= _HUNDRED


def terms_of(text: str, locale: str) -> Terms:
    """The salient names and numbers of ``text`` (see the module docstring)."""
    numbers = [
        numeral.value
        for numeral in scan_numbers(text, locale, years="skip").numerals
        if salient(numeral)
    ]
    return Terms(tuple(dict.fromkeys(_names(text))), tuple(dict.fromkeys(numbers)))
