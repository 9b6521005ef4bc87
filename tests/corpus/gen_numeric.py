"""Corpus cases for the numeric families: aggregate_reconciles and comparison."""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable
from fractions import Fraction
from typing import Any

from ._common import NON_FINITE, Emitter, names, repeat, scores
from .model import Case, FactSpec, nearest, printed, representable, truly_matches

FACT = "numbers"
SEGMENTS = ("retail", "b2b", "public")

# -- aggregate_reconciles -------------------------------------------------------------------


def _rows(rng: random.Random, size: int, style: str) -> list[dict[str, Any]]:
    keys = names(rng, size, ints=rng.random() < 0.25)
    amounts = scores(rng, size, style)
    return [
        {
            "id": key,
            "segment": rng.choice(SEGMENTS),
            "amount": amount,
            "weight": rng.choice((rng.randint(1, 20), round(rng.uniform(0.1, 5.0), 2))),
            "active": rng.choice((True, False, 1, 0)),
        }
        for key, amount in zip(keys, amounts, strict=True)
    ]


def aggregate_of(op: str, values: list[Any], weights: list[Any] | None = None) -> Fraction:
    """The exact aggregate (the oracle), over the decimals the values print as."""
    if op == "count":
        return Fraction(len(values))
    exact = [printed(value) for value in values]
    if op == "sum":
        return sum(exact, Fraction(0))
    if op == "mean":
        if weights is not None:
            ws = [printed(w) for w in weights]
            return sum((v * w for v, w in zip(exact, ws, strict=True)), Fraction(0)) / sum(ws)
        return sum(exact, Fraction(0)) / len(exact)
    if op == "min":
        return min(exact)
    if op == "max":
        return max(exact)
    ordered = sorted(exact)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def _selected(rows: list[dict[str, Any]], where: dict[str, Any] | None) -> list[dict[str, Any]]:
    if where is None:
        return rows
    return [
        row
        for row in rows
        if all(c in row and type(row[c]) is type(v) and row[c] == v for c, v in where.items())
    ]


def money_to_whole(rng: random.Random, size: int) -> list[float] | None:
    """``size`` amounts in cents (floats) that add up, in decimal, to a whole number whose
    float is also the nearest float to the floats' exact sum (610.31 + 325.69 -> 936.0); None
    when this draw's floats round the other way (the caller retries)."""
    cents = [rng.randrange(1, 100_000) for _ in range(size - 1)]
    whole = (sum(cents) // 100 + rng.randint(1, 50)) * 100
    cents.append(whole - sum(cents))
    amounts = [c / 100 for c in cents]
    exact = sum((Fraction(a) for a in amounts), Fraction(0))
    if exact.denominator == 1 or float(exact) != whole / 100:
        return None
    return amounts


def unrepresentable_pair(rng: random.Random) -> tuple[int | float, int | float]:
    """Two numbers whose mean (and whose ratio, see ``comparison_cases``) no float stands for:
    beyond the float range, rounding to 0.0, or a fraction at 2**53 and beyond."""
    shape = rng.choice(("near_2_53", "beyond_range", "subnormal"))
    if shape == "near_2_53":
        base = 2 ** rng.randint(53, 60) + 2 * rng.randrange(10**6)
        return base, base + 1
    if shape == "beyond_range":
        base = 10 ** rng.randint(309, 400)
        return base, base + 2 * rng.randrange(10**3) + 1
    return 5e-324, 0.0


def aggregate_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("aggregate_reconciles", cases, FACT)

    def table(rows: list[dict[str, Any]], exhaustive: bool = True) -> list[FactSpec]:
        return [FactSpec("table", FACT, rows, {"key": "id", "exhaustive": exhaustive})]

    def truth(
        rows: list[dict[str, Any]], op: str, where: Any = None, weighted: bool = False
    ) -> Fraction:
        chosen = _selected(rows, where)
        values = [row.get("amount") for row in chosen]
        weights = [row["weight"] for row in chosen] if weighted else None
        return aggregate_of(op, values, weights)

    def wrong_sum(rng: random.Random) -> bool:
        style = rng.choice(("int", "float", "mixed", "large"))
        rows = _rows(rng, rng.randint(2, 25), style)
        exact = truth(rows, "sum")
        tolerance = rng.choice((0, 0, 0.01, 1))
        if style == "large" and rng.random() < 0.5:
            claim: int | float = float(exact)  # a large int rounded through a float
        else:
            claim = nearest(exact) + rng.choice((-1, 1)) * rng.choice(
                (tolerance * 3 or 1, 490, 0.5, 1e-6)
            )
        if truly_matches(claim, exact, tolerance, read=printed):
            return False
        check = {"field": "total", "column": "amount", "op": "sum", "tolerance": tolerance}
        emit("wrong_sum", "unsupported", table(rows), check, {"total": claim}, "value_mismatch")
        return True

    def wrong_stat(rng: random.Random) -> bool:
        rows = _rows(rng, rng.randint(2, 25), rng.choice(("int", "float", "mixed")))
        op = rng.choice(("mean", "min", "max", "median"))
        exact = truth(rows, op)
        others = [printed(row["amount"]) for row in rows if printed(row["amount"]) != exact]
        claim = nearest(rng.choice(others)) if others and rng.random() < 0.5 else nearest(exact) + 1
        if truly_matches(claim, exact, read=printed):
            return False
        check = {"field": "stat", "column": "amount", "op": op}
        emit("wrong_stat", "unsupported", table(rows), check, {"stat": claim}, "value_mismatch")
        return True

    def unweighted_mean(rng: random.Random) -> bool:
        rows = _rows(rng, rng.randint(2, 20), rng.choice(("int", "float", "mixed")))
        exact = truth(rows, "mean", weighted=True)
        plain = truth(rows, "mean")
        claim = nearest(plain)
        if truly_matches(claim, exact, read=printed):
            return False
        check = {"field": "avg", "column": "amount", "op": "mean", "weight_column": "weight"}
        emit(
            "unweighted_mean", "unsupported", table(rows), check, {"avg": claim}, "unweighted_mean"
        )
        return True

    def wrong_subset(rng: random.Random) -> bool:
        rows = _rows(rng, rng.randint(3, 25), rng.choice(("int", "float", "mixed")))
        segment = rows[0]["segment"]
        where = {"segment": segment}
        op = rng.choice(("sum", "count", "mean", "max"))
        chosen = _selected(rows, where)
        rest = [row for row in rows if row not in chosen]
        if not rest:
            return False
        exact = truth(rows, op, where)
        wrong = aggregate_of(op, [r["amount"] for r in (rows if rng.random() < 0.5 else rest)])
        claim = nearest(wrong)
        if truly_matches(claim, exact, read=printed):
            return False
        check = {"field": "agg", "column": "amount", "op": op, "where": where}
        emit("wrong_subset", "unsupported", table(rows), check, {"agg": claim}, "wrong_subset")
        return True

    def loose_filter(rng: random.Random) -> bool:
        """The filter compared loosely (1 taken for True): the wrong subset, type-wise."""
        rows = _rows(rng, rng.randint(3, 20), "int")
        where = {"active": True}
        loose = [row for row in rows if row["active"] == True]  # noqa: E712 - the mistake itself
        strict = _selected(rows, where)
        if not strict or len(loose) == len(strict):
            return False
        exact = truth(rows, "sum", where)
        claim = nearest(aggregate_of("sum", [row["amount"] for row in loose]))
        if truly_matches(claim, exact, read=printed):
            return False
        check = {"field": "agg", "column": "amount", "op": "sum", "where": where}
        emit("wrong_subset", "unsupported", table(rows), check, {"agg": claim})
        return True

    def not_exhaustive(rng: random.Random) -> bool:
        rows = _rows(rng, rng.randint(1, 20), rng.choice(("int", "float")))
        op = rng.choice(("sum", "count", "mean", "min", "max", "median"))
        claim = nearest(truth(rows, op))
        check: dict[str, Any] = {"field": "agg", "op": op}
        if op != "count":
            check["column"] = "amount"
        emit(
            "not_exhaustive",
            "unsupported",
            table(rows, exhaustive=False),
            check,
            {"agg": claim},
            "not_exhaustive",
        )
        return True

    def non_int_count(rng: random.Random) -> bool:
        rows = _rows(rng, rng.randint(1, 20), "int")
        where = rng.choice((None, {"segment": rows[0]["segment"]}))
        count = len(_selected(rows, where))
        claim = rng.choice((float(count), str(count), f"{count} rows", count + 0.0, [count]))
        if count in (0, 1) and rng.random() < 0.5:
            claim = bool(count)
        check = {"field": "n", "op": "count", "where": where}
        emit("non_int_count", "unsupported", table(rows), check, {"n": claim}, "not_an_integer")
        return True

    def partial_column(rng: random.Random) -> bool:
        rows = _rows(rng, rng.randint(2, 20), rng.choice(("int", "float")))
        gaps = rng.sample(range(len(rows)), rng.randint(1, max(1, len(rows) // 3)))
        for position in gaps:
            del rows[position]["amount"]
        op = rng.choice(("sum", "mean", "max", "median", "count"))
        present = [row["amount"] for row in rows if "amount" in row]
        if not present:
            return False
        claim = nearest(aggregate_of(op, present))
        check = {"field": "agg", "column": "amount", "op": op}
        emit("partial_column", "unsupported", table(rows), check, {"agg": claim}, "partial_column")
        return True

    def empty_filter(rng: random.Random) -> bool:
        """No row matches the filter: the reference semantics refuse to verify any claim."""
        rows = _rows(rng, rng.randint(1, 20), "int")
        where = rng.choice(({"segment": "government"}, {"active": "yes"}, {"missing": 1}))
        if "missing" in where:
            rows[0]["missing"] = 2
        op = rng.choice(("sum", "count"))
        check: dict[str, Any] = {"field": "agg", "op": op, "where": where}
        if op == "sum":
            check["column"] = "amount"
        emit("empty_filter", "unsupported", table(rows), check, {"agg": 0}, "empty_filter")
        return True

    def non_finite(rng: random.Random) -> bool:
        rows = _rows(rng, rng.randint(1, 20), rng.choice(("int", "float")))
        op = rng.choice(("sum", "mean", "min", "max", "median"))
        check: dict[str, Any] = {"field": "agg", "column": "amount", "op": op}
        if rng.random() < 0.5:
            check["rel_tolerance"] = 1.0
        emit(
            "non_finite_claim",
            "unsupported",
            table(rows),
            check,
            {"agg": rng.choice(NON_FINITE)},
            "not_a_number",
        )
        return True

    def count_within_tolerance(rng: random.Random) -> bool:
        """A wrong count inside a declared tolerance: a count is exact whatever the tolerance."""
        rows = _rows(rng, rng.randint(2, 40), "int")
        where = rng.choice((None, {"segment": rows[0]["segment"]}))
        count = len(_selected(rows, where))
        check: dict[str, Any] = {"field": "n", "op": "count", "where": where}
        if rng.random() < 0.5:
            check["tolerance"] = rng.choice((1, 2, 5, 0.5))
            claim = count + rng.choice((-1, 1)) * max(1, int(check["tolerance"]))
        else:
            check["rel_tolerance"] = rng.choice((0.01, 0.1, 0.5))
            claim = count + rng.choice((-1, 1)) * max(1, int(count * check["rel_tolerance"]))
        if claim < 0 or claim == count:
            return False
        others = (len(rows), len(rows) - count) if where is not None else ()
        code = "wrong_subset" if claim in others else "value_mismatch"
        emit("count_within_tolerance", "unsupported", table(rows), check, {"n": claim}, code)
        return True

    def unrepresentable_result(rng: random.Random) -> bool:
        """The exact mean has no int or float form: refused (a ValueError) whatever the claim,
        so the nearest float, an int, 0.0 or the float's integer never pass."""
        left, right = unrepresentable_pair(rng)
        rows = [{"id": "a", "amount": left}, {"id": "b", "amount": right}]
        exact = aggregate_of("mean", [left, right])
        if representable(exact):
            return False
        try:
            near: int | float = float(exact)
        except OverflowError:
            near = int(exact)
        claim = rng.choice((near, 0, 0.0, int(exact)))
        check = {"field": "avg", "column": "amount", "op": "mean"}
        if rng.random() < 0.3:
            check["rel_tolerance"] = 0.5
        emit(
            "unrepresentable_result", "unsupported", table(rows), check, {"avg": claim},
            expect_error="ValueError",
        )  # fmt: skip
        return True

    # -- supported --

    def whole_money_sum(rng: random.Random) -> bool:
        """Money amounts adding up to a whole number: the JSON int (936) passes, as 936.0 does."""
        amounts = money_to_whole(rng, rng.randint(2, 12))
        if amounts is None:
            return False
        rows = [{"id": f"r{i}", "amount": amount} for i, amount in enumerate(amounts)]
        exact = aggregate_of("sum", amounts)
        whole = round(float(exact))
        assert truly_matches(whole, exact, read=printed)
        assert truly_matches(float(whole), exact, read=printed)
        check = {"field": "total", "column": "amount", "op": "sum"}
        claim = rng.choice((whole, float(whole)))
        emit("correct:whole_money_sum", "supported", table(rows), check, {"total": claim})
        return True

    def exact_ops(rng: random.Random) -> bool:
        rows = _rows(rng, rng.randint(1, 25), rng.choice(("int", "float", "mixed", "signed")))
        op = rng.choice(("sum", "count", "mean", "min", "max", "median"))
        check: dict[str, Any] = {"field": "agg", "op": op}
        if op != "count" or rng.random() < 0.5:
            check["column"] = "amount"
        emit("correct:exact", "supported", table(rows), check, {"agg": nearest(truth(rows, op))})
        return True

    def nearest_mean(rng: random.Random) -> bool:
        rows = _rows(rng, rng.choice((3, 6, 7, 9, 11)), "int")
        op = rng.choice(("mean", "median"))
        exact = truth(rows, op)
        if exact.denominator == 1:
            return False
        check = {"field": "agg", "column": "amount", "op": op}
        emit(
            "correct:nearest_float_of_rational",
            "supported",
            table(rows),
            check,
            {"agg": float(exact)},
        )
        return True

    def int_as_float(rng: random.Random) -> bool:
        rows = _rows(rng, rng.randint(1, 25), "int")
        op = rng.choice(("sum", "min", "max", "median", "mean"))
        exact = truth(rows, op)
        if exact.denominator != 1:
            return False
        check = {"field": "agg", "column": "amount", "op": op}
        emit("correct:int_vs_float", "supported", table(rows), check, {"agg": float(exact)})
        return True

    def within_tolerance(rng: random.Random) -> bool:
        rows = _rows(rng, rng.randint(1, 25), rng.choice(("int", "float", "mixed")))
        op = rng.choice(("sum", "mean", "median"))
        exact = truth(rows, op)
        check: dict[str, Any] = {"field": "agg", "column": "amount", "op": op}
        if rng.random() < 0.5:
            tolerance = rng.choice((0.5, 0.01, 1e-6))
            claim = float(exact) + rng.uniform(-0.9, 0.9) * tolerance
            check["tolerance"] = tolerance
            ok = truly_matches(claim, exact, tolerance, read=printed)
        else:
            rel = rng.choice((0.01, 1e-3, 1e-9))
            claim = float(exact) * (1 + rng.uniform(-0.9, 0.9) * rel)
            check["rel_tolerance"] = rel
            ok = truly_matches(claim, exact, 0, rel, read=printed)
        if not ok:
            return False
        emit("correct:within_tolerance", "supported", table(rows), check, {"agg": claim})
        return True

    def large_ints(rng: random.Random) -> bool:
        rows = _rows(rng, rng.randint(2, 25), "large")
        op = rng.choice(("sum", "max", "min"))
        check = {"field": "agg", "column": "amount", "op": op}
        emit(
            "correct:large_ints", "supported", table(rows), check, {"agg": nearest(truth(rows, op))}
        )
        return True

    def weighted(rng: random.Random) -> bool:
        rows = _rows(rng, rng.randint(1, 20), rng.choice(("int", "float", "mixed")))
        check = {"field": "avg", "column": "amount", "op": "mean", "weight_column": "weight"}
        output = {"avg": nearest(truth(rows, "mean", weighted=True))}
        emit("correct:weighted_mean", "supported", table(rows), check, output)
        return True

    def filtered(rng: random.Random) -> bool:
        rows = _rows(rng, rng.randint(2, 25), rng.choice(("int", "float")))
        where = rng.choice(({"segment": rows[-1]["segment"]}, {"active": True}, {"active": 1}))
        if not _selected(rows, where):
            return False
        op = rng.choice(("sum", "count", "mean", "min", "max", "median"))
        check = {"field": "agg", "column": "amount", "op": op, "where": where}
        emit(
            "correct:type_strict_filter",
            "supported",
            table(rows),
            check,
            {"agg": nearest(truth(rows, op, where))},
        )
        return True

    wrong = (
        wrong_sum, wrong_stat, unweighted_mean, wrong_subset, not_exhaustive, non_int_count,
        partial_column, non_finite, empty_filter, count_within_tolerance, unrepresentable_result,
    )  # fmt: skip
    for make in wrong:
        repeat(rng, per_class, make)
    repeat(rng, per_class // 2, loose_filter)
    right = (
        whole_money_sum,
        exact_ops,
        nearest_mean,
        int_as_float,
        within_tolerance,
        large_ints,
        weighted,
        filtered,
    )
    for make in right:
        repeat(rng, per_class, make)
    return cases


# -- comparison -----------------------------------------------------------------------------

KINDS = ("abs", "pct", "ratio", "pp")


def delta(kind: str, left: Fraction, right: Fraction) -> Fraction | None:
    if kind == "abs":
        return left - right
    if kind == "pp":
        return (left - right) * 100
    if right == 0:
        return None
    return (left - right) / right * 100 if kind == "pct" else left / right


def comparison_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("comparison", cases, FACT)

    def setup(
        rng: random.Random, style: str | None = None, kinds: tuple[str, ...] = KINDS
    ) -> tuple[list[FactSpec], dict[str, Any], Hashable, Hashable, Fraction, Fraction, str]:
        size = rng.randint(2, 12)
        labels = names(rng, size, ints=rng.random() < 0.2)
        values = scores(rng, size, style or rng.choice(("int", "float", "mixed", "signed")))
        if rng.random() < 0.5:
            facts = [FactSpec("ranking", FACT, list(zip(labels, values, strict=True)))]
            check: dict[str, Any] = {}
        else:
            rows = [{"name": n, "value": v} for n, v in zip(labels, values, strict=True)]
            facts = [FactSpec("table", FACT, rows, {"key": "name"})]
            check = {"column": "value"}
        a, b = rng.sample(range(size), 2)
        kind = rng.choice(kinds)
        direction = rng.choice(("a_minus_b", "b_minus_a"))
        check.update(a_field="a", b_field="b", delta_field="delta", kind=kind, direction=direction)
        left, right = Fraction(values[a]), Fraction(values[b])
        if direction == "b_minus_a":
            left, right = right, left
        return facts, check, labels[a], labels[b], left, right, kind

    def make_wrong(
        failure: str,
        code: str | None,
        claim_of: Callable[[str, Fraction, Fraction], Fraction | None],
        kinds: tuple[str, ...] = KINDS,
    ) -> Callable[[random.Random], bool]:
        def make(rng: random.Random) -> bool:
            facts, check, a, b, left, right, kind = setup(rng, kinds=kinds)
            exact = delta(kind, left, right)
            wrong = claim_of(kind, left, right)
            if exact is None or wrong is None or exact == 0:
                return False
            claim = nearest(wrong)
            if truly_matches(claim, exact):
                return False
            emit(failure, "unsupported", facts, check, {"a": a, "b": b, "delta": claim}, code)
            return True

        make.__name__ = failure
        return make

    def wrong_sign(kind: str, left: Fraction, right: Fraction) -> Fraction | None:
        value = delta(kind, left, right)
        return None if value is None else -value

    def pct_vs_pp(kind: str, left: Fraction, right: Fraction) -> Fraction | None:
        return delta("pp" if kind == "pct" else "pct", left, right)

    def ratio_as_difference(kind: str, left: Fraction, right: Fraction) -> Fraction | None:
        return delta(rng.choice(("abs", "pp")), left, right)

    def pct_as_fraction(kind: str, left: Fraction, right: Fraction) -> Fraction | None:
        value = delta(kind, left, right)
        return None if value is None else value / 100

    def swapped(kind: str, left: Fraction, right: Fraction) -> Fraction | None:
        return delta(kind, right, left)

    def zero_base(rng: random.Random) -> bool:
        facts, check, a, b, left, right, kind = setup(rng, style="int", kinds=("pct", "ratio"))
        base_label = b if check["direction"] == "a_minus_b" else a
        spec = facts[0]
        if spec.kind == "ranking":
            data = [(n, 0 if n == base_label else v) for n, v in spec.data]
        else:
            data = [
                {**row, "value": 0 if row["name"] == base_label else row["value"]}
                for row in spec.data
            ]
        facts = [FactSpec(spec.kind, spec.name, data, spec.options)]
        claim = rng.choice((0, 100, -100, 1e9, float(left), 0.0))
        emit(
            "zero_base", "unsupported", facts, check, {"a": a, "b": b, "delta": claim}, "zero_base"
        )
        return True

    def same_entity(rng: random.Random) -> bool:
        facts, check, a, b, left, right, kind = setup(rng)
        claim = rng.choice((0, 0.0, 1, 1.0)) if kind == "ratio" else rng.choice((0, 0.0))
        emit(
            "same_entity",
            "unsupported",
            facts,
            check,
            {"a": a, "b": a, "delta": claim},
            "same_entity",
        )
        return True

    def unknown_entity(rng: random.Random) -> bool:
        facts, check, a, b, left, right, kind = setup(rng)
        exact = delta(kind, left, right)
        if exact is None:
            return False
        if isinstance(b, int):
            wrong: Any = rng.choice((str(b), float(b), b + 10_000))
        else:
            wrong = rng.choice((b.upper(), f"{b}-2", f"{a} {b}"))
        output = {"a": a, "b": wrong, "delta": nearest(exact)}
        if rng.random() < 0.5:
            output = {"a": wrong, "b": b, "delta": nearest(exact)}
        emit("unknown_entity", "unsupported", facts, check, output, "unknown_entity")
        return True

    def non_finite(rng: random.Random) -> bool:
        facts, check, a, b, left, right, kind = setup(rng)
        if delta(kind, left, right) is None:
            return False
        if rng.random() < 0.5:
            check["rel_tolerance"] = 1.0
        output = {"a": a, "b": b, "delta": rng.choice(NON_FINITE)}
        emit("non_finite_claim", "unsupported", facts, check, output, "not_a_number")
        return True

    def unrepresentable_delta(rng: random.Random) -> bool:
        """A ratio or pct no float stands for (1e-308 against 1e308 rounds to 0.0): refused (a
        ValueError) whatever the claim; the comparison fast path must not accept 0.0."""
        kind = rng.choice(("ratio", "pct"))
        if rng.random() < 0.5:
            left, right = rng.choice((1e-308, 2.5e-300, 5e-324)), rng.choice((1e308, 1e300))
        else:
            big, odd = unrepresentable_pair(rng)
            left, right = (big, 2) if isinstance(big, int) and big % 2 else (odd, 2)
        exact = delta(kind, Fraction(left), Fraction(right))
        if exact is None or representable(exact):
            return False
        try:
            near: int | float = float(exact)
        except OverflowError:
            near = int(exact)
        facts = [FactSpec("ranking", FACT, [("x", left), ("y", right)])]
        check: dict[str, Any] = {
            "a_field": "a", "b_field": "b", "delta_field": "delta", "kind": kind,
        }  # fmt: skip
        output = {"a": "x", "b": "y", "delta": rng.choice((near, 0, 0.0, int(exact)))}
        emit(
            "unrepresentable_result", "unsupported", facts, check, output,
            expect_error="ValueError",
        )  # fmt: skip
        return True

    # -- supported --

    def whole_money_delta(rng: random.Random) -> bool:
        """Two money amounts whose pp or abs delta's nearest float is a whole number: the JSON
        int passes, as the float does (0.3 against 0.1 in pp is 20)."""
        cents = rng.sample(range(1, 2000), 2)
        left, right = cents[0] / 100, cents[1] / 100
        kind = rng.choice(("pp", "abs"))
        exact = delta(kind, Fraction(left), Fraction(right))
        assert exact is not None
        if exact.denominator == 1 or not float(exact).is_integer():
            return False
        whole = int(float(exact))
        assert truly_matches(whole, exact)
        facts = [FactSpec("ranking", FACT, [("x", left), ("y", right)])]
        check: dict[str, Any] = {
            "a_field": "a", "b_field": "b", "delta_field": "delta", "kind": kind,
        }  # fmt: skip
        emit("correct:whole_money_delta", "supported", facts, check,
             {"a": "x", "b": "y", "delta": whole})  # fmt: skip
        return True

    def exact_kinds(rng: random.Random) -> bool:
        facts, check, a, b, left, right, kind = setup(rng)
        exact = delta(kind, left, right)
        if exact is None:
            return False
        emit("correct:exact", "supported", facts, check, {"a": a, "b": b, "delta": nearest(exact)})
        return True

    def within_tolerance(rng: random.Random) -> bool:
        facts, check, a, b, left, right, kind = setup(rng)
        exact = delta(kind, left, right)
        if exact is None:
            return False
        if rng.random() < 0.5:
            tolerance = rng.choice((0.5, 0.01, 1e-6))
            claim = float(exact) + rng.uniform(-0.9, 0.9) * tolerance
            check["tolerance"] = tolerance
            ok = truly_matches(claim, exact, tolerance)
        else:
            rel = rng.choice((0.01, 1e-3, 1e-9))
            claim = float(exact) * (1 + rng.uniform(-0.9, 0.9) * rel)
            check["rel_tolerance"] = rel
            ok = truly_matches(claim, exact, 0, rel)
        if not ok:
            return False
        emit(
            "correct:within_tolerance", "supported", facts, check, {"a": a, "b": b, "delta": claim}
        )
        return True

    def int_as_float(rng: random.Random) -> bool:
        facts, check, a, b, left, right, kind = setup(rng, style="int")
        exact = delta(kind, left, right)
        if exact is None or exact.denominator != 1:
            return False
        emit(
            "correct:int_vs_float",
            "supported",
            facts,
            check,
            {"a": a, "b": b, "delta": float(exact)},
        )
        return True

    def large_ints(rng: random.Random) -> bool:
        facts, check, a, b, left, right, kind = setup(rng, style="large", kinds=("abs", "pp"))
        exact = delta(kind, left, right)
        assert exact is not None
        emit(
            "correct:large_ints",
            "supported",
            facts,
            check,
            {"a": a, "b": b, "delta": nearest(exact)},
        )
        return True

    def zero_base_abs(rng: random.Random) -> bool:
        facts, check, a, b, left, right, kind = setup(rng, style="int", kinds=("abs", "pp"))
        exact = delta(kind, left, right)
        assert exact is not None
        emit(
            "correct:abs_or_pp",
            "supported",
            facts,
            check,
            {"a": a, "b": b, "delta": nearest(exact)},
        )
        return True

    wrong = (
        make_wrong("wrong_sign", None, wrong_sign),
        make_wrong("pct_vs_pp", "wrong_kind", pct_vs_pp, ("pct", "pp")),
        make_wrong("ratio_as_difference", "wrong_kind", ratio_as_difference, ("ratio",)),
        make_wrong("entities_swapped", "wrong_direction", swapped, ("pct", "ratio")),
        make_wrong("pct_as_fraction", None, pct_as_fraction, ("pct", "pp")),
        zero_base,
        same_entity,
        unknown_entity,
        non_finite,
        unrepresentable_delta,
    )
    for make in wrong:
        repeat(rng, per_class, make)
    repeat(rng, per_class, whole_money_delta)
    for make in (exact_kinds, within_tolerance, int_as_float, large_ints, zero_base_abs):
        repeat(rng, per_class * 6 // 5, make)
    return cases
