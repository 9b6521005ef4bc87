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
import operator
from collections.abc import Callable, Sequence
from fractions import Fraction
from typing import cast

from groundplane_otel._arithmetic import approximate, from_fraction, unrepresentable
from groundplane_otel.checks._base import require_name

__all__ = ["exact_dot", "exact_sum", "offset_text", "represent", "require_name", "show"]

_MAX_EXPANSION = 64
"""More fsum rounds than a sum of finite floats can need (each round settles 53 bits)."""
_SPLITTER = float(2**27 + 1)
_WEIGHT_LIMIT = 2**26
_HUGE = 2.0**900
_TINY = 2.0**-900


def exact_sum(values: Sequence[int | float], kinds: set[type] | None = None) -> Fraction:
    """The exact sum of finite ints and floats (``kinds``: their types, when already known)."""
    if kinds is None:
        kinds = set(map(type, values))
    if kinds <= {int}:
        return Fraction(sum(values))
    if kinds <= {float}:
        return _float_sum(values)
    ints = [value for value in values if isinstance(value, int)]
    floats = [float(value) for value in values if not isinstance(value, int)]
    return Fraction(sum(ints)) + _float_sum(floats)


def _float_sum(floats: Sequence[float]) -> Fraction:
    total = _expansion(floats)
    if total is None:
        return _dyadic_total(list(map(float.as_integer_ratio, floats)))
    return total


def _expansion(floats: Sequence[float]) -> Fraction | None:
    """The exact sum by repeated ``math.fsum``; None if a partial sum overflows."""
    work = list(floats)
    total = Fraction(0)
    try:
        for _ in range(_MAX_EXPANSION):
            part = math.fsum(work)
            if part == 0.0:
                return total
            total += Fraction(part)
            work.append(-part)
    except OverflowError:
        pass
    return None


def exact_dot(values: Sequence[int | float], weights: Sequence[int | float]) -> Fraction:
    """The exact sum of ``value * weight`` over aligned sequences."""
    value_kinds, weight_kinds = set(map(type, values)), set(map(type, weights))
    if value_kinds | weight_kinds <= {int}:
        return Fraction(sum(map(operator.mul, values, weights)))
    if value_kinds <= {float} and weight_kinds <= {int}:
        floats, ints = cast("Sequence[float]", values), cast("Sequence[int]", weights)
        if _splittable(floats, ints):
            found = _expansion(_split_products(floats, ints))
            if found is not None:
                return found
    ratios = [
        (vn * wn, vd * wd)
        for (vn, vd), (wn, wd) in zip(
            [value.as_integer_ratio() for value in values],
            [weight.as_integer_ratio() for weight in weights],
            strict=True,
        )
    ]
    return _dyadic_total(ratios)


def _splittable(values: Sequence[float], weights: Sequence[int]) -> bool:
    """Whether Veltkamp splitting makes every ``weight * value`` exact in two float products.

    Each float splits into two halves of at most 26 significant bits; times an int below
    2**26, each half-product fits in 53 bits. Magnitudes stay far from overflow and underflow.
    """
    if not values:
        return False
    smallest = min(filter(None, map(abs, values)), default=1.0)
    return (
        max(map(abs, weights)) < _WEIGHT_LIMIT
        and max(map(abs, values)) < _HUGE
        and smallest > _TINY
    )


def _split_products(values: Sequence[float], weights: Sequence[int]) -> list[float]:
    """``weight * high`` and ``weight * low`` for each Veltkamp-split value: exact floats."""
    highs = [
        scaled - (scaled - value)
        for scaled, value in zip([value * _SPLITTER for value in values], values, strict=True)
    ]
    products = list(map(operator.mul, weights, highs))
    products.extend(map(operator.mul, weights, map(operator.sub, values, highs)))
    return products


def _dyadic_total(ratios: Sequence[tuple[int, int]]) -> Fraction:
    """Sum (numerator, denominator) pairs whose denominators are all powers of two."""
    top = max((denominator for _, denominator in ratios), default=1)
    bits = top.bit_length()
    total = sum(numerator << (bits - d.bit_length()) for numerator, d in ratios)
    return Fraction(total, top)


def represent(value: Fraction, what: str | Callable[[], str]) -> int | float:
    """``from_fraction`` with a message that names the result (``what``; a callable is called
    only when the message is needed) and says why no number stands for it."""
    reason = unrepresentable(value)
    if reason is None:
        return from_fraction(value)
    if callable(what):
        what = what()
    raise ValueError(
        f"{what} is {approximate(value)}, which {reason}: no int or "
        "float stands for it, so no claim can be checked against it"
    )


def show(value: Fraction) -> str:
    """A computed value as the number a reader expects (int when integral, else float)."""
    if unrepresentable(value) is None:
        return repr(from_fraction(value))
    return approximate(value)


def offset_text(claimed: int | float, computed: Fraction) -> str:
    """How far the claim is from the computed value, signed: ``+490``, ``-0.5``."""
    offset = Fraction(claimed) - computed
    return ("+" if offset > 0 else "") + show(offset)
