"""What reading rank claims costs: ``python -m bench.rank_cost [--smoke]``.

A 2,000-word answer (entity names, their scores, "X ranked #N with S" claims, dates) against a
10,000-name Ranking, side by side with the same answer checked against the same names and
scores recorded as a Table (no Ranking in scope, so no rank claim is read): the price of the
rank reader is the difference. Median of interleaved repeats (``bench.compare``). Prints;
asserts nothing.
"""

from __future__ import annotations

import random
import string
import sys
from typing import Any

from bench import Section, calls_for, compare, fmt_ratio, fmt_time, render

__all__ = ["main", "run"]


def _measure(smoke: bool) -> Section:
    from groundplane_otel.checks.numbers_recorded import numbers_recorded
    from groundplane_otel.registry import FactRegistry

    rng = random.Random(20261202)
    size, words = (500, 200) if smoke else (10_000, 2_000)
    letters = string.ascii_lowercase
    names = sorted({"".join(rng.choice(letters) for _ in range(8)).title() for _ in range(size)})
    scores = {name: rng.randrange(0, 10**6) for name in names}
    ranked = FactRegistry()
    ranking = ranked.record_ranking("r", scores, key="revenue").value
    plain = FactRegistry()  # the same names and scores as a Table: numbers only, no ranks read
    plain.record_table("v", [{"name": n, "revenue": s} for n, s in scores.items()], key="name")
    parts: list[str] = []
    count = claims = 0
    while count < words:
        name = rng.choice(names)
        sentence = rng.choice(
            [
                f"{name} ranked #{ranking.competition_rank(name)} with {scores[name]:,}.",
                f"{name} came in at {scores[name]:,} in the period, on 2026-11-30.",
                f"The team notes that {name} was steady against plan.",
            ]
        )
        claims += "ranked" in sentence
        parts.append(sentence)
        count += len(sentence.split())
    text = " ".join(parts)
    with_ranks, without = numbers_recorded("r"), numbers_recorded("v")
    with_ranks(ranked, text)  # warm: the name index and the value set are kept on the facts
    without(plain, text)
    variants: dict[str, Any] = {
        "numbers_recorded, the numbers only (the same data as a Table)": lambda: without(
            plain, text
        ),
        "numbers_recorded with the Ranking (numbers + rank claims)": lambda: with_ranks(
            ranked, text
        ),
    }
    number = {name: calls_for(fn, 0.05 if smoke else 0.2, cap=200) for name, fn in variants.items()}
    timed = compare(variants, repeats=3 if smoke else 15, number=number)
    base = timed[next(iter(timed))].median
    section = Section(
        key="rank_cost",
        title=f"Rank claims in prose: a {words:,}-word answer against a {size:,}-name Ranking",
        headers=("variant", "per answer", "vs numbers only"),
    )
    for name, timing in timed.items():
        section.rows.append((name, fmt_time(timing.median), fmt_ratio(timing.median / base)))
    section.notes.append(
        f"{len(text.split()):,} words, {claims} rank claims; median of "
        f"{timed[next(iter(timed))].runs} interleaved runs. Reproduce: `python -m bench.rank_cost`."
    )
    return section


def run(smoke: bool) -> list[Section]:
    return [_measure(smoke)]


def main() -> int:
    print(render(run("--smoke" in sys.argv[1:])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
