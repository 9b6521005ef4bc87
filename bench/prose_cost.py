"""What checking the numbers of a prose answer costs: ``python -m bench.prose_cost [--smoke]``.

A 2,000-word answer (about one number in six words: amounts, percents, words, magnitudes, with
dates and identifiers around them) against a 10,000-row table (four numeric columns), side by
side with the floor the issue names: one regex pass over the text plus one pass over the facts
(collect every int/float cell into a set). Variants, interleaved, median of repeats
(``bench.compare``): the floor; the scanner alone; ``numbers_recorded`` cold (first check of a
freshly recorded table: builds the value set); warm (the set is kept on the table); and cold with
one wrong number (also builds the exact sorted list for the receipt). Prints; asserts nothing.
"""

from __future__ import annotations

import random
import re
import sys
from typing import Any

from bench import Section, calls_for, compare, fmt_ratio, fmt_time, render

__all__ = ["main", "run"]

_FLOOR = re.compile(r"[-+\u2212]?\d[\d,]*(?:\.\d+)?%?")
_FILLER = (
    "the team notes that {e} reported {n} in the period, on 2026-11-30 at 10:45,",
    "while {e} (Q3, SKU-1234) came in at {n} against plan",
    "and according to the warehouse query {e} stood at {n} at close;",
    "for {e}, the figure was {n}, the 2nd best of the window.",
)


def _rows(count: int, rng: random.Random) -> list[dict[str, Any]]:
    return [
        {
            "id": f"r{i}",
            "revenue": rng.randrange(1000, 10_000_000),
            "margin": round(rng.uniform(-40, 40), 2),
            "units": rng.randrange(0, 21),
            "share": round(rng.uniform(0.001, 0.2), 4),
        }
        for i in range(count)
    ]


def _written(row: dict[str, Any], rng: random.Random) -> str:
    column = rng.choice(("revenue", "margin", "units"))
    value = row[column]
    if column == "revenue":
        return rng.choice([f"${value:,}", f"{value:,}", str(value)])
    if column == "margin":
        return rng.choice([f"{value}%", f"{value:.2f}", f"{value}"])
    words = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]
    return words[value] if value < len(words) and value != 1 else str(value)


def _answer(rows: list[dict[str, Any]], words: int, rng: random.Random) -> str:
    parts: list[str] = []
    count = 0
    while count < words:
        row = rng.choice(rows)
        sentence = rng.choice(_FILLER).format(e=row["id"], n=_written(row, rng))
        parts.append(sentence)
        count += len(sentence.split())
    return " ".join(parts)


def _measure(smoke: bool) -> Section:
    from groundplane_otel.checks._numbers.prose_scan import scan_numbers
    from groundplane_otel.checks.numbers_recorded import numbers_recorded
    from groundplane_otel.errors import UnsupportedClaim
    from groundplane_otel.registry import FactRegistry

    rng = random.Random(20261201)
    size, words = (200, 200) if smoke else (10_000, 2_000)
    rows = _rows(size, rng)
    text = _answer(rows, words, rng)
    wrong = text.replace(str(rows[0]["units"]) + " ", "999999 ", 1) + " r0 reported 123456789."
    check = numbers_recorded("t", "answer")
    numerals = len(scan_numbers(text).numerals)

    def fresh() -> FactRegistry:
        registry = FactRegistry()
        registry.record_table("t", rows, key="id")
        return registry

    warm_registry = fresh()
    check(warm_registry, {"answer": text})  # the value set is now kept on the table
    table = warm_registry.peek("t").value

    def floor() -> None:
        list(_FLOOR.finditer(text))
        found: set[Any] = set()
        for row in table.rows:
            for value in row.values():
                if type(value) is int or type(value) is float:
                    found.add(value)

    def cold(registry: FactRegistry) -> None:
        check(registry, {"answer": text})

    def cold_wrong(registry: FactRegistry) -> None:
        try:
            check(registry, {"answer": wrong})
        except UnsupportedClaim:
            return
        raise AssertionError("the wrong answer passed")

    variants: dict[str, Any] = {
        "floor: one regex pass + one pass over the facts": floor,
        "scan_numbers alone": lambda: scan_numbers(text),
        "numbers_recorded, cold (first check of the table)": cold,
        "numbers_recorded, warm (value set kept on the table)": lambda: check(
            warm_registry, {"answer": text}
        ),
        "numbers_recorded, cold, one wrong number (receipt)": cold_wrong,
    }
    setups = {name: fresh for name in variants if "cold" in name}
    number = {
        name: 1 if name in setups else calls_for(fn, 0.05 if smoke else 0.2, cap=200)
        for name, fn in variants.items()
    }
    timed = compare(variants, repeats=3 if smoke else 15, number=number, setup=setups)
    base = timed["floor: one regex pass + one pass over the facts"].median
    section = Section(
        key="prose_cost",
        title=f"Numbers in prose: a {words:,}-word answer against a {size:,}-row table",
        headers=("variant", "per answer", "vs the floor"),
    )
    for name, timing in timed.items():
        section.rows.append((name, fmt_time(timing.median), fmt_ratio(timing.median / base)))
    section.notes.append(
        f"{len(text.split()):,} words, {numerals} numerals, {4 * size:,} numeric cells; "
        f"median of {timed[next(iter(timed))].runs} interleaved runs. "
        "Reproduce: `python -m bench.prose_cost`."
    )
    return section


def run(smoke: bool) -> list[Section]:
    return [_measure(smoke)]


def main() -> int:
    print(render(run("--smoke" in sys.argv[1:])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
