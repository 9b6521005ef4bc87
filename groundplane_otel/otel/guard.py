"""GroundplaneSpanProcessor: tool spans become facts; guarded LLM spans are checked as they end.

The SDK freezes a span before any processor hook runs at its end, so for spans that may carry
a guarded output, ``on_start`` wraps ``end`` on that span instance: check -> public
``add_event``/``set_status``/``add_link`` -> the original ``end()`` (every processor and
exporter sees the enriched span, whatever their order) -> raise (enforce mode).

Lineage (to match an agent name on an ancestor, and to check each answer once) lives on the span
instances themselves: a span that is an agent or may carry an output (a *guardable* span), and
every span below one, holds the tuple of its enclosing guardable spans. Spans outside any agent
or LLM span carry nothing and cost one context lookup; nothing is locked or cleaned up.
"""

from __future__ import annotations

import functools
import logging
import operator
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any, cast

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import SpanContext, StatusCode

from groundplane_otel.otel import _scopes
from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel.capture import FactCapture, read_tool_call
from groundplane_otel.otel.config import BoundarySpec, GuardConfig, MatchSpec
from groundplane_otel.otel.environment import (
    GROUNDPLANE_OTEL_RAISE_INTERNAL_ERRORS as RAISE_INTERNAL_ERRORS_ENV,
)
from groundplane_otel.otel.evaluate import CheckPlan, evaluate, plan_checks
from groundplane_otel.otel.output import OutputRead, read_output
from groundplane_otel.otel.result import Evaluation, Finding, OutputUnchecked
from groundplane_otel.otel.store import TraceStore
from groundplane_otel.otel.telemetry import Telemetry

__all__ = ["RAISE_INTERNAL_ERRORS_ENV", "GroundplaneSpanProcessor"]

logger = logging.getLogger(__name__)

_OUTPUT_ATTR = "_groundplane_output"  # an output the app submitted for this span instance
_WATCHERS_ATTR = "_groundplane_watchers"  # ids of the guards whose end() wrapper is installed
_CHAIN_ATTR = "_groundplane_chain"  # enclosing guardable spans (the span itself first if it is one)
_COVERED_ATTR = "_groundplane_covered"  # [(guard id, boundary, answer)] checked below this span
_HANDED_ATTR = "_groundplane_handed"  # {guard id: exception} raised by a nested LLM span
_NO_DICT: dict[str, Any] = {}


def _same_answer(left: Any, right: Any) -> bool:
    """Is ``right`` the answer ``left`` (checked below) again? Equal JSON values are; a value
    that cannot even be compared (a cycle) is only itself."""
    if left is right:
        return True
    try:
        return bool(left == right)
    except (RecursionError, TypeError, ValueError):
        return False


# SpanContext is a tuple (trace_id, span_id, is_remote, ...) in every 1.x API: read it by index
# on the hot path (a property call costs several times more), by attribute if that changes.
_trace_id_of: Callable[[Any], int] = operator.attrgetter("trace_id")
_is_remote: Callable[[Any], bool] = operator.attrgetter("is_remote")
if tuple(SpanContext(1, 2, True))[:3] == (1, 2, True):
    _trace_id_of, _is_remote = operator.itemgetter(0), operator.itemgetter(2)


@functools.cache
def _sdk_layout() -> bool:
    """Does this SDK keep what the fast hooks read where they read it (SpanContext as a
    ``(trace_id, span_id, is_remote, ...)`` tuple, ``Span._parent``/``_context``/``_name`` and
    ``_attributes._dict``, on live and on finished spans)? Otherwise the generic hooks run.
    Probed once, on a span of a throwaway provider."""
    try:
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.sampling import ALWAYS_ON

        remote = trace.NonRecordingSpan(SpanContext(1, 3, True))
        tracer = TracerProvider(sampler=ALWAYS_ON).get_tracer("groundplane_otel.probe")
        span: Any = tracer.start_span(
            "probe", context=trace.set_span_in_context(remote), attributes={"k": "v"}
        )
        done: Any = span._readable_span()
        return (
            tuple(span.get_span_context())[:3] == (1, span.get_span_context().span_id, False)
            and span._parent is not None
            and span._parent[2] is True
            and span._context[0] == 1
            and span._name == "probe"
            and span._attributes._dict == {"k": "v"}
            and done._parent is span._parent
            and done._context[0] == 1
            and done._attributes._dict == {"k": "v"}
        )
    except Exception:  # pragma: no cover - another SDK layout
        return False


def _attributes(span: ReadableSpan) -> Mapping[str, Any]:
    """The span's attributes, read-only. The SDK's BoundedAttributes is a Python-level Mapping
    whose ``get`` raises and catches KeyError on every miss; its plain dict is read directly
    (dict reads are atomic under the GIL), which keeps unmatched spans cheap."""
    raw = getattr(getattr(span, "_attributes", None), "_dict", None)
    if isinstance(raw, dict):
        return raw
    return cast(Mapping[str, Any], span.attributes or {})


def _ids(span: ReadableSpan) -> tuple[int, int]:
    context = span.get_span_context()
    assert context is not None
    return context.trace_id, context.span_id


_LLM_KEYS = frozenset(
    {
        sc.GEN_AI_OPERATION_NAME,
        sc.GEN_AI_AGENT_NAME,
        sc.OI_SPAN_KIND,
        sc.OI_AGENT_NAME,
        sc.BOUNDARY,
    }
)
_LLM_PREFIXES = tuple(f"{operation} " for operation in sc.LLM_OPERATIONS)
_TOOL_KEYS = frozenset(
    {
        sc.GEN_AI_TOOL_NAME,
        sc.GEN_AI_OPERATION_NAME,
        sc.OI_SPAN_KIND,
        sc.TRACELOOP_ENTITY_OUTPUT,
        sc.TRACELOOP_SPAN_KIND,
    }
)


def _operation(name: str, attributes: Mapping[str, Any]) -> Any:
    return attributes.get(sc.GEN_AI_OPERATION_NAME) or name.partition(" ")[0]


def _is_agent(name: str, attributes: Mapping[str, Any]) -> bool:
    return (
        attributes.get(sc.GEN_AI_OPERATION_NAME) == sc.OP_INVOKE_AGENT
        or sc.GEN_AI_AGENT_NAME in attributes
        or sc.OI_AGENT_NAME in attributes
        or attributes.get(sc.OI_SPAN_KIND) == sc.OI_KIND_AGENT
        or name.partition(" ")[0] == sc.OP_INVOKE_AGENT
    )


def _agent_names(attributes: Mapping[str, Any]) -> list[Any]:
    return [attributes[key] for key in sc.AGENT_NAME_KEYS if key in attributes]


def _matches(
    match: MatchSpec, name: str, attributes: Mapping[str, Any], agents: Callable[[], set[Any]]
) -> bool:
    if match.is_empty():
        return False
    if match.span_name is not None and name != match.span_name:
        return False
    if match.operation_name is not None and _operation(name, attributes) != match.operation_name:
        return False
    if any(attributes.get(key) != value for key, value in match.attributes.items()):
        return False
    return match.agent_name is None or match.agent_name in agents()


def _same_call(span: Any, chain: tuple[Any, ...]) -> list[Any]:
    """The LLM spans enclosing ``span`` up to the first agent span: other instrumentations'
    spans of the same model call (an LLM span does not contain another model call)."""
    found = []
    for ancestor in chain:
        if ancestor is span:
            continue
        if _is_agent(ancestor.name, _attributes(ancestor)):
            break
        found.append(ancestor)
    return found


def _ignore_start(span: Any, parent_context: Context | None = None) -> None:
    """The hook of a guard that was shut down."""


def _ignore_end(span: Any) -> None:
    """The hook of a guard that was shut down."""


class GroundplaneSpanProcessor(SpanProcessor):
    """The guard. Build it with ``install()``; one instance per TracerProvider."""

    def __init__(
        self,
        config: GuardConfig,
        telemetry: Telemetry,
        *,
        length_limit: int | None = None,
        raise_internal_errors: bool | None = None,
    ) -> None:
        if raise_internal_errors is None:
            flag = os.environ.get(RAISE_INTERNAL_ERRORS_ENV, "").strip().lower()
            raise_internal_errors = flag in ("1", "true", "yes")
        self.config = config
        self.telemetry = telemetry
        self.length_limit = length_limit
        self.raise_internal_errors = raise_internal_errors
        self.internal_errors = 0
        self.store = TraceStore(config.limits, telemetry.count_fact)
        telemetry.watch_traces(self.store)  # groundplane.traces.active = len(store)
        self.capture = FactCapture(config.facts, self.store, length_limit)
        self.boundaries = {spec.name: spec for spec in config.boundaries}
        self._plans: dict[str, tuple[CheckPlan, ...]] = {
            spec.name: plan_checks(spec.checks, spec.facts) for spec in config.boundaries
        }
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
        self._unknown_warned: set[str] = set()
        if _sdk_layout():  # per-instance closures: every span of the app goes through them
            self.on_start, self.on_end = self._fast_hooks()  # type: ignore[method-assign,assignment]

    # -- SpanProcessor ------------------------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        """Generic hook (the fast closures of ``_fast_hooks`` replace it on a known SDK)."""
        if not self._enabled:
            return
        try:
            parent = span.parent
            inherited: tuple[Any, ...] | None = None
            if parent is None or parent.is_remote:
                trace_id = span.get_span_context().trace_id
                self.store.root_started(trace_id)
                _scopes.bind(trace_id)
            else:
                trace_id = parent.trace_id
                if trace_id in self._lineage:
                    inherited = self._inherited(parent_context)
            if not self.boundaries:
                return
            name, attributes = span.name, _attributes(span)
            if (
                _LLM_KEYS.isdisjoint(attributes)
                and not name.startswith(_LLM_PREFIXES)
                and name not in self._llm_names
            ):
                if inherited:
                    vars(span)[_CHAIN_ATTR] = inherited
                return
            self._started(span, name, attributes, trace_id, inherited)
        except Exception:
            self._internal_error("on_start")

    def on_end(self, span: ReadableSpan) -> None:
        """Generic hook (the fast closures of ``_fast_hooks`` replace it on a known SDK)."""
        if not self._enabled:
            return
        try:
            attributes = _attributes(span)
            if self.capture.by_tool and not _TOOL_KEYS.isdisjoint(attributes):
                self._tool_ended(span, attributes)
            parent = span.parent
            if parent is None or parent.is_remote:
                self._root_ended(_ids(span)[0])
        except Exception:
            self._internal_error("on_end")

    def _fast_hooks(self) -> tuple[Callable[..., None], Callable[[ReadableSpan], None]]:
        """``on_start``/``on_end`` as closures over what they read, on the SDK span's own
        fields (``_FAST_LAYOUT``): the same decisions as the generic hooks, at a fraction of
        the cost for the spans the guard ignores (no attribute lookups on ``self``, no
        property calls)."""
        processor, store, lineage = self, self.store, self._lineage
        roots, traces, roots_limit = store._roots, store._traces, store._roots_limit
        scopes, bind = _scopes.current_scopes, _scopes.bind
        llm_disjoint, tool_disjoint = _LLM_KEYS.isdisjoint, _TOOL_KEYS.isdisjoint
        prefixes, llm_names = _LLM_PREFIXES, self._llm_names
        guarded, by_tool = bool(self.boundaries), bool(self.capture.by_tool)

        def on_start(span: Any, parent_context: Context | None = None) -> None:
            try:
                parent = span._parent
                inherited = None
                if parent is None or parent[2]:  # a local root: TraceStore.root_started
                    trace_id = span._context[0]
                    roots.setdefault(trace_id, []).append(None)
                    if len(roots) > roots_limit:
                        store.root_started(trace_id)  # prunes
                    if scopes():
                        bind(trace_id)
                else:
                    trace_id = parent[0]
                    if trace_id in lineage:  # a guardable span started in this trace
                        inherited = processor._inherited(parent_context)
                if not guarded:
                    return
                name, attributes = span._name, span._attributes._dict
                if (
                    llm_disjoint(attributes)
                    and not name.startswith(prefixes)
                    and name not in llm_names
                ):
                    if inherited:
                        span.__dict__[_CHAIN_ATTR] = inherited
                    return
                processor._started(span, name, attributes, trace_id, inherited)
            except Exception:
                processor._internal_error("on_start")

        def on_end(span: Any) -> None:
            try:
                if by_tool:
                    attributes = span._attributes._dict
                    if not tool_disjoint(attributes):
                        processor._tool_ended(span, attributes)
                parent = span._parent
                if parent is None or parent[2]:  # a local root: TraceStore.root_ended
                    trace_id = span._context[0]
                    live = roots.get(trace_id)
                    if live is not None and trace_id not in traces:  # no facts held
                        try:  # noqa: SIM105 - contextlib.suppress costs more than this work
                            live.pop()
                        except IndexError:  # another root of this trace emptied it meanwhile
                            pass
                        if not live:
                            roots.pop(trace_id, None)
                            lineage.pop(trace_id, None)
                        return
                    processor._root_ended(trace_id)  # the store decides, under its lock
            except Exception:
                processor._internal_error("on_end")

        return on_start, on_end

    @staticmethod
    def _inherited(parent_context: Context | None) -> tuple[Any, ...] | None:
        """The lineage the parent span (current in ``parent_context``) holds, if any."""
        above = trace.get_current_span(parent_context)
        chain: tuple[Any, ...] | None = getattr(above, "__dict__", _NO_DICT).get(_CHAIN_ATTR)
        return chain

    def _started(
        self,
        span: Span,
        name: str,
        attributes: Mapping[str, Any],
        trace_id: int,
        inherited: tuple[Any, ...] | None,
    ) -> None:
        """A span with a GenAI/OpenInference/groundplane key or an LLM-like name started."""
        candidate = self._candidate(name, attributes)
        if candidate or _is_agent(name, attributes):
            chain = (span, *inherited[: self._chain_limit - 1]) if inherited else (span,)
            vars(span)[_CHAIN_ATTR] = chain
            lineage = self._lineage
            if trace_id not in lineage:
                if len(lineage) >= self._lineage_limit:  # roots that never ended
                    lineage.pop(next(iter(lineage)), None)
                lineage[trace_id] = None
        elif inherited:
            vars(span)[_CHAIN_ATTR] = inherited
        if candidate:
            self.watch(span)

    def _candidate(self, name: str, attributes: Mapping[str, Any]) -> bool:
        """May this span carry an output a boundary guards (checked again when it ends)?"""
        return (
            attributes.get(sc.GEN_AI_OPERATION_NAME) in sc.LLM_OPERATIONS
            or name.partition(" ")[0] in sc.LLM_OPERATIONS
            or attributes.get(sc.OI_SPAN_KIND) in sc.OI_LLM_KINDS
            or sc.BOUNDARY in attributes
            or name in self._span_names
        )

    def _tool_ended(self, span: ReadableSpan, attributes: Mapping[str, Any]) -> None:
        """A span with a tool key ended: the facts its result feeds."""
        call = read_tool_call(attributes, span.name)
        if call is not None and sc.FACT_SOURCE not in attributes:
            trace_id, span_id = _ids(span)
            self.capture.capture(call, trace_id, span_id)

    def _root_ended(self, trace_id: int) -> None:
        if self.store.root_ended(trace_id):
            self._lineage.pop(trace_id, None)

    def shutdown(self) -> None:
        self._enabled = False
        self.telemetry.close(self.store)
        if "on_start" in vars(self):  # the fast closures (they do not check _enabled)
            self.on_start, self.on_end = _ignore_start, _ignore_end  # type: ignore[method-assign]

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        return True

    # -- guarded spans ------------------------------------------------------------------------

    def watch(self, span: Span) -> None:
        """Check ``span`` when it ends (idempotent per guard; several guards chain)."""
        watchers: set[int] = vars(span).setdefault(_WATCHERS_ATTR, set())
        if id(self) in watchers:
            return
        watchers.add(id(self))
        span.end = self._guarded_end(span, span.end)  # type: ignore[method-assign]

    def submit(self, span: Span, output: Any, boundary: str | None = None) -> None:
        """Use ``output`` as the span's output (instead of reading its attributes)."""
        if boundary is not None:
            span.set_attribute(sc.BOUNDARY, boundary)
        setattr(span, _OUTPUT_ATTR, output)
        self.watch(span)

    def _guarded_end(self, span: Span, original: Callable[..., None]) -> Callable[..., None]:
        def end(end_time: int | None = None) -> None:
            if vars(span).get("end") is end:
                del vars(span)["end"]  # back to the SDK's end(): a second call is harmless
            if not self._enabled:
                original(end_time)
                return
            evaluation: Evaluation | None = None
            internal: Exception | None = None
            try:
                evaluation = self._evaluate(span)
                if evaluation is not None:
                    self.telemetry.annotate(span, evaluation)
            except Exception as exc:
                internal = exc
                self._internal_error("span end", reraise=False)
            ended_with: BaseException | None = None
            try:
                original(end_time)  # the SDK's end(), or another guard's wrapper around it
            except BaseException as exc:
                ended_with = exc
            if evaluation is not None:
                try:
                    self.telemetry.record(span, evaluation)
                except Exception as exc:
                    internal = exc
                    self._internal_error("metrics", reraise=False)
            if internal is not None and self.raise_internal_errors:
                raise internal
            if evaluation is not None and evaluation.error is not None:
                deferred = _scopes.deliver(_ids(span)[0], evaluation.error)
                if not deferred:
                    self._hand_up(span, evaluation.error)
                    raise evaluation.error
            handed = vars(span).get(_HANDED_ATTR, _NO_DICT).pop(id(self), None)
            if handed is not None and not _scopes.in_flight(handed, sys.exc_info()[1]):
                raise handed  # a nested LLM span raised it, and something swallowed it
            if ended_with is not None:
                raise ended_with

        return end

    def _guarded_above(self, span: Span, chain: tuple[Any, ...], spec: BoundarySpec) -> bool:
        """Does an enclosing LLM span of the same call match ``spec`` too? Then an output
        absent here (content capture off in one instrumentation) is read there, and fails
        closed there if it is absent everywhere."""
        for ancestor in _same_call(span, chain):
            above = _attributes(ancestor)
            if self._match(ancestor, above, vars(ancestor).get(_CHAIN_ATTR, ())) is spec:
                return True
        return False

    def _hand_up(self, span: Span, error: BaseException) -> None:
        """Two instrumentations wrapping one model call nest two LLM spans, and some (e.g.
        OpenInference) swallow what ``end()`` raises: the enclosing LLM spans of the same call
        (up to the first agent span) raise ``error`` again when they end, unless it is already
        propagating through them (never twice, never at an agent span the app may have
        caught it under)."""
        for ancestor in _same_call(span, vars(span).get(_CHAIN_ATTR, ())):
            vars(ancestor).setdefault(_HANDED_ATTR, {}).setdefault(id(self), error)

    def _match(
        self, span: Span, attributes: Mapping[str, Any], chain: tuple[Any, ...]
    ) -> BoundarySpec | None:
        named = attributes.get(sc.BOUNDARY)
        if isinstance(named, str):
            spec = self.boundaries.get(named)
            if (
                spec is None
                and named not in self._unknown_warned
                and len(self._unknown_warned) < 64
            ):
                self._unknown_warned.add(named)
                logger.warning("groundplane: span names unknown boundary %r; not guarded", named)
            return spec
        found: set[Any] | None = None

        def agents() -> set[Any]:  # the agent names on the span and its ancestors, read once
            nonlocal found
            if found is None:
                found = set(_agent_names(attributes))
                for ancestor in chain:
                    if ancestor is not span:
                        found.update(_agent_names(_attributes(ancestor)))
            return found

        name = span.name
        for spec in self.config.boundaries:
            if _matches(spec.match, name, attributes, agents):
                return spec
        return None

    def _evaluate(self, span: Span) -> Evaluation | None:
        attributes = dict(_attributes(span))  # a snapshot: readers iterate it
        slots = vars(span)
        chain: tuple[Any, ...] = slots.get(_CHAIN_ATTR, ())
        spec = self._match(span, attributes, chain)
        if spec is None:
            return None
        mode = spec.mode or self.config.mode
        submitted = slots.get(_OUTPUT_ATTR)
        read = (
            OutputRead("output", submitted)
            if submitted is not None
            else read_output(attributes, self.config.limits, self.length_limit)
        )
        if read.status == "not_output":
            return None
        if read.status == "absent" and (
            _is_agent(span.name, attributes) or self._guarded_above(span, chain, spec)
        ):
            return None  # the answer is read where it is carried: below, or an enclosing span
        ancestors = chain[1:] if chain and chain[0] is span else chain
        covered: list[tuple[int, str, Any]] | None = slots.get(_COVERED_ATTR)
        if covered:  # an answer was checked on a span below this one (an LLM or agent span)
            mine = [
                answer for guard, name, answer in covered if guard == id(self) and name == spec.name
            ]
            if mine and (
                read.status != "output" or any(_same_answer(seen, read.value) for seen in mine)
            ):
                return None  # the same answer, checked once: at the innermost span
        trace_id = _ids(span)[0]
        try:
            failed = span.status.status_code is StatusCode.ERROR
            view = self.store.view(trace_id, spec.facts)
            evaluation = evaluate(
                spec,
                mode,
                read,
                view,
                span_failed=failed,
                plan=self._plans[spec.name],
                capture_content=self.config.capture_content,
            )
            checked = (id(self), spec.name, read.value if read.status == "output" else None)
            for ancestor in ancestors:
                vars(ancestor).setdefault(_COVERED_ATTR, []).append(checked)
        except Exception as exc:  # a guard bug: counted as an error output, never raised
            self._internal_error("checking", reraise=False)
            claim = OutputUnchecked(spec.name, sc.REASON_GUARD_ERROR, type(exc).__name__)
            finding = Finding("error", sc.REASON_GUARD_ERROR, claim)
            evaluation = Evaluation(spec.name, mode, "error", findings=(finding,), facts=spec.facts)
            if self.raise_internal_errors:
                raise
        return evaluation

    def _internal_error(self, where: str, *, reraise: bool = True) -> None:
        self.internal_errors += 1
        logger.exception("groundplane: internal error in %s (the application is unaffected)", where)
        error = sys.exc_info()[1]
        if reraise and self.raise_internal_errors and error is not None:
            raise error
