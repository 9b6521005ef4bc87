"""The prose number scanner: what is read as a number (with its exact value and the precision
written), and the explicit rule for every digit run that is not a quantity."""

from __future__ import annotations

from decimal import Decimal

import pytest

from groundplane_otel.checks._numbers.prose_scan import scan_numbers


def read(text: str, locale: str = "en", **options: str) -> list[tuple[str, str]]:
    """(text, exact value) of each numeral, in order."""
    scan = scan_numbers(text, locale, **options)  # type: ignore[arg-type]
    return [(n.text, f"{n.value:f}") for n in scan.numerals]


def skipped(text: str, locale: str = "en", **options: str) -> list[tuple[str, str]]:
    scan = scan_numbers(text, locale, **options)  # type: ignore[arg-type]
    return [(s.text, s.rule) for s in scan.skipped]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("total 10,000 dollars", [("10,000", "10000")]),
        ("total 1,000 dollars", [("1,000", "1000")]),
        ("rate 4.75%", [("4.75%", "4.75")]),
        ("rate 4.75 percent", [("4.75 percent", "4.75")]),
        ("a change of -3.2", [("-3.2", "-3.2")]),
        ("a change of \u22123.2", [("\u22123.2", "-3.2")]),
        ("a change of +3.2", [("+3.2", "3.2")]),
        ("cost $1,234.50", [("$1,234.50", "1234.50")]),
        ("cost USD 1,234.50", [("1,234.50", "1234.50")]),
        ("cost USD1,234", [("1,234", "1234")]),
        ("cost 10 \u20ac", [("10", "10")]),
        ("revenue 1.2M", [("1.2M", "1200000")]),
        ("revenue $3bn", [("$3bn", "3000000000")]),
        ("3 billion users", [("3 billion", "3000000000")]),
        ("1.5 million", [("1.5 million", "1500000")]),
        ("10K followers", [("10K", "10000")]),
        ("1e6 rows", [("1e6", "1000000")]),
        ("a .5 point", [(".5", "0.5")]),
        ("nine regions", [("nine", "9")]),
        ("Twenty-one days", [("Twenty-one", "21")]),
        ("three hundred and five", [("three hundred and five", "305")]),
        ("three billion", [("three billion", "3000000000")]),
        ("five six", [("five", "5"), ("six", "6")]),
        ("10km and 3x", [("10", "10"), ("3", "3")]),
        ("1,23 is a list", [("1", "1"), ("23", "23")]),
        ("page 1,2345", [("1", "1"), ("2345", "2345")]),
    ],
)
def test_numbers_read_with_their_exact_value(text: str, expected: list[tuple[str, str]]) -> None:
    """Integers, separators, signs, percents, currency, magnitudes and words read exactly."""
    assert read(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("10\u201312%", [("10", "10", True), ("12%", "12", True)]),
        ("10-12", [("10", "10", False), ("12", "12", False)]),
        ("10 to 12 million", [("10", "10000000", False), ("12 million", "12000000", False)]),
        ("-5 to -3", [("-5", "-5", False), ("-3", "-3", False)]),
        ("1.5\u20132bn", [("1.5", "1500000000", False), ("2bn", "2000000000", False)]),
    ],
)
def test_a_range_is_two_numbers_sharing_the_suffix(
    text: str, expected: list[tuple[str, str, bool]]
) -> None:
    """Both ends of a range are checked; ``10–12%`` is two percents, a hyphen is no sign."""
    scan = scan_numbers(text)
    assert [(n.text, f"{n.value:f}", n.percent) for n in scan.numerals] == expected


def test_the_precision_written_is_the_last_digit_written() -> None:
    """``1.20`` is exact to 0.01, ``1.2M`` to 100,000, ``three billion`` to a billion."""
    scan = scan_numbers("1.20 and 1.2M and 10,000 and three billion and 4.5%")
    assert [n.quantum for n in scan.numerals] == [
        Decimal("0.01"),
        Decimal("1E+5"),
        Decimal("1"),
        Decimal("1E+9"),
        Decimal("0.1"),
    ]


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("due 2026-11-30", "date"),
        ("due 2026-11-30T10:45", "date"),
        ("due Nov 30, 2026", "date"),
        ("due November 30th", "date"),
        ("due 30 November 2026", "date"),
        ("due March 2026", "date"),
        ("due 30/11/2026", "date"),
        ("due 11/30/26", "date"),
        ("at 10:45", "time"),
        ("at 10:45:30", "time"),
        ("at 9am", "time"),
        ("at 9 p.m.", "time"),
        ("the 2nd region", "ordinal"),
        ("the 23rd region", "ordinal"),
        ("the third region", "ordinal"),
        ("the twenty-first region", "ordinal"),
        ("see [3]", "reference"),
        ("Q3 revenue", "identifier"),
        ("item SKU-1234", "identifier"),
        ("release v2.1", "identifier"),
        ("model gpt-4o", "identifier"),
        ("arch x86_64", "identifier"),
        ("issue #12", "identifier"),
        ("version 1.2.3", "identifier"),
        ("host 10.0.0.1", "identifier"),
        ("COVID-19 cases", "identifier"),
        ("H100 cards", "identifier"),
        ("one region", "pronoun"),
    ],
)
def test_digits_that_are_not_quantities_are_skipped_by_a_named_rule(text: str, rule: str) -> None:
    """Dates, times, ordinals, references, identifiers and the pronoun "one" are never numbers."""
    assert read(text) == []
    assert [found for _, found in skipped(text)] == [rule]


def test_identifier_is_skipped_whole() -> None:
    """``x86_64`` and ``SKU-12-34`` are one identifier each, not several numbers."""
    assert skipped("x86_64 and SKU-12-34") == [("86_64", "identifier"), ("12-34", "identifier")]


def test_list_markers_only_open_a_line() -> None:
    """``1.``, ``2)`` and ``(3)`` opening a line are markers; the same inside a line are numbers."""
    text = "1. revenue\n  2) cost\n(3) margin\nsee (4) and 5."
    assert skipped(text) == [("1.", "list_marker"), ("  2)", "list_marker"), ("(3)", "list_marker")]
    assert read(text) == [("4", "4"), ("5", "5")]


def test_letter_markers_hide_nothing() -> None:
    """``(a)``/``(b)`` markers hold no digits: the amounts after them are read and checked."""
    assert read("(a) 10,000 dollars\n(b) 9,500 dollars") == [("10,000", "10000"), ("9,500", "9500")]
    assert skipped("(a) 10,000 dollars\n(b) 9,500 dollars") == []


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a loss (-3.2)", [("-3.2", "-3.2")]),
        ("from $10-$12", [("$10", "10"), ("$12", "12")]),
        ("5%-10%", [("5%", "5"), ("10%", "10")]),
        ("1,000-2,000 users", [("1,000", "1000"), ("2,000", "2000")]),
    ],
)
def test_a_hyphen_after_a_number_is_a_range_not_a_sign(
    text: str, expected: list[tuple[str, str]]
) -> None:
    """A minus after ``(`` or a space is a sign; after a digit, ``%`` or ``)`` it joins a range."""
    assert read(text) == expected


def test_a_decimal_opening_a_line_is_not_a_marker() -> None:
    """``1.5 million`` at the start of a line is a number, not item 1."""
    assert read("1.5 million users") == [("1.5 million", "1500000")]


def test_years_are_checked_unless_declared_skipped() -> None:
    """A bare 2026 is a number by default; ``years="skip"`` skips 1900–2100 only."""
    assert read("In 2026 we sold 2,026 and 2101") == [
        ("2026", "2026"),
        ("2,026", "2026"),
        ("2101", "2101"),
    ]
    assert read("In 2026 we sold 2,026 and 2101", years="skip") == [
        ("2,026", "2026"),
        ("2101", "2101"),
    ]
    assert skipped("In 2026", years="skip") == [("2026", "year")]


@pytest.mark.parametrize(
    ("text", "locale", "expected"),
    [
        ("1.234.567,89 \u20ac", "de", [("1.234.567,89", "1234567.89")]),
        ("3,5 Mio. Kunden", "de", [("3,5 Mio.", "3500000")]),
        ("2 Mrd.", "de", [("2 Mrd.", "2000000000")]),
        ("1 Billion", "de", [("1 Billion", "1000000000000")]),
        ("12 345,5 %", "fr", [("12 345,5 %", "12345.5")]),
        ("12\u202f345,5", "fr", [("12\u202f345,5", "12345.5")]),
        ("3 milliards", "fr", [("3 milliards", "3000000000")]),
        ("1'234.5", "ch", [("1'234.5", "1234.5")]),
        ("1,234.5", "en", [("1,234.5", "1234.5")]),
        ("1 billion", "en", [("1 billion", "1000000000")]),
    ],
)
def test_separators_and_magnitudes_follow_the_locale_argument(
    text: str, locale: str, expected: list[tuple[str, str]]
) -> None:
    """The locale is an argument: de/fr/ch separators and their own billion (10**12)."""
    assert read(text, locale) == expected


def test_the_same_text_reads_differently_in_another_locale() -> None:
    """``3,5`` is 3.5 in German and the list 3, 5 in English; ``1.234`` is 1234 in German."""
    assert read("3,5 und 1.234", "de") == [("3,5", "3.5"), ("1.234", "1234")]
    assert read("3,5 and 1.234", "en") == [("3", "3"), ("5", "5"), ("1.234", "1.234")]


def test_the_process_locale_is_never_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """A German process locale (LC_ALL, localeconv, getlocale) changes nothing."""
    import locale

    german = {"decimal_point": ",", "thousands_sep": ".", "grouping": [3, 0]}
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    monkeypatch.setenv("LANG", "de_DE.UTF-8")
    monkeypatch.setattr(locale, "localeconv", lambda: dict(german))
    monkeypatch.setattr(locale, "getlocale", lambda *_: ("de_DE", "UTF-8"))
    assert read("1,234.5") == [("1,234.5", "1234.5")]
    assert read("1.234,5", "de") == [("1.234,5", "1234.5")]


def test_an_unknown_locale_is_refused_with_the_known_ones() -> None:
    """``locale="xx"`` is a ValueError listing the locales there are."""
    with pytest.raises(ValueError) as raised:
        scan_numbers("1", "xx")
    assert str(raised.value) == "locale must be one of ['ch', 'de', 'en', 'fr'], got 'xx'"


def test_spans_point_at_the_text() -> None:
    """Each numeral's span slices exactly its text out of the input."""
    text = "The invoice total is 1,000 dollars, due in 30 days."
    for numeral in scan_numbers(text).numerals:
        assert text[numeral.start : numeral.end] == numeral.text
    assert [(n.start, n.end) for n in scan_numbers(text).numerals] == [(21, 26), (43, 45)]
