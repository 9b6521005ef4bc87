"""Exact arithmetic shared by the registry and the checks: numbers are never bools or strings."""

from __future__ import annotations

import math
from collections.abc import Callable
from decimal import Decimal, localcontext
from fractions import Fraction
from typing import Any, TypeGuard

__all__ = [
    "approximate",
    "as_fraction",
    "equals_exact",
    "from_fraction",
    "is_number",
    "matches",
    "nearest_float",
    "unrepresentable",
    "validate_tolerances",
]


def is_number(value: object) -> TypeGuard[int | float]:
    """True for a finite int or float; bools, numeric strings, NaN and ±inf are not numbers."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    return not (isinstance(value, float) and not math.isfinite(value))


def as_fraction(value: int | float | Fraction) -> Fraction:
    """The exact rational value of a finite number (a float's exact binary value)."""
    return value if isinstance(value, Fraction) else Fraction(value)


_EXACT_FLOATS = 2**53
"""Below this magnitude every integer is a float; at or above it, no float has a fraction."""


def unrepresentable(value: Fraction) -> str | None:
    """Why ``value`` has no faithful int or float form, or None when it has one.

    An integral value is an exact int. Otherwise the nearest float stands for it, unless that
    conversion overflows, gives 0.0 for a non-zero value, or lands at or beyond 2**53 in
    magnitude (where every float is an integer, so it differs from the non-integral value).
    """
    if value.denominator == 1:
        return None
    try:
        nearest = float(value)
    except OverflowError:
        return "is beyond the float range"
    if nearest == 0.0:
        return "is too small for a float (it rounds to 0.0)"
    if abs(nearest) >= _EXACT_FLOATS:
        return (
            f"is not an integer, yet its nearest float {nearest!r} is one (every float of "
            "magnitude >= 2**53 is)"
        )
    return None


def nearest_float(value: Fraction) -> float | None:
    """The float nearest to a non-integral ``value`` when it stands for it faithfully (see
    ``unrepresentable``), else None."""
    try:
        nearest = float(value)
    except OverflowError:
        return None
    if nearest == 0.0 or abs(nearest) >= _EXACT_FLOATS:
        return None
    return nearest


def from_fraction(value: Fraction) -> int | float:
    """An int when integral, else the nearest float; an unrepresentable value is a ValueError.

    Unrepresentable (see ``unrepresentable``): the float conversion overflows, gives 0.0 for
    a non-zero value, or is at least 2**53 in magnitude while the value is not an integer. No
    claim can be judged against such a value, so checks refuse it whatever the claim.
    """
    if value.denominator == 1:
        return int(value.numerator)
    nearest = nearest_float(value)
    if nearest is None:
        raise ValueError(
            f"computed result {approximate(value)} {unrepresentable(value)}; "
            "it cannot be represented"
        )
    return nearest


def approximate(value: Fraction) -> str:
    """A short, readable rendering of an exact value: ``7/2``, else ``about 1.000000e-616``.

    For messages about values no float stands for (a 600-digit numerator helps nobody).
    """
    text = f"{value.numerator}/{value.denominator}"
    if len(text) <= 40:
        return text
    with localcontext() as context:
        context.prec = 20
        approx = Decimal(value.numerator) / Decimal(value.denominator)
    return f"about {approx:.6e}"


def validate_tolerances(tolerance: object, rel_tolerance: object, *, where: str) -> None:
    """Reject a tolerance that is not a finite number >= 0 (``rel_tolerance`` may be None)."""
    if not is_number(tolerance) or tolerance < 0:
        raise ValueError(f"{where}: tolerance must be a finite number >= 0, got {tolerance!r}")
    if rel_tolerance is not None and (not is_number(rel_tolerance) or rel_tolerance < 0):
        raise ValueError(
            f"{where}: rel_tolerance must be None or a finite number >= 0, got {rel_tolerance!r}"
        )


def matches(
    claimed: Any,
    computed: int | float | Fraction,
    tolerance: int | float = 0,
    rel_tolerance: int | float | None = None,
    *,
    read: Callable[[Any], Fraction] | None = None,
) -> bool:
    """Whether a claimed number equals a computed one within the declared tolerances.

    Exact by default: the claim must equal the computed value, or equal in value the float
    nearest to it (a model cannot write 1/3 exactly; 936 stands for a sum whose nearest float
    is 936.0). A value no float stands for (see ``unrepresentable``) matches nothing.
    Tolerances compare exact rationals, like ``math.isclose`` with ``rel_tol`` defaulting to 0,
    never 1e-9. ``read`` turns the claim and the tolerances into rationals (default: their
    exact binary value; the money checks read the decimals they print as).
    """
    if read is None:
        read = as_fraction
    kind = type(claimed)
    if (kind is int or kind is float) and type(computed) is not Fraction and claimed == computed:
        return True  # Python compares ints and floats by exact value: the common case, fast
    if not is_number(claimed):
        return False
    exact = as_fraction(computed)
    claim = read(claimed)
    if claim == exact:
        return True
    if exact.denominator != 1:
        nearest = nearest_float(exact)
        if nearest is None:
            return False  # no claim is judged against a value no number can stand for
        if claimed == nearest:
            return True  # an int or a float equal in value to the nearest float
    diff = abs(claim - exact)
    if tolerance and diff <= read(tolerance):
        return True
    if rel_tolerance:
        return diff <= read(rel_tolerance) * max(abs(claim), abs(exact))
    return False


def equals_exact(claimed: object, nearest: int | float) -> bool:
    """``matches(claimed, exact)`` at zero tolerance for a plain int or float claim, fast.

    ``nearest`` is ``from_fraction(exact)``: the int when the exact value is integral, else
    the nearest float. An int or float claim passes when it equals ``nearest`` in value
    (Python compares a float with an int by exact value): 936 and 936.0 both stand for a sum
    whose nearest float is 936.0. False for anything else, including a bool or an int or
    float subclass: the caller then asks ``matches``.
    """
    kind = type(claimed)
    return (kind is float or kind is int) and claimed == nearest
