"""What a replay counts: its intake, and the engine's results tallied straight into the
report's numbers.

``Tally`` is the ``Results`` of the replay driver (``replay.driving``): every evaluation the
engine returns at a recorded span's end is counted by (boundary, outcome) and by (boundary,
verdict), each finding kept (bounded) as the live ``gen_ai.guardrail.result`` event would
describe it, and every fact outcome counted as ``groundplane.facts`` would count it. No metric
is measured and read back. With an ``export`` (the verifier's ``Telemetry``) each result is
also written as the live guard writes it: OTLP metrics and log records.

``ReplayStats.merge`` joins the shares of a parallel replay: every count summed, the kept
findings merged in input order (``in_order``, by the position each share noted for them).
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from itertools import islice
from typing import Any, TypeVar

from groundplane_otel.otel._telemetry.metric_counts import SeenFinding
from groundplane_otel.otel._telemetry.telemetry import Telemetry, finding_seen
from groundplane_otel.otel.result import Evaluation

__all__ = ["Position", "ReplayStats", "Tally", "in_order"]

Position = tuple[int, ...]  # where in the input an item was noted; positions compare in order
_T = TypeVar("_T")


def in_order(parts: Iterable[Sequence[tuple[Position, _T]]], keep: int) -> list[_T]:
    """The first ``keep`` items of ``parts`` (each already in position order) in position
    order; at equal positions an earlier part's item first."""
    merged = heapq.merge(*parts, key=lambda pair: pair[0])
    return [item for _, item in islice(merged, keep)]


@dataclass(slots=True)
class ReplayStats:
    """What the input held and what was done with it (every drop is counted), and the engine's
    results tallied: the numbers of ``groundplane.outputs`` (boundary, outcome),
    ``groundplane.claims`` (boundary, verdict) and ``groundplane.facts`` (kind, source,
    outcome) over everything replayed, and the findings kept for the report."""

    requests: int = 0
    spans: int = 0
    traces: int = 0
    incomplete_traces: int = 0  # decided early (buffer full), or that lost spans
    orphan_spans: int = 0  # spans whose parent is not in the input (a remote parent, or lost)
    dropped_spans: int = 0  # over max_spans_per_trace
    bad_spans: int = 0  # invalid trace/span/parent id: unreadable, left out (in ``spans``)
    duplicate_spans: int = 0  # byte-identical copies of a span in its trace, replayed once
    conflicting_traces: int = 0  # two different spans with one id: not decided (incomplete)
    outputs: dict[tuple[str, str], int] = field(default_factory=dict)
    claims: dict[tuple[str, str], int] = field(default_factory=dict)
    facts: dict[tuple[str, str, str], int] = field(default_factory=dict)
    findings: list[SeenFinding] = field(default_factory=list)
    findings_dropped: int = 0  # over max_findings (counted in outputs and claims all the same)
    errors: dict[str, int] = field(default_factory=dict)  # error outputs by their first reason
    # What the input named (``coverage.Seen``): tool calls by tool name, and of the policy's
    # tools those carrying their result; agent names and model calls' span names, by spans.
    tools: dict[str, int] = field(default_factory=dict)
    tool_results: dict[str, int] = field(default_factory=dict)
    agents: dict[str, int] = field(default_factory=dict)
    model_spans: dict[str, int] = field(default_factory=dict)
    names_left_out: int = 0  # distinct names over ``coverage.MAX_NAMES``, not kept

    @classmethod
    def merge(
        cls, shares: Sequence[tuple[ReplayStats, Sequence[Position]]], *, max_findings: int
    ) -> ReplayStats:
        """The shares of one replay (each with the positions of its kept findings) as one:
        every count and tally summed; of the findings, the first ``max_findings`` in position
        order kept and the rest counted, as one replay of everything would have kept them."""
        total = cls()
        for stats, _ in shares:
            for item in fields(cls):
                mine, theirs = getattr(total, item.name), getattr(stats, item.name)
                if isinstance(theirs, int):
                    setattr(total, item.name, mine + theirs)
                elif isinstance(theirs, dict):
                    for key, value in theirs.items():
                        mine[key] = mine.get(key, 0) + value
        found = sum(len(stats.findings) + stats.findings_dropped for stats, _ in shares)
        parts = [list(zip(positions, stats.findings, strict=True)) for stats, positions in shares]
        total.findings = in_order(parts, max_findings)
        total.findings_dropped = found - len(total.findings)
        return total


class Tally:
    """The ``Results`` of a replay (see the module docstring): into ``stats``; at most
    ``max_findings`` findings kept, in the order of their trace's spans (``settle``)."""

    def __init__(
        self,
        stats: ReplayStats,
        *,
        capture_content: bool,
        max_findings: int,
        export: Telemetry | None = None,
    ) -> None:
        self.stats = stats
        self.capture_content = capture_content
        self.max_findings = max_findings
        self.export = export
        self.pending: list[tuple[Any, SeenFinding]] = []  # this trace's findings, until settled

    def count_fact(self, kind: str, source: str, outcome: str) -> None:
        key = (kind, source, outcome)
        facts = self.stats.facts
        facts[key] = facts.get(key, 0) + 1
        if self.export is not None:
            self.export.count_fact(kind, source, outcome)

    annotates = False  # ``annotate`` does nothing: the driver need not call it

    def annotate(self, span: Any, evaluation: Evaluation, *, matched: bool = False) -> None:
        """A replayed span is not annotated: nothing reads it afterwards."""

    def record(self, span: Any, evaluation: Evaluation) -> None:
        stats, boundary = self.stats, evaluation.boundary
        outputs, key = stats.outputs, (boundary, evaluation.outcome)
        outputs[key] = outputs.get(key, 0) + 1
        if evaluation.outcome == "error":
            reason = next(
                (item.reason for item in evaluation.findings if item.result == "error"),
                evaluation.skip_reason or "unknown",
            )
            stats.errors[reason] = stats.errors.get(reason, 0) + 1
        claims = stats.claims
        for _, verdict in evaluation.verdicts:
            label = (boundary, verdict)
            claims[label] = claims.get(label, 0) + 1
        if evaluation.findings:
            self._found(span, evaluation)
        if self.export is not None:
            self.export.record(span, evaluation)

    def _found(self, span: Any, evaluation: Evaluation) -> None:
        if self.max_findings <= 0:  # none kept (the verifier): counted only
            self.stats.findings_dropped += len(evaluation.findings)
            return
        for finding in evaluation.findings:  # ``span``: a ``SpanRecord``, its ids as ints
            seen = finding_seen(
                evaluation,
                finding,
                capture_content=self.capture_content,
                trace_id=span.trace_id,
                span_id=span.span_id,
                span_name=span.name,
                outcome=evaluation.outcome,
            )
            self.pending.append((span, seen))

    def settle(self, spans: Iterable[Any]) -> None:
        """One trace was decided: its findings join the kept ones in the order of ``spans``
        (as read), within ``max_findings``."""
        if not self.pending:
            return
        pending, self.pending = self.pending, []
        first = pending[0][0]
        if any(span is not first for span, _ in pending):  # else already in order (one span)
            order = {id(span): index for index, span in enumerate(spans)}
            pending.sort(key=lambda item: order.get(id(item[0]), len(order)))
        kept = self.stats.findings
        for _, seen in pending:
            if len(kept) >= self.max_findings:
                self.stats.findings_dropped += 1
            else:
                kept.append(seen)

    def watch_traces(self, store: Any) -> None:
        if self.export is not None:
            self.export.watch_traces(store)

    def close(self, store: Any) -> None:
        if self.export is not None:
            self.export.close(store)
