"""Leaks by rounding: a written number that a restricted value rounds to.

A number in text carries the precision it was written to (``prose_scan.Numeral.quantum``, the
unit of its last digit: ``1.2k`` is 1,200 to the hundred, ``4.6%`` is 4.6 to the tenth,
``1,235`` is exact to the unit). It *rounds* a restricted value r when r rounded to that
precision is w, half-even or half-up (the two roundings ``numbers_recorded`` declares): r lies
in the precision interval ``[w - q/2, w + q/2]``, a tie end counting when either rounding
reaches w (``4.6%`` and ``4.5%`` are not both roundings of 4.55%: only ``4.6%`` is), read in
each documented form: the number as written, and for a percent the ratio it spells
(``4.6%``: 0.046 to 0.001). ``$1.2k`` therefore reveals a restricted 1,234.5, and ``4.6%`` a
restricted ratio 0.0455.

The neighbourhood rule (false rejects): the written number is a leak only when no unrestricted
recorded value lies *strictly* closer to it than the restricted one — ``$1,235`` next to a
public price of 1,235 reads as that price (a tie is a leak: fail closed).

Hedged (a hedge word or sign right before the number: ``around``, ``about``, ``roughly``,
``approximately``, ``nearly``, ``almost``, ``some``, ``circa``, ``close to``, ``just under``,
``a bit over``, ``slightly below`` …, ``~``, ``≈``): the number is also read at the precision
of its last non-zero digit, its trailing zeros being the rounding ("around $1,230" is 1,230
to the ten, "roughly $180k" 180,000 to the ten thousand).

Which written numbers are read this way (salience): at least two significant digits as written
(``|w| / q >= 10``: ``1.2k``, ``4.6%``, ``0.050``), and a plain integer (no fraction digits,
magnitude or percent) of at least 100 — so ``3``, ``12``, ``30 days``, ``5%`` or ``$1k`` never
count as a rounding of a restricted value (they are checked exactly, like every number). A
number in a structured field (a JSON number) has no written precision: exact only.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from decimal import Decimal
from typing import Final, Protocol

from groundplane_otel.checks._numbers.prose_fields import shifted
from groundplane_otel.checks._numbers.prose_scan import Numeral
from groundplane_otel.checks._numbers.recorded import CONTEXT, Rounding, rounds_to

__all__ = ["Public", "Rounded", "eligible", "hedged", "rounded", "roundings"]

_TEN: Final = CONTEXT.create_decimal(10)  # not Decimal(10): that sets the thread's decimal
# context variable at import, and every OpenTelemetry context switch then copies it
_HUNDRED: Final = CONTEXT.create_decimal(100)
_MODES: Final[tuple[Rounding, ...]] = ("half_even", "half_up")
_HEDGE: Final = re.compile(
    r"(?:(?<![\w])(?i:around|about|roughly|approximately|approx\.?|nearly|almost|some|circa|"
    r"ca\.|close\sto|(?:just|a\sbit|a\slittle|slightly)\s(?:under|over|below|above|more\sthan|"
    r"less\sthan)|upwards\sof|in\sthe\sregion\sof|"
    r"on\sthe\sorder\sof)\s+|[~\u2248]\s?)$"
)


class Public(Protocol):
    """What the unrestricted evidence of one evaluation holds (see ``_public_values``)."""

    def holds(self, value: Decimal) -> bool: ...

    def closer(self, written: Decimal, restricted: Decimal) -> bool: ...

    def names(self, phrase: str) -> bool: ...


@dataclass(frozen=True, slots=True)
class Rounded:
    """A rounding leak: the restricted value, the written precision, how the number was read."""

    value: Decimal
    quantum: Decimal
    form: str


def eligible(numeral: Numeral) -> bool:
    """Whether the number is written coarsely enough, and salient enough, to be a rounding."""
    value, quantum = abs(numeral.value), numeral.quantum
    if quantum <= 0 or CONTEXT.divide(value, quantum) < _TEN:
        return False
    plain = quantum >= 1 and not numeral.magnitude and not numeral.percent
    return not plain or value >= _HUNDRED


def hedged(text: str, numeral: Numeral) -> bool:
    """Whether a hedge word or sign comes right before the number ("around $1,230", "~1.2k")."""
    return _HEDGE.search(text, max(0, numeral.start - 24), numeral.start) is not None


def _significant(numeral: Numeral) -> Numeral:
    """The number at the precision of its last non-zero digit (``1,230`` to the ten)."""
    value, quantum = numeral.value, numeral.quantum
    if not value or quantum <= 0:
        return numeral
    exponent = quantum.adjusted()
    while CONTEXT.remainder(value, Decimal((0, (1,), exponent + 1))) == 0:
        exponent += 1
    return replace(numeral, quantum=Decimal((0, (1,), exponent)))


def roundings(numeral: Numeral, hedge: bool = False) -> Iterator[tuple[Decimal, Decimal, str]]:
    """(value, quantum, form) of each documented form of an eligible number; a hedged number
    ("around $1,230") is also read at the precision of its last non-zero digit."""
    forms = [(numeral, "as written")]
    if hedge and (coarse := _significant(numeral)).quantum != numeral.quantum:
        forms.append((coarse, "hedged, to its last non-zero digit"))
    for read, form in forms:
        if not eligible(read):
            continue
        yield read.value, read.quantum, form
        if read.percent:
            ratio, quantum = shifted(read.value, -2), shifted(read.quantum, -2)
            spelled = "as the ratio a percent spells"
            yield ratio, quantum, spelled if form == "as written" else f"{spelled}, {form}"


def rounded(
    values: Sequence[Decimal],
    numeral: Numeral,
    public: Public | None,
    exempt: Callable[[Decimal], bool] | None = None,
    hedge: bool = False,
) -> Rounded | None:
    """The restricted value (of the sorted ``values``, ``exempt`` ones skipped) the numeral
    rounds, in the first form that leaks it; None when none does, or an unrestricted value is
    strictly closer. ``hedge``: a hedge word comes before it (see ``roundings``)."""
    for written, quantum, form in roundings(numeral, hedge):
        half = CONTEXT.divide(quantum, 2)
        low, high = CONTEXT.subtract(written, half), CONTEXT.add(written, half)
        start, end = bisect.bisect_left(values, low), bisect.bisect_right(values, high)
        inside = sorted(values[start:end], key=lambda r: CONTEXT.abs(CONTEXT.subtract(r, written)))
        for restricted in inside:
            if restricted == written or (exempt is not None and exempt(restricted)):
                continue  # an exact reading (the exact rule decides it), or public evidence
            if not any(rounds_to(restricted, written, quantum, mode) for mode in _MODES):
                continue  # in the interval but on the tie end neither rounding reaches
            if public is not None and public.closer(written, restricted):
                break  # the nearest restricted value loses: so does every farther one
            return Rounded(restricted, quantum, form)
    return None
