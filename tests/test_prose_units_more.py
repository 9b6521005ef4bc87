"""More units (issue 40, class 3) and documents as evidence with units (class 5): durations,
volumes, data sizes and temperatures declarable in ``units=``; a document's number supports a
number written with a unit only when the document's unit agrees. Conversions never guessed."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import groundplane_otel as gp
from groundplane_otel.checks.numbers_recorded import (
    UnrecordedNumbers,
    check_numbers_recorded,
    numbers_recorded,
)

UNITS = {
    "latency": "ms",
    "disk": "GB",
    "ram": "GiB",
    "tank": "L",
    "dose": "mL",
    "fuel": "gal",
    "temp": "°C",
    "boil": "fahrenheit",
    "uptime": "h",
}


def registry() -> gp.FactRegistry:
    found = gp.FactRegistry()
    row = {"id": "api", "latency": 230, "disk": 12, "ram": 16, "tank": 40, "dose": 5,
           "fuel": 9, "temp": 21, "boil": 70, "uptime": 3}  # fmt: skip
    found.record_table("svc", [row], key="id", tool="ops.query")
    return found


RIGHT = [
    "p95 latency was 230 ms.",
    "p95 latency was 230 milliseconds.",
    "Disk use is 12 GB; RAM is 16 GiB.",
    "The tank holds 40 L, the dose is 5 mL and the truck took 9 gallons.",
    "It was 21°C, or 21 degrees Celsius; the sample boiled at 70 °F.",
    "Up 3 hours (3 h).",
    "The 230 figure stands.",  # written without a unit: judged as before
]
WRONG = [  # (text, number, written in, column)
    ("p95 latency was 230 seconds.", "230", "second", "latency"),
    ("Disk use is 12 GiB.", "12", "GiB", "disk"),
    ("RAM is 16 GB.", "16", "GB", "ram"),
    ("The tank holds 40 gallons.", "40", "gal", "tank"),
    ("The dose is 5 L.", "5", "L", "dose"),
    ("It was 21 °F.", "21", "fahrenheit", "temp"),
    ("It boiled at 70°C.", "70", "celsius", "boil"),
    ("Up 3 days.", "3", "day", "uptime"),
]


@pytest.mark.parametrize("text", RIGHT)
def test_a_number_in_its_declared_unit_passes(text: str) -> None:
    """The declared unit, spelled any way prose spells it, agrees."""
    check_numbers_recorded(registry(), text, "svc", units=UNITS)


@pytest.mark.parametrize(("text", "number", "unit", "column"), WRONG)
def test_a_number_in_another_unit_is_a_unit_mismatch(
    text: str, number: str, unit: str, column: str
) -> None:
    """Another unit of the same kind is refused, the receipt naming both units and the column."""
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(registry(), text, "svc", units=UNITS)
    (receipt,) = caught.value.receipts
    assert (receipt.text, receipt.code, receipt.column) == (number, "number_unit_mismatch", column)
    assert receipt.expected == f"written in {unit}; {column!r} is declared in {UNITS_CANON[column]}"


UNITS_CANON = {**UNITS, "temp": "celsius", "uptime": "hour"}


def test_a_new_unit_is_declarable_and_a_wrong_one_named() -> None:
    """The new units are accepted at build; an unknown one lists them all."""
    numbers_recorded("svc", units={"disk": "TiB", "latency": "milliseconds", "tank": "litres"})
    with pytest.raises(ValueError) as caught:
        numbers_recorded("svc", units={"disk": "floppies"})
    assert str(caught.value).startswith(
        "numbers_recorded: units['disk'] is 'floppies', which is not a unit; use one of pp,"
    )
    assert str(caught.value).endswith("KiB, MiB, GiB, TiB, celsius, fahrenheit")


def test_a_lower_case_l_is_no_litre() -> None:
    """Only a capital L after a number names litres."""
    check_numbers_recorded(registry(), "The tank holds 40 l.", "svc", units=UNITS)


@settings(max_examples=60, deadline=None)
@given(
    value=st.integers(1, 10_000),
    pair=st.sampled_from([("GB", "GiB"), ("MB", "MiB"), ("ms", "seconds"), ("mL", "L"),
                          ("°C", "°F"), ("KB", "KiB"), ("TB", "TiB"), ("minutes", "hours")]),
)  # fmt: skip
def test_the_declared_unit_passes_and_its_neighbour_never_does(
    value: int, pair: tuple[str, str]
) -> None:
    """Law: written in the declared unit passes; in the other unit of the pair it is refused
    (no conversion is ever guessed, whatever the value)."""
    declared, other = pair
    found = gp.FactRegistry()
    found.record_table("t", [{"id": "a", "x": value}], key="id")
    check_numbers_recorded(found, f"It is {value} {declared}.", "t", units={"x": declared})
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(found, f"It is {value} {other}.", "t", units={"x": declared})
    assert caught.value.receipts[0].code == "number_unit_mismatch"


def documents() -> gp.FactRegistry:
    found = gp.FactRegistry()
    content = (
        "The plan runs 12 months and costs 10,000 dollars; support answers within 2 hours. "
        "Tier B: 7."
    )
    found.record_documents(
        "kb", [{"id": "plan.md", "content": content}], tool="kb.search", args={"q": "plan"}
    )
    return found


@pytest.mark.parametrize(
    "text",
    [
        "It runs 12 months.",
        "It runs twelve months.",
        "It costs $10,000 (USD 10,000).",
        "We answer in 2 hours.",
        "It is 12.",  # a bare number keeps today's rule
        "Tier B costs $7.",  # the document writes 7 without a unit: it does not disagree
    ],
)
def test_a_document_number_supports_its_own_unit(text: str) -> None:
    """A document's number supports the answer's in the same (or no) unit."""
    check_numbers_recorded(documents(), text, "kb", documents=["kb"])


@pytest.mark.parametrize(
    ("text", "number", "expected"),
    [
        ("It costs $12.", "$12", "written in $; document 'plan.md' spells it in month"),
        ("It costs 10,000 euros.", "10,000", "written in EUR; document 'plan.md' spells it in $"),
        ("We answer in 2 days.", "2", "written in day; document 'plan.md' spells it in hour"),
    ],
)
def test_a_document_number_in_another_unit_does_not_support(
    text: str, number: str, expected: str
) -> None:
    """ "$12" is not supported by "12 months": refused, the receipt naming the document."""
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(documents(), text, "kb", documents=["kb"])
    (receipt,) = caught.value.receipts
    assert (receipt.text, receipt.code, receipt.document, receipt.expected) == (
        number,
        "number_unit_mismatch",
        "plan.md",
        expected,
    )
