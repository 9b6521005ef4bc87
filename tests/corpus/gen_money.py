"""Corpus cases for money totals: ``aggregate_reconciles`` over two-decimal floats.

Each table holds 2 to 3,000 amounts (log-uniform: as many small tables as ones of thousands)
recorded as floats with two decimals (``1234.56``, as a JSON payload says them). The right
answers are the total (or the total of one segment) as the decimals add up, written as the
float a model or a report writes (``491551.22``), and the mean rounded to the cent under
``tolerance: 0.005``; the wrong ones are a cent off. The oracle adds the cents as integers: it
shares nothing with the checker's arithmetic.
"""

from __future__ import annotations

import random
from decimal import Decimal
from fractions import Fraction
from typing import Any

from ._common import Emitter, repeat
from .model import Case, FactSpec

FACT = "ledger"
SEGMENTS = ("retail", "b2b", "public")
FAILURES = ("money_sum_cent_off", "money_mean_cent_off")


def _ledger(rng: random.Random) -> tuple[list[dict[str, Any]], list[int]]:
    """Rows with two-decimal float amounts, and the same amounts in cents (the oracle's)."""
    size = int(10 ** rng.uniform(0.31, 3.48))
    cents = [rng.randrange(1, 2_000_000) for _ in range(size)]
    rows = [
        {"id": f"inv-{i:05d}", "segment": rng.choice(SEGMENTS), "amount": c / 100}
        for i, c in enumerate(cents)
    ]
    return rows, cents


def _to_float(cents: Fraction) -> float:
    """How a model writes an amount of cents: the float of its two-decimal spelling."""
    return float(Decimal(cents.numerator) / Decimal(cents.denominator) / 100)


def money_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("aggregate_reconciles", cases, FACT)

    def table(rows: list[dict[str, Any]]) -> list[FactSpec]:
        return [FactSpec("table", FACT, rows, {"key": "id"})]

    def selection(rows: list[dict[str, Any]], cents: list[int]) -> tuple[Any, list[int]]:
        if rng.random() < 0.5:
            return None, cents
        segment = rng.choice(SEGMENTS)
        return {"segment": segment}, [c for r, c in zip(rows, cents) if r["segment"] == segment]

    def check(op: str, where: Any, tolerance: float = 0) -> dict[str, Any]:
        found: dict[str, Any] = {"field": "total", "column": "amount", "op": op}
        if where is not None:
            found["where"] = where
        if tolerance:
            found["tolerance"] = tolerance
        return found

    def money_sum(rng: random.Random, off: int) -> bool:
        rows, cents = _ledger(rng)
        where, chosen = selection(rows, cents)
        if not chosen:
            return False
        total = Fraction(sum(chosen) + off)
        label = "supported" if off == 0 else "unsupported"
        failure = "correct:money_sum" if off == 0 else "money_sum_cent_off"
        code = None if off == 0 else "value_mismatch"
        emit(failure, label, table(rows), check("sum", where), {"total": _to_float(total)}, code)
        return True

    def money_mean(rng: random.Random, wrong: bool) -> bool:
        rows, cents = _ledger(rng)
        where, chosen = selection(rows, cents)
        if not chosen:
            return False
        exact = Fraction(sum(chosen), len(chosen))  # in cents
        rounded = Fraction(round(exact))  # to the cent (half to even: within half a cent)
        if wrong:  # a cent off, away from the exact mean: at least half a cent beyond it
            rounded += 1 if rounded >= exact else -1
        label = "unsupported" if wrong else "supported"
        failure = "money_mean_cent_off" if wrong else "correct:money_mean_to_cent"
        code = "value_mismatch" if wrong else None
        claim = {"total": _to_float(rounded)}
        emit(failure, label, table(rows), check("mean", where, 0.005), claim, code)
        return True

    repeat(rng, per_class, lambda rng: money_sum(rng, rng.choice((-1, 1))))
    repeat(rng, per_class, lambda rng: money_mean(rng, True))
    repeat(rng, per_class, lambda rng: money_sum(rng, 0))
    repeat(rng, per_class, lambda rng: money_mean(rng, False))
    return cases
