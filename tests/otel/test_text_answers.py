"""Boundaries declared ``answer: text`` hand their checks the whole answer text: a prose answer
is checked (not refused as unreadable), on the span path, through ``check_output`` and
``submit_output``, and from a policy file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from otel_harness import SALES_ROWS, Harness, sales_config

from groundplane_otel.checks.numbers_recorded import numbers_recorded
from groundplane_otel.errors import ClaimsUnsupported
from groundplane_otel.otel import BoundarySpec, MatchSpec, submit_output
from groundplane_otel.otel.policy import PolicyError, load_policy

TEXT = BoundarySpec(
    "answer",
    ("sales",),
    (numbers_recorded("sales"),),
    match=MatchSpec(agent_name="analyst"),
    answer="text",
)


def prose(text: str) -> str:
    part = {"type": "text", "content": text}
    return json.dumps([{"role": "assistant", "parts": [part], "finish_reason": "stop"}])


def outcomes(otel: Harness) -> list[tuple[str, int]]:
    return sorted(
        (labels["groundplane.outcome"], value)
        for labels, value in otel.metrics().get("groundplane.outputs", [])
    )


def run(otel: Harness, text: str) -> None:
    with otel.agent():
        otel.tool(SALES_ROWS)
        otel.chat(prose(text))


def test_a_prose_answer_is_checked_number_by_number(otel: Harness) -> None:
    """ "EU sold 10" passes; "EU sold 12" is blocked with its receipt's reason code."""
    otel.install(sales_config(boundaries=(TEXT,)))
    run(otel, "EU led with 10, ahead of US at 7.")
    with pytest.raises(ClaimsUnsupported) as raised:
        run(otel, "EU led with 12, ahead of US at 7.")
    (claim,) = raised.value.report.violations
    assert claim.code == "number_unrecorded"
    assert outcomes(otel) == [("blocked", 1), ("passed", 1)]


def test_the_same_prose_is_unreadable_for_a_json_boundary(otel: Harness) -> None:
    """Without ``answer: text`` a prose answer stays unreadable (fail closed): nothing implied."""
    spec = BoundarySpec("answer", TEXT.facts, TEXT.checks, match=TEXT.match)
    otel.install(sales_config(boundaries=(spec,)))
    with pytest.raises(ClaimsUnsupported) as raised:
        run(otel, "EU led with 10.")
    (claim,) = raised.value.report.violations
    assert claim.code == "output_unreadable"


def test_adapters_and_submit_output_hand_over_text(otel: Harness) -> None:
    """``check_output`` and ``submit_output`` take the answer text for a text boundary."""
    guard = otel.install(sales_config(boundaries=(TEXT,)))
    with otel.agent():
        otel.tool(SALES_ROWS)
        evaluation = guard.check_output("EU: 11 units.", boundary="answer")
    assert evaluation.outcome == "blocked"
    with otel.agent():
        otel.tool(SALES_ROWS)
        with otel.tracer.start_as_current_span("answer step") as span:
            submit_output("EU: 10 units.", span, boundary="answer")
    assert outcomes(otel) == [("blocked", 1), ("passed", 1)]


def test_policy_files_declare_the_answer_kind_with_located_errors(tmp_path: Path) -> None:
    """``answer: text`` loads; a typo is a located PolicyError with the allowed values."""
    body = """\
version: 1
facts:
  sales: {tool: top_sales, kind: table, key: region, path: rows}
boundaries:
  answer:
    facts: [sales]
    match: {agent_name: analyst}
    answer: %s
    checks:
      - numbers_recorded: {}
"""
    good = tmp_path / "good.yaml"
    good.write_text(body % "text")
    (spec,) = load_policy(good).boundaries
    assert spec.answer == "text"
    bad = tmp_path / "bad.yaml"
    bad.write_text(body % "txt")
    with pytest.raises(PolicyError) as raised:
        load_policy(bad)
    assert "8: boundaries.answer.answer: expected one of json, text, got 'txt'" in str(raised.value)
    assert "did you mean 'text'?" in str(raised.value)


def test_a_bad_answer_kind_in_code_is_a_value_error() -> None:
    """BoundarySpec refuses an answer kind it does not know, naming the allowed ones."""
    with pytest.raises(ValueError, match=r"answer must be one of \('json', 'text'\), got 'prose'"):
        BoundarySpec("b", ("sales",), TEXT.checks, answer="prose")  # type: ignore[arg-type]


def test_a_text_boundary_refuses_checks_that_read_fields() -> None:
    """answer: text with a field-reading check is a configuration error, not a request-time
    check_error: the message names the check and the two ways out."""
    from groundplane_otel.checks.superlative import superlative

    with pytest.raises(ValueError, match=r"reads the whole answer text \(answer: text\), but "):
        BoundarySpec(
            "b",
            ("sales",),
            (superlative(fact="sales", winner_field="winner"),),
            answer="text",
        )
