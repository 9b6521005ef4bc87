"""Laws of rank claims and dates (Hypothesis): a rank claim passes exactly when the entity holds
that rank counted in the claimed direction (ties: every rank of the block), against an
independent count; a recorded date passes in every written style and any other day fails;
a recorded hour passes with am/pm and an hour apart from it (mod 12) fails."""

from __future__ import annotations

import contextlib
import datetime as dt

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import groundplane_otel as gp
from groundplane_otel.checks.dates_recorded import UnrecordedDates
from groundplane_otel.checks.numbers_recorded import UnrecordedNumbers, check_numbers_recorded

PROFILE = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
NAMES = ["Alder", "Birch", "Cedar", "Dogwood", "Elm", "Fir", "Ginkgo", "Hazel"]
ORDINALS = ["first", "second", "third", "fourth", "fifth", "sixth", "seventh", "eighth"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December"]  # fmt: skip
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def held(scores: dict[str, int], name: str, highest_first: bool) -> range:
    """The oracle: ranks counted from the top (or the bottom) by plain counting."""
    mine = scores[name]
    ahead = sum(1 for v in scores.values() if (v > mine if highest_first else v < mine))
    tied = sum(1 for v in scores.values() if v == mine)
    return range(ahead + 1, ahead + tied + 1)


@PROFILE
@given(
    values=st.lists(st.integers(0, 6), min_size=3, max_size=8),
    higher=st.booleans(),
    pick=st.integers(0, 7),
    rank=st.integers(1, 8),
    form=st.sampled_from(["ordinal", "highest", "lowest", "top"]),
)
def test_a_rank_claim_passes_exactly_when_the_entity_holds_the_rank(
    values: list[int], higher: bool, pick: int, rank: int, form: str
) -> None:
    """Direction × ties × the claimed rank: the checker agrees with the counting oracle."""
    scores = dict(zip(NAMES, values, strict=False))
    name = NAMES[pick % len(scores)]
    assume(rank <= len(scores))
    registry = gp.FactRegistry()
    registry.record_ranking("r", scores, key="score", higher_is_better=higher)
    if form == "top":
        text = f"{name} is in the top {rank}."
        truth = held(scores, name, higher).start <= rank
    elif form == "ordinal":
        text = f"{name} came in {ORDINALS[rank - 1]}."
        truth = rank in held(scores, name, higher)
    else:
        lead = "" if rank == 1 else f"{ORDINALS[rank - 1]}-"
        text = f"{name} had the {lead}{form} score."
        truth = rank in held(scores, name, form == "highest")
    if truth:
        check_numbers_recorded(registry, text, "r")
        return
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(registry, text, "r")
    assert caught.value.receipts[-1].row == name


def styles(day: dt.date) -> list[str]:
    month = MONTHS[day.month - 1]
    return [
        day.isoformat(),
        f"{month} {day.day}, {day.year}",
        f"{month[:3]} {day.day}, {day.year}",
        f"{day.day} {month} {day.year}",
        f"{day.month}/{day.day}/{day.year}",
        f"{day.day:02d}.{day.month:02d}.{day.year}",
        f"{DAYS[day.weekday()]}, {month} {day.day}, {day.year}",
    ]


days = st.dates(min_value=dt.date(2000, 1, 1), max_value=dt.date(2099, 12, 31))


@PROFILE
@given(day=days, shift=st.integers(-400, 400), style=st.integers(0, 6))
def test_a_recorded_day_passes_in_every_style_and_another_day_fails(
    day: dt.date, shift: int, style: int
) -> None:
    """The same day in any style is supported; a different day is refused unless one of its
    readings (d/m or m/d) is the recorded day."""
    registry = gp.FactRegistry()
    registry.record("due", {"due": day.isoformat()})
    gp.check_dates_recorded(registry, f"Due {styles(day)[style]}.", "due")
    other = day + dt.timedelta(days=shift)
    swapped = style in (4, 5) and other.day <= 12 and (other.year, other.day, other.month) == (
        day.year, day.month, day.day,
    )  # fmt: skip
    assume(shift != 0 and not swapped)
    with pytest.raises(UnrecordedDates) as caught:
        gp.check_dates_recorded(registry, f"Due {styles(other)[style]}.", "due")
    assert caught.value.receipts[0].nearest == day.isoformat()


@PROFILE
@given(hour=st.integers(0, 23), claimed=st.integers(0, 23))
def test_hours_compare_as_times(hour: int, claimed: int) -> None:
    """An hour with am/pm is one hour of the day: it passes iff it is the recorded hour."""
    registry = gp.FactRegistry()
    registry.record("hours", {"opens": f"{hour:02d}:00"})
    text = f"We open at {claimed % 12 or 12}{'am' if claimed < 12 else 'pm'}."
    if claimed == hour:
        gp.check_dates_recorded(registry, text, "hours")
        return
    with pytest.raises(UnrecordedDates):
        gp.check_dates_recorded(registry, text, "hours")


PIECES = st.sampled_from(
    [
        "Alder", "Birch", " was ", " third", " the second-highest ", " top 3 ", " No. 2", " #1",
        " led with ", ", followed by ", " and ", "1. ", "| 2 | ", "Ranking: ", " last", " in Q3",
        " Dec 31, 2027", " 2027-02-30", " 12/31/27", " 9-5pm", " open 9-5", " 10:00 AM", " 25:99",
        " Friday, ", " March 2026", " 31st of December", ". ", "; ", "\n", " 7", "%", " ",
    ]
)  # fmt: skip


@PROFILE
@given(text=st.lists(PIECES, max_size=25).map("".join))
def test_any_text_gets_a_verdict_never_a_crash(text: str) -> None:
    """Whatever the text, both checks pass or refuse with their own claim type."""
    registry = gp.FactRegistry()
    registry.record_ranking("r", {"Alder": 3, "Birch": 2, "Cedar": 2}, key="score")
    registry.record("d", {"due": "2027-12-31", "hours": "09:00-17:00"})
    with contextlib.suppress(UnrecordedNumbers):
        check_numbers_recorded(registry, text, ["r", "d"])
    with contextlib.suppress(UnrecordedDates):
        gp.check_dates_recorded(registry, text, ["r", "d"])
