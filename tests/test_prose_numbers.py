"""numeric_values_in: where a text writes a number and what it is worth, rule by rule."""

from __future__ import annotations

from decimal import Decimal

import pytest

from groundplane_otel.checks._prose_numbers import decimal_of, numeric_values_in


def values(text: str, decimal: str = ".") -> list[tuple[str, tuple[str, ...]]]:
    """(spelling, values as strings) of every number found."""
    return [
        (text[n.start : n.end], tuple(str(v) for v in n.values))
        for n in numeric_values_in(text, decimal=decimal)
    ]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1,234.50", [("1,234.50", ("1234.50",))]),
        ("$1,234,567", [("1,234,567", ("1234567",))]),
        ("1,2345", [("1", ("1",)), ("2345", ("2345",))]),
        ("a drop of -5 and \u22123", [("-5", ("-5",)), ("\u22123", ("-3",))]),
        ("SKU-12", [("12", ("12",))]),
        ("A12, 2nd, v2, 5th", []),
        ("4.55%", [("4.55%", ("4.55", "0.0455"))]),
        ("1.2M and 3 million", [("1.2M", ("1200000.0", "1.2")), ("3 million", ("3000000", "3"))]),
        ("10k users", [("10k", ("10000", "10"))]),
        (".5 of it", [(".5", ("0.5",))]),
        ("nine of twenty, someone", [("nine", ("9",)), ("twenty", ("20",))]),
        ("2026-12-01", [("2026", ("2026",)), ("12", ("12",)), ("01", ("1",))]),
        ("10-12 days", [("10", ("10",)), ("12", ("12",))]),
        ("5 km", [("5", ("5",))]),
    ],
)
def test_rules(text: str, expected: list[tuple[str, tuple[str, ...]]]) -> None:
    """Separators in groups of three, signs not after letters or digits, identifiers and
    ordinals skipped, percent as written and as ratio, scales, number words, dates, ranges."""
    assert values(text) == expected


def test_the_decimal_separator_is_an_argument() -> None:
    """decimal="," reads German-style numbers; any other separator is a ValueError."""
    assert values("1.234,50", ",") == [("1.234,50", ("1234.50",))]
    with pytest.raises(ValueError, match='decimal must be "." or ","'):
        list(numeric_values_in("1", decimal=" "))


def test_recorded_floats_stand_for_their_shortest_repr() -> None:
    """0.1 is Decimal('0.1'), ints are exact, and equal values compare equal across spellings."""
    assert decimal_of(0.1) == Decimal("0.1")
    assert decimal_of(10**30) == Decimal(10**30)
    assert decimal_of(1234.5) == Decimal("1234.50")
