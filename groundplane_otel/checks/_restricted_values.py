"""The values of restricted facts, indexed for finding them in an output.

What counts as a value of a fact (the rule ``no_restricted_values`` and telemetry redaction
share): every string and every number anywhere in it — a Table's cells (its key column
included; column names are schema, not values), a Ranking's names and scores, a Domain's
members, a Documents' ids and contents, and everything inside a plain value, its mapping keys
included (a ``{name: score}`` object holds names). Bools and None are not values. A string that
is exactly one number ("4.20") is also that number.

Numbers in a text are found by the one prose-number scanner
(``_numbers.prose_scan.scan_numbers``: its locales, number words, ranges and its rules for
dates, times, ordinals, list markers, references and identifiers, which are never numbers).
What is restricted-specific is only what a number *may reveal* (``readings``): its value,
and also the digits as written before a magnitude (``1.2M`` reveals 1,200,000 and 1.2) and
the ratio a percent spells (``4.55%`` reveals 4.55 and 0.0455) — a leak by any reading is a
leak — and any rounding of a restricted value no unrestricted value is closer to
(``_restricted_rounding``: ``$1.2k`` reveals 1,234.5). A restricted document's content also
holds salient names and numbers that are restricted said on their own
(``_restricted_terms``), unless the unrestricted evidence holds them too.

A locator says where a value sits *without* showing it ("row 3, column 'cost'"): findings and
telemetry name the place, never the value.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from decimal import Decimal
from typing import Any

from groundplane_otel._arithmetic import is_number
from groundplane_otel.checks._numbers.prose_fields import shifted
from groundplane_otel.checks._numbers.prose_scan import Numeral, scan_numbers
from groundplane_otel.checks._numbers.recorded import as_decimal
from groundplane_otel.checks._restricted_rounding import Public, hedged, rounded
from groundplane_otel.checks._restricted_terms import terms_of
from groundplane_otel.checks._text import Folded, PhraseIndex, normalize
from groundplane_otel.documents import Documents
from groundplane_otel.facts import Domain, Ranking, Table
from groundplane_otel.registry import FactRegistry

__all__ = [
    "Leak",
    "RestrictedIndex",
    "RestrictedPlace",
    "readings",
    "restricted_index",
    "restricted_indexes",
    "values_of",
]

# A string that may be exactly one number ("4.20", "$1,234.5", "12%", "1.2M"): only these are
# read by the number scanner (a cheap gate: most strings are names).
_PHRASE_ID = re.compile(r"[A-Za-z]+(?:[-_ ][A-Za-z]+)*")
"""A document id that is an ordinary phrase ("salary-bands"): a leak only in its citation form
(the id as written), never as the words it is made of ("salary bands are confidential")."""
_NUMBERISH = re.compile(
    r"[-\u2212]?[$\u20ac\u00a3\u00a5]?\s?[\d.,]*\d[\d.,]*"
    r"\s?(?:%|[kKMB]|bn|thousand|million|billion)?"
)


@dataclass(frozen=True, slots=True)
class RestrictedPlace:
    """A restricted value's fact and place (content-free)."""

    fact: str
    locator: str


@dataclass(frozen=True, slots=True)
class Leak:
    """A restricted value found in a text: the original ``[start, end)``, and how it matched."""

    where: RestrictedPlace
    start: int
    end: int
    how: str  # "as text" | "as cited" | "as a number"


def readings(numeral: Numeral) -> tuple[Decimal, ...]:
    """Every value a number in text may reveal: its value first, then the digits as written
    before a magnitude (``1.2M``: 1.2), then the ratio a percent spells (``4.55%``: 0.0455)."""
    found = [numeral.value]
    if numeral.magnitude:
        found.append(shifted(numeral.value, -numeral.magnitude))
    if numeral.percent:
        found.append(shifted(numeral.value, -2))
    return tuple(found)


def _whole_number(text: str) -> Decimal | None:
    """The value of a string that is exactly one number ("4.20", "$1,234.5", "12%")."""
    if not _NUMBERISH.fullmatch(text):
        return None
    scan = scan_numbers(text)
    if len(scan.numerals) != 1 or scan.skipped:
        return None
    numeral = scan.numerals[0]
    return numeral.value if (numeral.start, numeral.end) == (0, len(text)) else None


def _leaves(value: Any, at: str) -> Iterator[tuple[Any, str]]:
    """(string or number, locator) for everything inside a plain value."""
    if isinstance(value, str) or is_number(value):
        yield value, at or "the value"
    elif isinstance(value, Mapping):
        for position, (key, item) in enumerate(value.items()):
            yield from _leaves(key, f"{at}{{key {position}}}")
            yield from _leaves(item, f"{at}{{value {position}}}")
    elif isinstance(value, (list, tuple, set, frozenset)):
        for position, item in enumerate(value):
            yield from _leaves(item, f"{at}[{position}]")


def values_of(value: Any) -> Iterator[tuple[Any, str]]:
    """(string or number, locator) of every value of a fact (see the module docstring)."""
    if isinstance(value, Table):
        for row_number, row in enumerate(value.rows):
            for column in value.columns:
                if column in row:
                    where = f"row {row_number}, column {column!r}"
                    yield from _leaves(row[column], where)
    elif isinstance(value, Ranking):
        for position, (name, score) in enumerate(value.items):
            yield from _leaves(name, f"item {position} (name)")
            yield from _leaves(score, f"item {position} (score)")
    elif isinstance(value, Domain):
        for member in value.members:
            yield member, "a member"
    elif isinstance(value, Documents):
        for position, document in enumerate(value.documents):
            yield document.id, f"document {position} (id)"
            if document.content is not None:
                yield document.content, f"document {position} (content)"
    else:
        yield from _leaves(value, "")


_DocumentTerms = tuple[
    PhraseIndex[tuple[RestrictedPlace, str]], dict[Decimal, RestrictedPlace], list[Decimal]
]


class RestrictedIndex:
    """The strings (as phrases) and numbers (by value) of one restricted fact, and the salient
    terms of its documents' contents (per locale, on first use)."""

    __slots__ = ("_cited", "_sorted", "_terms", "_texts", "numbers", "phrases")

    def __init__(self, fact: str, value: Any) -> None:
        phrases: list[tuple[str, RestrictedPlace]] = []
        numbers: dict[Decimal, RestrictedPlace] = {}
        texts: list[tuple[str, RestrictedPlace]] = []
        cited: dict[str, RestrictedPlace] = {}
        for leaf, locator in values_of(value):
            where = RestrictedPlace(fact, locator)
            if isinstance(leaf, str) and locator.endswith("(id)") and _PHRASE_ID.fullmatch(leaf):
                cited.setdefault(leaf.casefold(), where)  # "salary-bands": as cited only
            elif isinstance(leaf, str):
                phrases.append((leaf, where))
                number = _whole_number(leaf.strip())
                if number is not None:
                    numbers.setdefault(number, where)
                if locator.endswith("(content)"):
                    texts.append((leaf, where))
            else:
                numbers.setdefault(as_decimal(leaf), where)
        self.phrases: PhraseIndex[RestrictedPlace] = PhraseIndex(phrases)
        self._cited = (
            (
                re.compile(
                    r"(?<![\w-])(?:"
                    + "|".join(re.escape(id_) for id_ in sorted(cited, key=len, reverse=True))
                    + r")(?![\w-])",
                    re.IGNORECASE,
                ),
                cited,
            )
            if cited
            else None
        )
        self.numbers = numbers
        self._texts = texts
        self._terms: dict[str, _DocumentTerms] = {}
        self._sorted = sorted(numbers)

    def number(self, value: int | float) -> RestrictedPlace | None:
        """The restricted value equal to ``value``, if any (bools are never numbers)."""
        return self.numbers.get(as_decimal(value)) if is_number(value) else None

    def _document_terms(self, locale: str) -> _DocumentTerms:
        found = self._terms.get(locale)
        if found is None:
            names: list[tuple[str, tuple[RestrictedPlace, str]]] = []
            spelled: dict[Decimal, RestrictedPlace] = {}
            for text, where in self._texts:
                terms = terms_of(text, locale)
                named = RestrictedPlace(
                    where.fact, where.locator.replace("(content)", "(a name in its content)")
                )
                names += [(name, (named, name)) for name in terms.names]
                number = RestrictedPlace(
                    where.fact, where.locator.replace("(content)", "(a number in its content)")
                )
                for value in terms.numbers:
                    spelled.setdefault(value, number)
            every = sorted({*self.numbers, *spelled})
            found = self._terms.setdefault(locale, (PhraseIndex(names), spelled, every))
        return found

    def in_text(
        self, text: str, *, locale: str = "en", public: Public | None = None
    ) -> Leak | None:
        """The first restricted value ``text`` reveals: as a phrase (case-folded, word-bounded,
        whitespace-normalised; also read with hyphenated line breaks joined, and with every
        line break joined), as a number equal by value in any of its ``readings`` (numbers
        found by ``scan_numbers`` in ``locale``), as a rounding of one (``_restricted_rounding``),
        or as a salient term of a restricted document's content (``_restricted_terms``).
        ``public``: the unrestricted evidence, which exempts a document's incidental terms and
        a rounding an unrestricted value is closer to (None: nothing is exempt)."""
        names, spelled, every = (
            self._document_terms(locale) if self._texts else (None, None, self._sorted)
        )
        if self._cited is not None and (cited := self._cited[0].search(text)):
            return Leak(self._cited[1][cited.group().casefold()], *cited.span(), "as cited")
        if self.phrases or names:
            for folded in _variants(text):
                for hit in self.phrases.find(folded.text):
                    start, end = folded.span(hit.start, hit.end)
                    return Leak(hit.payload, start, end, "as text")
                for named in names.find(folded.text) if names else ():
                    where, name = named.payload
                    if public is None or not public.names(name):
                        start, end = folded.span(named.start, named.end)
                        return Leak(where, start, end, "as text")
        if not every:
            return None

        def exempt(value: Decimal) -> bool:
            return (
                value not in self.numbers
                and public is not None
                and spelled is not None
                and public.holds(value)
            )

        for numeral in scan_numbers(text, locale).numerals:
            for candidate in readings(numeral):
                held = self.numbers.get(candidate)
                if held is None and spelled and not exempt(candidate):
                    held = spelled.get(candidate)
                if held is not None:
                    return Leak(held, numeral.start, numeral.end, "as a number")
            found = rounded(every, numeral, public, exempt, hedged(text, numeral))
            if found is not None:
                where = self.numbers.get(found.value) or (spelled or {})[found.value]
                how = f"as a number rounded to {found.quantum:f} ({found.form})"
                return Leak(where, numeral.start, numeral.end, how)
        return None


def _variants(text: str) -> Iterator[Folded]:
    """The folded readings of a text: as is, and with hyphenated or all line breaks joined."""
    yield normalize(text)
    if "\n" in text or "\r" in text:
        yield normalize(text, join_breaks="hyphen")
        yield normalize(text, join_breaks="all")


def restricted_index(fact: str, value: Any) -> RestrictedIndex:
    """The index of one fact's values, kept on the value when it is a typed fact."""
    cache = getattr(value, "_derived", None)
    if isinstance(cache, dict):
        key = ("restricted.index", fact)
        found = cache.get(key)
        if found is None:
            found = cache.setdefault(key, RestrictedIndex(fact, value))
        assert isinstance(found, RestrictedIndex)
        return found
    return RestrictedIndex(fact, value)


def restricted_indexes(registry: FactRegistry) -> list[RestrictedIndex]:
    """One index per restricted fact the registry holds, in recording order."""
    return [
        restricted_index(name, registry.peek(name).value) for name in registry.restricted_names()
    ]
