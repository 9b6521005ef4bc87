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

import json
import logging
import os
import sys
from collections.abc import Callable, Mapping
from typing import Any, cast

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan, Span, SpanProcessor
from opentelemetry.trace import StatusCode

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
_COVERED_ATTR = "_groundplane_covered"  # {(guard id, boundary, digest)} checked below this span
_HANDED_ATTR = "_groundplane_handed"  # {guard id: exception} raised by a nested LLM span
_NO_DICT: dict[str, Any] = {}


def _digest(value: Any) -> str:
    """The identity of an answer (checked once per span lineage). An output JSON cannot encode
    (mixed key types, a cycle, too deep) gets a digest of its own: it is checked, never
    mistaken for another answer, and a bug here can never make the guard fail open."""
    try:
        return json.dumps(value, sort_keys=True, default=repr)
    except (TypeError, ValueError, RecursionError):
        return f"<unencodable {id(value):x}>"


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
        self.store = TraceStore(config.limits, telemetry.count_fact, telemetry.count_traces)
        self.capture = FactCapture(config.facts, self.store, length_limit)
        self.boundaries = {spec.name: spec for spec in config.boundaries}
        self._plans: dict[str, tuple[CheckPlan, ...]] = {
            spec.name: plan_checks(spec.checks, spec.facts) for spec in config.boundaries
        }
        self._span_names = frozenset(
            s.match.span_name for s in config.boundaries if s.match.span_name
        )
        self._chain_limit = config.limits.max_spans_per_trace
        self._enabled = True
        self._unknown_warned: set[str] = set()

    # -- SpanProcessor ------------------------------------------------------------------------

    def on_start(self, span: Span, parent_context: Context | None = None) -> None:
        if not self._enabled:
            return
        try:
            parent = span.parent
            if parent is None or parent.is_remote:
                trace_id = span.get_span_context().trace_id
                self.store.root_started(trace_id)
                _scopes.bind(trace_id)
                inherited: tuple[Any, ...] | None = None
            else:
                above = trace.get_current_span(parent_context)
                inherited = getattr(above, "__dict__", _NO_DICT).get(_CHAIN_ATTR)
            if not self.boundaries:
                return
            name = span.name
            attributes = _attributes(span)
            # Fast path: a span with no GenAI/OpenInference/groundplane key and no LLM-like
            # name is neither an agent nor a candidate output (C-level checks only).
            if (
                _LLM_KEYS.isdisjoint(attributes)
                and not name.startswith(_LLM_PREFIXES)
                and name not in sc.LLM_OPERATIONS
                and name not in self._span_names
            ):
                if inherited:
                    vars(span)[_CHAIN_ATTR] = inherited
                return
            candidate = self._candidate(name, attributes)
            if candidate or _is_agent(name, attributes):
                chain = (span, *inherited[: self._chain_limit - 1]) if inherited else (span,)
                vars(span)[_CHAIN_ATTR] = chain
            elif inherited:
                vars(span)[_CHAIN_ATTR] = inherited
            if candidate:
                self.watch(span)
        except Exception:
            self._internal_error("on_start")

    def _candidate(self, name: str, attributes: Mapping[str, Any]) -> bool:
        """May this span carry an output a boundary guards (checked again when it ends)?"""
        return (
            attributes.get(sc.GEN_AI_OPERATION_NAME) in sc.LLM_OPERATIONS
            or name.partition(" ")[0] in sc.LLM_OPERATIONS
            or attributes.get(sc.OI_SPAN_KIND) in sc.OI_LLM_KINDS
            or sc.BOUNDARY in attributes
            or name in self._span_names
        )

    def on_end(self, span: ReadableSpan) -> None:
        if not self._enabled:
            return
        try:
            if self.capture.by_tool:
                attributes = _attributes(span)
                if not _TOOL_KEYS.isdisjoint(attributes):
                    call = read_tool_call(attributes, span.name)
                    if call is not None and sc.FACT_SOURCE not in attributes:
                        trace_id, span_id = _ids(span)
                        self.capture.capture(call, trace_id, span_id)
            parent = span.parent
            if parent is None or parent.is_remote:
                self.store.root_ended(_ids(span)[0])
        except Exception:
            self._internal_error("on_end")

    def shutdown(self) -> None:
        self._enabled = False

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
        covered: set[tuple[int, str, str]] | None = slots.get(_COVERED_ATTR)
        digest = ""
        if (ancestors or covered) and read.status == "output":
            digest = _digest(read.value)
        if covered:  # an answer was checked on a span below this one (an LLM or agent span)
            mine = {key[2] for key in covered if key[0] == id(self) and key[1] == spec.name}
            if mine and (read.status != "output" or digest in mine):
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
            key = (id(self), spec.name, digest)
            for ancestor in ancestors:
                vars(ancestor).setdefault(_COVERED_ATTR, set()).add(key)
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
