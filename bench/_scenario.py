"""The benchmark scenario: a campaign table, a correct model output, and the six checks on it.

One recorded Table backs all six families at once (as in the reference README): the winner by
CTR (superlative), the top 3 (ranking_prefix), total spend (aggregate_reconciles), the names used
(entities_recorded), the winner's own spend and clicks (row_integrity) and the winner's CTR lift
over the runner-up in percent (comparison).
"""

from __future__ import annotations

import random
from fractions import Fraction
from typing import Any

from groundplane_otel.checks._base import NamedCheck
from groundplane_otel.checks.aggregate_reconciles import aggregate_reconciles
from groundplane_otel.checks.comparison import comparison
from groundplane_otel.checks.entities_recorded import entities_recorded
from groundplane_otel.checks.ranking_prefix import ranking_prefix
from groundplane_otel.checks.row_integrity import row_integrity
from groundplane_otel.checks.superlative import superlative

__all__ = ["FACT", "SPEC", "TOOL", "TOOL_ARGS", "make_output", "make_rows", "six_checks"]

FACT = "campaigns"
TOOL = "warehouse.query"
TOOL_ARGS = {"table": "campaign_daily", "window": "7d"}
SEGMENTS = ("retail", "b2b", "public")
SPEC: dict[str, Any] = {
    "fact": FACT,
    "score_column": "ctr",
    "sum_column": "spend",
    "k": 3,
    "row_fields": {"winner_spend": "spend", "winner_clicks": "clicks"},
}


def make_rows(n: int, seed: int = 7) -> list[dict[str, Any]]:
    """``n`` rows with distinct CTRs (no ties: the correct output must pass every check)."""
    rng = random.Random(seed)
    order = list(range(n))
    rng.shuffle(order)
    rows = []
    for i in range(n):
        clicks = rng.randrange(100, 50_000)
        rows.append(
            {
                "region": f"region-{i:06d}",
                "segment": SEGMENTS[i % len(SEGMENTS)],
                "spend": rng.randrange(1_000, 900_000),
                "clicks": clicks,
                "ctr": (order[i] + 1) / (n * 37 + 11),
                "revenue": round(rng.uniform(100.0, 99_999.0), 2),
            }
        )
    return rows


def make_output(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The correct structured answer about ``rows``."""
    ranked = sorted(rows, key=lambda row: row["ctr"], reverse=True)
    best, second = ranked[0], ranked[1]
    lift = (Fraction(best["ctr"]) - Fraction(second["ctr"])) / Fraction(second["ctr"]) * 100
    return {
        "winner": best["region"],
        "ctr": best["ctr"],
        "top": [row["region"] for row in ranked[:3]],
        "total_spend": sum(row["spend"] for row in rows),
        "runner_up": second["region"],
        "ctr_lift_pct": float(lift),
        "winner_spend": best["spend"],
        "winner_clicks": best["clicks"],
    }


def six_checks() -> list[NamedCheck]:
    """The six families, configured for the scenario."""
    return [
        superlative(FACT, "winner", score_field="ctr", column="ctr"),
        ranking_prefix(FACT, "top", k=3, column="ctr"),
        aggregate_reconciles(FACT, "total_spend", column="spend", op="sum"),
        entities_recorded(["winner", "top", "runner_up"], FACT),
        row_integrity(FACT, "winner", {"winner_spend": "spend", "winner_clicks": "clicks"}),
        comparison(FACT, "winner", "runner_up", "ctr_lift_pct", column="ctr", kind="pct"),
    ]
