"""The policy every streamed-answer test guards with: ``invoice_query`` results become the table
``invoice``; the revenue-analyst's answers are prose whose every number must be recorded there."""

from __future__ import annotations

from typing import Literal

import groundplane_otel as gp
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec

AGENT_NAME = "revenue-analyst"


def revenue_config(*, mode: Literal["enforce", "observe"] = "enforce") -> GuardConfig:
    """The revenue-analyst's prose boundary (``revenue_answer``), refusing at the first claim."""
    spec = BoundarySpec(
        "revenue_answer",
        ("invoice",),
        (gp.numbers_recorded("invoice"),),
        match=MatchSpec(agent_name=AGENT_NAME),
        report_mode="first",
        answer="text",
    )
    fact = FactSpec("invoice", "invoice_query", kind="table", key="id")
    return GuardConfig(facts=(fact,), boundaries=(spec,), mode=mode)
