"""Core speed: record-then-check and repeated checks, all six families, vs the reference style.

record-then-check: record the table in a fresh registry, then check one correct output with all
six families through ``boundary(...).submit``. repeated check: the table is already recorded; only
the boundary and the six checks run. Both are measured side by side with the reference-style
baseline (``bench/reference_style.py``: a deep copy on every read, checks through the same path)
and against the figures issue 2 quotes for the reference (4.0 / 400 ms and 3.5 / 345 ms at 100 /
10,000 rows). Goals: record-then-check >= 20x faster, repeated >= 100x faster.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench import Section, calls_for, compare, fmt_ratio, fmt_time
from bench._scenario import FACT, SPEC, TOOL, TOOL_ARGS, make_output, make_rows, six_checks
from bench.reference_style import RefRegistry, ref_checks, run_ref_checks
from groundplane_otel.boundary import boundary
from groundplane_otel.registry import FactRegistry

__all__ = ["QUOTED", "run"]

# Issue 2, item 6: the reference measured on this kind of machine (seconds).
QUOTED = {
    ("record-then-check", 100): 4.0e-3,
    ("record-then-check", 10_000): 400e-3,
    ("repeated check", 100): 3.5e-3,
    ("repeated check", 10_000): 345e-3,
}
GOALS = {"record-then-check": 20.0, "repeated check": 100.0}


def _variants(n: int) -> dict[str, dict[str, Callable[[], Any]]]:
    rows = make_rows(n)
    output = make_output(rows)
    checks = six_checks()
    refs = ref_checks(SPEC)

    def ours_record_then_check() -> None:
        reg = FactRegistry()
        reg.record_table(FACT, rows, key="region", tool=TOOL, args=TOOL_ARGS)
        with boundary(reg, facts=[FACT], checks=checks) as b:
            b.submit(output)

    def ref_record_then_check() -> None:
        reg = RefRegistry()
        reg.record_table(FACT, rows, key="region", tool=TOOL, args=TOOL_ARGS)
        run_ref_checks(reg, output, refs)

    recorded = FactRegistry()
    recorded.record_table(FACT, rows, key="region", tool=TOOL, args=TOOL_ARGS)
    declared = boundary(recorded, facts=[FACT], checks=checks)
    ref_recorded = RefRegistry()
    ref_recorded.record_table(FACT, rows, key="region", tool=TOOL, args=TOOL_ARGS)

    def ours_repeated() -> None:
        with declared as b:
            b.submit(output)

    def ref_repeated() -> None:
        run_ref_checks(ref_recorded, output, refs)

    ours_record_then_check()  # the correct output must pass both; fail loudly if not
    ref_record_then_check()
    return {
        "record-then-check": {"ours": ours_record_then_check, "ref": ref_record_then_check},
        "repeated check": {"ours": ours_repeated, "ref": ref_repeated},
    }


def _floor(n: int, budget: float, repeats: int) -> float:
    """The pure-Python floor of recording and ranking: one copy of each row, one sort.

    Timed on its own, not interleaved with the variants: interleaving changes their timings.
    """
    rows = make_rows(n)

    def floor() -> None:
        copied = [dict(row) for row in rows]
        copied.sort(key=lambda row: row["ctr"], reverse=True)

    return compare({"floor": floor}, repeats=repeats, number=calls_for(floor, budget))[
        "floor"
    ].median


def run(smoke: bool) -> list[Section]:
    sizes = (20, 200) if smoke else (100, 10_000)
    budget = 0.002 if smoke else 0.05
    repeats = 3 if smoke else 9
    section = Section(
        key="core",
        title="Core: record-then-check and repeated checks (six families, one output)",
        headers=(
            "case",
            "rows",
            "groundplane_otel",
            "reference-style (same run)",
            "speedup",
            "reference (issue 2)",
            "speedup vs quoted",
            "goal",
            "status",
        ),
    )
    floors: list[str] = []
    for n in sizes:
        for case, variants in _variants(n).items():
            number = {name: calls_for(fn, budget) for name, fn in variants.items()}
            timed = compare(variants, repeats=repeats, number=number)
            ours, ref = timed["ours"].median, timed["ref"].median
            if case == "record-then-check":
                floor = _floor(n, budget, repeats)
                floors.append(
                    f"{fmt_time(floor)} at {n:,} rows (record-then-check takes {ours / floor:.1f}x)"
                )
            ratio = ref / ours
            quoted = QUOTED.get((case, n))
            goal = GOALS[case]
            quoted_ratio = None if quoted is None else quoted / ours
            met = ratio >= goal and (quoted_ratio is None or quoted_ratio >= goal)
            section.rows.append(
                (
                    case,
                    f"{n:,}",
                    fmt_time(ours),
                    fmt_time(ref),
                    fmt_ratio(ratio),
                    "—" if quoted is None else fmt_time(quoted),
                    "—" if quoted_ratio is None else fmt_ratio(quoted_ratio),
                    f"≥ {goal:.0f}x",
                    "n/a (smoke)" if smoke else ("met" if met else "**MISSED**"),
                )
            )
    section.notes.append(
        "Pure-Python floor, timed on its own in the same run: a bare "
        "`[dict(r) for r in rows]` plus one sort by ctr takes " + "; ".join(floors) + "."
    )
    section.notes.append(
        "Median of "
        f"{repeats} interleaved runs per variant; each run repeats the call to fill "
        f"~{budget * 1e3:.0f} ms. The reference-style baseline deep-copies the fact on every "
        "read and re-derives rankings per check, as the reference does."
    )
    return [section]
