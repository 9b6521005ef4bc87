"""Paraphrases a model really writes (issue 40, class 7): spelled-out decimals, letter
magnitudes after a space, "1.2 thousand", fractions of a magnitude."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import groundplane_otel as gp
from groundplane_otel.checks.numbers_recorded import (
    UnrecordedNumbers,
    check_numbers_recorded,
    scan_numbers,
)

ROWS = [{"id": "A", "rate": 12.4, "revenue": 1230000, "visits": 1200, "users": 250000,
         "budget": 500000, "cost": 180000, "fleet": 750000000}]  # fmt: skip


def registry() -> gp.FactRegistry:
    found = gp.FactRegistry()
    found.record_table("kpi", ROWS, key="id", tool="bi.kpi")
    return found


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("twelve point four percent", "12.4"),
        ("Twelve point four percent", "12.4"),
        ("one point two million", "1.2E+6"),
        ("one hundred point five", "100.5"),
        ("twenty-one point zero five", "21.05"),
        ("$1.23 mn", "1.23E+6"),
        ("$2 bn", "2E+9"),
        ("$180 k", "1.80E+5"),
        ("1.2 thousand", "1.2E+3"),
        ("a quarter of a million", "2.5E+5"),
        ("half a million", "5E+5"),
        ("three quarters of a billion", "7.5E+8"),
        ("a quarter-million", "2.5E+5"),
    ],
)
def test_a_paraphrase_reads_as_its_value(text: str, value: str) -> None:
    """Each paraphrase is one number with the value it spells."""
    (numeral,) = scan_numbers(text).numerals
    assert (numeral.text, numeral.value) == (text, Decimal(value))


@pytest.mark.parametrize(
    "text",
    [
        "In the second quarter, half the team moved.",  # a fraction alone is not read
        "We kept one point of contact.",  # "point" without digit words
        "It ran 5 km.",  # a k touching more letters is no magnitude
    ],
)
def test_what_is_no_paraphrase_stays_as_before(text: str) -> None:
    """Fractions alone and "point" without digit words read no new number."""
    assert [n.text for n in scan_numbers(text).numerals] == (["5"] if "km" in text else [])


RIGHT = [
    "Conversion was twelve point four percent.",
    "Revenue was $1.23 mn on 1.2 thousand visits.",
    "A quarter of a million users; a budget of half a million; costs of roughly $180 k.",
    "The fleet is worth three quarters of a billion.",
]
WRONG = [  # (text, the number refused, its value)
    ("Conversion was twelve point five percent.", "twelve point five percent", "12.5"),
    ("Revenue was $1.32 mn.", "$1.32 mn", "1.32E+6"),
    ("We had 2.1 thousand visits.", "2.1 thousand", "2.1E+3"),
    ("We have a quarter of a billion users.", "a quarter of a billion", "2.5E+8"),
    ("The budget is half a billion.", "half a billion", "5E+8"),
]


@pytest.mark.parametrize("text", RIGHT)
def test_a_right_paraphrase_passes(text: str) -> None:
    """The paraphrase of a recorded value passes."""
    check_numbers_recorded(registry(), text, "kpi")


@pytest.mark.parametrize(("text", "number", "value"), WRONG)
def test_a_wrong_paraphrase_is_refused_with_its_receipt(text: str, number: str, value: str) -> None:
    """A paraphrase of an unrecorded value is refused; the receipt quotes it and its value."""
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(registry(), text, "kpi")
    (receipt,) = caught.value.receipts
    assert (receipt.text, receipt.value) == (number, Decimal(value))


_DIGITS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"]
_SMALL = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
          "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
          "eighteen", "nineteen"]  # fmt: skip


@settings(max_examples=120, deadline=None)
@given(whole=st.integers(0, 19), fraction=st.lists(st.integers(0, 9), min_size=1, max_size=3))
def test_a_spelled_decimal_reads_as_its_digits(whole: int, fraction: list[int]) -> None:
    """Law: "<n> point <d1> <d2> …" is n.d1d2…, written to the last digit spelled."""
    text = f"{_SMALL[whole]} point {' '.join(_DIGITS[d] for d in fraction)} percent"
    (numeral,) = scan_numbers(text).numerals
    digits = "".join(map(str, fraction))
    assert numeral.value == Decimal(f"{whole}.{digits}")
    assert numeral.quantum == Decimal(1).scaleb(-len(fraction))
    assert numeral.percent
