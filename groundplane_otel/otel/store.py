"""Per-trace fact registries: thread-safe, bounded, every drop counted.

A trace's state lives from its first fact (or agent span) until its local root span ends; the
least recently used traces are evicted past ``max_traces`` or ``max_total_bytes``, idle ones
after ``ttl_seconds``. A second, different result under one fact name is a conflict: the fact
is withdrawn and the checks that need it fail closed.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from groundplane_otel._keys import strict_equal
from groundplane_otel.facts import Domain, Fact, Provenance, Ranking, Table
from groundplane_otel.otel._sizing import derived_size, retained_size
from groundplane_otel.otel.config import Limits
from groundplane_otel.registry import FactRegistry

__all__ = ["FactsView", "TraceRegistry", "TraceStore", "estimate_size", "fact_kind"]

FactCounter = Callable[[str, str, str], None]  # (kind, source, outcome)


def fact_kind(value: object) -> str:
    """The ``groundplane.fact.kind`` of a stored value."""
    if isinstance(value, Ranking):
        return "ranking"
    if isinstance(value, Table):
        return "table"
    if isinstance(value, Domain):
        return "domain"
    return "value"


def estimate_size(value: object) -> int:
    """Bytes a stored value keeps alive: its objects, its indices and what checks cached on it
    so far (a bounded, sampling estimate: ``_sizing.retained_size``)."""
    return retained_size(value)


def _same(left: object, right: object) -> bool:
    """Is a second result under one fact name the same as the first? Type-strict everywhere:
    ``true`` is not ``1`` is not ``1.0``, in a value, a table's cells or a ranking's names and
    scores (dataclass equality would call ``True == 1`` the same)."""
    if type(left) is not type(right):
        return False
    if isinstance(left, Table) and isinstance(right, Table):
        return (left.key, left.columns, left.exhaustive) == (
            right.key,
            right.columns,
            right.exhaustive,
        ) and strict_equal(left.rows, right.rows)
    if isinstance(left, Ranking) and isinstance(right, Ranking):
        return (
            (left.key, left.higher_is_better) == (right.key, right.higher_is_better)
            and strict_equal(left._names, right._names)
            and strict_equal(left._scores, right._scores)
        )
    if isinstance(left, Domain) and isinstance(right, Domain):
        return left.label == right.label and left.members == right.members  # str members
    return strict_equal(left, right)


@dataclass(frozen=True, slots=True)
class FactsView:
    """What a boundary may read in one trace: a read-only registry of the usable facts, and the
    reason code-able outcome (conflict, truncated, ...) of each fact that could not be stored."""

    registry: FactRegistry
    problems: Mapping[str, str]


class TraceRegistry(FactRegistry):
    """The registry of one trace. Recording in code goes through the store's bounds and conflict
    rules: a conflicting or over-limit record raises ValueError (as write-once does)."""

    def __init__(self, store: TraceStore, trace_id: int) -> None:
        super().__init__()
        self._store_owner = store
        self._trace_id = trace_id

    def _store(self, name: str, value: Any, provenance: Provenance) -> Fact:
        self._check_writable(name)
        outcome = self._store_owner.record(
            self._trace_id,
            name,
            value,
            source="code",
            provenance=provenance,
            size=estimate_size(value),
            through=self,
        )
        if outcome == "ended":
            raise ValueError(
                f"fact {name!r} was not recorded: this registry's trace has ended (its local "
                "root span ended, or it was evicted); record facts while the trace is live"
            )
        if outcome not in ("recorded", "duplicate"):
            raise ValueError(f"fact {name!r} was not recorded in this trace: {outcome}")
        return self.peek(name)

    def _insert(self, name: str, value: Any, provenance: Provenance) -> None:
        FactRegistry._store(self, name, value, provenance)

    def _withdraw(self, name: str) -> None:
        self._facts.pop(name, None)


class _Trace:
    __slots__ = (
        "bytes",
        "covered",
        "derived",
        "meta",
        "problems",
        "registry",
        "spans",
        "touched",
    )

    def __init__(self, registry: TraceRegistry, now: float) -> None:
        self.registry = registry
        self.problems: dict[str, str] = {}
        self.meta: dict[str, tuple[str, str]] = {}  # fact -> (kind, source), to count evictions
        self.bytes = 0
        self.derived: dict[str, tuple[int, int]] = {}  # fact -> (cached results, their bytes)
        self.touched = now
        self.spans: dict[int, tuple[Any, ...]] = {}  # live span id -> enclosing agent spans
        self.covered: dict[int, set[tuple[str, str]]] = {}  # agent span id -> checked outputs


class TraceStore:
    """All live traces of this process, keyed by trace id."""

    def __init__(
        self,
        limits: Limits,
        count_fact: FactCounter,
        count_traces: Callable[[int], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limits = limits
        self._count_fact = count_fact
        self._count_traces = count_traces
        self._clock = clock
        self._lock = threading.Lock()
        self._traces: OrderedDict[int, _Trace] = OrderedDict()
        self._roots: dict[int, list[None]] = {}  # trace id -> one entry per live local root
        self._roots_limit = 4 * limits.max_traces
        self._total_bytes = 0

    # -- lifecycle ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._traces)

    def root_started(self, trace_id: int) -> None:
        """A local root span started (runs for every trace: lock-free, each step one atomic
        dict or list operation under the GIL)."""
        roots = self._roots
        roots.setdefault(trace_id, []).append(None)
        if len(roots) > self._roots_limit:  # roots that never ended
            try:  # noqa: SIM105 - contextlib.suppress costs more than this work
                roots.pop(next(iter(roots)), None)
            except (RuntimeError, StopIteration):  # changed meanwhile
                pass

    def root_ended(self, trace_id: int) -> bool:
        """A local root span ended; when it was the trace's last, the trace's facts are dropped
        (not counted as evicted) and True is returned."""
        live = self._roots.get(trace_id)
        if live:
            try:  # noqa: SIM105 - contextlib.suppress costs more than this work
                live.pop()
            except IndexError:  # another thread emptied it meanwhile
                pass
            if live:
                return False
        self._roots.pop(trace_id, None)
        if trace_id in self._traces:
            with self._lock:
                if trace_id in self._traces:
                    self._drop(trace_id, evicted=False)
        return True

    def clear(self) -> None:
        """The guard is uninstalled: release every trace still in flight (not counted as
        evicted: no check will ask for their facts)."""
        with self._lock:
            while self._traces:
                self._drop(next(iter(self._traces)), evicted=False)
            self._roots.clear()

    def _get(self, trace_id: int, create: bool) -> _Trace | None:
        state = self._traces.get(trace_id)
        now = self._clock()
        if state is not None:
            state.touched = now
            self._traces.move_to_end(trace_id)
            return state
        if not create:
            return None
        self._expire(now)
        while len(self._traces) >= self.limits.max_traces:
            self._drop(next(iter(self._traces)), evicted=True)
        state = _Trace(TraceRegistry(self, trace_id), now)
        self._traces[trace_id] = state
        if self._count_traces is not None:
            self._count_traces(1)
        return state

    def _expire(self, now: float) -> None:
        while self._traces:
            trace_id, oldest = next(iter(self._traces.items()))
            if now - oldest.touched <= self.limits.ttl_seconds:
                return
            self._drop(trace_id, evicted=True)

    def _drop(self, trace_id: int, *, evicted: bool) -> None:
        state = self._traces.pop(trace_id)
        self._total_bytes -= state.bytes
        if self._count_traces is not None:
            self._count_traces(-1)
        if evicted:
            for kind, source in state.meta.values():
                self._count_fact(kind, source, "evicted")

    # -- facts -------------------------------------------------------------------------------

    def registry(self, trace_id: int) -> TraceRegistry:
        """The (writable) registry of a trace, created if needed."""
        with self._lock:
            state = self._get(trace_id, create=True)
            assert state is not None
            return state.registry

    def record(
        self,
        trace_id: int,
        name: str,
        value: Any,
        *,
        source: str,
        provenance: Provenance,
        size: int,
        through: TraceRegistry | None = None,
    ) -> str:
        """Store a value the store now owns. Returns the outcome: recorded, duplicate (same
        result again: not counted), conflict or rejected (both counted). ``through``: the
        registry handle the value is recorded with; a stale one (its trace ended or was
        evicted) is rejected, never re-creating the trace (outcome ``ended``, counted as
        rejected)."""
        kind = fact_kind(value)
        with self._lock:
            state = self._get(trace_id, create=through is None)
            if state is None or (through is not None and state.registry is not through):
                self._count_fact(kind, source, "rejected")
                return "ended"
            outcome = self._admit(state, trace_id, name, value, size)
            if outcome == "recorded":
                state.registry._insert(name, value, provenance)
                state.meta[name] = (kind, source)
                state.bytes += size
                self._total_bytes += size
            elif outcome == "rejected":  # over a limit: the checks that need it say so
                state.problems.setdefault(name, "rejected")
        if outcome != "duplicate":
            self._count_fact(kind, source, outcome)
        return outcome

    def _admit(self, state: _Trace, trace_id: int, name: str, value: Any, size: int) -> str:
        if name in state.problems:
            if state.problems[name] == "conflict":
                return "conflict"
            state.problems[name] = "conflict"  # an earlier result was lost: cannot compare
            return "conflict"
        if name in state.registry:
            if _same(state.registry.peek(name).value, value):
                return "duplicate"
            state.registry._withdraw(name)
            state.meta.pop(name, None)
            state.problems[name] = "conflict"
            return "conflict"
        limits = self.limits
        if len(state.registry) >= limits.max_facts_per_trace:
            return "rejected"
        if state.bytes + size > limits.max_trace_bytes or size > limits.max_total_bytes:
            return "rejected"
        while self._total_bytes + size > limits.max_total_bytes:
            oldest = next(iter(self._traces))
            if oldest == trace_id:
                return "rejected"
            self._drop(oldest, evicted=True)
        return "recorded"

    def account_derived(self, trace_id: int, names: tuple[str, ...]) -> None:
        """Checks ran on these facts: count what they cached on the values (re-measured only
        when a value's cache grew), so ``max_total_bytes`` bounds it too; past that bound the
        least recently used other traces are evicted."""
        if trace_id not in self._traces:
            return
        with self._lock:
            state = self._traces.get(trace_id)
            if state is None:
                return
            for name in names:
                if name not in state.registry:
                    continue
                value = state.registry.peek(name).value
                cache = getattr(value, "_derived", None)
                count = len(cache) if isinstance(cache, dict) else 0
                known, before = state.derived.get(name, (1, 0))  # a fresh Table caches one flag
                if count == known:
                    continue
                size = derived_size(value)
                state.derived[name] = (count, size)
                state.bytes += size - before
                self._total_bytes += size - before
            for other in list(self._traces):
                if self._total_bytes <= self.limits.max_total_bytes:
                    break
                if other != trace_id:
                    self._drop(other, evicted=True)

    def problem(self, trace_id: int, name: str, outcome: str, *, kind: str, source: str) -> None:
        """A result that can never be a fact (truncated, unparseable, rejected): counted, and
        the fact is poisoned for this trace so the checks that need it fail closed."""
        with self._lock:
            state = self._get(trace_id, create=True)
            assert state is not None
            state.registry._withdraw(name)
            state.meta.pop(name, None)
            state.problems.setdefault(name, outcome)  # the first problem names the reason
        self._count_fact(kind, source, outcome)

    def view(self, trace_id: int, names: tuple[str, ...]) -> FactsView:
        """A read-only view of the usable declared facts, and the problems of the others."""
        with self._lock:
            state = self._get(trace_id, create=False)
            if state is None:
                return FactsView(FactRegistry().view(()), {})
            usable = tuple(name for name in names if name in state.registry)
            problems = {name: state.problems[name] for name in names if name in state.problems}
            return FactsView(state.registry.view(usable), problems)

    # -- span lineage (match through ancestors) and checked-once bookkeeping -----------------

    def track_span(self, trace_id: int, span_id: int, parent_id: int | None, agent: Any) -> None:
        """Remember a live span's enclosing agent spans (itself first when ``agent`` is given).
        Spans outside any agent span are not tracked, so they cost one dictionary miss."""
        state = self._traces.get(trace_id)
        if state is None and agent is None:
            return
        with self._lock:
            state = self._get(trace_id, create=agent is not None)
            if state is None:
                return
            inherited = state.spans.get(parent_id, ()) if parent_id is not None else ()
            chain = (agent, *inherited) if agent is not None else inherited
            if chain and len(state.spans) < self.limits.max_spans_per_trace:
                state.spans[span_id] = chain

    def agents(self, trace_id: int, span_id: int) -> tuple[Any, ...]:
        state = self._traces.get(trace_id)
        return () if state is None else state.spans.get(span_id, ())

    def untrack_span(self, trace_id: int, span_id: int) -> None:
        state = self._traces.get(trace_id)
        if state is not None and span_id in state.spans:
            with self._lock:
                state.spans.pop(span_id, None)
                state.covered.pop(span_id, None)

    def cover(self, trace_id: int, agent_span_ids: tuple[int, ...], key: tuple[str, str]) -> None:
        """An output was checked under these agent spans: they must not check it again."""
        with self._lock:
            state = self._traces.get(trace_id)
            if state is None:
                return
            for span_id in agent_span_ids:
                if span_id in state.spans:
                    state.covered.setdefault(span_id, set()).add(key)

    def covered(self, trace_id: int, span_id: int, boundary: str) -> set[str]:
        """Digests of the outputs of ``boundary`` already checked under this agent span."""
        state = self._traces.get(trace_id)
        if state is None:
            return set()
        with self._lock:
            keys = state.covered.get(span_id, set())
            return {digest for name, digest in keys if name == boundary}
