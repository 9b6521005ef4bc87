"""Arithmetic on the decimals recorded numbers print as: what ``aggregate_reconciles`` adds up.

A float reads as the decimal its shortest ``repr`` spells (``as_decimal``, as in
``numbers_recorded``): ``1234.56`` is 1234.56, not its binary neighbour, so two-decimal money
amounts add up to the total a person (or a model) computes, and a claim off by a cent is still
a cent off. Ints are themselves. Results are exact ``Fraction``s.

Speed: when every float of a column has at most ``_MAX_PLACES`` decimals and is well below 2**50
once scaled, the column is scaled to integers (``round(v * 10**k)``) and each one is verified to
round-trip (``n / 10**k == v``): below that bound no other ``k``-decimal number rounds to ``v``,
so the verified integer is exactly the decimal ``repr`` prints. Anything else takes the
``repr`` of each float.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from decimal import Context, Decimal, Inexact, localcontext
from fractions import Fraction
from itertools import repeat
from typing import Final

from groundplane_otel._arithmetic import matches
from groundplane_otel.checks._numbers.recorded import as_decimal

__all__ = ["printed", "printed_dot", "printed_matches", "printed_sum"]

_MAX_PLACES: Final = 8
_PROBE: Final = 16
_SCALED_LIMIT: Final = 2.0**50  # |v| * 10**k below it: one k-decimal number rounds to v
# Exact for any sum or product of printed floats (a product spans at most ~1,300 digits);
# Inexact is trapped so a result that would need more is never rounded silently.
_EXACT: Final = Context(prec=4_000, Emin=-(10**6), Emax=10**6, traps=[Inexact])


def printed(value: int | float) -> Fraction:
    """The exact value a recorded number reads as (a float: its shortest repr)."""
    if type(value) is int:
        return Fraction(value)
    return Fraction(as_decimal(value))


def _scaled_sum(floats: Sequence[float]) -> Fraction | None:
    """The exact sum of the decimals ``floats`` print as, by integer scaling; None when some
    float has more than ``_MAX_PLACES`` decimals or is too large to scale safely."""
    top = max(map(abs, floats), default=0.0)
    for places in range(_MAX_PLACES + 1):
        scale = 10.0**places
        if top * scale >= _SCALED_LIMIT:
            return None
        # A wrong number of places fails on one of the first floats: try those alone first.
        if not all(round(value * scale) / scale == value for value in floats[:_PROBE]):
            continue
        scaled = list(map(round, map(scale.__mul__, floats)))
        if all(map(operator.eq, map(operator.truediv, scaled, repeat(scale)), floats)):
            return Fraction(sum(scaled), 10**places)
    return None


def _decimal_sum(values: Sequence[Decimal]) -> Fraction:
    try:
        with localcontext(_EXACT):
            total = sum(values, Decimal(0))
    except Inexact:  # beyond 4,000 digits: exact rationals, slower but never rounded
        return sum(map(Fraction, values), Fraction(0))
    return Fraction(total)


def printed_sum(values: Sequence[int | float], kinds: set[type] | None = None) -> Fraction:
    """The exact sum of the decimals ``values`` print as."""
    if kinds is None:
        kinds = set(map(type, values))
    if kinds <= {int}:
        return Fraction(sum(values))
    ints = [value for value in values if isinstance(value, int)]
    floats = [float(value) for value in values if not isinstance(value, int)]
    found = _scaled_sum(floats)
    if found is None:
        found = _decimal_sum(list(map(Decimal, map(repr, floats))))
    return Fraction(sum(ints)) + found


def printed_dot(values: Sequence[int | float], weights: Sequence[int | float]) -> Fraction:
    """The exact sum of ``value * weight`` over the decimals they print as."""
    try:
        products = [
            _EXACT.multiply(as_decimal(value), as_decimal(weight))
            for value, weight in zip(values, weights, strict=True)
        ]
    except Inexact:  # pragma: no cover - a product of two printed floats fits in 4,000 digits
        return sum(
            (printed(v) * printed(w) for v, w in zip(values, weights, strict=True)), Fraction(0)
        )
    return _decimal_sum(products)


def printed_matches(
    claimed: int | float,
    computed: Fraction,
    tolerance: int | float = 0,
    rel_tolerance: int | float | None = None,
) -> bool:
    """Whether a claim equals a computed value within the declared tolerances, the claim and
    the tolerances read as the decimals they print as (``0.01`` is a cent).

    Exact by default: the claim's decimal equals the value, or the claim equals in value the
    float nearest to it (a model cannot write 1/3 exactly). A non-integral value no float
    stands for matches nothing (``_arithmetic.nearest_float``).
    """
    return matches(claimed, computed, tolerance, rel_tolerance, read=printed)
