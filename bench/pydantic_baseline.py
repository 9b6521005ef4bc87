"""The argmax check against what a user would write instead: a Pydantic v2 model validator.

Same data, same output, side by side. The hand-written validator gets the rows through the
validation context and recomputes the argmax (with a tie test) on every call, as a field/model
validator must: it keeps no state between outputs. groundplane_otel is measured twice: ``cold``
records the rows and checks once (what a per-trace guard pays), ``warm`` checks again against the
recorded fact (the ranking is computed once per fact).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, ValidationInfo, model_validator

from bench import Section, calls_for, compare, fmt_ratio, fmt_time
from bench._scenario import FACT, TOOL, TOOL_ARGS, make_output, make_rows
from groundplane_otel.checks.superlative import superlative
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.registry import FactRegistry

__all__ = ["WinnerClaim", "run"]


class WinnerClaim(BaseModel):
    """The hand-written alternative: the claimed winner must be the argmax of the rows' CTR."""

    model_config = ConfigDict(frozen=True)

    winner: str
    ctr: float

    @model_validator(mode="after")
    def winner_is_argmax(self, info: ValidationInfo) -> WinnerClaim:
        rows: list[dict[str, Any]] = (info.context or {})["rows"]
        best = max(rows, key=lambda row: row["ctr"])
        tied = [row["region"] for row in rows if row["ctr"] == best["ctr"]]
        if len(tied) > 1:
            raise ValueError(f"tie between {tied}")
        if self.winner != best["region"]:
            raise ValueError(f"winner is {best['region']!r} ({best['ctr']!r}), not {self.winner!r}")
        if self.ctr != best["ctr"]:
            raise ValueError(f"ctr of {best['region']!r} is {best['ctr']!r}, not {self.ctr!r}")
        return self


def run(smoke: bool) -> list[Section]:
    sizes = (20, 200) if smoke else (100, 10_000)
    budget = 0.002 if smoke else 0.05
    repeats = 3 if smoke else 15
    check = superlative(FACT, "winner", score_field="ctr", column="ctr")
    section = Section(
        key="pydantic",
        title="Argmax check vs a hand-written Pydantic v2 model validator (same data)",
        headers=(
            "rows",
            "Pydantic validator",
            "groundplane_otel warm",
            "ratio (warm)",
            "groundplane_otel cold (record + check)",
            "ratio (cold)",
        ),
    )
    for n in sizes:
        rows = make_rows(n)
        output = {key: make_output(rows)[key] for key in ("winner", "ctr")}
        context = {"rows": rows}
        recorded = FactRegistry()
        recorded.record_table(FACT, rows, key="region", tool=TOOL, args=TOOL_ARGS)

        def pydantic_check(output: dict[str, Any] = output, context: Any = context) -> None:
            WinnerClaim.model_validate(output, context=context)

        def warm(registry: FactRegistry = recorded, output: dict[str, Any] = output) -> None:
            check(registry, output)

        def cold(rows: list[dict[str, Any]] = rows, output: dict[str, Any] = output) -> None:
            registry = FactRegistry()
            registry.record_table(FACT, rows, key="region", tool=TOOL, args=TOOL_ARGS)
            check(registry, output)

        variants = {"pydantic": pydantic_check, "warm": warm, "cold": cold}
        for fn in variants.values():
            fn()  # the correct output passes everywhere
        number = {name: calls_for(fn, budget) for name, fn in variants.items()}
        timed = compare(variants, repeats=repeats, number=number)
        base = timed["pydantic"].median
        section.rows.append(
            (
                f"{n:,}",
                fmt_time(base),
                fmt_time(timed["warm"].median),
                _ratio(base, timed["warm"].median),
                fmt_time(timed["cold"].median),
                _ratio(base, timed["cold"].median),
            )
        )
    section.notes.append(
        "ratio = Pydantic time / groundplane_otel time (> 1: groundplane_otel is faster). "
        f"Semantics differ, too: {_lax_note()}"
    )
    return [section]


def _ratio(base: float, ours: float) -> str:
    if ours <= base:
        return f"{fmt_ratio(base / ours)} faster"
    return f"{fmt_ratio(ours / base)} slower"


def _lax_note() -> str:
    """What the default (lax) Pydantic model accepts that the argmax guard rejects."""
    rows = make_rows(5)
    output = make_output(rows)
    claim = {"winner": output["winner"], "ctr": repr(output["ctr"])}  # a numeric-looking string
    try:
        WinnerClaim.model_validate(claim, context={"rows": rows})
        pydantic_verdict = "passes"
    except ValidationError:
        pydantic_verdict = "fails"
    registry = FactRegistry()
    registry.record_table(FACT, rows, key="region", tool=TOOL, args=TOOL_ARGS)
    try:
        superlative(FACT, "winner", score_field="ctr", column="ctr")(registry, claim)
        ours = "passes"
    except UnsupportedClaim:
        ours = "is rejected"
    return (
        f"a score given as the string {claim['ctr']!r} {pydantic_verdict} the lax Pydantic "
        f"model (strings are coerced to float) and {ours} by superlative."
    )
