"""Reading the guard's own telemetry back: counters from a metric reader, findings from its
``gen_ai.guardrail.result`` events (the pytest plugin's fixture, which observes the guard as an
application's telemetry backend would).

A finding is read from one place: the fixture reads it from the events the guard wrote, and
replay (which takes its results from the engine, not from telemetry) from the attributes the
same event would carry (``telemetry.event_attributes``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from groundplane_otel._frozen import draft_class, finish
from groundplane_otel.otel import semconv as sc

__all__ = ["SeenFinding", "Shown", "counter_totals", "seen_finding"]


@dataclass(frozen=True, slots=True)
class SeenFinding:
    """One ``gen_ai.guardrail.result`` the guard emitted: where (boundary, trace/span ids, the
    span's name once known), what (result, reason code, check, field, fact), and — with content
    capture on only — the claimed/supported values and message; ``outcome`` is the outcome of
    the output it was found on, when the reader knows it (replay does)."""

    boundary: str
    result: str  # "unsupported" | "error"
    reason: str
    trace_id: str
    span_id: str
    span_name: str | None = None
    check: str | None = None
    field: str | None = None
    fact: str | None = None
    claimed: str | None = None
    supported: str | None = None
    message: str | None = None
    outcome: str | None = None


# What a finding shows (``telemetry.shown``), in SeenFinding's optional fields' order: check,
# field, fact, claimed, supported, message.
Shown = tuple[str | None, str | None, str | None, str | None, str | None, str | None]

_SeenFindingDraft = draft_class(SeenFinding)


def seen_finding(
    boundary: str,
    result: str,
    reason: str,
    shown: Shown,
    trace_id: int,
    span_id: int,
    span_name: str | None = None,
    outcome: str | None = None,
) -> SeenFinding:
    """The finding ``shown`` describes, on the span ``span_id``."""
    draft = _SeenFindingDraft()  # SeenFinding(...), built cheaply (``_frozen``)
    draft.boundary, draft.result, draft.reason = boundary, result, reason
    draft.trace_id = f"{trace_id:032x}"
    draft.span_id = f"{span_id:016x}"
    draft.span_name = span_name
    draft.check, draft.field, draft.fact, draft.claimed, draft.supported, draft.message = shown
    draft.outcome = outcome
    return finish(draft, SeenFinding)


def counter_totals(reader: Any, metric: str, *labels: str) -> dict[tuple[str, ...], int]:
    """The cumulative totals of the guard's counter ``metric`` (``sc.METRIC_OUTPUTS`` ...)
    collected from ``reader`` (an SDK ``MetricReader`` with ``get_metrics_data``), keyed by the
    values of ``labels`` ("" where a point has no such label); zero totals are left out."""
    totals: dict[tuple[str, ...], int] = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data is not None else ():
        for scope in resource.scope_metrics:
            if scope.scope.name != sc.METER_NAME:
                continue
            for found in scope.metrics:
                if found.name != metric:
                    continue
                for point in found.data.data_points:
                    attributes = point.attributes or {}
                    key = tuple(str(attributes.get(label, "")) for label in labels)
                    value = int(getattr(point, "value", 0))
                    if value:
                        totals[key] = totals.get(key, 0) + value
    return totals
