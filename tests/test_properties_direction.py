"""Laws of the direction and unit rules (Hypothesis): a direction word agrees with the sign of a
recorded change or is refused; a magnitude of a level is never judged; basis points and
percentage points convert exactly by 100 while a percent never stands for points; a percent
before a scaled amount keeps its own value."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from groundplane_otel import FactRegistry
from groundplane_otel.checks._numbers.prose_scan import scan_numbers
from groundplane_otel.checks.numbers_recorded import UnrecordedNumbers, check_numbers_recorded

PROFILE = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
UP = ("rose", "increased", "grew", "climbed", "was up", "gained")
DOWN = ("fell", "declined", "dropped", "decreased", "was down", "slipped")

changes = st.decimals(min_value=Decimal("-50"), max_value=Decimal("50"), places=2).filter(
    lambda value: value != 0
)


def plain(value: Decimal) -> str:
    return format(value, "f")


def table(row: dict[str, object]) -> FactRegistry:
    registry = FactRegistry()
    registry.record_table("kpi", [{"region": "North", **row}], key="region", tool="bi", args={})
    return registry


@PROFILE
@given(change=changes, up=st.booleans(), verb=st.integers(0, 5), noun=st.booleans())
def test_direction_times_sign(change: Decimal, up: bool, verb: int, noun: bool) -> None:
    """A direction word passes iff it agrees with the recorded change's sign."""
    magnitude = plain(abs(change))
    if noun:
        text = f"North posted a {magnitude}% {'increase' if up else 'decline'}."
    else:
        text = f"North {(UP if up else DOWN)[verb]} {magnitude}%."
    registry = table({"qoq_change": float(change)})
    if up == (change > 0):
        check_numbers_recorded(registry, text, "kpi")
        return
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(registry, text, "kpi")
    assert [receipt.code for receipt in caught.value.receipts] == ["number_direction_false"]
    assert caught.value.receipts[0].nearest == float(change)


@PROFILE
@given(level=st.integers(1, 10**6), up=st.booleans())
def test_a_level_is_never_judged_by_direction(level: int, up: bool) -> None:
    """A magnitude that reads as a recorded level passes whichever direction is said."""
    text = f"North {'gained' if up else 'lost'} {level:,} accounts."
    check_numbers_recorded(table({"accounts": level}), text, "kpi")


@PROFILE
@given(points=st.decimals(min_value=Decimal("-5"), max_value=Decimal("5"), places=2))
def test_points_and_basis_points_convert_by_exactly_one_hundred(points: Decimal) -> None:
    """A pp change written in bps at x100 passes; written as a percent it is a unit mismatch."""
    registry = table({"churn": float(points)})
    units = {"churn": "pp"}
    bps = plain((points * 100).quantize(Decimal(1)))
    check_numbers_recorded(registry, f"Churn moved {bps} bps.", "kpi", units=units)
    check_numbers_recorded(registry, f"Churn moved {plain(points)} pp.", "kpi", units=units)
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(registry, f"Churn moved {plain(points)}%.", "kpi", units=units)
    assert caught.value.code == "number_unit_mismatch"


@PROFILE
@given(
    percent=st.decimals(min_value=Decimal("0.1"), max_value=Decimal("99.9"), places=1),
    amount=st.decimals(min_value=Decimal("1.1"), max_value=Decimal("999.9"), places=1),
    suffix=st.sampled_from(["M", "K", "B", " million", " billion", "bn"]),
    joiner=st.sampled_from([" to ", " to $", "-", "\u2013", " - ", " \u2013 $"]),
)
def test_a_percent_before_a_scaled_amount_keeps_its_value(
    percent: Decimal, amount: Decimal, suffix: str, joiner: str
) -> None:
    """'P% to $AM' reads P as a percent with no magnitude, whatever the joiner and suffix."""
    first = scan_numbers(f"rose {plain(percent)}%{joiner}{plain(amount)}{suffix}").numerals[0]
    assert (first.value, first.percent, first.magnitude) == (percent, True, 0)


SYMBOLS = {"USD": "${}", "EUR": "\u20ac{}", "GBP": "\u00a3{}", "JPY": "{} JPY", "CHF": "CHF {}"}


@PROFILE
@given(
    amount=st.integers(1, 10**9),
    declared=st.sampled_from(sorted(SYMBOLS)),
    written=st.sampled_from(sorted(SYMBOLS)),
)
def test_a_currency_passes_iff_it_is_the_declared_one(
    amount: int, declared: str, written: str
) -> None:
    """An amount written in a currency passes iff that currency is the column's."""
    registry = table({"amount": amount})
    text = f"The invoice came to {SYMBOLS[written].format(f'{amount:,}')}."
    if written == declared:
        check_numbers_recorded(registry, text, "kpi", units={"amount": declared})
        return
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(registry, text, "kpi", units={"amount": declared})
    named = "$" if written == "USD" else written  # "$" names any dollar
    assert caught.value.receipts[0].expected == (
        f"written in {named}; 'amount' is declared in {declared}"
    )
