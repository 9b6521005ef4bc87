"""Recorded spans assembled into traces: the one bounded buffer replay, the verifier and suggest
read through.

Spans arrive in any order, spread over any number of requests. A span whose ids cannot be used
(``records.bad_ids``) is counted, told to ``unreadable`` with its location and left out; when
its trace id is usable (``records.lost_from``) its trace lost a span: it is timed by it and
decided incomplete. Every other span joins its trace in a buffer kept in the order of each
trace's last arrival. A trace is handed to its reader's ``decide`` once ``decision_wait`` more
has passed on the clock (by default: spans read) since its last span arrived, early when the
buffer holds more than ``max_traces`` (the longest idle goes), when asked (``decide(trace_id)``)
or at ``finish``. A trace keeps at most ``max_spans_per_trace`` spans: the rest are counted dropped.

``owns`` makes the buffer one share of a parallel replay: every trace is timed, but only those
``owns(trace_id)`` keep their spans and are counted; a span of no trace (unusable ids) is counted
and told where ``owns(b"")``. A share's requests may carry another share's span as its trace id
alone (``bytes``): all it takes to time that trace.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from groundplane_otel._echo import capped
from groundplane_otel.otel.replay.records import RecordedSpan, ids_problem, lost_from, proto_spans
from groundplane_otel.otel.replay.unreadable import BadInput, BadSink

__all__ = ["Assembler", "Decide", "Intake", "PendingTrace"]


class Intake(Protocol):
    """The counts an assembler keeps in its reader's tally (``ReplayStats``, suggest's
    ``ReadCounts``)."""

    requests: int
    spans: int  # bad spans included
    bad_spans: int
    dropped_spans: int


class PendingTrace:
    """One buffered trace: its spans as they arrived, when the last one did (on the clock),
    whether it lost spans, and whether this share keeps it."""

    __slots__ = ("dropped", "last_seen", "owned", "spans")

    def __init__(self, owned: bool = True) -> None:
        self.spans: list[RecordedSpan] = []
        self.last_seen = 0.0
        self.dropped = False
        self.owned = owned  # False: another share's trace, timed here but not kept

    def distinct(self) -> tuple[dict[bytes, RecordedSpan], int, list[bytes]]:
        """Its spans by id, the first of each in arrival order; how many were byte-identical
        copies of one already read (an exporter's retry); and the id of every copy that
        differs (then which one is true cannot be known)."""
        first: dict[bytes, RecordedSpan] = {}
        copies = 0
        conflicts: list[bytes] = []
        for span in self.spans:
            span_id = span.span_id
            seen = first.get(span_id)
            if seen is None:
                first[span_id] = span
            elif seen == span:
                copies += 1
            else:
                conflicts.append(span_id)
        return first, copies, conflicts


Decide = Callable[[bytes, PendingTrace, bool], None]  # trace id, its spans, decided early


class Assembler:
    """Feed it requests (``feed``), then ``finish``: each trace goes to ``decide`` once, with
    ``early`` True when the full buffer pushed it out (see the module docstring). ``counts``
    is the reader's tally; ``clock`` (default: spans read) is what ``decision_wait`` counts
    in."""

    def __init__(
        self,
        decide: Decide,
        counts: Intake,
        unreadable: BadSink,
        *,
        decision_wait: float = 10_000,
        max_traces: int = 10_000,
        max_spans_per_trace: int = 10_000,
        clock: Callable[[], float] | None = None,
        owns: Callable[[bytes], bool] | None = None,
    ) -> None:
        self._decide = decide
        self.counts = counts
        self.unreadable = unreadable
        self.decision_wait = decision_wait
        self.max_traces = max_traces
        self.max_spans_per_trace = max_spans_per_trace
        self.owns = owns
        self.resources: dict[bytes, Any] = {}  # protobuf requests' resources, shared
        self._buffer: OrderedDict[bytes, PendingTrace] = OrderedDict()
        self._read = 0
        self._clock = clock  # None: spans read (``_now``)

    def _now(self) -> float:
        """The clock ``decision_wait`` counts in: ``clock()``, or the spans read so far."""
        return self._read if self._clock is None else self._clock()

    @property
    def spans_read(self) -> int:
        """Spans with usable ids read so far, of every share's traces (the default clock)."""
        return self._read

    @property
    def buffered(self) -> int:
        """Traces waiting for their decision."""
        return len(self._buffer)

    def feed(
        self,
        request: ExportTraceServiceRequest | Sequence[RecordedSpan | bytes],
        location: str = "request",
    ) -> None:
        """One request's spans — an ``ExportTraceServiceRequest`` or the ``RecordedSpan``s a
        reader made of it (another share's span: its trace id) — found at ``location`` (a line
        or message of a recorded file); then the traces idle for ``decision_wait`` are
        decided."""
        if request.__class__ is not list and isinstance(request, ExportTraceServiceRequest):
            request = proto_spans(request, self.resources)
        counts = self.counts
        counts.requests += 1
        arrived = self._arrived
        for span in request:
            if isinstance(span, bytes):  # another share's span (its ids were usable): timed
                arrived(span, False)
                continue
            problem = ids_problem(span.trace_id, span.span_id, span.parent_span_id)  # bad_ids
            if problem is not None:
                self._bad(span, problem, location)
                continue
            state = arrived(span.trace_id)  # the span joins its trace, when this share keeps it
            if not state.owned:
                continue
            counts.spans += 1
            if len(state.spans) >= self.max_spans_per_trace:
                counts.dropped_spans += 1
                state.dropped = True
                continue
            state.spans.append(span)
        buffer = self._buffer
        if buffer:
            now = self._read if self._clock is None else self._clock()  # ``_now``, inline
            if now - next(iter(buffer.values())).last_seen >= self.decision_wait:
                self.decide_ready()

    def _bad(self, span: RecordedSpan, problem: str, location: str) -> None:
        """A span that cannot be used: counted and told (by one share of a parallel replay);
        its trace, when its id is usable, lost it (timed by it, decided incomplete)."""
        if lost_from(span.trace_id):
            state = self._arrived(span.trace_id)
            if state.owned:
                state.dropped = True
        if self.owns is not None and not self.owns(b""):
            return  # another share tells it
        self.counts.spans += 1
        self.counts.bad_spans += 1
        where = f"{location} span {span.index} {capped(span.name, 40)!r}"
        self.unreadable.append(BadInput(where, problem))

    def _arrived(self, trace_id: bytes, owned: bool | None = None) -> PendingTrace:
        """A span of trace ``trace_id`` arrived: its buffered trace, timed now. ``owned``:
        whether this share keeps the trace, when known (else ``owns`` tells)."""
        self._read += 1
        buffer = self._buffer
        state = buffer.get(trace_id)
        if state is None:
            if owned is None:
                owned = self.owns is None or self.owns(trace_id)
            state = buffer[trace_id] = PendingTrace(owned)
            while len(buffer) > self.max_traces:  # full: the longest idle goes, early
                oldest = next(iter(buffer))
                self._decide(oldest, buffer.pop(oldest), True)
        else:
            buffer.move_to_end(trace_id)  # the buffer stays ordered by last arrival
        state.last_seen = self._read if self._clock is None else self._clock()
        return state

    def decide_ready(self) -> int:
        """Decide the traces idle for ``decision_wait``; how many were decided."""
        buffer, now, decided = self._buffer, self._now(), 0
        while buffer:
            trace_id, state = next(iter(buffer.items()))
            if now - state.last_seen < self.decision_wait:
                return decided
            decided += 1
            del buffer[trace_id]
            self._decide(trace_id, state, False)
        return decided

    def decide(self, trace_id: bytes) -> bool:
        """Decide the buffered trace ``trace_id`` now; False when it is not buffered (already
        decided, or never seen)."""
        state = self._buffer.pop(trace_id, None)
        if state is None:
            return False
        self._decide(trace_id, state, False)
        return True

    def finish(self) -> None:
        """End of input: every buffered trace is decided, the longest idle first."""
        buffer = self._buffer
        while buffer:
            trace_id, state = buffer.popitem(last=False)
            self._decide(trace_id, state, False)
