"""Reading a span cheaply: the SDK-field probe, its attributes and ids, and the keys and names
that make it an LLM, agent or tool span (shared by the guard's hooks and its lineage)."""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import Any, cast

from opentelemetry import trace
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanContext

from groundplane_otel.otel import semconv as sc

# SpanContext is a tuple (trace_id, span_id, is_remote, ...) in every 1.x API: read it by index
# on the hot path (a property call costs several times more), by attribute if that changes.
trace_id_of: Callable[[Any], int] = operator.attrgetter("trace_id")
is_remote: Callable[[Any], bool] = operator.attrgetter("is_remote")
if tuple(SpanContext(1, 2, True))[:3] == (1, 2, True):
    trace_id_of, is_remote = operator.itemgetter(0), operator.itemgetter(2)


@functools.cache
def sdk_layout() -> bool:
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


def span_attributes(span: ReadableSpan) -> Mapping[str, Any]:
    """The span's attributes, read-only. The SDK's BoundedAttributes is a Python-level Mapping
    whose ``get`` raises and catches KeyError on every miss; its plain dict is read directly
    (dict reads are atomic under the GIL), which keeps unmatched spans cheap."""
    raw = getattr(getattr(span, "_attributes", None), "_dict", None)
    if isinstance(raw, dict):
        return raw
    return cast(Mapping[str, Any], span.attributes or {})


def fits(span: Any, keys: Iterable[str]) -> bool:
    """Can ``keys`` be set on ``span`` without evicting any of its attributes? The SDK's
    ``BoundedAttributes`` drops the oldest attribute once a new key would pass its ``maxlen``
    (the span's attribute limit, 128 by default); a key the span has is overwritten in place.
    A span without that bound (not the SDK's, or attributes another processor replaced): yes."""
    attributes = getattr(span, "_attributes", None)
    if not isinstance(attributes, BoundedAttributes) or attributes.maxlen is None:
        return True
    present = attributes._dict
    added = sum(1 for key in keys if key not in present)
    return len(present) + added <= attributes.maxlen


def span_ids(span: ReadableSpan) -> tuple[int, int]:
    context = span.get_span_context()
    assert context is not None
    return context.trace_id, context.span_id


LLM_KEYS = frozenset(
    {
        sc.GEN_AI_OPERATION_NAME,
        sc.GEN_AI_AGENT_NAME,
        sc.OI_SPAN_KIND,
        sc.OI_AGENT_NAME,
        sc.BOUNDARY,
    }
)
LLM_PREFIXES = tuple(f"{operation} " for operation in sc.LLM_OPERATIONS)
TOOL_KEYS = frozenset(
    {
        sc.GEN_AI_TOOL_NAME,
        sc.GEN_AI_OPERATION_NAME,
        sc.OI_SPAN_KIND,
        sc.TRACELOOP_ENTITY_OUTPUT,
        sc.TRACELOOP_SPAN_KIND,
    }
)


def operation(name: str, attributes: Mapping[str, Any]) -> Any:
    return attributes.get(sc.GEN_AI_OPERATION_NAME) or name.partition(" ")[0]


def is_agent(name: str, attributes: Mapping[str, Any]) -> bool:
    """An agent run's span: by its operation or OpenInference kind when it has one (a ``chat``
    or tool span carrying ``gen_ai.agent.name``, as pydantic-ai writes them, is not), else by
    its name or an agent-name attribute."""
    operation = attributes.get(sc.GEN_AI_OPERATION_NAME)
    if operation is not None:
        return bool(operation == sc.OP_INVOKE_AGENT)
    kind = attributes.get(sc.OI_SPAN_KIND)
    if kind is not None:
        return bool(kind == sc.OI_KIND_AGENT)
    first = name.partition(" ")[0]
    return first == sc.OP_INVOKE_AGENT or (
        first not in sc.LLM_OPERATIONS
        and (sc.GEN_AI_AGENT_NAME in attributes or sc.OI_AGENT_NAME in attributes)
    )


def agent_names(attributes: Mapping[str, Any]) -> list[Any]:
    return [attributes[key] for key in sc.AGENT_NAME_KEYS if key in attributes]
