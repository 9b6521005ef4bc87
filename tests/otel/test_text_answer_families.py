"""Under the guard, a boundary declared ``answer: text`` hands the prose families the raw answer
text; a structured family there is refused when the configuration is built, never run."""

from __future__ import annotations

import json

import pytest
from otel_harness import SALES_ROWS, Harness

from groundplane_otel import no_restricted_values, superlative
from groundplane_otel.errors import ClaimsUnsupported
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec


def config(*checks: object, restricted: bool = False) -> GuardConfig:
    fact = FactSpec(
        "sales", "top_sales", kind="ranking", key="region", score="total", path="rows",
        restricted=restricted,
    )  # fmt: skip
    boundary = BoundarySpec(
        "answer", ("sales",), tuple(checks), match=MatchSpec(agent_name="analyst"), answer="text"
    )  # type: ignore[arg-type]
    return GuardConfig(facts=(fact,), boundaries=(boundary,))


def prose(text: str) -> str:
    part = {"type": "text", "content": text}
    return json.dumps([{"role": "assistant", "parts": [part], "finish_reason": "stop"}])


def run(otel: Harness, text: str) -> None:
    with otel.agent():
        otel.tool(SALES_ROWS)
        otel.chat(prose(text))


def test_a_restricted_value_in_a_text_answer_is_blocked(otel: Harness) -> None:
    """no_restricted_values() reads the whole answer text: a public sentence passes, one that
    names a restricted region's number is blocked as restricted_value."""
    otel.install(config(no_restricted_values(), restricted=True))
    run(otel, "Sales were fine this week.")
    with pytest.raises(ClaimsUnsupported) as raised:
        run(otel, "Internally: ten units went to one region, 7 to the other.")
    (claim,) = raised.value.report.violations
    assert (claim.code, claim.field) == ("restricted_value", "<output>")


def test_a_structured_family_on_a_text_boundary_is_refused_at_configuration() -> None:
    """superlative cannot read prose: a text boundary holding it is a ValueError when the
    configuration is built, naming the boundary, the check and both ways out (so it can never
    reach a request, where it would only fail closed as check_error)."""
    with pytest.raises(ValueError) as raised:
        config(superlative("sales", "winner"))
    assert str(raised.value) == (
        "boundary 'answer' reads the whole answer text (answer: text), but "
        "superlative(fact='sales', field='winner') read JSON fields: give each its "
        "whole-answer form (e.g. field=None, text_fields=['*']) or declare answer: json"
    )
