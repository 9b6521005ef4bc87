"""Leaks by hedged rounding (issue 40, class 6): a restricted value said approximately reveals
it when the hedge and the written digits round to it; public controls keep passing; a
restricted document id that is an ordinary phrase leaks only in its citation form."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import groundplane_otel as gp
from groundplane_otel.checks.no_restricted_values import check_no_restricted_values
from groundplane_otel.errors import UnsupportedClaim


def registry() -> gp.FactRegistry:
    found = gp.FactRegistry()
    found.record_table(
        "cost",
        [{"id": "w", "unit_cost": 1234.5, "margin": 183400, "share": 0.376, "units": 1834}],
        key="id", tool="erp.cost", restricted=True,
    )  # fmt: skip
    found.record_table(
        "prices",
        [{"id": "p", "price": 1228, "list": 1250, "floor": 1200, "deal": 175000}],
        key="id", tool="shop.prices",
    )  # fmt: skip
    found.record_documents(
        "hr", [{"id": "salary-bands", "content": "Band A pays 88,000."}], tool="kb.search",
        args={"q": "bands"}, restricted=True,
    )  # fmt: skip
    return found


LEAKS = [  # (text, what leaks, how)
    ("Our margin was roughly $180k.", "$180k", "(row 0, column 'margin') as a number rounded "
     "to 10000 (hedged, to its last non-zero digit)"),
    ("It costs around $1,235 a unit.", "$1,235", "(row 0, column 'unit_cost') as a number "
     "rounded to 1 (as written)"),
    ("About 38 percent of buyers return.", "38 percent", "(row 0, column 'share') as a number "
     "rounded to 0.01 (as the ratio a percent spells)"),
    ("We shipped ~1.8 thousand units.", "1.8 thousand", "(row 0, column 'units') as a number "
     "rounded to 100 (as written)"),
    ("We shipped approximately 1,830 units.", "1,830", "(row 0, column 'units') as a number "
     "rounded to 10 (hedged, to its last non-zero digit)"),
    ("See salary-bands for details.", "salary-bands", "(document 0 (id)) as cited"),
    ("Source: [salary-bands].", "salary-bands", "(document 0 (id)) as cited"),
]  # fmt: skip
CONTROLS = [
    "It costs around $1,230 a unit.",  # the public price 1,228 is closer
    "The list price is about $1,250.",  # a public value said exactly
    "The floor is roughly $1,200.",  # a public value, near the restricted one
    "The deal was roughly $175k.",  # public, hedged
    "It costs $1,230.",  # no hedge: exact to the unit, recorded nowhere restricted
    "About $1k.",  # one significant digit: not salient (a published limit)
    "Salary bands are confidential.",  # the id's words, not its citation form
]


@pytest.mark.parametrize(("text", "leaked", "how"), LEAKS)
def test_a_hedged_rounding_of_a_restricted_value_is_a_leak(
    text: str, leaked: str, how: str
) -> None:
    """Refused; the reason names the place and the precision, never the value."""
    with pytest.raises(UnsupportedClaim) as caught:
        check_no_restricted_values(registry(), text)
    start = text.index(leaked)
    fact = "hr" if "document" in how else "cost"
    assert caught.value.reason == (
        f"the output reveals a value of restricted fact {fact!r} {how}, in a string at "
        f"characters {start}-{start + len(leaked)} of field '<output>'"
    )


@pytest.mark.parametrize("text", CONTROLS)
def test_public_controls_keep_passing(text: str) -> None:
    """A public value said exactly or rounded, even near a restricted one, passes."""
    check_no_restricted_values(registry(), text)


@settings(max_examples=120, deadline=None)
@given(value=st.integers(10_000, 9_999_999), hedge=st.sampled_from(["around", "roughly", "~"]))
def test_a_hedged_two_digit_rounding_always_leaks(value: int, hedge: str) -> None:
    """Law: any restricted integer said hedged at two significant digits (trailing zeros) is
    refused when no public value is recorded."""
    found = gp.FactRegistry()
    found.record_table("t", [{"id": "a", "x": value}], key="id", restricted=True)
    digits = len(str(value)) - 2
    written = int(Decimal(value).scaleb(-digits).quantize(Decimal(1))) * 10**digits
    assume(written != value and (written // 10**digits) % 10 != 0)  # two significant digits
    sep = "" if hedge == "~" else " "
    with pytest.raises(UnsupportedClaim):
        check_no_restricted_values(found, f"It was {hedge}{sep}{written:,}.")
