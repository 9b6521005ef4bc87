"""Shared by the generators: names, score lists, the (independent) ranking oracle."""

from __future__ import annotations

import random
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from .model import Case, FactSpec, Label

WORDS = (
    "north", "harbour", "delta", "summit", "meadow", "river", "cedar", "aurora", "granite",
    "willow", "falcon", "ember", "coral", "saffron", "orchid", "tundra", "juniper", "maple",
    "onyx", "zephyr", "lagoon", "prairie", "beacon", "canyon", "quartz", "thistle", "birch",
    "cobalt", "dune", "fjord",
)  # fmt: skip


def names(rng: random.Random, n: int, *, ints: bool = False) -> list[Hashable]:
    """``n`` distinct entity names: words (with a suffix past the word list) or int ids."""
    if ints:
        start = rng.randrange(100, 5000)
        ids = list(range(start, start + 3 * n))
        rng.shuffle(ids)
        return list(ids[:n])
    pool = list(WORDS)
    rng.shuffle(pool)
    out: list[Hashable] = []
    for i in range(n):
        word = pool[i % len(pool)]
        out.append(word if i < len(pool) else f"{word}-{i // len(pool)}")
    return out


def scores(rng: random.Random, n: int, style: str) -> list[int | float]:
    """``n`` finite scores; ``style`` is int, float, large (ints past 2**53), signed (ints and
    floats of both signs) or mixed."""
    if style == "signed":
        return [
            rng.randrange(-500, 500) if rng.random() < 0.5 else rng.uniform(-300, 300)
            for _ in range(n)
        ]
    if style == "int":
        return [rng.randrange(0, 500) for _ in range(n)]
    if style == "large":
        base = 10**18
        return [base + rng.randrange(0, 10**6) for _ in range(n)]
    if style == "float":
        return [round(rng.uniform(0.001, 0.2), rng.choice((3, 4, 6))) for _ in range(n)]
    return [rng.randrange(0, 300) if rng.random() < 0.5 else rng.uniform(0, 300) for _ in range(n)]


def order(values: list[int | float], higher_is_better: bool) -> list[int]:
    """Positions sorted best-first, stably (ties keep input order): the ranking oracle."""
    return sorted(range(len(values)), key=lambda i: values[i], reverse=higher_is_better)


def blocks(values: list[int | float], ordering: list[int]) -> list[list[int]]:
    """Runs of equal score along ``ordering``."""
    out: list[list[int]] = []
    for i in ordering:
        if out and values[out[-1][0]] == values[i]:
            out[-1].append(i)
        else:
            out.append([i])
    return out


@dataclass
class Emitter:
    """Collects cases of one family, numbering them per failure class."""

    family: str
    cases: list[Case]
    fact: str
    counts: dict[str, int] = field(default_factory=dict)

    def __call__(
        self,
        failure_class: str,
        label: Label,
        facts: list[FactSpec],
        check: dict[str, Any],
        output: dict[str, Any],
        expect_code: str | None = None,
        expect_error: str | None = None,
    ) -> None:
        number = self.counts.get(failure_class, 0)
        self.counts[failure_class] = number + 1
        self.cases.append(
            Case(
                id=f"{self.family}/{failure_class}/{number:03d}",
                family=self.family,
                failure_class=failure_class,
                label=label,
                facts=tuple(facts),
                check={"builder": self.family, "fact": self.fact, **check},
                output=output,
                expect_code=expect_code,
                expect_error=expect_error,
            )
        )


def repeat(rng: random.Random, count: int, make: Callable[[random.Random], bool]) -> None:
    """Call ``make`` until it has produced ``count`` cases (it returns False to retry)."""
    made = attempts = 0
    while made < count:
        attempts += 1
        if attempts > count * 50:
            raise RuntimeError(f"generator {make.__name__} cannot produce {count} cases")
        if make(rng):
            made += 1


NON_FINITE = (float("nan"), float("inf"), float("-inf"))
"""What ``json.loads`` yields for the NaN / Infinity / -Infinity tokens it accepts by default."""


def exact(value: int | float) -> Fraction:
    return Fraction(value)


def pairs(values: list[int | float], labels: list[Hashable]) -> Iterator[tuple[Hashable, Any]]:
    return zip(labels, values, strict=True)
