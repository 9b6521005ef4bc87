"""The replay driver: one decided trace's records fed straight into the engine.

A trace's ``SpanRecord``s (the engine's handles) start and end in time order (``timeline``:
nesting respected even across services with skewed clocks), and each start and end is told to
the ``Engine`` in plain fields (``span_started``: a local root begins a request, a span
inherits its parent record's lineage, one the engine may guard is watched). At a watched
span's end the engine decides (``decide``) while the span still records; then the span's end
(``span_ended``: the facts its tool result feeds, a root's request released), its lineage let
go (``released``), and the evaluations recorded into the driver's ``Results`` (replay's ``Tally``).
A refusal (enforce mode) is counted from its ``Evaluation``, never raised: replay has no
application to refuse. The engine's own bugs are counted (``Engine.internal_error``), never
raised, as the live guard counts them.
"""

from __future__ import annotations

import operator
from collections.abc import Collection

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine import COUNTED, Engine, Results
from groundplane_otel.otel.replay.records import SpanRecord
from groundplane_otel.otel.result import Evaluation

__all__ = ["Driver", "Event", "timeline"]

_NO_EVALUATIONS: list[Evaluation] = []  # never appended to


class Driver:
    """Feeds decided traces (``trace``) into ``engine``, its results into ``results``."""

    def __init__(self, engine: Engine, results: Results) -> None:
        self.engine = engine
        self.results = results
        self.annotates = getattr(results, "annotates", True)  # replay's tally does not

    def trace(self, records: Collection[SpanRecord]) -> None:
        """One trace's records, every start and end in time order (``timeline``). A start is
        told to the engine (``span_started``: the engine decides the end of a span it
        watches); at an end, a watched span is decided while it still records, then its end
        told (``span_ended``), its lineage let go and its evaluations recorded. Both steps
        inline in the loop: the replay's hottest, a call less each start and end."""
        engine, results, annotates = self.engine, self.results, self.annotates
        for _, ending, _, _, record in timeline(records):
            if not ending:
                try:
                    record.watched = engine.span_started(
                        record,
                        record.trace_id,
                        record.span_id,
                        record.parent_id,
                        record.root,
                        record.name,
                        record.attributes,
                        record.parent_record,
                    )
                except Exception:
                    engine.internal_error("span start", reraise=False)
                continue
            evaluations = _NO_EVALUATIONS
            watched = record.watched
            if watched:  # decided while it still records
                try:
                    named = sc.BOUNDARY in record.attributes  # before a writer adds it
                    evaluations = engine.decide(record)
                    if annotates:
                        for evaluation in evaluations:
                            results.annotate(record, evaluation, matched=not named)
                except Exception as exc:
                    if not getattr(exc, COUNTED, False):  # a step below counted it already
                        engine.internal_error("span end", reraise=False)
            record.ended = True
            try:
                engine.span_ended(
                    record.trace_id, record.span_id, record.root, record.name, record.attributes
                )
            except Exception:
                engine.internal_error("span end", reraise=False)
            if watched:
                engine.released(record)
                for evaluation in evaluations:
                    try:
                        results.record(record, evaluation)
                    except Exception:
                        engine.internal_error("results", reraise=False)


def _nested(
    records: Collection[SpanRecord],
) -> tuple[dict[SpanRecord, int], dict[SpanRecord, int], list[SpanRecord]]:
    """Each span's start widened to its parent's, its depth, and the spans ordered each child
    before its parent (to widen ends upward). The common case, every parent starting no later
    than its children, takes one sort and one pass; any other (skewed clocks, a cycle of parent
    ids) is resolved by ``_nesting``."""
    order = sorted(records, key=_START)
    starts: dict[SpanRecord, int] = {}
    depth: dict[SpanRecord, int] = {}
    for record in order:
        parent = record.parent_record
        if parent is None:
            starts[record], depth[record] = record.start_time, 0
        elif parent in depth:
            starts[record] = max(record.start_time, starts[parent])
            depth[record] = depth[parent] + 1
        else:  # a parent starting after its child, or none resolved (a cycle)
            starts, depth = _nesting(records)
            return starts, depth, sorted(records, key=depth.__getitem__, reverse=True)
    order.reverse()
    return starts, depth, order


def _nesting(
    records: Collection[SpanRecord],
) -> tuple[dict[SpanRecord, int], dict[SpanRecord, int]]:
    """Each span's start widened to its parent's, and its depth, iteratively (any depth, any
    order); a cycle of parent ids is cut where it closes (that span is treated as a root)."""
    starts: dict[SpanRecord, int] = {}
    depth: dict[SpanRecord, int] = {}
    for first in records:
        if first in starts:
            continue
        chain: list[SpanRecord] = []  # from ``first`` up to the nearest span already resolved
        on_chain: set[SpanRecord] = set()
        record: SpanRecord | None = first
        while record is not None and record not in starts and record not in on_chain:
            chain.append(record)
            on_chain.add(record)
            record = record.parent_record
        above = record if record is not None and record in starts else None
        for current in reversed(chain):  # top-down: each parent resolved before its child
            value, level = current.start_time, 0
            if above is not None:
                value, level = max(value, starts[above]), depth[above] + 1
            starts[current], depth[current] = value, level
            above = current
    return starts, depth


# One start or end of a span on the timeline: its time, 0 for a start and 1 for an end (starts
# first), its depth (ends deepest first), its place in the trace (the order of ties), the span.
Event = tuple[int, int, int, int, SpanRecord]


def timeline(records: Collection[SpanRecord]) -> list[Event]:
    """Starts and ends in time order, with each span's interval widened to nest in its
    parent's (clocks of two services disagree; nesting is what the guard relies on); ties in
    the order of ``records``."""
    recorded = _as_recorded(records)
    if recorded is not None:
        return recorded
    starts, depth, upward = _nested(records)
    ends: dict[SpanRecord, int] = {}
    for record in upward:  # each child before its parent: children widen parents
        end = max(record.end_time, starts[record])
        widened = ends.get(record)  # by its children, already
        if widened is not None and widened > end:
            end = widened
        ends[record] = end
        parent = record.parent_record
        if parent is not None and depth[record] > 0:
            above = ends.get(parent)
            if above is None or above < end:
                ends[parent] = end
    events: list[Event] = []
    add = events.append
    for place, record in enumerate(records):
        level = depth[record]
        add((starts[record], 0, level, place, record))
        add((ends[record], 1, -level, place, record))
    events.sort()  # never compares two records: every event's place is its own
    return events


def _as_recorded(records: Collection[SpanRecord]) -> list[Event] | None:
    """``timeline`` of the common trace, whose spans already nest as recorded (each within its
    parent's interval, none ending before it starts, no cycle of parent ids): no interval is
    widened, so each span's own times and its depth (its ancestors, walked up) make its
    events. None (then ``timeline`` widens) for any other trace, or when walking up would take
    more than a few steps a span (a deep trace: the general path is linear)."""
    events: list[Event] = []
    add = events.append
    budget = 4 * len(records)  # steps walking up, in all: past it, the general path
    for place, record in enumerate(records):
        start, end = record.start_time, record.end_time
        if end < start:
            return None
        level = 0
        parent = record.parent_record
        if parent is not None:
            if start < parent.start_time or end > parent.end_time:
                return None
            while parent is not None:  # a cycle of parent ids runs past the budget
                level += 1
                if level > budget:
                    return None
                parent = parent.parent_record
            budget -= level
        add((start, 0, level, place, record))
        add((end, 1, -level, place, record))
    events.sort()  # never compares two records: every event's place is its own
    return events


_START = operator.attrgetter("start_time")
