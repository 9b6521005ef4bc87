"""Cost of ``no_restricted_values``: a 2,000-word answer against a 10,000-row restricted table
(``python -m bench --only leaks``).

The floor is what any scan must do at least once: one regex pass over the text (``\\w+``) plus
one pass over every cell of the facts. *Cold* is the first check against a freshly recorded
table (it builds the table's phrase and number index, kept on the fact); *warm* is every later
check against the same fact (the index is reused: only the text is scanned).
"""

from __future__ import annotations

import random
import re
from typing import Any

from bench import Section, calls_for, compare, fmt_ratio, fmt_time
from groundplane_otel import FactRegistry, no_restricted_values

__all__ = ["run"]

_WORD = re.compile(r"\w+")
_SAY = (
    "The {p} ships in {n} days and costs ${price}.",
    "Most customers pick the {p}; it has a {n}-year warranty.",
    "You can order the {p} today, item {n} in the catalogue, for {price} dollars.",
    "Delivery to the north harbour takes {n} working days.",
)
_PUBLIC = ("Widget Pro", "Gadget Mini", "Sprocket Max", "Gizmo Lite")


def _answer(rng: random.Random, words: int) -> str:
    parts: list[str] = []
    count = 0
    while count < words:
        sentence = rng.choice(_SAY).format(
            p=rng.choice(_PUBLIC), n=rng.randint(2, 9), price=rng.randint(10, 99)
        )
        parts.append(sentence)
        count += len(sentence.split())
    return " ".join(parts)


def _rows(rows: int) -> list[dict[str, Any]]:
    return [
        {"code": f"Internal Account {i:05d}", "cost": 100_000 + i + 0.25, "owner": f"staff {i}"}
        for i in range(rows)
    ]


def _registry(rows: list[dict[str, Any]]) -> FactRegistry:
    reg = FactRegistry()
    reg.record_table("internal", rows, key="code", tool="erp", restricted=True)
    return reg


def run(smoke: bool) -> list[Section]:
    words, size = (200, 500) if smoke else (2_000, 10_000)
    repeats = 3 if smoke else 9
    rng = random.Random(20261201)
    text = _answer(rng, words)
    rows = _rows(size)
    output = {"answer": text}
    check = no_restricted_values(["answer"])
    warm_registry = _registry(rows)
    check(warm_registry, output)  # build the index once

    def floor() -> None:
        len(_WORD.findall(text))
        for row in rows:
            for _ in row.values():
                pass

    def cold(registry: FactRegistry) -> None:
        check(registry, output)

    def warm() -> None:
        check(warm_registry, output)

    budget = 0.02 if smoke else 0.2
    timings = compare(
        {"floor": floor, "cold": cold, "warm": warm},
        repeats=repeats,
        number={
            "floor": calls_for(floor, budget),
            "cold": 1 if smoke else 3,
            "warm": calls_for(warm, budget),
        },
        setup={"cold": lambda: _registry(rows)},
    )
    base = timings["floor"].median
    section = Section(
        key="leaks",
        title=f"no_restricted_values: a {words:,}-word answer against a {size:,}-row table",
        headers=("measure", "time", "vs the floor"),
    )
    section.rows.append(("floor: one regex pass over the text + one pass over the cells",
                         fmt_time(base), "1.00x"))  # fmt: skip
    for name, label in (("cold", "first check (builds the fact's index)"),
                        ("warm", "later checks (index reused)")):  # fmt: skip
        median = timings[name].median
        section.rows.append((label, fmt_time(median), fmt_ratio(median / base)))
    section.notes.append(
        f"{len(text.split()):,} words, {size:,} rows of 3 columns ({3 * size:,} restricted "
        "strings and numbers); the answer reveals none, so every word and number is looked up."
    )
    return [section]
