"""What the framework-matrix tests share: one policy (a ranking fact from ``warehouse_query``, one
boundary declared with just ``agent_name``), canary campaign names, the right and wrong answers,
and readers of what the process exported or logged (spans, events, metrics, log records, Python
logs) to prove that nothing carries content with content capture off."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import Any

from integration_harness import Otel, events
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import format_span_id

from groundplane_otel.checks.superlative import superlative
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec

__all__ = [
    "AGENT",
    "BOUNDARY",
    "CANARIES",
    "CTR",
    "RIGHT",
    "WRONG",
    "assert_no_content",
    "config",
    "content_texts",
    "guardrail_event",
    "outputs",
    "warehouse_query",
]

# Canary campaign names (joined so no source line spells them: a traceback quoting a call site
# must not plant one). They are fact content (the tool result) and claims (the answers).
RIGHT_NAME = "-".join(("harbour", "c4n4ry", "71ab"))
WRONG_NAME = "-".join(("north", "c4n4ry", "2c9d"))
OTHER_NAME = "-".join(("delta", "c4n4ry", "0e5f"))
CANARIES = (RIGHT_NAME, WRONG_NAME, OTHER_NAME)
CTR = {WRONG_NAME: 0.0412, RIGHT_NAME: 0.0455, OTHER_NAME: 0.0301}
RIGHT = {"winner": RIGHT_NAME, "ctr": 0.0455}
WRONG = {"winner": WRONG_NAME, "ctr": 0.0412}
AGENT = "campaign-analyst"
BOUNDARY = "campaign_answer"
RULE = "superlative(fact='campaign_ctr', field='winner')"


def config(*, mode: str = "enforce", capture_content: bool = False) -> GuardConfig:
    """warehouse_query results are the ranking campaign_ctr; the campaign-analyst agent's
    answers must name its argmax and quote its score. Matched by agent name only."""
    spec = BoundarySpec(
        BOUNDARY,
        ("campaign_ctr",),
        (superlative(fact="campaign_ctr", score_field="ctr"),),
        match=MatchSpec(agent_name=AGENT),
        report_mode="first",
    )
    fact = FactSpec("campaign_ctr", "warehouse_query", kind="ranking")
    return GuardConfig(
        facts=(fact,),
        boundaries=(spec,),
        mode=mode,  # type: ignore[arg-type]
        capture_content=capture_content,
    )


def warehouse_query(window: str) -> dict[str, float]:
    """The application's tool: CTR per campaign (ground truth)."""
    assert window == "7d"
    return dict(CTR)


def guardrail_event(fact_span_id: int, trace_id: int) -> dict[str, Any]:
    """The content-free guardrail event a wrong winner produces."""
    return {
        "name": "gen_ai.guardrail.result",
        "gen_ai.guardrail.component.name": "groundplane",
        "gen_ai.guardrail.policy.id": BOUNDARY,
        "gen_ai.guardrail.result.type": "verdict",
        "gen_ai.guardrail.result.value": "unsupported",
        "gen_ai.guardrail.result.reason": "wrong_winner",
        "gen_ai.guardrail.source": "model_response",
        "gen_ai.guardrail.policy.rule.id": RULE,
        "groundplane.check": "superlative",
        "groundplane.field": "winner",
        "groundplane.fact": "campaign_ctr",
        "groundplane.fact.tool": "warehouse_query",
        "groundplane.fact.trace_id": f"{trace_id:032x}",
        "groundplane.fact.span_id": format_span_id(fact_span_id),
    }


def guardrail_events(span: ReadableSpan) -> list[dict[str, Any]]:
    return [event for event in events(span) if event["name"] == "gen_ai.guardrail.result"]


def outputs(otel: Otel) -> list[tuple[str, int]]:
    """groundplane.outputs as [(outcome, count)] for the boundary (mode checked: enforce)."""
    found = []
    for attributes, value in otel.metrics().get("groundplane.outputs", []):
        assert attributes["groundplane.boundary"] == BOUNDARY
        found.append((attributes["groundplane.outcome"], value))
    return sorted(found)


def facts_recorded(otel: Otel) -> list[tuple[str, str, int]]:
    """groundplane.facts as [(source, outcome, count)]."""
    return sorted(
        (a["groundplane.fact.source"], a["groundplane.fact.outcome"], value)
        for a, value in otel.metrics().get("groundplane.facts", [])
    )


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif value is not None:
        yield str(value)


def content_texts(otel: Otel, records: list[logging.LogRecord]) -> Iterator[tuple[str, str]]:
    """(where, text) for everything exported or logged: span names, attributes, events, links
    and status; metric attributes; OpenTelemetry log records; Python log records."""
    for span in otel.spans():
        where = f"span {span.name!r}"
        yield where, span.name
        for key, value in (span.attributes or {}).items():
            for text in _strings(value):
                yield f"{where} attribute {key}", text
        for event in span.events:
            for key, value in (event.attributes or {}).items():
                for text in _strings(value):
                    yield f"{where} event {event.name} {key}", text
        for link in span.links:
            for text in _strings(dict(link.attributes or {})):
                yield f"{where} link", text
        yield f"{where} status", span.status.description or ""
    for name, points in otel.metrics().items():
        for attributes, _ in points:
            for text in _strings(attributes):
                yield f"metric {name}", text
    for data in otel.logs.get_finished_logs():
        record = data.log_record
        for text in _strings(record.body):
            yield "log record body", text
        for text in _strings(dict(record.attributes or {})):
            yield "log record attributes", text
    for record in records:
        yield f"python log {record.name}", record.getMessage()
        if record.exc_info:
            yield (
                f"python log {record.name} exception",
                logging.Formatter().formatException(record.exc_info),
            )


def assert_no_content(otel: Otel, records: list[logging.LogRecord]) -> int:
    """No canary anywhere; returns how many texts were searched (so a test can tell the
    search saw the telemetry at all)."""
    searched = 0
    for where, text in content_texts(otel, records):
        searched += 1
        for canary in CANARIES:
            assert canary not in text, f"content leaked: {canary!r} in {where}: {text[:300]}"
    return searched


def contains_content(otel: Otel, records: list[logging.LogRecord]) -> bool:
    """Does any canary appear (the positive control: with content on, they do)?"""
    return any(canary in text for _, text in content_texts(otel, records) for canary in CANARIES)
