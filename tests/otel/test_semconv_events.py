"""The GenAI names the guard writes, pinned name by name and type by type against the constants
in ``semconv.py``: the guardrail event (open proposal, latest revision: ``result.type`` with
every ``result.value``, ``policy.version`` whenever the policy has one), the merged
``gen_ai.evaluation.result`` event (one per evaluated check, behind a switch), and the agent as
a metric dimension taken from configuration."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogExporter, SimpleLogRecordProcessor
from otel_harness import SALES_ROWS, Harness, answer, sales_config

from groundplane_otel.errors import ClaimsUnsupported
from groundplane_otel.otel import install
from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel.environment import apply_environment
from groundplane_otel.otel.policy import load_policy

POLICY = """\
version: 1
facts:
  sales: {tool: top_sales, kind: ranking, key: region, score: total, path: rows}
boundaries:
  answer:
    facts: [sales]
    match: {agent_name: analyst}
    checks:
      - superlative: {winner_field: winner}
"""


def run(otel: Harness, winner: str) -> None:
    with otel.agent():
        otel.tool(SALES_ROWS)
        otel.chat(answer({"winner": winner}))


def events(otel: Harness, name: str) -> list[dict[str, Any]]:
    return [
        dict(event.attributes or {})
        for span in otel.spans("chat gpt-test")
        for event in span.events
        if event.name == name
    ]


def test_guardrail_event_names_and_types(otel: Harness, tmp_path: Path) -> None:
    """Every guardrail attribute has its constant's name and a string value; result.type is
    written with result.value; policy.version is the file's version plus its content hash."""
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY)
    otel.install(load_policy(path))
    with pytest.raises(ClaimsUnsupported):
        run(otel, "US")
    (event,) = events(otel, sc.GUARDRAIL_EVENT)
    digest = hashlib.sha256(POLICY.encode()).hexdigest()[:12]
    assert event[sc.GUARDRAIL_POLICY_VERSION] == f"1+sha256:{digest}"
    assert event[sc.GUARDRAIL_RESULT_TYPE] == sc.RESULT_TYPE_VERDICT == "verdict"
    assert event[sc.GUARDRAIL_RESULT_VALUE] == sc.RESULT_UNSUPPORTED
    for key in (
        sc.GUARDRAIL_COMPONENT_NAME,
        sc.GUARDRAIL_POLICY_ID,
        sc.GUARDRAIL_POLICY_VERSION,
        sc.GUARDRAIL_POLICY_RULE_ID,
        sc.GUARDRAIL_RESULT_TYPE,
        sc.GUARDRAIL_RESULT_VALUE,
        sc.GUARDRAIL_RESULT_REASON,
        sc.GUARDRAIL_SOURCE,
    ):
        assert isinstance(event[key], str), key
    assert (sc.GUARDRAIL_EVENT, sc.GUARDRAIL_RESULT_TYPE, sc.GUARDRAIL_POLICY_VERSION) == (
        "gen_ai.guardrail.result",
        "gen_ai.guardrail.result.type",
        "gen_ai.guardrail.policy.version",
    )


def test_a_policy_edit_changes_the_version(tmp_path: Path) -> None:
    """Two texts of one policy version have two policy versions (the hash says which text)."""
    first, second = tmp_path / "a.yaml", tmp_path / "b.yaml"
    first.write_text(POLICY)
    second.write_text(POLICY + "# tightened\n")
    one, two = load_policy(first).policy_version, load_policy(second).policy_version
    assert [version[:9] for version in (one or "", two or "")] == ["1+sha256:", "1+sha256:"]
    assert one != two


def test_no_policy_version_without_a_policy(otel: Harness) -> None:
    """A configuration built in code has no policy version: the attribute is not written."""
    otel.install()
    with pytest.raises(ClaimsUnsupported):
        run(otel, "US")
    (event,) = events(otel, sc.GUARDRAIL_EVENT)
    assert sc.GUARDRAIL_POLICY_VERSION not in event


def test_one_evaluation_event_per_evaluated_check(otel: Harness) -> None:
    """Pass and block each write one gen_ai.evaluation.result per check: the family as
    evaluation.name and the verdict as score.label; no explanation without content capture."""
    otel.install()
    run(otel, "EU")
    with pytest.raises(ClaimsUnsupported):
        run(otel, "US")
    found = events(otel, sc.EVALUATION_EVENT)
    assert found == [
        {sc.EVALUATION_NAME: "superlative", sc.EVALUATION_SCORE_LABEL: "supported"},
        {sc.EVALUATION_NAME: "superlative", sc.EVALUATION_SCORE_LABEL: "unsupported"},
    ]
    assert (sc.EVALUATION_EVENT, sc.EVALUATION_NAME, sc.EVALUATION_SCORE_LABEL) == (
        "gen_ai.evaluation.result",
        "gen_ai.evaluation.name",
        "gen_ai.evaluation.score.label",
    )


def test_the_explanation_needs_content_capture(otel: Harness) -> None:
    """With content capture on, the unsupported check's event explains the claim."""
    otel.install(sales_config(capture_content=True))
    with pytest.raises(ClaimsUnsupported):
        run(otel, "US")
    (found,) = events(otel, sc.EVALUATION_EVENT)
    explanation = found[sc.EVALUATION_EXPLANATION]
    assert isinstance(explanation, str)
    assert explanation.startswith("unsupported claim in field 'winner': model said 'US'")


def test_the_switch_in_config_policy_and_environment(otel: Harness, tmp_path: Path) -> None:
    """evaluation_events=False (code), ``evaluation_events: false`` (policy) or
    GROUNDPLANE_OTEL_EVALUATION_EVENTS=false switch the evaluation events off."""
    path = tmp_path / "p.yaml"
    path.write_text("evaluation_events: false\n" + POLICY)
    assert load_policy(path).evaluation_events is False
    on = sales_config()
    assert (
        apply_environment(on, {"GROUNDPLANE_OTEL_EVALUATION_EVENTS": "false"}).evaluation_events
        is False
    )
    otel.install(sales_config(evaluation_events=False))
    run(otel, "EU")
    assert events(otel, sc.EVALUATION_EVENT) == []


def test_evaluation_events_are_also_log_events(otel: Harness) -> None:
    """With a logger provider both events are also log records, in the span's context."""
    exporter = InMemoryLogExporter()
    logs = LoggerProvider()
    logs.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    otel.add_exporter()
    guard = install(
        sales_config(),
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
        logger_provider=logs,
    )
    try:
        with pytest.raises(ClaimsUnsupported):
            run(otel, "US")
    finally:
        guard.uninstall()
    names = [record.log_record.event_name for record in exporter.get_finished_logs()]
    assert names == [sc.GUARDRAIL_EVENT, sc.EVALUATION_EVENT]
    (chat,) = [span for span in otel.spans("chat gpt-test") if span.events]
    assert {record.log_record.span_id for record in exporter.get_finished_logs()} == {
        chat.context.span_id
    }


def test_the_agent_is_a_metric_dimension_from_configuration(otel: Harness) -> None:
    """gen_ai.agent.name on claims, outputs and duration is the boundary's configured match
    (never a span value): a span naming another agent cannot add a series."""
    otel.install()
    run(otel, "EU")
    metrics = otel.metrics()
    for name in ("groundplane.claims", "groundplane.outputs", "groundplane.check.duration"):
        assert {labels.get(sc.GEN_AI_AGENT_NAME) for labels, _ in metrics[name]} == {"analyst"}, (
            name
        )
