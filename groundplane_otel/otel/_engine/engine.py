"""``Engine``: one guard's decisions, the only way into the engine.

Built from a ``GuardConfig``, it owns the parts that decide: the store of facts per request
(``store``), tool results into facts (``capture``), matching through ancestors (``lineage``)
and what a guarded span's end counts (``accounting``). Drivers tell it which spans started and
ended, in plain span fields (ids, name, attributes; the span itself is an opaque handle the
engine keeps its lineage on), hand it answers and facts, and get back what it decided
(``Evaluation``s). It writes no telemetry and raises no refusal: each driver does both its own
way (the live span processor, replay and the verifier, the stream gate, the guard's adapters).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping
from typing import Any

from opentelemetry.context import Context

from groundplane_otel._provenance import Provenance
from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine.accounting import Accounting
from groundplane_otel.otel._engine.capture import (
    FactCapture,
    ToolCall,
    read_arguments,
    read_tool_call,
)
from groundplane_otel.otel._engine.coverage import Coverage
from groundplane_otel.otel._engine.lineage import (
    CHAIN_ATTR,
    Ancestors,
    Lineage,
    chain_of,
    inherited,
    released,
)
from groundplane_otel.otel._engine.literal import parse_tool_text
from groundplane_otel.otel._engine.spans import (
    LLM_KEYS,
    LLM_PREFIXES,
    TOOL_KEYS,
    is_agent,
    is_llm,
)
from groundplane_otel.otel._engine.store import RequestKey, TraceRegistry, TraceStore
from groundplane_otel.otel.config import BoundarySpec, GuardConfig
from groundplane_otel.otel.environment import GUARD_LOGGER, raise_internal_errors_from_env
from groundplane_otel.otel.result import Evaluation

__all__ = ["COUNTED", "Engine"]

logger = logging.getLogger(GUARD_LOGGER)

COUNTED = "_groundplane_counted"  # on an internal error re-raised after it was counted


def _uncounted(kind: str, source: str, outcome: str) -> None:
    """The fact counter of a driver that counts no facts."""


class Engine:
    """One guard's engine (see the module docstring). ``count_fact``: the driver's counter of
    tool results (fact kind, source, outcome); ``length_limit``: the attribute value length
    limit of the spans it reads (a truncated output reads as such); ``coverage``: the live
    guard's match coverage (none in replay); ``raise_internal_errors``: re-raise its own bugs
    (a debugging switch; default from the environment)."""

    def __init__(
        self,
        config: GuardConfig,
        *,
        count_fact: Callable[[str, str, str], None] = _uncounted,
        length_limit: int | None = None,
        coverage: Coverage | None = None,
        raise_internal_errors: bool | None = None,
    ) -> None:
        if raise_internal_errors is None:
            raise_internal_errors = raise_internal_errors_from_env()
        self.config = config
        self.raise_internal_errors = raise_internal_errors
        self.internal_errors = 0
        self.guard = id(self)  # this guard's identity on the span handles it keeps lineage on
        self.store = store = TraceStore(config.limits, count_fact)
        # What the live hooks read inline (``sdk.hooks.Door``): a span that starts or ends no
        # request, and none in a trace with lineage, pays no call into the engine.
        self.requests, self.roots, self.roots_limit = store.requests, store.roots, store.roots_limit
        self.shared = store.shared  # traces holding two requests (each span's is looked up)
        self.capture = FactCapture(config.facts, self.store, length_limit)
        self.lineage = Lineage(config, self.guard)
        self.boundaries: Mapping[str, BoundarySpec] = self.lineage.boundaries
        self.coverage = coverage
        self.accounting = Accounting(
            config,
            self.store,
            self.lineage,
            self.internal_error,
            length_limit=length_limit,
            coverage=coverage,
        )
        # The stream gate's steps (``_stream/gate.py``) are the accounting's own.
        accounting = self.accounting
        self.stream_spec, self.stream_mode = accounting.stream_spec, accounting.stream_mode
        self.stream_view, self.stream_runner = accounting.stream_view, accounting.stream_runner
        self.stream_rest, self.check_streamed = accounting.stream_rest, accounting.check_streamed
        self.span_names = frozenset(
            s.match.span_name for s in config.boundaries if s.match.span_name
        )
        self.llm_names = sc.LLM_OPERATIONS | self.span_names  # names that may carry an answer
        self.by_tool = self.capture.by_tool  # tools whose results feed facts
        self._chain_limit = config.limits.max_spans_per_trace
        # Traces in which a guardable span started: only their spans look up their parent's
        # lineage (bounded like the store's roots; dropped when the last local root ends).
        self.traces: dict[int, None] = {}
        self._traces_limit = 4 * config.limits.max_traces

    chain_attr = CHAIN_ATTR  # the lineage a span handle holds
    llm_keys, llm_prefixes, tool_keys = LLM_KEYS, LLM_PREFIXES, TOOL_KEYS

    # -- spans starting ---------------------------------------------------------------------

    @staticmethod
    def parent_lineage(parent_context: Context | None) -> tuple[Any, ...] | None:
        """The lineage a span starting under ``parent_context`` inherits, if any."""
        return inherited(parent_context)

    def root_started(self, trace_id: int, span_id: int) -> None:
        """A local root span started: a request (the key of its facts) begins."""
        self.store.root_started(trace_id, span_id)

    def joined(self, span_id: int, parent_id: int) -> None:
        """A span started under ``parent_id`` in a trace holding two requests: it belongs to
        its parent's request."""
        store = self.store
        request = store.spans.get(parent_id)
        if request is not None:
            store.span_started(span_id, request)

    def started(
        self,
        span: Any,
        name: str,
        attributes: Mapping[str, Any],
        trace_id: int,
        inherited: tuple[Any, ...] | None,
    ) -> bool:
        """A span with a GenAI/OpenInference/groundplane key or an LLM-like name started: its
        lineage is kept on ``span``. True when it may carry an output a boundary guards (a
        model call's span, one naming a boundary, one the policy names): the driver then hands
        its end to ``decide``."""
        candidate = is_llm(name, attributes) or sc.BOUNDARY in attributes or name in self.span_names
        if candidate or is_agent(name, attributes):
            above = inherited[: self._chain_limit - 1] if inherited else ()
            # A watched span holds itself until it ends (``released``); an agent span nothing
            # watches never does (no reference cycle that only a garbage collection frees).
            chain = (span, *above) if candidate else Ancestors(above)
            setattr(span, CHAIN_ATTR, chain)
            traces = self.traces
            if trace_id not in traces:
                if len(traces) >= self._traces_limit:  # roots that never ended
                    traces.pop(next(iter(traces)), None)
                traces[trace_id] = None
        elif inherited:
            setattr(span, CHAIN_ATTR, inherited)
        return candidate

    # -- spans ending -----------------------------------------------------------------------

    def request_of_span(self, trace_id: int, span_id: int) -> RequestKey:
        """The request an ending span belongs to (forgotten: it ended)."""
        store = self.store
        return store.spans.pop(span_id, trace_id) if store.shared else trace_id

    def tool_ended(
        self,
        name: str,
        attributes: Mapping[str, Any],
        trace_id: int,
        span_id: int,
        request: RequestKey,
    ) -> None:
        """A span with a tool key ended: the facts its result feeds (into its request)."""
        call = read_tool_call(attributes, name)
        if call is not None:
            self._tool_call(call, attributes, trace_id, span_id, request)

    def _tool_call(
        self,
        call: ToolCall,
        attributes: Mapping[str, Any],
        trace_id: int,
        span_id: int,
        request: RequestKey,
    ) -> None:
        """``tool_ended`` of a span that records a tool call."""
        if sc.FACT_SOURCE not in attributes:
            coverage = self.coverage
            if coverage is not None:
                if call.tool not in self.by_tool:
                    coverage.tool_seen(call.tool)
                elif call.result is None:
                    self.store.registry(request)  # its end then reaches root_ended
                    coverage.resultless(request, call.tool)
            self.capture.capture(call, request, trace_id, span_id)

    def root_ended(self, trace_id: int, span_id: int, request: RequestKey) -> bool:
        """A local root span ended: its request's facts are released. True when it was the
        trace's last live root here (the driver then lets go of the trace too)."""
        coverage = self.coverage
        if coverage is not None:  # a request holding facts ended: did its boundaries match?
            coverage.request_ended(request, self.store.fact_names(request))
        if self.store.root_ended(trace_id, span_id, request):
            self.traces.pop(trace_id, None)
            return True
        return False

    def decide(self, span: Any) -> list[Evaluation]:
        """A span ``started`` returned True for ends: every outcome its end counts (usually
        none or one). Lineage reads its handles once, accounting decides over that record,
        lineage writes back once (``Lineage.settle``; ``python -m bench.rooms`` counts the
        engine rooms it enters)."""
        return self.lineage.settle(span, self.accounting.decide)

    released = staticmethod(released)  # a decided span's lineage no longer holds it

    def hand_up(self, span: Any, error: BaseException) -> None:
        """A refusal raised at ``span``'s end is raised again by the enclosing LLM spans of the
        same model call (``Lineage.hand_up``)."""
        self.lineage.hand_up(span, error)

    # -- answers and facts handed over ------------------------------------------------------

    def check_output(self, span: Any, output: Any, boundary: str) -> tuple[Evaluation, bool]:
        """An answer an adapter handed over for ``span``, checked once (see
        ``Accounting.check_output``): its evaluation, and whether it is a new outcome (the
        driver writes it then; else the span path counted it already)."""
        return self.accounting.check_output(span, output, boundary)

    def delegate(self, boundary: str) -> None:
        """``boundary``'s answers are checked by a framework adapter (``check_output``)."""
        self.accounting.delegate(boundary)

    def request_of(self, span: Any) -> RequestKey:
        """The request (local root span) a live span belongs to: the key of its facts."""
        return self.accounting.request_of(span)

    def registry(self, span: Any) -> TraceRegistry:
        """The writable fact registry of ``span``'s request."""
        return self.store.registry(self.request_of(span))

    def record_fact(
        self,
        span: Any,
        fact: str | None,
        value: Any,
        *,
        provenance: Provenance,
        source: str,
    ) -> None:
        """A tool result handed over in code for ``span``'s request (``Guard.record_fact``)."""
        self.capture.record_given(
            self.request_of(span), fact, value, provenance=provenance, source=source
        )

    def record_tool_text(
        self,
        span: Any,
        tool: str,
        arguments: Any,
        result: Any,
        call_id: str | None,
        *,
        source: str,
    ) -> str | None:
        """A tool call as the model was given it (arguments and result as text, e.g. by
        util-genai's completion hook), recorded for ``span``'s request as each fact its
        FactSpecs declare. A result that cannot be a fact is counted as what it is; why it
        cannot (bounded, content-free) is returned for the driver to log."""
        capture, limits = self.capture, self.config.limits
        if not capture.specs_for(tool):
            return None
        read = read_arguments(arguments, limits)
        specs = capture.specs_for(tool, read)
        if not specs:
            return None
        parsed = parse_tool_text(
            result, max_bytes=limits.max_payload_bytes, max_depth=limits.max_depth
        )
        context = span.get_span_context()
        provenance = Provenance(
            tool, read, f"{context.trace_id:032x}", f"{context.span_id:016x}", call_id
        )
        capture.record_parsed(
            specs, parsed, request=self.request_of(span), provenance=provenance, source=source
        )
        return None if parsed.ok else parsed.problem

    def restricts(self, tool: str) -> bool:
        """Does a fact ``tool``'s results feed hold restricted values (never echoed)?"""
        return self.capture.restricts(tool)

    # -- its own bugs, and the end ----------------------------------------------------------

    def internal_error(self, where: str, *, reraise: bool = True) -> None:
        """Log and count the exception being handled (a bug of the guard's own: the
        application is unaffected); re-raise it under ``raise_internal_errors``, marked as
        counted (``COUNTED``)."""
        self.internal_errors += 1
        logger.exception("groundplane: internal error in %s (the application is unaffected)", where)
        error = sys.exc_info()[1]
        if reraise and self.raise_internal_errors and error is not None:
            setattr(error, COUNTED, True)
            raise error

    def __len__(self) -> int:
        """Requests whose facts are held (``groundplane.traces.active``)."""
        return len(self.store)

    def close(self) -> None:
        """The guard stops: traces in flight release their facts (not kept forever)."""
        self.store.clear()
        self.traces.clear()

    # -- span started / ended, in plain fields ---------------------------------------------

    def span_started(
        self,
        span: Any,
        trace_id: int,
        span_id: int,
        parent_id: int,
        root: bool,
        name: str,
        attributes: Mapping[str, Any],
        parent: Any = None,
    ) -> bool:
        """A span started: ``root`` when it is a local root (its parent is remote or absent),
        ``parent`` its parent's handle when the driver holds it (its lineage is inherited).
        True when the engine decides its end (``decide``). The live hooks (``sdk/hooks.py``)
        take these same steps inline, on the SDK span's own fields."""
        inherited = None
        if root:
            self.store.root_started(trace_id, span_id)  # ``root_started``, inline: a call less
        else:
            if trace_id in self.shared:  # two requests in one trace: its parent's
                self.joined(span_id, parent_id)
            if trace_id in self.traces:  # a guardable span started in this trace
                inherited = chain_of(parent) or None
        if not self.boundaries:
            return False
        if (
            LLM_KEYS.isdisjoint(attributes)
            and not name.startswith(LLM_PREFIXES)
            and name not in self.llm_names
        ):
            if inherited:
                setattr(span, CHAIN_ATTR, inherited)
            return False
        return self.started(span, name, attributes, trace_id, inherited)

    def span_ended(
        self, trace_id: int, span_id: int, root: bool, name: str, attributes: Mapping[str, Any]
    ) -> None:
        """A span ended (after ``decide``, for a span the engine decides): the facts its tool
        result feeds, and, for a local root, its request's facts released."""
        store = self.store  # ``request_of_span``, inline: a call less per span
        request = store.spans.pop(span_id, trace_id) if store.shared else trace_id
        if self.by_tool and not TOOL_KEYS.isdisjoint(attributes):
            # ``tool_ended``, its first step inline: most spans with a tool key (an agent's, a
            # model call's: ``gen_ai.operation.name``) record no tool call (a call less each).
            call = read_tool_call(attributes, name)
            if call is not None:
                self._tool_call(call, attributes, trace_id, span_id, request)
        if root:
            self.root_ended(trace_id, span_id, request)
