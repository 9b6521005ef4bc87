"""Per-request fact registries: thread-safe, bounded, every drop counted.

Facts belong to one request: the work under one local root span in this process. A request's
state lives from its first fact until its local root span ends; the least recently used are
evicted past ``max_traces`` or ``max_total_bytes``, idle ones after ``ttl_seconds``. A second,
different result under one fact name is a conflict: the fact is withdrawn and the checks that
need it fail closed. Two capture paths reading one tool call (the same tool and tool call id:
a framework hook and the completion hook, say) never make a recorded fact worse: a reading that
cannot be a fact is counted, but neither withdraws the fact recorded from that call nor stops
a good reading of it from being recorded.

The key of a request (``RequestKey``) is its trace id when it is the first live local root of
that trace in this process (the usual case: no per-span bookkeeping); another local root of the
same trace while one is live (two requests arriving with one incoming ``traceparent``) gets
``(trace_id, root_span_id)``, and the trace becomes *shared*: until its last local root ends,
each span started in it maps its span id to its request's key (inherited from its parent;
``span_request``), so no incoming trace id can make two requests share evidence.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from groundplane_otel._frozen import draft_class, finish
from groundplane_otel._keys import strict_equal
from groundplane_otel.documents import Documents
from groundplane_otel.facts import Domain, Fact, Provenance, Ranking, Table
from groundplane_otel.otel._engine.sizing import derived_size, retained_size
from groundplane_otel.otel.config import Limits
from groundplane_otel.registry import FactRegistry

__all__ = [
    "FactsView",
    "RequestKey",
    "ToolCallKey",
    "TraceRegistry",
    "TraceStore",
    "call_of",
    "estimate_size",
    "fact_kind",
]

RequestKey = int | tuple[int, int]  # trace id, or (trace id, local root span id)
FactCounter = Callable[[str, str, str], None]  # (kind, source, outcome)
T = TypeVar("T")
ToolCallKey = tuple[str | None, str]  # (tool, tool call id): one tool call of a request


def call_of(provenance: Provenance | None) -> ToolCallKey | None:
    """The tool call a fact was read from (None without a tool call id: not attributable)."""
    if provenance is None or not provenance.tool_call_id:
        return None
    return provenance.tool, provenance.tool_call_id


def fact_kind(value: object) -> str:
    """The ``groundplane.fact.kind`` of a stored value."""
    if isinstance(value, Ranking):
        return "ranking"
    if isinstance(value, Table):
        return "table"
    if isinstance(value, Domain):
        return "domain"
    if isinstance(value, Documents):
        return "documents"
    return "value"


def estimate_size(value: object) -> int:
    """Bytes a stored value keeps alive: its objects and indices, and what checks cached on it
    so far (``_derived``, not counting the cells it shares with the value) — a bounded,
    sampling estimate (``_sizing``)."""
    return sum(_sizes(value))


def _sizes(value: object) -> tuple[int, int]:
    """(the value without its caches, its caches) in bytes."""
    derived = getattr(value, "_derived", None)
    if not isinstance(derived, dict) or all(type(v) is bool for v in derived.values()):
        return retained_size(value), 0  # nothing cached yet but flags (a fresh Table's)
    return retained_size(value, skip=(derived,)), derived_size(value)


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
    if isinstance(left, Documents) and isinstance(right, Documents):
        return left.source == right.source and strict_equal(
            [(d.id, d.score, d.content) for d in left.documents],
            [(d.id, d.score, d.content) for d in right.documents],
        )
    return strict_equal(left, right)


@dataclass(frozen=True, slots=True)
class FactsView:
    """What a boundary may read in one trace: a read-only registry of the usable facts, and the
    reason code-able outcome (conflict, truncated, ...) of each fact that could not be stored."""

    registry: FactRegistry
    problems: Mapping[str, str]


_FactsViewDraft = draft_class(FactsView)


def _facts_view(registry: FactRegistry, problems: Mapping[str, str]) -> FactsView:
    """``FactsView(registry, problems)``, built cheaply (``_frozen``): one per checked answer."""
    draft = _FactsViewDraft()
    draft.registry = registry
    draft.problems = problems
    return finish(draft, FactsView)


class TraceRegistry(FactRegistry):
    """A writable handle on one request's facts, for recording in code (``trace_registry()``).
    It reads the request's facts in place; a record goes through the store's bounds and
    conflict rules (``write``: the store's ``record`` for its request), and a conflicting or
    over-limit one raises ValueError, as write-once does. The store never calls back into it."""

    def __init__(
        self, facts: FactRegistry, write: Callable[[TraceRegistry, str, Any, Provenance], str]
    ) -> None:
        super().__init__()
        self._facts, self._restricted = facts._facts, facts._restricted  # shared, not copied
        self._write = write

    def _store(self, name: str, value: Any, provenance: Provenance) -> Fact:
        self._check_writable(name)
        outcome = self._write(self, name, value, provenance)
        if outcome == "ended":
            raise ValueError(
                f"fact {name!r} was not recorded: this registry's request has ended (its "
                "local root span ended, or it was evicted); record facts while it is live"
            )
        if outcome not in ("recorded", "duplicate"):
            raise ValueError(f"fact {name!r} was not recorded in this request: {outcome}")
        return self.peek(name)


class _Charge:
    """What one stored fact is charged against the limits: measured (``estimate_size``: the
    value, then its caches re-measured as they grow), or until a limit binds, an upper bound
    from its JSON text (``unit``, the ``text_bound`` of the text: once for the value, once per
    result checks cache on it)."""

    __slots__ = ("base", "bytes", "caches", "measured", "unit")

    def __init__(self, nbytes: int, caches: int, unit: int | None) -> None:
        self.base = nbytes  # measured: the value as recorded (later caches are added to it)
        self.bytes = nbytes
        self.caches = caches  # len(value._derived) when last charged
        self.measured = unit is None
        self.unit = unit

    def measure(self, value: Any) -> None:
        base, derived = _sizes(value)
        self.base, self.bytes = base, base + derived
        self.caches = _caches(value)
        self.measured = True

    def grow(self, value: Any, count: int) -> None:
        """Checks cached more on the value (``count`` results now): charged again."""
        if self.unit is None:
            self.bytes = self.base + derived_size(value)
        else:
            self.bytes += (count - self.caches) * self.unit
            self.measured = False
        self.caches = count


def _caches(value: Any) -> int:
    cache = getattr(value, "_derived", None)
    return len(cache) if isinstance(cache, dict) else 0


class _Request:
    __slots__ = ("bytes", "calls", "charges", "handle", "meta", "problems", "registry", "touched")

    def __init__(self, now: float) -> None:
        self.registry = FactRegistry()  # the request's facts, written by the store only
        self.handle: TraceRegistry | None = None  # recording in code (made when asked for)
        self.problems: dict[str, str] = {}
        # fact -> the one tool call all its problems came from (absent: none, or several)
        self.calls: dict[str, ToolCallKey] = {}
        self.meta: dict[str, tuple[str, str]] = {}  # fact -> (kind, source), to count evictions
        self.bytes = 0
        self.charges: dict[str, _Charge] = {}
        self.touched = now


class TraceStore:
    """The live requests of this process, by ``RequestKey`` (see the module docstring)."""

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
        self.requests: OrderedDict[RequestKey, _Request] = OrderedDict()
        # trace id -> the span id of its live local root, or (once a second one started) the
        # list of their span ids
        self.roots: dict[int, int | list[int]] = {}
        self.shared: set[int] = set()  # traces with two live local roots at some point
        self.spans: dict[int, RequestKey] = {}  # span id -> request, in shared traces only
        self._spans_limit = 16 * limits.max_traces
        self.roots_limit = 4 * limits.max_traces
        self._total_bytes = 0
        self._bounded: dict[RequestKey, None] = {}  # requests with a fact charged a bound

    # -- lifecycle ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self.requests)

    def root_started(self, trace_id: int, span_id: int) -> RequestKey:
        """A local root span started: the key of its request (runs for every trace: lock-free,
        each step one atomic dict or list operation under the GIL; the guard's fast hook does
        the first step itself and calls this only for a second root or to prune). The first
        live root of a trace is keyed by the trace id; any other, by ``(trace_id, span_id)``,
        and the trace becomes shared."""
        roots = self.roots
        live = roots.setdefault(trace_id, span_id)  # the common case: the only root, no list
        if len(roots) > self.roots_limit:  # roots that never ended
            try:  # noqa: SIM105 - contextlib.suppress costs more than this work
                roots.pop(next(iter(roots)), None)
            except (RuntimeError, StopIteration):  # changed meanwhile
                pass
        if live == span_id:
            return trace_id
        if isinstance(live, list):
            live.append(span_id)
        else:  # a second live root: from now on a list, until the trace's last root ends
            roots[trace_id] = [live, span_id]
        self.shared.add(trace_id)
        request = (trace_id, span_id)
        self.span_started(span_id, request)
        return request

    def span_started(self, span_id: int, request: RequestKey) -> None:
        """A span of a shared trace started in ``request`` (bounded: oldest entries go first)."""
        spans = self.spans
        spans[span_id] = request
        if len(spans) > self._spans_limit:  # spans that never ended
            try:  # noqa: SIM105 - contextlib.suppress costs more than this work
                spans.pop(next(iter(spans)), None)
            except (RuntimeError, StopIteration):  # changed meanwhile
                pass

    def span_request(self, trace_id: int, span_id: int) -> RequestKey:
        """The request a live span belongs to (``Accounting.request_of`` reads it inline)."""
        if trace_id in self.shared:
            return self.spans.get(span_id, trace_id)
        return trace_id

    def root_ended(self, trace_id: int, span_id: int, request: RequestKey) -> bool:
        """A local root span ended: its request's facts are dropped (not counted as evicted).
        True when it was the trace's last live local root."""
        live = self.roots.get(trace_id)
        if isinstance(live, list):
            try:  # noqa: SIM105 - contextlib.suppress costs more than this work
                live.remove(span_id)
            except ValueError:  # pruned, or another thread emptied it meanwhile
                pass
            last = not live
        else:  # another live root when it is not this one (this one was pruned)
            last = live is None or live == span_id
        if request != trace_id:
            self.spans.pop(span_id, None)
        if last:
            self.roots.pop(trace_id, None)
            self.shared.discard(trace_id)
        if request in self.requests:
            lock = self._lock
            lock.acquire()  # not ``with``: half its cost (no ``__exit__`` call), once a trace
            try:
                if request in self.requests:
                    self._drop(request, evicted=False)
            finally:
                lock.release()
        return last

    def fact_names(self, request: RequestKey) -> frozenset[str]:
        """The facts ``request`` holds or tried to hold (recorded, or that could not be)."""
        with self._lock:
            state = self.requests.get(request)
            if state is None:
                return frozenset()
            return frozenset(state.registry.names()) | frozenset(state.problems)

    def clear(self) -> None:
        """The guard is uninstalled: release every request still in flight (not counted as
        evicted: no check will ask for their facts)."""
        with self._lock:
            while self.requests:
                self._drop(next(iter(self.requests)), evicted=False)
            self._bounded.clear()
            self.roots.clear()
            self.shared.clear()
            self.spans.clear()

    def _get(self, request: RequestKey, create: bool) -> _Request | None:
        state = self.requests.get(request)
        now = self._clock()
        if state is not None:
            state.touched = now
            self.requests.move_to_end(request)
            return state
        if not create:
            return None
        if self.requests:  # (none live: nothing to expire, no call)
            self._expire(now)
        while len(self.requests) >= self.limits.max_traces:
            self._drop(next(iter(self.requests)), evicted=True)
        state = _Request(now)
        self.requests[request] = state
        if self._count_traces is not None:
            self._count_traces(1)
        return state

    def _expire(self, now: float) -> None:
        while self.requests:
            request, oldest = next(iter(self.requests.items()))
            if now - oldest.touched <= self.limits.ttl_seconds:
                return
            self._drop(request, evicted=True)

    def _drop(self, request: RequestKey, *, evicted: bool) -> None:
        state = self.requests.pop(request)
        self._bounded.pop(request, None)
        self._total_bytes -= state.bytes
        if self._count_traces is not None:
            self._count_traces(-1)
        if evicted:
            for kind, source in state.meta.values():
                self._count_fact(kind, source, "evicted")

    # -- facts -------------------------------------------------------------------------------

    def registry(self, request: RequestKey) -> TraceRegistry:
        """The (writable) registry of a request, created if needed."""
        with self._lock:
            state = self._get(request, create=True)
            assert state is not None
            if state.handle is None:
                state.handle = TraceRegistry(state.registry, functools.partial(self._code, request))
            return state.handle

    def _code(
        self,
        request: RequestKey,
        through: TraceRegistry,
        name: str,
        value: Any,
        provenance: Provenance,
    ) -> str:
        """A fact recorded in code through ``request``'s handle (``TraceRegistry``)."""
        return self.record(
            request, name, value, source="code", provenance=provenance, through=through
        )

    def record(
        self,
        request: RequestKey,
        name: str,
        value: Any,
        *,
        source: str,
        provenance: Provenance,
        size: int | None = None,
        bound: int | None = None,
        through: TraceRegistry | None = None,
        kind: str | None = None,
    ) -> str:
        """Store a value the store now owns. Returns the outcome: recorded, duplicate (same
        result again: not counted), conflict or rejected (both counted). What it is charged:
        ``size`` (measured by the caller), else ``bound`` — an upper bound of what it retains
        (``text_bound`` of the JSON text it was parsed from), charged until a limit binds, when
        the store measures it — else measured now (``estimate_size``). ``through``: the
        registry handle the value is recorded with; a stale one (its request ended or was
        evicted) is rejected, never re-creating the request (outcome ``ended``, counted as
        rejected). ``kind``: the value's ``fact_kind``, when the caller knows it."""
        if kind is None:
            kind = fact_kind(value)
        caches = _caches(value)
        if bound is not None:
            charge = _Charge(bound * max(caches, 1), caches, bound)  # a Table caches one flag
        else:
            charge = _Charge(estimate_size(value) if size is None else size, caches, None)
        lock = self._lock
        lock.acquire()  # not ``with``: half its cost (no ``__exit__`` call), once a fact
        try:
            state = self._get(request, create=through is None)
            if state is None or (through is not None and state.handle is not through):
                self._count_fact(kind, source, "rejected")
                return "ended"
            outcome = self._admit(state, request, name, value, charge, provenance)
            if outcome == "recorded":
                state.registry._store(name, value, provenance)
                state.meta[name] = (kind, source)
                state.charges[name] = charge
                if not charge.measured:
                    self._bounded[request] = None
                state.bytes += charge.bytes
                self._total_bytes += charge.bytes
            elif outcome == "rejected":  # over a limit: the checks that need it say so
                state.problems.setdefault(name, "rejected")
        finally:
            lock.release()
        if outcome != "duplicate":
            self._count_fact(kind, source, outcome)
        return outcome

    def _admit(
        self,
        state: _Request,
        request: RequestKey,
        name: str,
        value: Any,
        charge: _Charge,
        provenance: Provenance,
    ) -> str:
        calls = state.calls  # (usually empty: its tool call is read only then)
        if calls and (call := call_of(provenance)) is not None and calls.get(name) == call:
            del state.problems[name], calls[name]  # a good reading of the unread call
        if name in state.problems:
            state.calls.pop(name, None)
            if state.problems[name] == "conflict":
                return "conflict"
            state.problems[name] = "conflict"  # an earlier result was lost: cannot compare
            return "conflict"
        facts = state.registry._facts
        if name in facts:
            if _same(facts[name].value, value):
                return "duplicate"
            state.registry._facts.pop(name, None)
            state.meta.pop(name, None)
            state.problems[name] = "conflict"
            return "conflict"
        limits = self.limits
        if len(facts) >= limits.max_facts_per_trace:
            return "rejected"
        size = charge.bytes  # ``_over_trace``, inlined for the usual first reading
        over = state.bytes + size > limits.max_trace_bytes or size > limits.max_total_bytes
        if not charge.measured and (
            over or self._total_bytes + charge.bytes > limits.max_total_bytes
        ):
            charge.measure(value)  # its bound would cross a limit: what does it really take?
            over = self._over_trace(state, charge.bytes)
        if over:
            self._measure_request(request)
            if self._over_trace(state, charge.bytes):
                return "rejected"
        if self._total_bytes + charge.bytes > limits.max_total_bytes:
            self._settle(request, charge.bytes)
            if self._total_bytes + charge.bytes > limits.max_total_bytes:
                return "rejected"
        return "recorded"

    def measured_total(self) -> int:
        """Measure every fact still charged at its text bound; the total charged then (what
        the live facts retain: diagnostics, tests)."""
        with self._lock:
            while self._bounded:
                self._measure_request(next(iter(self._bounded)))
            return self._total_bytes

    def _over_trace(self, state: _Request, size: int) -> bool:
        limits = self.limits
        return state.bytes + size > limits.max_trace_bytes or size > limits.max_total_bytes

    def _settle(self, request: RequestKey, incoming: int) -> None:
        """Bring the total (plus ``incoming``) under ``max_total_bytes``: bounds are replaced
        by measurements first (least recently used requests first), then the least recently
        used other requests are evicted."""
        limit = self.limits.max_total_bytes
        while self._total_bytes + incoming > limit and self._bounded:
            self._measure_request(next(iter(self._bounded)))
        while self._total_bytes + incoming > limit:
            oldest = next(iter(self.requests))
            if oldest == request:  # the newest (just touched): the only one left
                return
            self._drop(oldest, evicted=True)

    def _measure_request(self, request: RequestKey) -> None:
        """Replace the bounds a request's facts are charged with their measured size."""
        self._bounded.pop(request, None)
        state = self.requests[request]
        for name, charge in state.charges.items():
            if charge.measured or name not in state.registry:
                continue
            before = charge.bytes
            charge.measure(state.registry.peek(name).value)
            state.bytes += charge.bytes - before
            self._total_bytes += charge.bytes - before

    def account_derived(self, request: RequestKey, names: tuple[str, ...]) -> None:
        """Checks ran on these facts: charge what they cached on the values (only when a
        value's cache grew: the text bound again per new result, else measured), so the
        limits bound it too; past ``max_total_bytes`` bounds are measured, then the least
        recently used other requests are evicted."""
        if request not in self.requests:
            return
        with self._lock:
            state = self.requests.get(request)
            if state is None:
                return
            grew = False
            for name in names:
                charge = state.charges.get(name)
                if charge is None or name not in state.registry:
                    continue
                value = state.registry.peek(name).value
                count = _caches(value)
                if count <= charge.caches:
                    continue
                before = charge.bytes
                charge.grow(value, count)
                if not charge.measured:
                    self._bounded[request] = None
                state.bytes += charge.bytes - before
                self._total_bytes += charge.bytes - before
                grew = True
            if grew and self._total_bytes > self.limits.max_total_bytes:
                self._settle(request, 0)

    def problem(
        self,
        request: RequestKey,
        name: str,
        outcome: str,
        *,
        kind: str,
        source: str,
        call: ToolCallKey | None = None,
    ) -> None:
        """A result that can never be a fact (truncated, unparseable, rejected): counted, and
        the fact is poisoned for this request so the checks that need it fail closed — unless
        it is another reading of the tool call (``call``) the recorded fact was read from:
        then that fact stays."""
        with self._lock:
            state = self._get(request, create=True)
            assert state is not None
            if (
                call is None
                or name not in state.registry
                or (call_of(state.registry.peek(name).provenance) != call)
            ):
                self._poison(state, name, outcome, call)
        self._count_fact(kind, source, outcome)

    @staticmethod
    def _poison(state: _Request, name: str, outcome: str, call: ToolCallKey | None) -> None:
        state.registry._facts.pop(name, None)
        state.meta.pop(name, None)
        if name not in state.problems:
            state.problems[name] = outcome  # the first problem names the reason
            if call is not None:
                state.calls[name] = call
        elif state.calls.get(name) != call:
            state.calls.pop(name, None)  # problems from several calls: none clears them

    def checked(self, request: RequestKey, names: tuple[str, ...], check: Callable[..., T]) -> T:
        """``check(view=...)`` on a view of the request's declared facts (``view``), then what
        the checks cached on them charged (``account_derived``, visited only when a cache
        grew: most checks cache nothing): the store's one visit for a checked answer."""
        view, charges = self._view(request, names)
        result = check(view=view)
        # Read without the lock (``account_derived`` re-reads under it): a viewed fact's charge
        # is never replaced while the fact is stored (write-once).
        for name, fact in view.registry._facts.items():
            charge = charges.get(name)
            if charge is None:
                continue
            if _caches(fact.value) > charge.caches:
                self.account_derived(request, names)
                break
        return result

    def view(self, request: RequestKey, names: tuple[str, ...]) -> FactsView:
        """A read-only view of the usable declared facts, and the problems of the others."""
        return self._view(request, names)[0]

    def _view(
        self, request: RequestKey, names: tuple[str, ...]
    ) -> tuple[FactsView, Mapping[str, _Charge]]:
        """``view``, and the charges of the request's facts (``checked``)."""
        lock = self._lock
        lock.acquire()  # not ``with``: half its cost (no ``__exit__`` call), once an answer
        try:
            state = self.requests.get(request)
            if state is None:
                return _facts_view(FactRegistry().view(()), {}), {}
            # ``_get`` inlined (one call less per checked answer), and plain loops: a
            # comprehension is a function call of its own, for a name or two.
            state.touched = self._clock()
            self.requests.move_to_end(request)
            registry, known = state.registry, state.problems
            facts = registry._facts
            usable: dict[str, Fact] = {}
            for name in names:
                if name in facts:
                    usable[name] = facts[name]
            problems: dict[str, str] = {}
            if known:
                for name in names:
                    if name in known:
                        problems[name] = known[name]
            return _facts_view(registry.view_of(usable), problems), state.charges
        finally:
            lock.release()
