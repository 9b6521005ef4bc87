"""What the numeric checks share: exact and fast arithmetic, offsets, argument validation.

Adding ``Fraction`` objects one by one costs tens of milliseconds at 10,000 floats. Ints are
summed natively (exact). Floats go through ``math.fsum``, which is correctly rounded: the rounded
sum, then the rounded remainder (the values plus the negated partial sums), and so on until the
remainder is 0.0 — every float is a multiple of 2**-1074, so a remainder that rounds to 0.0 is
exactly 0. Two or three C-speed passes give the exact rational sum. Products (a weighted mean)
use each number's exact ``as_integer_ratio``, whose denominators are powers of two.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from fractions import Fraction

from groundplane_otel._numbers import from_fraction

__all__ = ["exact_dot", "exact_sum", "offset_text", "represent", "require_name", "show"]

_MAX_EXPANSION = 64
"""More fsum rounds than a sum of finite floats can need (each round settles 53 bits)."""


def exact_sum(values: Sequence[int | float]) -> Fraction:
    """The exact sum of finite ints and floats."""
    kinds = set(map(type, values))
    if kinds <= {int}:
        return Fraction(sum(values))
    if kinds <= {float}:
        return _float_sum(values)
    ints = [value for value in values if isinstance(value, int)]
    floats = [float(value) for value in values if not isinstance(value, int)]
    return Fraction(sum(ints)) + _float_sum(floats)


def _float_sum(floats: Sequence[float]) -> Fraction:
    work = list(floats)
    total = Fraction(0)
    try:
        for _ in range(_MAX_EXPANSION):
            part = math.fsum(work)
            if part == 0.0:
                return total
            total += Fraction(part)
            work.append(-part)
    except OverflowError:  # the running sum left the float range: fall back to integers
        pass
    return _dyadic_total([value.as_integer_ratio() for value in floats])


def exact_dot(values: Sequence[int | float], weights: Sequence[int | float]) -> Fraction:
    """The exact sum of ``value * weight`` over aligned sequences."""
    if set(map(type, values)) | set(map(type, weights)) <= {int}:
        return Fraction(sum(value * weight for value, weight in zip(values, weights, strict=True)))
    ratios = [
        (vn * wn, vd * wd)
        for (vn, vd), (wn, wd) in zip(
            [value.as_integer_ratio() for value in values],
            [weight.as_integer_ratio() for weight in weights],
            strict=True,
        )
    ]
    return _dyadic_total(ratios)


def _dyadic_total(ratios: Sequence[tuple[int, int]]) -> Fraction:
    """Sum (numerator, denominator) pairs whose denominators are all powers of two."""
    top = max((denominator for _, denominator in ratios), default=1)
    bits = top.bit_length()
    total = sum(numerator << (bits - d.bit_length()) for numerator, d in ratios)
    return Fraction(total, top)


def represent(value: Fraction, what: str) -> int | float:
    """``from_fraction`` with a short message: a 400-digit numerator helps nobody."""
    try:
        return from_fraction(value)
    except ValueError:
        magnitude = abs(value.numerator) // value.denominator
        digits = int(magnitude.bit_length() * math.log10(2)) + 1
        raise ValueError(
            f"{what} is a non-integral value of about {digits} digits, beyond the float range; "
            "it cannot be represented"
        ) from None


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


def require_name(builder: str, label: str, value: object, *, optional: bool = False) -> None:
    """Build-time check that an argument naming a fact, field or column is a non-empty str."""
    if value is None and optional:
        return
    if not isinstance(value, str) or not value:
        kind = "a non-empty string or None" if optional else "a non-empty string"
        raise TypeError(f"{builder}: {label} must be {kind}, got {value!r}")
