"""Exact arithmetic for the numeric checks, fast enough for a 10,000-row column.

Summing ``Fraction`` objects one by one costs tens of milliseconds at 10,000 floats. Every
finite float is a dyadic rational (an odd numerator over a power of two), so an exact sum only
needs integer shifts onto the largest denominator and one ``Fraction`` at the end.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction

from groundplane_otel._numbers import from_fraction

__all__ = ["dyadic", "exact_sum", "offset_text", "show"]


def dyadic(value: int | float) -> tuple[int, int]:
    """``value`` as (numerator, e) with value == numerator / 2**e exactly."""
    if isinstance(value, int):
        return value, 0
    numerator, denominator = value.as_integer_ratio()
    return numerator, denominator.bit_length() - 1


def exact_sum(terms: Iterable[tuple[int, int]]) -> Fraction:
    """The exact sum of dyadic terms (numerator, e), each meaning numerator / 2**e."""
    collected = list(terms)
    shift = max((e for _, e in collected), default=0)
    total = sum(numerator << (shift - e) for numerator, e in collected)
    return Fraction(total, 1 << shift)


def show(value: Fraction) -> str:
    """A computed value as the number a reader expects (int when integral, else float)."""
    try:
        return repr(from_fraction(value))
    except ValueError:
        return f"{value.numerator}/{value.denominator}"


def offset_text(claimed: int | float, computed: Fraction) -> str:
    """How far the claim is from the computed value, signed: ``+490``, ``-0.5``."""
    offset = Fraction(claimed) - computed
    return ("+" if offset > 0 else "") + show(offset)
