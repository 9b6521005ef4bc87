"""dates_recorded: dates and times in prose are compared, as dates and times, with the ones
the facts record; each miss has a receipt; numbers_recorded never reads their digits."""

from __future__ import annotations

import pytest

import groundplane_otel as gp
from groundplane_otel.checks.dates_recorded import DateReceipt, UnrecordedDates
from groundplane_otel.checks.numbers_recorded import check_numbers_recorded

FACTS = ["tickets", "store"]


def registry() -> gp.FactRegistry:
    found = gp.FactRegistry()
    found.record_table(
        "tickets",
        [{"id": "T-1", "due": "2027-12-31", "opened": "2027-11-02T09:15:00Z", "amount": 1200}],
        key="id",
        tool="crm.tickets",
    )
    found.record(
        "store",
        {"hours": "Mon-Fri 9:00-17:00, Sat 10:00-14:00", "closes": "22:00"},
        tool="kb.lookup",
        args={"as_of": "2026-03-31"},
    )
    return found


def refused(text: str, **options: object) -> UnrecordedDates:
    with pytest.raises(UnrecordedDates) as caught:
        gp.check_dates_recorded(registry(), text, FACTS, **options)  # type: ignore[arg-type]
    return caught.value


@pytest.mark.parametrize(
    "text",
    [
        "The ticket is due Dec 31, 2027.",
        "Due 31 December 2027, or December 31st at the latest.",
        "Due 12/31/2027 (31.12.2027, 2027-12-31).",
        "Due Friday, Dec 31, 2027; opened Nov 2, 2027 at 9:15am.",
        "We're open 9am to 5pm on weekdays and 10am-2pm on Saturdays.",
        "Open 9-5 daily; we close at 10:00 on Fridays and at 10 PM otherwise.",
        "Figures as of March 2026.",
        "As of today, in 2026, Q3 revenue grew 45-day over day.",
    ],
)
def test_recorded_dates_and_times_pass_in_any_written_form(text: str) -> None:
    """A recorded date or time passes in every format the scanner reads; bare years,
    quarters and relative dates are not date claims."""
    gp.check_dates_recorded(registry(), text, FACTS)


def test_an_invented_due_date_names_the_nearest_recorded_date() -> None:
    """The receipt gives the date as read, the code, and the nearest recorded date's cell."""
    claim = refused("The ticket is due Dec 30, 2027.")
    (receipt,) = claim.receipts
    assert isinstance(receipt, DateReceipt)
    assert (receipt.text, receipt.span, receipt.readings) == ("Dec 30, 2027", (18, 30),
                                                              ("2027-12-30",))  # fmt: skip
    assert (receipt.code, receipt.nearest, receipt.fact, receipt.row, receipt.column) == (
        "date_unrecorded", "2027-12-31", "tickets", "T-1", "due",
    )  # fmt: skip
    assert str(claim) == (
        "unsupported claim in field '*': 1 date or time is not recorded | 'Dec 30, 2027' at "
        "18..30 (read as 2027-12-30): no fact records this date; nearest recorded 2027-12-31 "
        "(fact 'tickets', row 'T-1', column 'due') | provenance=crm.tickets()"
    )


def test_invented_hours_are_refused_end_by_end() -> None:
    """Hours of 10am to 8pm against 9:00-17:00 and 10:00-14:00: the 8pm end is refused."""
    claim = refused("We're open 10am to 8pm.")
    assert [(r.text, r.code, r.readings) for r in claim.receipts] == [
        ("8pm", "time_unrecorded", ("20:00",)),
    ]  # 10am is recorded (Saturdays open at 10:00)
    claim = refused("We close at 11 PM.")
    assert claim.receipts[0].describe() == (
        "'11 PM' at 12..17 (read as 23:00): no fact records this time; nearest recorded 22:00 "
        "(fact 'store', column 'closes')"
    )


def test_a_wrong_weekday_is_refused_even_for_a_recorded_date() -> None:
    """A weekday before a date must be its own: Dec 31, 2027 is a Friday, not a Thursday."""
    (receipt,) = refused("Due Thursday, Dec 31, 2027.").receipts
    assert (receipt.code, receipt.readings) == ("date_weekday_mismatch", ("2027-12-31, a Friday",))


def test_an_impossible_date_is_refused() -> None:
    """2027-02-30 has no calendar reading."""
    (receipt,) = refused("Due 2027-02-30.").receipts
    assert (receipt.code, receipt.readings) == ("date_invalid", ())


def test_ambiguous_numeric_dates_read_both_ways_unless_day_first_says() -> None:
    """12/31/2027 reads only as 31 December; 11/02/2027 as 2 November or 11 February,
    and day_first=True keeps only 11 February."""
    gp.check_dates_recorded(registry(), "Opened 11/02/2027.", FACTS)
    (receipt,) = refused("Opened 11/02/2027.", day_first=True).receipts
    assert receipt.readings == ("2027-02-11",)


def test_times_false_reads_dates_only() -> None:
    """times=False leaves invented hours alone."""
    gp.check_dates_recorded(registry(), "We're open 10am to 8pm.", FACTS, times=False)


def test_numbers_recorded_never_reads_the_digits_of_dates_and_times() -> None:
    """With or without dates_recorded, "Dec 31, 2027", "9:00-17:00" and "open 9-5" are not
    numbers to numbers_recorded."""
    text = "Due Dec 31, 2027; hours 9:00-17:00, 9 AM-5 PM, open 9-5; total 1200."
    check_numbers_recorded(registry(), text, FACTS)


@pytest.mark.parametrize(
    ("options", "error", "message"),
    [
        ({"times": "yes"}, TypeError, "times must be True or False, got 'yes'"),
        ({"day_first": 1}, TypeError, "day_first must be True, False or None, got 1"),
        ({"locale": "xx"}, ValueError,
         "locale must be one of ['ch', 'de', 'en', 'fr'], got 'xx'"),
        ({"fact": []}, TypeError, "fact must be a fact name or a non-empty list of them, got []"),
    ],
)  # fmt: skip
def test_arguments_are_validated_when_built(
    options: dict[str, object], error: type[Exception], message: str
) -> None:
    """A bad option fails at build time, naming dates_recorded."""
    arguments: dict[str, object] = {"fact": "tickets", **options}
    with pytest.raises(error) as caught:
        gp.dates_recorded(**arguments)  # type: ignore[arg-type]
    assert str(caught.value) == f"dates_recorded: {message}"


def test_in_a_boundary_it_is_its_own_family() -> None:
    """The check is named and counted as dates_recorded and reads the facts it lists."""
    check = gp.dates_recorded(FACTS)
    assert (check.family, check.facts, check.name) == (
        "dates_recorded",
        ("tickets", "store"),
        "dates_recorded(fact=['tickets', 'store'], field='*')",
    )  # fmt: skip


def test_times_in_words_and_retrieved_documents_are_read() -> None:
    """ "nine in the morning" is 9:00 and "six in the evening" 18:00, checked against the text
    of a retrieved document (its id is the receipt's row); numbers_recorded skips them."""
    found = gp.FactRegistry()
    found.record_documents(
        "kb", [{"id": "hours", "content": "We are open 9am to 6pm, Monday to Saturday."}]
    )
    gp.check_dates_recorded(
        found, "We open at nine in the morning and close at six in the evening.", "kb"
    )
    with pytest.raises(UnrecordedDates) as caught:
        gp.check_dates_recorded(
            found, "We close at eight in the evening, and at midnight on Fridays.", "kb"
        )
    assert [(r.text, r.readings, r.row, r.column) for r in caught.value.receipts] == [
        ("eight in the evening", ("20:00",), "hours", "content"),
        ("midnight", ("00:00",), "hours", "content"),
    ]
    found.record("none", {"count": 2})
    check_numbers_recorded(found, "Two stores open at nine in the morning.", "none")


@pytest.mark.parametrize(
    ("text", "numbers", "times"),
    [
        ("Open 9 AM to 5 PM.", [], ["9 AM", "5 PM"]),
        ("Hours: 9:00-17:00.", [], ["9:00-17:00"]),
        ("We are open 9-5 daily.", [], ["9-5"]),
        ("From 9-5pm.", [], ["9-5pm"]),
        ("At nine in the morning, noon and midnight.", [], ["nine in the morning", "noon",
                                                             "midnight"]),
        ("The team won 9-5.", ["9", "5"], []),  # a bare range without "open"/"hours": numbers
        ("Nine regions grew.", ["Nine"], []),
    ],
)  # fmt: skip
def test_the_scanner_reads_clock_forms_as_times(
    text: str, numbers: list[str], times: list[str]
) -> None:
    """The time forms dates_recorded reads are skipped as ``time`` by the shared scanner, and
    nothing else changes."""
    from groundplane_otel.checks._numbers.prose_scan import scan_numbers

    scan = scan_numbers(text)
    assert [numeral.text for numeral in scan.numerals] == numbers
    assert [token.text for token in scan.skipped if token.rule == "time"] == times
