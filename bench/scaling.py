"""Scaling: each check family on tables of 10 → 100,000 rows; time per row and growth exponent.

For each size the table is built once per run; ``cold`` is the first check against a freshly
stored fact (it pays for whatever the check derives from the fact: a ranking, an index), ``warm``
is a repeated check against the same fact. ``record_table`` is the public recording path (copy
in, validate, index). The growth exponent is the least-squares slope of log(time) against
log(rows) over the three largest sizes: 1 is linear, n·log n reads about 1.1 there (more once the
data outgrows the CPU caches), a quadratic curve 2, and 0 is constant.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from bench import Section, calls_for, compare, fmt_time, loglog_slope
from bench._scenario import FACT, TOOL, TOOL_ARGS, make_output, make_rows
from groundplane_otel.checks._base import NamedCheck
from groundplane_otel.checks.aggregate_reconciles import aggregate_reconciles
from groundplane_otel.checks.comparison import comparison
from groundplane_otel.checks.entities_recorded import entities_recorded
from groundplane_otel.checks.ranking_prefix import ranking_prefix
from groundplane_otel.checks.row_integrity import row_integrity
from groundplane_otel.checks.superlative import superlative
from groundplane_otel.facts import Provenance, Table
from groundplane_otel.registry import FactRegistry

__all__ = ["FAMILIES", "run"]

FAMILIES: dict[str, Callable[[], NamedCheck]] = {
    "superlative": lambda: superlative(FACT, "winner", score_field="ctr", column="ctr"),
    "ranking_prefix": lambda: ranking_prefix(FACT, "top", k=3, column="ctr"),
    "aggregate_reconciles": lambda: aggregate_reconciles(
        FACT, "total_spend", column="spend", op="sum"
    ),
    "entities_recorded": lambda: entities_recorded(["winner", "top", "runner_up"], FACT),
    "row_integrity": lambda: row_integrity(
        FACT, "winner", {"winner_spend": "spend", "winner_clicks": "clicks"}
    ),
    "comparison": lambda: comparison(
        FACT, "winner", "runner_up", "ctr_lift_pct", column="ctr", kind="pct"
    ),
}
LINEAR_LIMIT = 1.5  # halfway between n·log n (~1.1) and quadratic (2)


def _stored(rows: list[dict[str, Any]]) -> FactRegistry:
    """A registry holding ``rows`` as a fresh fact, without paying for record_table's copies.

    Benchmark setup only: the check must meet a fact it has never seen (a cold start), and
    re-recording 100,000 rows per sample would make the run take minutes.
    """
    registry = FactRegistry()
    columns = tuple(rows[0])
    table = Table("region", tuple(rows), columns)
    registry._store(FACT, table, Provenance(TOOL, dict(TOOL_ARGS)))
    return registry


def _verdict(slope: float) -> str:
    if slope < 0.2:
        return "constant"
    if slope <= LINEAR_LIMIT:
        return "linear or n·log n"
    return "**superlinear**"


def run(smoke: bool) -> list[Section]:
    sizes = (10, 100, 1_000) if smoke else (10, 100, 1_000, 10_000, 100_000)
    budget = 0.002 if smoke else 0.03
    repeats_at = (lambda n: 2) if smoke else (lambda n: 3 if n >= 100_000 else 7)
    series: dict[str, list[float]] = {}

    for n in sizes:
        rows = make_rows(n)
        output = make_output(rows)
        repeats = repeats_at(n)

        def record(rows: list[dict[str, Any]] = rows) -> None:
            FactRegistry().record_table(FACT, rows, key="region", tool=TOOL, args=TOOL_ARGS)

        number = 1 if n >= 10_000 else calls_for(record, budget)
        timed = compare({"record_table": record}, repeats=repeats, number=number)
        series.setdefault("record_table", []).append(timed["record_table"].median)

        for family, build in FAMILIES.items():
            check = build()
            check(_stored(rows), output)  # the correct output must pass; fail loudly if not

            def cold(
                registry: FactRegistry, check: NamedCheck = check, output: Any = output
            ) -> None:
                check(registry, output)

            def fresh(rows: list[dict[str, Any]] = rows) -> FactRegistry:
                return _stored(rows)

            warm_registry = _stored(rows)
            check(warm_registry, output)

            def warm(
                check: NamedCheck = check,
                registry: FactRegistry = warm_registry,
                output: Any = output,
            ) -> None:
                check(registry, output)

            timed_cold = compare(
                {"cold": cold},  # type: ignore[dict-item]
                repeats=repeats,
                number=3 if n >= 10_000 else 10,
                setup={"cold": fresh},
            )
            timed_warm = compare({"warm": warm}, repeats=repeats, number=calls_for(warm, budget))
            series.setdefault(f"{family} cold", []).append(timed_cold["cold"].median)
            series.setdefault(f"{family} warm", []).append(timed_warm["warm"].median)

    headers = (
        "family",
        *(f"{n:,} rows" for n in sizes),
        f"per row @ {sizes[-1]:,}",
        "exponent",
        "growth",
    )
    section = Section(
        key="scaling",
        title="Scaling: each check family, 10 → 100,000 rows (median per check)",
        headers=headers,
    )
    tail = slice(-3, None)
    for name, times in series.items():
        slope = loglog_slope(list(sizes)[tail], times[tail])
        section.rows.append(
            (
                name,
                *(fmt_time(t) for t in times),
                fmt_time(times[-1] / sizes[-1]),
                f"{slope:.2f}",
                _verdict(slope),
            )
        )
    section.notes.append(
        "cold = first check on a fact it has never seen (pays for the ranking / index it "
        "derives); warm = the same check again. Exponent = log-log slope over the three largest "
        f"sizes: 1 is linear, n·log n reads ~1.1-1.25, quadratic 2; ≤ {LINEAR_LIMIT} is "
        "reported as linear or n·log n."
    )
    return [section]
