"""The guard's per-span hooks on a known SDK: ``on_start``/``on_end`` closures built once per
guard (when ``_spans.sdk_layout()`` holds), and the hooks of a guard that was shut down."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ReadableSpan

from groundplane_otel.otel import _scopes
from groundplane_otel.otel._lineage import CHAIN_ATTR
from groundplane_otel.otel._spans import LLM_KEYS, LLM_PREFIXES, TOOL_KEYS

if TYPE_CHECKING:
    from groundplane_otel.otel.guard import GroundplaneSpanProcessor


def fast_hooks(
    processor: GroundplaneSpanProcessor,
) -> tuple[Callable[..., None], Callable[[ReadableSpan], None]]:
    """``on_start``/``on_end`` as closures over what they read, on the SDK span's own
    fields (``sdk_layout()``): the same decisions as the generic hooks, at a fraction of
    the cost for the spans the guard ignores (no attribute lookups on ``processor``, no
    property calls)."""
    store, lineage = processor.store, processor._lineage
    roots, traces, roots_limit = store._roots, store._traces, store._roots_limit
    scopes, bind, release = _scopes.current_scopes, _scopes.bind, _scopes.release
    llm_disjoint, tool_disjoint = LLM_KEYS.isdisjoint, TOOL_KEYS.isdisjoint
    prefixes, llm_names = LLM_PREFIXES, processor._llm_names
    guarded, by_tool = bool(processor.boundaries), bool(processor.capture.by_tool)

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
            if llm_disjoint(attributes) and not name.startswith(prefixes) and name not in llm_names:
                if inherited:
                    span.__dict__[CHAIN_ATTR] = inherited
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
                        release(trace_id)
                    return
                processor._root_ended(trace_id)  # the store decides, under its lock
        except Exception:
            processor._internal_error("on_end")

    return on_start, on_end


def ignore_start(span: Any, parent_context: Context | None = None) -> None:
    """The hook of a guard that was shut down."""


def ignore_end(span: Any) -> None:
    """The hook of a guard that was shut down."""
