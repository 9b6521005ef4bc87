"""The guard's per-span hooks on a known SDK: ``on_start``/``on_end`` closures built once per
guard (when ``_spans.sdk_layout()`` holds), and the hooks of a guard that was shut down.

Riding on the provider's dispatch (``_dispatch.ride``), the closures *are* the provider's
``on_start``/``on_end``: they hand the span to every registered processor, then do the guard's
work, so a span pays no call of its own for the guard."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan

from groundplane_otel.otel import _scopes
from groundplane_otel.otel._lineage import CHAIN_ATTR
from groundplane_otel.otel._spans import LLM_KEYS, LLM_PREFIXES, TOOL_KEYS, span_attributes

if TYPE_CHECKING:
    from groundplane_otel.otel.guard import GroundplaneSpanProcessor


NAMES_REMEMBERED = 1024  # span names whose LLM-likeness the hooks keep (past that: computed)


def fast_hooks(
    processor: GroundplaneSpanProcessor, dispatch: Any = None, base: type | None = None
) -> tuple[Callable[..., None], Callable[[Any, ReadableSpan], None], Callable[[], None]]:
    """``on_start``/``on_end`` as closures over what they read, on the SDK span's own
    fields (``sdk_layout()``): the same decisions as the generic hooks, at a fraction of
    the cost for the spans the guard ignores (no attribute lookups on ``processor``, no
    property calls). A span whose ``_attributes`` another processor replaced (OpenInference's
    pydantic-ai processor puts a plain dict there) is read through the public API.

    The hooks take their owner first, as methods do: bound to the processor, or the methods of
    the class ``_dispatch.ride`` gives the provider's ``dispatch``, where each first hands the
    span to the processors registered there (inline for ``SynchronousMultiSpanProcessor``;
    through the ``base`` class's own hook for another SDK dispatcher). The third closure stops
    the guard's part (the hand-over goes on)."""
    store, lineage = processor.store, processor._lineage
    roots, requests, shared, spans = store._roots, store._requests, store.shared, store.spans
    roots_limit = store._roots_limit
    root_started, span_request = store.root_started, processor._inherit_request
    scopes, bind, release = _scopes.current_scopes, _scopes.bind, _scopes.release
    awaited = _scopes.awaited  # traces an enforce() scope waits for
    llm_disjoint, tool_disjoint = LLM_KEYS.isdisjoint, TOOL_KEYS.isdisjoint
    prefixes, llm_names = LLM_PREFIXES, processor._llm_names
    guarded, by_tool = bool(processor.boundaries), bool(processor.capture.by_tool)
    bounded = BoundedAttributes
    swallow = processor.swallow
    pending = swallow.pending  # blocks waiting for their run (mutated in place, never rebound)
    start_others = getattr(base, "on_start", None)  # None: the loop inline
    end_others = getattr(base, "on_end", None)
    named: dict[str, bool] = {}  # span name -> LLM-like? (names are few; bounded anyway)
    guarding = True

    def on_start(owner: Any, span: Any, parent_context: Context | None = None) -> None:
        if dispatch is not None:
            if start_others is None:
                for registered in dispatch._span_processors:
                    registered.on_start(span, parent_context=parent_context)
            else:
                start_others(dispatch, span, parent_context)
        if not guarding:
            return
        try:
            parent = span._parent
            inherited = None
            if parent is None or parent[2]:  # a local root: TraceStore.root_started, inlined
                context = span._context
                trace_id, span_id = context[0], context[1]
                live = roots.setdefault(trace_id, [])
                live.append(span_id)
                if live[0] != span_id or len(roots) > roots_limit:  # a second root, or prune
                    live.remove(span_id)  # the store decides: keys, pruning
                    root_started(trace_id, span_id)
                if scopes():
                    bind(trace_id)
            else:
                trace_id = parent[0]
                if shared and trace_id in shared:  # two requests in one trace: whose span?
                    span_request(span._context[1], parent[1])
                if lineage and trace_id in lineage:  # a guardable span started in this trace
                    inherited = processor._inherited(parent_context)
            if not guarded:
                return
            name, attributes = span._name, span._attributes
            if type(attributes) is not bounded:  # replaced by another processor
                attributes = span_attributes(span)
            else:
                attributes = attributes._dict
            llm_name = named.get(name)
            if llm_name is None:
                llm_name = name.startswith(prefixes) or name in llm_names
                if len(named) < NAMES_REMEMBERED:
                    named[name] = llm_name
            if not llm_name and llm_disjoint(attributes):
                if inherited:
                    span.__dict__[CHAIN_ATTR] = inherited
                return
            processor._started(span, name, attributes, trace_id, inherited)
        except Exception:
            processor._internal_error("on_start")

    def on_end(owner: Any, span: Any) -> None:
        if dispatch is not None:
            if end_others is None:
                for registered in dispatch._span_processors:
                    registered.on_end(span)
            else:
                end_others(dispatch, span)
        if not guarding:
            return
        try:
            context = span._context
            trace_id = context[0]
            request = spans.pop(context[1], trace_id) if shared else trace_id
            if by_tool:
                attributes = span._attributes
                if type(attributes) is not bounded:  # replaced by another processor
                    attributes = span_attributes(span)
                else:
                    attributes = attributes._dict
                if not tool_disjoint(attributes):
                    processor._tool_ended(span, attributes, request)
            if pending:  # a refusal raised in this process waits for its run
                swallow.ended(span)
            parent = span._parent
            if parent is None or parent[2]:  # a local root: TraceStore.root_ended
                live = roots.get(trace_id)
                if (
                    live is not None
                    and len(live) == 1
                    and live[0] == context[1]
                    and request not in requests
                ):
                    live.clear()  # its only live root, no facts held: nothing to lock
                    del roots[trace_id]
                    if lineage:
                        lineage.pop(trace_id, None)
                    if shared:
                        shared.discard(trace_id)
                    if trace_id in awaited:
                        release(trace_id)
                    return
                processor._root_ended(trace_id, context[1], request)
        except Exception:
            processor._internal_error("on_end")

    def stop() -> None:
        nonlocal guarding
        guarding = False

    return on_start, on_end, stop


def ignore_start(span: Any, parent_context: Context | None = None) -> None:
    """The hook of a guard that was shut down."""


def ignore_end(span: Any) -> None:
    """The hook of a guard that was shut down."""
