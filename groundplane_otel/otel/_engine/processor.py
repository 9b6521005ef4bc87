"""GroundplaneSpanProcessor: tool spans become facts; guarded LLM spans are checked as they end.

The SDK freezes a span before any processor hook runs at its end, so for spans that may carry
a guarded output, ``on_start`` wraps ``end`` on that span instance: check -> public
``add_event``/``set_status``/``add_link`` -> the original ``end()`` (every processor and
exporter sees the enriched span, whatever their order) -> raise (enforce mode).

Lineage (to match an agent name on an ancestor, and to check each answer once) lives on the span
instances themselves: a span that is an agent or may carry an output (a *guardable* span), and
every span below one, holds the tuple of its enclosing guardable spans. Spans outside any agent
or LLM span carry nothing and cost one context lookup; nothing is locked or cleaned up.

The processor owns its parts, each built by its explicit constructor in ``__init__``:
``store.TraceStore`` (facts per request), ``capture.FactCapture`` (tool results into facts),
``lineage.Lineage`` (matching through ancestors), ``accounting.Accounting`` (what a guarded
span's end decides: it returns the ``Evaluation``s), ``swallowed.SwallowWatch`` and the per-span
hooks of ``sdk.hooks``. The end wrapper hands what the engine decided to the driver's
``results.Results``: the live ``Telemetry``, or replay's tally.
Every touch of an SDK private field is in ``sdk``.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping
from contextvars import ContextVar
from typing import Any
from weakref import ReferenceType, ref

from opentelemetry.context import Context
from opentelemetry.metrics import MeterProvider, NoOpMeterProvider
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine.accounting import Accounting
from groundplane_otel.otel._engine.capture import FactCapture, read_tool_call
from groundplane_otel.otel._engine.coverage import Coverage
from groundplane_otel.otel._engine.handoff import Handoff, in_flight
from groundplane_otel.otel._engine.lineage import (
    CHAIN_ATTR,
    HANDED_ATTR,
    NO_DICT,
    OUTPUT_ATTR,
    STREAM_ATTR,
    WATCHERS_ATTR,
    Ancestors,
    Lineage,
    attached,
    inherited,
    released,
)
from groundplane_otel.otel._engine.results import Results
from groundplane_otel.otel._engine.sdk import sdk_layout as _sdk_layout
from groundplane_otel.otel._engine.sdk import unwrap_end, wrap_end
from groundplane_otel.otel._engine.sdk.hooks import attach, detach
from groundplane_otel.otel._engine.spans import (
    LLM_KEYS,
    LLM_PREFIXES,
    TOOL_KEYS,
    is_agent,
    is_llm,
    span_attributes,
    span_ids,
)
from groundplane_otel.otel._engine.store import RequestKey, TraceStore
from groundplane_otel.otel._engine.swallowed import SwallowWatch
from groundplane_otel.otel.config import GuardConfig
from groundplane_otel.otel.environment import (
    GROUNDPLANE_OTEL_RAISE_INTERNAL_ERRORS as RAISE_INTERNAL_ERRORS_ENV,
)
from groundplane_otel.otel.environment import raise_internal_errors_from_env
from groundplane_otel.otel.result import Evaluation

__all__ = ["RAISE_INTERNAL_ERRORS_ENV", "GroundplaneSpanProcessor"]

logger = logging.getLogger(__name__)


class GroundplaneSpanProcessor(SpanProcessor):
    """The guard. Build it with ``install()``; one instance per TracerProvider.

    This constructor builds every part a guard needs from its ``config`` and the driver's
    ``results`` (the live ``Telemetry``, replay's tally): install and replay each make one
    call. ``meter_provider``: where ``groundplane.outputs.swallowed`` is counted (none: not
    counted); ``length_limit``: the provider's attribute value length limit."""

    def __init__(
        self,
        config: GuardConfig,
        results: Results,
        *,
        meter_provider: MeterProvider | None = None,
        length_limit: int | None = None,
        raise_internal_errors: bool | None = None,
        coverage: Coverage | None = None,
    ) -> None:
        if raise_internal_errors is None:
            raise_internal_errors = raise_internal_errors_from_env()
        self.config = config
        self.results = results
        self.raise_internal_errors = raise_internal_errors
        self.internal_errors = 0
        self.store = TraceStore(config.limits, results.count_fact)
        self.handoff = Handoff()  # this guard's enforce() scopes
        self.swallow = SwallowWatch(meter_provider or NoOpMeterProvider(), self.handoff)
        results.watch_traces(self.store)  # groundplane.traces.active = len(store)
        self.capture = FactCapture(config.facts, self.store, length_limit)
        self.lineage = Lineage(config, id(self))
        self.boundaries = self.lineage.boundaries
        self.accounting = Accounting(
            config,
            self.store,
            self.lineage,
            results,
            self._internal_error,
            length_limit=length_limit,
            coverage=coverage,
        )
        self.coverage = coverage  # the live guard's (install); replay has none
        self._span_names = frozenset(
            s.match.span_name for s in config.boundaries if s.match.span_name
        )
        self._llm_names = sc.LLM_OPERATIONS | self._span_names
        self._chain_limit = config.limits.max_spans_per_trace
        # Traces in which a guardable span started: only their spans look up their parent's
        # lineage (bounded like the store's roots; dropped when the last local root ends).
        self._lineage: dict[int, None] = {}
        self._lineage_limit = 4 * config.limits.max_traces
        self._enabled = True
        self.known_layout = _sdk_layout()
        self._stop_hooks: Callable[[], None] | None = None
        self._leave_dispatch: Callable[[], None] | None = None  # set by sdk.dispatch.ride
        if self.known_layout:  # per-instance closures: every span of the app goes through them
            self._stop_hooks = attach(self)

    _inherited = staticmethod(inherited)  # the parent's lineage (read by the hooks)

    # -- SpanProcessor ------------------------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Generic hook (the fast closures of ``sdk.hooks`` replace it on a known SDK)."""
        if not self._enabled:
            return
        try:
            parent = span.parent
            inherited: tuple[Any, ...] | None = None
            if parent is None or parent.is_remote:
                trace_id, span_id = span_ids(span)
                self.store.root_started(trace_id, span_id)
                self.handoff.bind(trace_id)
            else:
                trace_id = parent.trace_id
                if trace_id in self.store.shared:
                    self._inherit_request(span_ids(span)[1], parent.span_id)
                if trace_id in self._lineage:
                    inherited = self._inherited(parent_context)
            if not self.boundaries:
                return
            name, attributes = span.name, span_attributes(span)
            if (
                LLM_KEYS.isdisjoint(attributes)
                and not name.startswith(LLM_PREFIXES)
                and name not in self._llm_names
            ):
                if inherited:
                    setattr(span, CHAIN_ATTR, inherited)
                return
            self._started(span, name, attributes, trace_id, inherited)
        except Exception:
            self._internal_error("on_start")

    def on_end(self, span: ReadableSpan) -> None:
        """Generic hook (the fast closures of ``sdk.hooks`` replace it on a known SDK)."""
        if not self._enabled:
            return
        try:
            attributes = span_attributes(span)
            trace_id, span_id = span_ids(span)
            request = self.store.spans.pop(span_id, trace_id) if self.store.shared else trace_id
            if self.capture.by_tool and not TOOL_KEYS.isdisjoint(attributes):
                self._tool_ended(span, attributes, request)
            if self.swallow.pending:
                self.swallow.ended(span)
            parent = span.parent
            if parent is None or parent.is_remote:
                self._root_ended(trace_id, span_id, request)
        except Exception:
            self._internal_error("on_end")

    def _started(
        self,
        span: Span,
        name: str,
        attributes: Mapping[str, Any],
        trace_id: int,
        inherited: tuple[Any, ...] | None,
    ) -> None:
        """A span with a GenAI/OpenInference/groundplane key or an LLM-like name started."""
        # May it carry an output a boundary guards (checked again when it ends)? A model
        # call's span (the rule suggest reads answers by), one naming a boundary, or one the
        # policy names.
        candidate = (
            is_llm(name, attributes) or sc.BOUNDARY in attributes or name in self._span_names
        )
        if candidate or is_agent(name, attributes):
            above = inherited[: self._chain_limit - 1] if inherited else ()
            # A watched span holds itself until it ends (``released``); an agent span nothing
            # watches never does (no reference cycle that only a garbage collection frees).
            chain = (span, *above) if candidate else Ancestors(above)
            setattr(span, CHAIN_ATTR, chain)
            lineage = self._lineage
            if trace_id not in lineage:
                if len(lineage) >= self._lineage_limit:  # roots that never ended
                    lineage.pop(next(iter(lineage)), None)
                lineage[trace_id] = None
        elif inherited:
            setattr(span, CHAIN_ATTR, inherited)
        if candidate:
            self.watch(span)

    def _tool_ended(
        self, span: ReadableSpan, attributes: Mapping[str, Any], request: RequestKey
    ) -> None:
        """A span with a tool key ended: the facts its result feeds (into its request)."""
        call = read_tool_call(attributes, span.name)
        if call is not None and sc.FACT_SOURCE not in attributes:
            trace_id, span_id = span_ids(span)
            coverage = self.coverage
            if coverage is not None:
                if call.tool not in self.capture.by_tool:
                    coverage.tool_seen(call.tool)
                elif call.result is None:
                    self.store.registry(request)  # its end then reaches _root_ended
                    coverage.resultless(request, call.tool)
            self.capture.capture(call, request, trace_id, span_id)

    def _inherit_request(self, span_id: int, parent_id: int) -> None:
        """A span started in a shared trace: it belongs to its parent's request."""
        request = self.store.spans.get(parent_id)
        if request is not None:
            self.store.span_started(span_id, request)

    def _root_ended(self, trace_id: int, span_id: int, request: RequestKey) -> None:
        coverage = self.coverage
        if coverage is not None:  # a request holding facts ended: did its boundaries match?
            coverage.request_ended(request, self.store.fact_names(request))
        if self.store.root_ended(trace_id, span_id, request):
            self._lineage.pop(trace_id, None)
            self.handoff.release(trace_id)

    def shutdown(self) -> None:
        self._enabled = False
        self.results.close(self.store)
        self.store.clear()  # traces in flight: their facts are released, not kept forever
        self._lineage.clear()
        if self._leave_dispatch is not None:  # riding on the provider's dispatch
            self._leave_dispatch()
            self._leave_dispatch = None
        if self._stop_hooks is not None:  # the fast closures (they do not check _enabled)
            detach(self, self._stop_hooks)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    # -- guarded spans ------------------------------------------------------------------------

    def watch(self, span: Span) -> None:
        """Check ``span`` when it ends (idempotent per guard; several guards chain)."""
        watchers: set[int] = attached(span, WATCHERS_ATTR, set)
        if id(self) in watchers:
            return
        watchers.add(id(self))
        wrap_end(span, self._guarded_end)
        LAST_WATCHED.set(ref(span))  # a stream gate wrapping this call's stream finds it

    def submit(self, span: Span, output: Any, boundary: str | None = None) -> None:
        """Use ``output`` as the span's output (instead of reading its attributes)."""
        if boundary is not None:
            span.set_attribute(sc.BOUNDARY, boundary)
        setattr(span, OUTPUT_ATTR, output)
        self.watch(span)

    def _guarded_end(self, span: Span, original: Callable[..., None]) -> Callable[..., None]:
        return _GuardedEnd(self, span, original)

    def _end_watched(self, span: Span, original: Callable[..., None], end_time: int | None) -> None:
        """A watched span ends: its outputs decided, then the SDK's ``original`` end."""
        if not self._enabled:
            original(end_time)
            return
        evaluations: list[Evaluation] = []
        internal: Exception | None = None
        results = self.results
        try:
            named = sc.BOUNDARY in span_attributes(span)  # before the guard writes it
            evaluations = self.accounting.evaluate(span)  # what the engine decided
            for evaluation in evaluations:
                results.annotate(span, evaluation, matched=not named)
        except Exception as exc:
            internal = exc
            if not getattr(exc, _COUNTED, False):  # a step below counted it already
                self._internal_error("span end", reraise=False)
        ended_with: BaseException | None = None
        try:
            original(end_time)  # the SDK's end(), or another guard's wrapper around it
        except BaseException as exc:
            ended_with = exc
        released(span)
        for evaluation in evaluations:
            try:
                results.record(span, evaluation)
            except Exception as exc:
                internal = exc
                self._internal_error("metrics", reraise=False)
        if internal is not None and self.raise_internal_errors:
            raise internal
        refused = next((e for e in evaluations if e.error is not None), None)
        if refused is not None and refused.error is not None and not streamed(span):
            deferred = self.handoff.deliver(span_ids(span)[0], refused.error)
            if not deferred:
                self.lineage.hand_up(span, refused.error)
                self.swallow.raised(span, refused.boundary)
                raise refused.error
        handed = getattr(span, HANDED_ATTR, NO_DICT).pop(id(self), None)
        if handed is not None and not in_flight(handed, sys.exc_info()[1]):
            raise handed  # a nested LLM span raised it, and something swallowed it
        if ended_with is not None:
            raise ended_with

    # -- adapters (the accounting decides) ----------------------------------------------------

    def check_output(self, span: Any, output: Any, boundary: str) -> Evaluation:
        """``Accounting.check_output``: an answer an adapter handed over, checked once."""
        return self.accounting.check_output(span, output, boundary)

    def delegate(self, boundary: str) -> None:
        """``boundary``'s answers are checked by a framework adapter (``check_output``)."""
        self.accounting.delegate(boundary)

    def request_of(self, span: Any) -> RequestKey:
        """The request (local root span) a live span belongs to: the key of its facts."""
        return self.accounting.request_of(span)

    def _internal_error(self, where: str, *, reraise: bool = True) -> None:
        """Log and count the exception being handled; re-raise it under the debugging switch
        (``raise_internal_errors``), marked as counted."""
        self.internal_errors += 1
        logger.exception("groundplane: internal error in %s (the application is unaffected)", where)
        error = sys.exc_info()[1]
        if reraise and self.raise_internal_errors and error is not None:
            setattr(error, _COUNTED, True)
            raise error


def streamed(span: Any) -> bool:
    """Does a stream gate decide ``span``'s answer (it raises the refusal, not the span's end)?"""
    return getattr(span, STREAM_ATTR, None) is not None


# The span a guard last watched in this context: the model call whose stream the application
# is about to wrap with ``guard_stream`` (a weak reference: nothing is kept alive by it).
LAST_WATCHED: ContextVar[ReferenceType[Span] | None] = ContextVar(
    "groundplane_last_watched", default=None
)

_COUNTED = "_groundplane_counted"  # on an internal error re-raised after it was counted


class _GuardedEnd:
    """``span.end`` while a guard watches the span: the guard's end, then the SDK's. An object,
    not a closure: a closure that names itself (to remove itself) is a reference cycle, which
    would keep every watched span alive until a garbage collection."""

    __slots__ = ("guard", "original", "span")

    def __init__(
        self, guard: GroundplaneSpanProcessor, span: Span, original: Callable[..., None]
    ) -> None:
        self.guard, self.span, self.original = guard, span, original

    def __call__(self, end_time: int | None = None) -> None:
        unwrap_end(self.span, self)
        self.guard._end_watched(self.span, self.original, end_time)
