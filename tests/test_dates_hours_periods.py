"""Clock hours and periods in dates_recorded (issue 40, class 4): an integer column declared a
clock hour is a recorded time; quarters, halves and fiscal years are checked against the
periods the facts record."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import groundplane_otel as gp
from groundplane_otel.checks.dates_recorded import (
    UnrecordedDates,
    check_dates_recorded,
    dates_recorded,
)

HOURS = {"opens": "hour", "closes": "hour"}


def registry() -> gp.FactRegistry:
    found = gp.FactRegistry()
    found.record_table(
        "stores", [{"store": "Elm", "opens": 9, "closes": 17}], key="store", tool="kb.stores"
    )
    found.record_table(
        "sales", [{"region": "N", "revenue": 10}], key="region", tool="bi.sales",
        args={"quarter": "Q3", "year": 2026},
    )  # fmt: skip
    found.record_table(
        "plan", [{"period": "FY2026", "target": 5}, {"period": "H1 2025", "target": 4}],
        key="period", tool="bi.plan",
    )  # fmt: skip
    found.record_table("tickets", [{"id": "T", "due": "2026-05-14"}], key="id", tool="crm")
    return found


def check(text: str, facts: list[str], **options: object) -> None:
    check_dates_recorded(registry(), text, facts, units=HOURS, **options)  # type: ignore[arg-type]


def refused(text: str, facts: list[str], **options: object) -> list[str]:
    with pytest.raises(UnrecordedDates) as caught:
        check(text, facts, **options)
    return [receipt.describe() for receipt in caught.value.receipts]


def test_a_clock_hour_column_records_its_time() -> None:
    """opens=9 supports "opens at 9am"; "10am" is refused naming the column and 09:00."""
    check("Elm opens at 9am and closes at 5pm (nine in the morning to 17:00).", ["stores"])
    assert refused("Elm opens at 10am.", ["stores"]) == [
        "'10am' at 13..17 (read as 10:00): no fact records this time; nearest recorded 09:00 "
        "(fact 'stores', row 'Elm', column 'opens')"
    ]


def test_without_the_declaration_an_integer_hour_is_no_time() -> None:
    """Undeclared, the integer 9 records no time (as before: "no time is recorded at all")."""
    with pytest.raises(UnrecordedDates) as caught:
        check_dates_recorded(registry(), "Elm opens at 9am.", ["stores"])
    assert caught.value.receipts[0].nearest is None


def test_units_other_than_hour_are_refused_at_build() -> None:
    """dates_recorded reads only clock hours; the message says so."""
    with pytest.raises(ValueError) as caught:
        dates_recorded("stores", units={"opens": "minute"})
    assert str(caught.value) == (
        "dates_recorded: units['opens'] is 'minute'; dates_recorded reads only \"hour\" "
        "(an integer column holding a clock hour, 9 for 9:00)"
    )


@pytest.mark.parametrize(
    ("text", "facts"),
    [
        ("Q3 revenue was 10.", ["sales"]),
        ("Q3 2026 revenue was 10; the third quarter was strong.", ["sales"]),
        ("FY2026 targets are set; fiscal 2026 too; H1 2025 was the first half of 2025.", ["plan"]),
        ("Due in Q2 2026, in H1.", ["tickets"]),  # not read by default: no period written
    ],
)
def test_a_recorded_period_passes(text: str, facts: list[str]) -> None:
    """The period an argument, a cell or a recorded day holds passes."""
    check(text, facts)


@pytest.mark.parametrize(
    ("text", "facts", "message"),
    [
        ("Q2 revenue was 10.", ["sales"], "'Q2' at 0..2 (read as Q2): no fact records this "
         "period; nearest recorded Q3 (fact 'sales', column 'args.quarter')"),
        ("Q3 2025 revenue was 10.", ["sales"], "'Q3 2025' at 0..7 (read as 2025-Q3): no fact "
         "records this period; nearest recorded 2026-Q3 (fact 'sales', column 'args.quarter')"),
        ("In the second quarter revenue was 10.", ["sales"], "'the second quarter' at 3..21 "
         "(read as Q2): no fact records this period; nearest recorded Q3 (fact 'sales', "
         "column 'args.quarter')"),
        ("FY2027 targets are set.", ["plan"], "'FY2027' at 0..6 (read as FY2027): no fact "
         "records this period; nearest recorded FY2026 (fact 'plan', row 'FY2026', column "
         "'period')"),
        ("H2 2025 was weak.", ["plan"], "'H2 2025' at 0..7 (read as 2025-H2): no fact records "
         "this period; nearest recorded 2025-H1 (fact 'plan', row 'H1 2025', column 'period')"),
    ],
)  # fmt: skip
def test_an_unrecorded_period_is_refused_naming_the_recorded_one(
    text: str, facts: list[str], message: str
) -> None:
    """The receipt reads the period and names the nearest recorded one and where it lives."""
    assert refused(text, facts) == [message]


def test_periods_true_reads_a_recorded_days_quarter() -> None:
    """periods=True: a recorded day records its calendar quarter and half."""
    check("Due in Q2 2026, in H1.", ["tickets"], periods=True)
    assert refused("Due in Q3.", ["tickets"], periods=True) == [
        "'Q3' at 7..9 (read as Q3): no fact records this period; nearest recorded Q2 "
        "(fact 'tickets', row 'T', column 'due')"
    ]


def test_a_fiscal_quarter_is_never_a_calendar_one() -> None:
    """ "Q2 FY26" is not supported by a day in the calendar's second quarter."""
    assert refused("Due in Q2 FY26.", ["tickets"], periods=True)[0].startswith(
        "'Q2 FY26' at 7..14 (read as FY2026-Q2): no fact records this period"
    )


@settings(max_examples=80, deadline=None)
@given(month=st.integers(1, 12), claimed=st.integers(1, 4), year=st.integers(2000, 2040))
def test_a_quarter_passes_exactly_when_a_recorded_day_falls_in_it(
    month: int, claimed: int, year: int
) -> None:
    """Law: with periods=True, "Q<n> <year>" passes iff the recorded day is in that quarter."""
    found = gp.FactRegistry()
    found.record_table("t", [{"id": "a", "due": f"{year}-{month:02d}-10"}], key="id")
    text = f"Due in Q{claimed} {year}."
    if (month - 1) // 3 + 1 == claimed:
        check_dates_recorded(found, text, "t", periods=True)
    else:
        with pytest.raises(UnrecordedDates):
            check_dates_recorded(found, text, "t", periods=True)


def test_half_past_and_quarter_to_are_times() -> None:
    """ "half past ten" is 10:30 (or 22:30), "quarter to six" 5:45 (or 17:45): read and checked."""
    found = gp.FactRegistry()
    found.record("store", {"hours": "10:30-17:45"}, tool="kb.hours")
    check_dates_recorded(found, "We open at half past ten and close at quarter to six.", "store")
    with pytest.raises(UnrecordedDates) as caught:
        check_dates_recorded(found, "We open at a quarter past ten.", "store")
    assert [r.readings for r in caught.value.receipts] == [("10:15", "22:15")]
