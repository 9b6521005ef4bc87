"""Replay recorded traces through the guard: backtests and a CI gate over real traces.

Spans arrive in any order, spread over any number of requests (lines, files). They are grouped
by trace in a bounded buffer (``replay.assemble``); a trace is *decided* once ``decision_wait``
more spans have been read since its last span arrived — as tail sampling waits — or at the end
of the input, or early when the buffer is full (then it is reported incomplete, as is a trace
that lost spans over ``max_spans_per_trace``). Deciding feeds the trace's spans straight into
the ``Engine`` the live guard drives (``replay.driving``): starts and ends in time order,
nesting respected even across services with skewed clocks, so facts, matching, checks and
counting are exactly the live ones. What the engine decides comes back to replay as results
(``stats.Tally``): outcomes, claims, findings and fact counts are tallied from them directly,
with no metric measured and read back.
The policy's modes apply: ``blocked`` reads "would have blocked".

Hostile input never crashes a replay, and is never decided silently:

- a span whose trace id is not 16 bytes, or whose span id is not 8 bytes (or is zero), or whose
  parent id is neither empty nor 8 bytes, is *unreadable*: counted (``stats.bad_spans``), told
  to ``unreadable`` with its location, and left out; every other span and trace is decided;
- two spans with the same id in one trace: byte-identical copies (an exporter's retry) are one
  span, counted in ``stats.duplicate_spans``; copies that differ make the trace ambiguous — it is
  not decided at all (no output counted from it), counted in ``stats.conflicting_traces`` and
  told to ``unreadable`` (so a gate fails on it);
- nesting is resolved without recursion, whatever the depth or the order of spans.

A driver with its own rule for deciding (the verifier) passes ``around_decision``: each trace's
decision reaches it as a ``TraceToDecide``, which it runs (``run()``) inside its own accounting, and
``decide(trace_id)`` decides one buffered trace now.

A parallel replay (``replay.parallel``) gives each worker process a share of the traces
(``owns``): every worker reads all the input and times every trace, so each decision happens
exactly when a replay of everything would make it, but keeps and decides only its own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from opentelemetry.metrics import MeterProvider, NoOpMeterProvider
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from groundplane_otel.otel._engine import Engine
from groundplane_otel.otel._telemetry.telemetry import Telemetry
from groundplane_otel.otel.config import GuardConfig
from groundplane_otel.otel.replay.assemble import Assembler, PendingTrace
from groundplane_otel.otel.replay.coverage import Seen
from groundplane_otel.otel.replay.driving import Driver
from groundplane_otel.otel.replay.records import RecordedSpan, trace_records
from groundplane_otel.otel.replay.stats import ReplayStats, Tally
from groundplane_otel.otel.replay.unreadable import BadInput, BadSink, Unreadable

__all__ = ["TraceToDecide", "ReplayStats", "Replayer"]


class TraceToDecide:
    """One buffered trace about to be decided: ``run()`` decides it (once: a second call is a
    RuntimeError, never a second count); it is ``incomplete`` when decided early (the buffer
    was full) or it lost spans; ``spans``: how many it holds. A plain class: one is made a
    trace (the verifier's every decision)."""

    __slots__ = ("_decide", "_early", "_ran", "_state", "incomplete", "spans", "trace_id")

    def __init__(
        self, trace_id: bytes, state: PendingTrace, early: bool, decide: Callable[..., None]
    ) -> None:
        """``decide(trace_id, state, early=early)`` decides it."""
        self.trace_id = trace_id
        self.spans = len(state.spans)
        self.incomplete = early or state.dropped
        self._state, self._early, self._decide = state, early, decide
        self._ran = False

    def run(self) -> None:
        """Decide the trace (once)."""
        if self._ran:  # deciding twice would count every output twice
            raise RuntimeError(f"trace {self.trace_id.hex()} was already decided")
        self._ran = True
        self._decide(self.trace_id, self._state, early=self._early)


class Replayer:
    """Feed it trace requests (``feed``), then ``finish``; read ``stats`` and ``counts()``.

    ``decision_wait`` is in units of ``clock``: by default the clock counts spans read (files);
    the verifier passes ``time.monotonic`` (seconds). The engine's results are tallied into
    ``stats``; with a ``meter_provider`` and/or ``logger_provider`` (the verifier) they are also
    exported as the live guard's metrics and log records, ``mode_label`` replacing
    ``groundplane.mode`` in metrics (the verifier's ``verifier``). At most ``max_findings``
    findings are kept for the report (the rest are counted). Spans that cannot be replayed are
    told to ``unreadable`` (by default an ``Unreadable`` of its own) with ``feed``'s location.
    ``rematch`` ignores every recorded ``groundplane.boundary`` (``records.replayable_attributes``);
    ``around_decision`` gets each trace's ``TraceToDecide`` to run (by default it is run as is).
    ``note_names``: the names of the spans decided are noted into ``stats`` (``coverage.Seen``:
    what the replay's report names when the policy expected what the input never showed).

    ``owns`` makes this replayer one share of a parallel replay: a trace is kept and decided
    only when ``owns(trace_id)``; every other trace is still timed, and its decision counted in
    ``decisions`` (so decisions happen exactly as in a replay of everything), but not kept or
    counted in ``stats``. A span that cannot be replayed belongs to no trace: it is counted and
    told where ``owns(b"")``. ``decisions`` counts every trace decided, shared or not.
    """

    def __init__(
        self,
        config: GuardConfig,
        *,
        decision_wait: float = 10_000,
        max_traces: int = 10_000,
        max_spans_per_trace: int = 10_000,
        max_findings: int = 10_000,
        clock: Callable[[], float] | None = None,
        meter_provider: MeterProvider | None = None,
        logger_provider: Any = None,
        mode_label: str | None = None,
        unreadable: BadSink | None = None,
        rematch: bool = False,
        around_decision: Callable[[TraceToDecide], None] | None = None,
        owns: Callable[[bytes], bool] | None = None,
        note_names: bool = False,
    ) -> None:
        self.stats = ReplayStats()
        self.owns = owns
        self.decisions = 0
        self.unreadable: BadSink = unreadable if unreadable is not None else Unreadable()
        export = None
        if meter_provider is not None or logger_provider is not None:
            export = Telemetry(
                meter_provider or NoOpMeterProvider(),
                config,
                logger_provider=logger_provider,
                mode_label=mode_label,
            )
        self.tally = Tally(
            self.stats,
            capture_content=config.capture_content,
            max_findings=max_findings,
            export=export,
        )
        # The engine, driven directly (``driving``): its own bugs are counted, never raised.
        self.engine = Engine(config, count_fact=self.tally.count_fact, raise_internal_errors=False)
        self.tally.watch_traces(self.engine)  # the verifier's groundplane.traces.active
        self.driver = Driver(self.engine, self.tally)
        self.assembler = Assembler(
            self._settle,
            self.stats,
            self.unreadable,
            decision_wait=decision_wait,
            max_traces=max_traces,
            max_spans_per_trace=max_spans_per_trace,
            clock=clock,
            owns=owns,
        )
        self.resources = self.assembler.resources  # protobuf requests' resources, shared
        self.rematch = rematch
        self._around = around_decision
        # the names the input holds (``coverage``: the gate's report), noted on request
        self.seen = Seen(config, self.stats) if note_names else None

    @property
    def spans_read(self) -> int:
        """Spans of its own traces and others' read so far (replay's default clock)."""
        return self.assembler.spans_read

    # -- intake --------------------------------------------------------------------------------

    def feed(
        self,
        request: ExportTraceServiceRequest | Sequence[RecordedSpan],
        location: str = "request",
    ) -> None:
        """One request's spans — an ``ExportTraceServiceRequest`` or the ``RecordedSpan``s a
        reader made of it — found at ``location`` (a line or message of a recorded file)."""
        self.assembler.feed(request, location)

    def decide_ready(self) -> int:
        """Decide the traces idle for ``decision_wait``; how many were decided."""
        return self.assembler.decide_ready()

    def decide(self, trace_id: bytes) -> bool:
        """Decide the buffered trace ``trace_id`` now; False when it is not buffered (already
        decided, or never seen)."""
        return self.assembler.decide(trace_id)

    @property
    def buffered(self) -> int:
        """Traces waiting for their decision."""
        return self.assembler.buffered

    def finish(self) -> ReplayStats:
        """End of input: every buffered trace is decided."""
        self.assembler.finish()
        return self.stats

    # -- deciding one trace ----------------------------------------------------------------

    def _settle(self, trace_id: bytes, state: PendingTrace, early: bool) -> None:
        """Decide a trace taken out of the buffer, through ``around_decision`` when given."""
        around = self._around
        if around is None:
            self._decide(trace_id, state, early=early)
        else:
            around(TraceToDecide(trace_id, state, early, self._decide))

    def _decide(self, trace_id: bytes, state: PendingTrace, *, early: bool) -> None:
        """Decide one trace: its spans as records (identical copies collapsed; none when two
        differ), driven into the engine, its findings settled in the order read."""
        self.decisions += 1
        if not state.owned:
            return
        stats = self.stats
        stats.traces += 1
        unique, copies, conflicts = state.distinct()
        if copies:
            stats.duplicate_spans += copies
        if conflicts:
            self._conflicting(trace_id, conflicts)
            return
        records, orphans = trace_records(trace_id, unique, rematch=self.rematch)
        if orphans:
            stats.orphan_spans += orphans
        if early or state.dropped:
            stats.incomplete_traces += 1
        spans = records.values()
        self.driver.trace(spans)
        tally = self.tally
        if tally.pending:  # its findings, in the order read (most traces have none)
            tally.settle(spans)
        seen = self.seen
        if seen is not None:
            for record in spans:
                seen.note(record.name, record.attributes)

    def _conflicting(self, trace_id: bytes, conflicts: list[bytes]) -> None:
        """Two spans of the trace share an id but differ: which one is true cannot be known;
        the trace is not decided (told, counted)."""
        self.stats.conflicting_traces += 1
        self.stats.incomplete_traces += 1
        problem = (
            f"span id {conflicts[0].hex()} used by {len(conflicts) + 1} different spans"
            + (f" (and {len(set(conflicts)) - 1} more ids)" if len(set(conflicts)) > 1 else "")
            + ": trace not decided"
        )
        self.unreadable.append(BadInput(f"trace {trace_id.hex()}", problem))

    # -- results -----------------------------------------------------------------------------

    def counts(self) -> dict[str, dict[tuple[str, str], int]]:
        """The engine's results so far: ``groundplane.outputs``' numbers by (boundary, outcome)
        and ``groundplane.claims``' by (boundary, verdict)."""
        return {"outputs": dict(self.stats.outputs), "claims": dict(self.stats.claims)}

    @property
    def internal_errors(self) -> int:
        """The engine's own bugs counted so far (each counted, none raised)."""
        return self.engine.internal_errors

    def close(self) -> None:
        """The replay is over: the engine's traces in flight release their facts."""
        self.tally.close(self.engine)
        self.engine.close()
