"""GroundplaneSpanProcessor: the live driver of the engine.

It translates the SDK's span hooks into the engine's span started / span ended (``Engine``, the
engine's one door), and does what only a live guard does: for spans that may carry a guarded
output, ``on_start`` wraps ``end`` on that span instance (the SDK freezes a span before any
processor hook runs at its end): the engine decides -> the driver's ``Results`` write public
``add_event``/``set_status``/``add_link`` -> the original ``end()`` (every processor and exporter
sees the enriched span, whatever their order) -> raise (enforce mode), or hand the refusal to an
``enforce()`` scope (``handoff``). It owns this guard's ``Handoff`` and ``SwallowWatch``.

Its per-span hooks are the closures of ``sdk.hooks``, one implementation built once per guard
over the engine's door and this driver's steps (``_started``, ``_root_ended``, the swallow
watch): bound on the instance (``attach``), and on a known SDK also the provider's own dispatch
(``dispatch.ride``). They read the SDK span's fields inline, or on an SDK whose layout they do
not know the same fields through the public span API. The class's ``on_start``/``on_end`` do
nothing: they are what a shut-down guard keeps (``detach``). Every touch of an SDK private field
is in ``_engine/sdk``.
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
from groundplane_otel.otel._engine import (
    COUNTED,
    HANDED_ATTR,
    NO_DICT,
    OUTPUT_ATTR,
    STREAM_ATTR,
    WATCHERS_ATTR,
    Coverage,
    Engine,
    RequestKey,
    Results,
    attach,
    attached,
    detach,
    sdk_layout,
    span_attributes,
    span_ids,
    unwrap_end,
    wrap_end,
)
from groundplane_otel.otel._live.handoff import Handoff, in_flight
from groundplane_otel.otel._live.swallowed import SwallowWatch
from groundplane_otel.otel.config import GuardConfig
from groundplane_otel.otel.environment import (
    GROUNDPLANE_OTEL_RAISE_INTERNAL_ERRORS as RAISE_INTERNAL_ERRORS_ENV,
)
from groundplane_otel.otel.environment import GUARD_LOGGER
from groundplane_otel.otel.result import Evaluation

__all__ = ["LAST_WATCHED", "RAISE_INTERNAL_ERRORS_ENV", "GroundplaneSpanProcessor", "streamed"]

logger = logging.getLogger(GUARD_LOGGER)


class GroundplaneSpanProcessor(SpanProcessor):
    """The guard. Build it with ``install()``; one instance per TracerProvider.

    This constructor builds the guard's ``Engine`` from its ``config`` and takes the driver's
    ``results`` (the live ``Telemetry``). ``meter_provider``: where
    ``groundplane.outputs.swallowed`` is counted (none: not counted); ``length_limit``: the
    provider's attribute value length limit."""

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
        self.config = config
        self.results = results
        self.engine = engine = Engine(
            config,
            count_fact=results.count_fact,
            length_limit=length_limit,
            coverage=coverage,
            raise_internal_errors=raise_internal_errors,
        )
        self.guard = engine.guard  # the guard's identity on span instances
        self.handoff = Handoff()  # this guard's enforce() scopes
        self.swallow = SwallowWatch(meter_provider or NoOpMeterProvider(), self.handoff)
        results.watch_traces(engine)  # groundplane.traces.active = len(engine)
        self._enabled = True
        self.known_layout = sdk_layout()
        self._leave_dispatch: Callable[[], None] | None = None  # set by install (dispatch.ride)
        self._stop_hooks = attach(self)  # closures: every span of the app goes through them

    @property
    def internal_errors(self) -> int:
        """The guard's own bugs counted so far (the engine's and this driver's)."""
        return self.engine.internal_errors

    @property
    def raise_internal_errors(self) -> bool:
        return self.engine.raise_internal_errors

    @raise_internal_errors.setter
    def raise_internal_errors(self, value: bool) -> None:
        self.engine.raise_internal_errors = value

    # -- SpanProcessor ------------------------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Nothing: a live guard's hooks are its own closures (``sdk.hooks.attach``, bound at
        construction); these are what it has once shut down."""

    def on_end(self, span: ReadableSpan) -> None:
        """Nothing (see ``on_start``)."""

    def _started(
        self,
        span: Span,
        name: str,
        attributes: Mapping[str, Any],
        trace_id: int,
        inherited: tuple[Any, ...] | None,
    ) -> None:
        """A span with a GenAI/OpenInference/groundplane key or an LLM-like name started: the
        engine keeps its lineage; one that may carry a guarded output is watched."""
        if self.engine.started(span, name, attributes, trace_id, inherited):
            self.watch(span)

    def _root_ended(self, trace_id: int, span_id: int, request: RequestKey) -> None:
        if self.engine.root_ended(trace_id, span_id, request):
            self.handoff.release(trace_id)

    def shutdown(self) -> None:
        self._enabled = False
        self.results.close(self.engine)
        self.engine.close()  # traces in flight: their facts are released, not kept forever
        if self._leave_dispatch is not None:  # riding on the provider's dispatch
            self._leave_dispatch()
            self._leave_dispatch = None
        detach(self, self._stop_hooks)  # the closures (they do not check _enabled)

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    # -- guarded spans ------------------------------------------------------------------------

    def watch(self, span: Span) -> None:
        """Check ``span`` when it ends (idempotent per guard; several guards chain)."""
        watchers: set[int] = attached(span, WATCHERS_ATTR, set)
        if self.guard in watchers:
            return
        watchers.add(self.guard)
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
        """A watched span ends: the engine decides its outputs, the driver writes them, then the
        SDK's ``original`` end, then the refusal."""
        if not self._enabled:
            original(end_time)
            return
        evaluations: list[Evaluation] = []
        internal: Exception | None = None
        results = self.results
        try:
            named = sc.BOUNDARY in span_attributes(span)  # before the guard writes it
            evaluations = self.engine.decide(span)  # what the engine decided
            for evaluation in evaluations:
                results.annotate(span, evaluation, matched=not named)
        except Exception as exc:
            internal = exc
            if not getattr(exc, COUNTED, False):  # a step below counted it already
                self._internal_error("span end", reraise=False)
        ended_with: BaseException | None = None
        try:
            original(end_time)  # the SDK's end(), or another guard's wrapper around it
        except BaseException as exc:
            ended_with = exc
        self.engine.released(span)
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
                self.engine.hand_up(span, refused.error)
                self.swallow.raised(span, refused.boundary)
                raise refused.error
        handed = getattr(span, HANDED_ATTR, NO_DICT).pop(self.guard, None)
        if handed is not None and not in_flight(handed, sys.exc_info()[1]):
            raise handed  # a nested LLM span raised it, and something swallowed it
        if ended_with is not None:
            raise ended_with

    # -- adapters (the engine decides, the driver writes) -------------------------------------

    def check_output(self, span: Any, output: Any, boundary: str) -> Evaluation:
        """An answer an adapter handed over, checked once by the engine; a new outcome is
        written on ``span`` (an answer the span path already counted is not written again)."""
        evaluation, new = self.engine.check_output(span, output, boundary)
        if new:
            self.write(span, evaluation)
        return evaluation

    def write(self, span: Any, evaluation: Evaluation) -> None:
        """Write an outcome decided outside a watched span's end (an adapter's hand-over, a
        boundary the application ran itself): on ``span`` while it records, then counted."""
        results = self.results
        if span.is_recording():
            results.annotate(span, evaluation)
        results.record(span, evaluation)

    def delegate(self, boundary: str) -> None:
        """``boundary``'s answers are checked by a framework adapter (``check_output``)."""
        self.engine.delegate(boundary)

    def request_of(self, span: Any) -> RequestKey:
        """The request (local root span) a live span belongs to: the key of its facts."""
        return self.engine.request_of(span)

    def _internal_error(self, where: str, *, reraise: bool = True) -> None:
        """``Engine.internal_error``: logged and counted once for the guard."""
        self.engine.internal_error(where, reraise=reraise)


def streamed(span: Any) -> bool:
    """Does a stream gate decide ``span``'s answer (it raises the refusal, not the span's end)?"""
    return getattr(span, STREAM_ATTR, None) is not None


# The span a guard last watched in this context: the model call whose stream the application
# is about to wrap with ``guard_stream`` (a weak reference: nothing is kept alive by it).
LAST_WATCHED: ContextVar[ReferenceType[Span] | None] = ContextVar(
    "groundplane_last_watched", default=None
)


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
