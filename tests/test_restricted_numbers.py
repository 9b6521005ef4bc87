"""The numbers no_restricted_values reads in text: the one prose-number scanner
(``scan_numbers``) plus the readings a restricted value may hide behind, rule by rule."""

from __future__ import annotations

from decimal import Decimal

import pytest

from groundplane_otel.checks._numbers.prose_scan import scan_numbers
from groundplane_otel.checks._numbers.recorded import as_decimal
from groundplane_otel.checks._restricted_values import RestrictedIndex, readings


def values(text: str, locale: str = "en") -> list[tuple[str, tuple[str, ...]]]:
    """(spelling, readings as strings) of every number found."""
    return [
        (n.text, tuple(str(v) for v in readings(n))) for n in scan_numbers(text, locale).numerals
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,234.50", [("1,234.50", ("1234.50",))]),
        ("$1,234,567", [("$1,234,567", ("1234567",))]),
        ("1,2345", [("1", ("1",)), ("2345", ("2345",))]),
        ("a drop of -5 and \u22123", [("-5", ("-5",)), ("\u22123", ("-3",))]),
        ("4.55%", [("4.55%", ("4.55", "0.0455"))]),
        ("4.5 percent", [("4.5 percent", ("4.5", "0.045"))]),
        ("1.2M and 3 million", [("1.2M", ("1.2E+6", "1.2")), ("3 million", ("3E+6", "3"))]),
        ("10k users", [("10k", ("1.0E+4", "10"))]),
        (".5 of it", [(".5", ("0.5",))]),
        ("nine of twenty, someone", [("nine", ("9",)), ("twenty", ("20",))]),
        ("eighty-eight", [("eighty-eight", ("88",))]),
        ("10-12 days", [("10", ("10",)), ("12", ("12",))]),
        ("10-12%", [("10", ("10", "0.10")), ("12%", ("12", "0.12"))]),
        ("5 km and 10km", [("5", ("5",)), ("10", ("10",))]),
        ("1e3", [("1e3", ("1E+3",))]),
    ],
)
def test_what_is_read_and_what_it_may_reveal(text: str, expected: object) -> None:
    """Separators in groups of three, signs, percents (as written and as the ratio), magnitudes
    (scaled and as written), number words past twenty, ranges sharing a suffix, units, exponents."""
    assert values(text) == expected


@pytest.mark.parametrize(
    ("text", "rules"),
    [
        ("SKU-12 and #12", ["identifier", "identifier"]),
        ("A12, 2nd, v2, 5th", ["identifier", "ordinal", "identifier", "ordinal"]),
        ("2026-12-01 at 10:45", ["date", "time"]),
        ("one of them [3]", ["pronoun", "reference"]),
    ],
)
def test_what_is_never_a_number(text: str, rules: list[str]) -> None:
    """The scanner's explicit rules hold for restricted values too: identifiers, ordinals,
    dates, times, the pronoun "one" and reference markers reveal no number."""
    scan = scan_numbers(text)
    assert scan.numerals == ()
    assert [skipped.rule for skipped in scan.skipped] == rules


def test_the_locale_is_an_argument() -> None:
    """locale="de" reads German-style numbers; the default "en" reads "1.234,50" as 1.234, 50."""
    assert values("1.234,50", "de") == [("1.234,50", ("1234.50",))]
    assert values("1.234,50") == [("1.234", ("1.234",)), ("50", ("50",))]
    with pytest.raises(ValueError, match="locale must be one of"):
        scan_numbers("1", "xx")


def test_recorded_numbers_stand_for_their_shortest_repr() -> None:
    """0.1 is Decimal('0.1'), ints are exact, and equal values compare equal across spellings."""
    assert as_decimal(0.1) == Decimal("0.1")
    assert as_decimal(10**30) == Decimal(10**30)
    assert as_decimal(1234.5) == Decimal("1234.50")


def test_a_string_that_is_exactly_one_number_is_that_number() -> None:
    """ "$1,234.5" and "12%" in a fact are numbers too; "SKU-12" and "2026-12-01" are not."""
    index = RestrictedIndex("f", ["$1,234.5", "12%", "SKU-12", "2026-12-01"])
    assert sorted(index.numbers) == [Decimal(12), Decimal("1234.5")]
    assert index.in_text("it costs 1234.50") is not None
    assert index.in_text("ticket SKU-12 on 2026-12-01") is not None  # as text, not as a number
    leak = index.in_text("ticket 12 of them")
    assert leak is not None
    assert leak.how == "as a number"
