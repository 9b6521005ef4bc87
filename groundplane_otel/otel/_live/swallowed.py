"""A refusal the framework swallowed: counted and named, so telemetry never claims a block that
did not happen.

In enforce mode the span path raises the guard's exception from the guarded span's ``end()``.
Some frameworks end spans in code that catches everything (LangChain's callback manager, the
OpenAI Agents SDK's trace processors, Traceloop's ``@dont_throw`` on streams): the exception is
logged, the answer goes on to the application, and ``groundplane.outputs`` still says
``blocked``. ``SwallowWatch`` (the guard's, fed by its own hooks: no extra span processor)
notices it: when the guard raises at a span's end while one of those frameworks' catching frames
is on the call stack, the block is remembered, and when the *enclosing run* ends — its nearest
enclosing agent span, else its local root — without the exception in flight and without ERROR
status, the block was swallowed. (An application that catches the exception itself is never
counted: it got the refusal.) Then ``groundplane.outputs.swallowed`` counts it (boundary, mode,
framework) and one warning per boundary names the framework's own mechanism to use instead (an
adapter in ``groundplane_otel.adapters``).

Not watched: blocks an ``enforce()`` scope of this guard waits for (it raises them on exit), and
answers an adapter checked (``handled``: the adapter hands the verdict to the framework's own
guardrail mechanism). A guarded span that is itself a local root cannot be watched (nothing
encloses it). Hook points: ``raised`` at the exact raise in the guard's end wrapper; ``ended``
from the guard's ``on_end`` only while a block is pending (``pending`` is truthy), so spans
cost nothing otherwise; ``handled(span)`` from the adapters (``Guard.mark_handled``). Each
guard's processor owns one watch: nothing here is shared between guards or with a replay.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from types import FrameType
from typing import Any

from opentelemetry.metrics import MeterProvider
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from groundplane_otel.errors import FactBoundaryError
from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine import is_agent, span_attributes
from groundplane_otel.otel._live.handoff import Handoff
from groundplane_otel.otel.environment import GUARD_LOGGER

__all__ = ["SwallowWatch", "mechanism_for"]

logger = logging.getLogger(GUARD_LOGGER)
_LIMIT = 4096  # pending blocks (and adapter-checked spans) remembered at most, oldest dropped

_LANGCHAIN = (
    "langchain",
    "LangChain's callback manager swallows it; use "
    "groundplane_otel.adapters.langchain.GroundplaneMiddleware (create_agent) or "
    "post_model_hook (create_react_agent)",
)
_AGENTS = (
    "openai_agents",
    "the OpenAI Agents SDK's trace processors swallow it; use "
    "groundplane_otel.adapters.openai_agents.guard(agent) (an output guardrail)",
)
_TRACELOOP = (
    "traceloop",
    "Traceloop ends streamed spans inside @dont_throw; wrap the call in "
    "groundplane_otel.otel.enforce() or use a non-streamed call",
)
# The modules whose frames catch what a span end raises: (module prefix, framework, advice).
_SWALLOWERS: tuple[tuple[str, tuple[str, str]], ...] = (
    ("langchain_core.callbacks", _LANGCHAIN),
    ("agents.tracing", _AGENTS),
    ("opentelemetry.instrumentation.openai.utils", _TRACELOOP),  # @dont_throw
)


def mechanism_for(modules: Iterable[str]) -> tuple[str, str] | None:
    """(framework, advice) of the first module (innermost caller first) that swallows what a
    span end raises, or None."""
    for module in modules:
        for prefix, found in _SWALLOWERS:
            if module == prefix or module.startswith(prefix + "."):
                return found
    return None


def _callers() -> Iterator[str]:
    """The module names on the current call stack, innermost first."""
    frame: FrameType | None = sys._getframe(1)
    while frame is not None:
        name = frame.f_globals.get("__name__")
        if isinstance(name, str):
            yield name
        frame = frame.f_back


@dataclass(frozen=True, slots=True)
class _Block:
    span_id: int
    start: int
    boundary: str
    framework: str
    advice: str


class SwallowWatch:
    """See the module docstring. One per guard: its pending blocks, the spans its adapters
    checked (``handled``) and the ``enforce()`` scopes of its ``handoff`` are its own."""

    def __init__(self, meter_provider: MeterProvider, handoff: Handoff) -> None:
        meter = meter_provider.get_meter(sc.METER_NAME, schema_url=None)
        self.swallowed = meter.create_counter(
            sc.METRIC_SWALLOWED,
            unit=sc.UNIT_OUTPUT,
            description="Blocked outputs whose exception never reached the application.",
        )
        self.pending: dict[int, list[_Block]] = {}  # trace id -> blocks waiting for their run
        self._lock = threading.Lock()
        self._warned: set[str] = set()
        self.handoff = handoff
        self._handled: dict[int, None] = {}  # span ids whose answer an adapter checked

    def handled(self, span: Any) -> None:
        """An adapter checked this span's answer and hands the verdict to its framework."""
        context = span.get_span_context()
        if len(self._handled) >= _LIMIT:
            self._handled.pop(next(iter(self._handled)), None)
        self._handled[context.span_id] = None

    def raised(self, span: Any, boundary: str) -> None:
        """The guard raises its refusal at ``span``'s end (enforce mode)."""
        try:
            self._raised(span, boundary)
        except Exception:  # never into the application
            logger.exception("groundplane: internal error in the swallow watch")

    def _raised(self, span: Any, boundary: str) -> None:
        context = span.get_span_context()
        if self._handled.pop(context.span_id, 0) is None:
            return  # an adapter checked it: the framework's own mechanism delivers the verdict
        parent = span.parent
        if parent is None or parent.is_remote:
            return  # a local root: nothing encloses it
        trace_id = context.trace_id
        if self.handoff.current_scopes() or trace_id in self.handoff.awaited:
            return  # an enforce() scope raises it
        swallower = mechanism_for(_callers())
        if swallower is None:
            return  # whoever ended the span gets the exception (the app may catch it: its call)
        block = _Block(context.span_id, span.start_time or 0, boundary, *swallower)
        with self._lock:
            if sum(map(len, self.pending.values())) >= _LIMIT:
                self.pending.pop(next(iter(self.pending)), None)
            self.pending.setdefault(trace_id, []).append(block)

    def ended(self, span: ReadableSpan) -> None:
        """A span ended while blocks are pending: if it is the run of some, decide them."""
        try:
            context = span.get_span_context()
            if context is not None and self.pending.get(context.trace_id):
                self._settle(span, span_attributes(span), context.trace_id)
        except Exception:  # never into the application
            logger.exception("groundplane: internal error in the swallow watch")

    def _settle(self, span: ReadableSpan, attributes: Mapping[str, Any], trace_id: int) -> None:
        """``span`` ended in a trace with pending blocks: for those it encloses (started
        before them) as their run (an agent span, or the local root), decide."""
        parent = span.parent
        root = parent is None or parent.is_remote
        if not (root or is_agent(span.name, attributes)):
            return
        start = span.start_time or 0
        span_id = span.get_span_context().span_id  # type: ignore[union-attr]
        with self._lock:
            blocks = self.pending.get(trace_id, [])
            mine = [b for b in blocks if b.span_id != span_id and (root or b.start >= start)]
            if not mine:
                return
            rest = [b for b in blocks if b not in mine]
            if rest:
                self.pending[trace_id] = rest
            else:
                self.pending.pop(trace_id, None)
        in_flight = isinstance(sys.exc_info()[1], FactBoundaryError)
        if in_flight or span.status.status_code is StatusCode.ERROR:
            return  # the refusal propagated through the run: the application saw it
        for block in mine:
            labels = {
                sc.BOUNDARY: block.boundary,
                sc.MODE: "enforce",
                sc.FRAMEWORK: block.framework,
            }
            self.swallowed.add(1, labels)
            if block.boundary not in self._warned and len(self._warned) < 64:
                self._warned.add(block.boundary)
                logger.warning(
                    "groundplane: boundary %r blocked an answer, but the exception never reached "
                    "the application (the run %r ended normally): %s",
                    block.boundary,
                    span.name,
                    block.advice,
                )
