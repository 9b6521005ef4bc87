"""The decimals recorded numbers print as, added exactly: the laws aggregate_reconciles uses."""

from __future__ import annotations

from decimal import Decimal
from fractions import Fraction

from hypothesis import given, settings
from hypothesis import strategies as st

from groundplane_otel.checks._numbers.printed import printed, printed_dot, printed_sum

SETTINGS = settings(max_examples=200, deadline=None)
finite = st.floats(allow_nan=False, allow_infinity=False)
cents = st.integers(-(10**12), 10**12).map(lambda c: c / 100)
numbers = st.one_of(finite, cents, st.integers(-(10**20), 10**20))


def oracle(value: int | float) -> Fraction:
    return Fraction(value) if isinstance(value, int) else Fraction(Decimal(repr(value)))


@SETTINGS
@given(st.lists(numbers, max_size=40))
def test_printed_sum_is_the_sum_of_the_printed_decimals(values: list[int | float]) -> None:
    """Whichever path it takes (scaled integers or each repr), the sum is the decimals' sum."""
    assert printed_sum(values) == sum(map(oracle, values), Fraction(0))


@SETTINGS
@given(st.lists(cents, min_size=1, max_size=200))
def test_money_amounts_add_up_like_cents(values: list[float]) -> None:
    """Two-decimal amounts add up to their cents over 100, never to a binary neighbour."""
    assert printed_sum(values) == Fraction(sum(round(v * 100) for v in values), 100)


@SETTINGS
@given(st.lists(st.tuples(numbers, numbers), max_size=20))
def test_printed_dot_is_exact(pairs: list[tuple[int | float, int | float]]) -> None:
    """A weighted total multiplies the printed decimals exactly."""
    values, weights = [v for v, _ in pairs], [w for _, w in pairs]
    expected = sum((oracle(v) * oracle(w) for v, w in pairs), Fraction(0))
    assert printed_dot(values, weights) == expected


def test_printed_reads_a_float_as_its_repr() -> None:
    """0.1 is one tenth, 1e30 is 10**30, an int is itself."""
    assert (printed(0.1), printed(1e30), printed(7)) == (Fraction(1, 10), Fraction(10**30), 7)
