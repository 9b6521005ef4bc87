"""Exact arithmetic shared by the registry and the checks: numbers are never bools or strings."""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Any, TypeGuard

__all__ = [
    "as_fraction",
    "equals_exact",
    "from_fraction",
    "is_number",
    "matches",
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


def from_fraction(value: Fraction) -> int | float:
    """An int when integral, else the nearest float; unrepresentable results are a ValueError."""
    if value.denominator == 1:
        return int(value.numerator)
    try:
        return float(value)
    except OverflowError:
        raise ValueError(
            f"computed result {value.numerator}/{value.denominator} cannot be represented "
            "as a float"
        ) from None


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
) -> bool:
    """Whether a claimed number equals a computed one within the declared tolerances.

    Exact by default: the claim must equal the computed value, or be the float nearest to it
    (a model cannot write 1/3 exactly). Tolerances compare exact rationals, like
    ``math.isclose`` with ``rel_tol`` defaulting to 0, never 1e-9.
    """
    kind = type(claimed)
    if (kind is int or kind is float) and type(computed) is not Fraction and claimed == computed:
        return True  # Python compares ints and floats by exact value: the common case, fast
    if not is_number(claimed):
        return False
    exact = as_fraction(computed)
    claim = as_fraction(claimed)
    if claim == exact:
        return True
    if isinstance(claimed, float) and exact.denominator != 1:
        try:
            if claimed == float(exact):
                return True
        except OverflowError:
            pass
    diff = abs(claim - exact)
    if tolerance and diff <= as_fraction(tolerance):
        return True
    if rel_tolerance:
        return diff <= as_fraction(rel_tolerance) * max(abs(claim), abs(exact))
    return False


def equals_exact(claimed: object, nearest: int | float) -> bool:
    """``matches(claimed, exact)`` at zero tolerance for a plain int or float claim, fast.

    ``nearest`` is ``from_fraction(exact)``: the int when the exact value is integral, else
    the nearest float. A float claim passes when it equals ``nearest`` (Python compares a float
    with an int by exact value, and equal to the nearest float is what ``matches`` accepts);
    an int claim only when ``exact`` is that int. False for anything else, including an int
    or float subclass: the caller then asks ``matches``.
    """
    kind = type(claimed)
    if kind is float:
        return claimed == nearest
    return kind is int and type(nearest) is int and claimed == nearest
