"""The OpenTelemetry SDK contract: every private SDK field the guard reads or writes, and every
SDK method or class it replaces at runtime, listed here as data and touched only in this package.

``FIELDS`` holds each field (owner class, name, the types of its value, who uses it) and
``REPLACED`` each runtime replacement; ``tests/otel/test_sdk_contract.py`` checks both against
the installed SDK, and that no module outside this package touches an SDK underscore name.
The code that relies on them: the small readers and writers below, ``sdk.hooks`` (the guard's
per-span hooks, one implementation built once per guard, which read the span's fields inline:
a span pays no call for them; on an SDK whose layout they do not know, the same hooks read a
view of each span made through the public API) and ``sdk.dispatch`` (riding on the provider's
span-processor dispatch). The package is a leaf: it imports nothing of the engine (the hooks
read it through structural protocols). Replay's records mimic none of
them: the replay driver hands the engine plain fields.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from types import MethodType, NoneType
from typing import Any, NamedTuple, cast

from opentelemetry import trace
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.trace import (
    ConcurrentMultiSpanProcessor,
    ReadableSpan,
    Span,
    SpanLimits,
    SpanProcessor,
    SynchronousMultiSpanProcessor,
    Tracer,
    TracerProvider,
)
from opentelemetry.trace import DEFAULT_TRACE_STATE, SpanContext, Status, StatusCode, TraceFlags

__all__ = [
    "DISPATCHERS",
    "DISPATCH_STATE",
    "FIELDS",
    "REPLACED",
    "Field",
    "Replacement",
    "each_span_attributes",
    "fits",
    "override_ok",
    "sdk_layout",
    "span_attributes",
    "span_limits",
    "unwrap_end",
    "valid_span_context",
    "wrap_end",
]


class Field(NamedTuple):
    """One SDK field the guard relies on: on instances of ``owner``, ``name`` holds one of
    ``kinds``."""

    owner: type
    name: str
    kinds: tuple[type, ...]
    use: str


class Replacement(NamedTuple):
    """One SDK method (or class) the guard replaces at runtime: ``name`` of ``owner``."""

    owner: type
    name: str
    how: str


DISPATCHERS = (SynchronousMultiSpanProcessor, ConcurrentMultiSpanProcessor)
_LOCK = type(threading.Lock())

FIELDS: tuple[Field, ...] = (
    # A span, live (``on_start``) and finished (the ReadableSpan ``on_end`` gets).
    Field(ReadableSpan, "_context", (SpanContext,), "hooks: trace and span id, by index"),
    Field(ReadableSpan, "_parent", (SpanContext, NoneType), "hooks: a local root, its trace"),
    Field(ReadableSpan, "_name", (str,), "hooks: an LLM-like span name"),
    Field(ReadableSpan, "_attributes", (BoundedAttributes,), "hooks, span_attributes, fits"),
    Field(ReadableSpan, "_status", (Status,), "override_ok: ERROR over an OK status"),
    Field(Span, "_readable_span", (MethodType,), "sdk_layout: the span on_end gets"),
    Field(BoundedAttributes, "_dict", (dict,), "hooks, span_attributes, fits: a plain dict"),
    Field(BoundedAttributes, "maxlen", (int, NoneType), "fits: the span's attribute limit"),
    # The provider, its tracers and its span-processor dispatch (``dispatch.ride``).
    Field(TracerProvider, "_active_span_processor", DISPATCHERS, "dispatch: what rides"),
    Field(TracerProvider, "_tracers", (dict,), "dispatch: the tracers handed out"),
    Field(TracerProvider, "_tracers_lock", (_LOCK,), "dispatch: get_tracer's lock"),
    Field(TracerProvider, "_span_limits", (SpanLimits,), "span_limits: the length limit"),
    Field(Tracer, "span_processor", DISPATCHERS, "dispatch: a tracer's dispatcher"),
    *(
        Field(kind, name, kinds, use)
        for kind in DISPATCHERS
        for name, kinds, use in (
            ("_span_processors", (tuple,), "hooks: handed each span; dispatch: shared"),
            ("_lock", (_LOCK,), "dispatch: add_span_processor's lock"),
        )
    ),
    Field(ConcurrentMultiSpanProcessor, "_executor", (ThreadPoolExecutor,), "dispatch: shared"),
)

REPLACED: tuple[Replacement, ...] = (
    Replacement(Span, "end", "per instance on a span that may carry an output (wrap_end)"),
    Replacement(SpanProcessor, "on_start", "per instance on the guard: its hook (hooks.attach)"),
    Replacement(SpanProcessor, "on_end", "per instance on the guard: its hook (hooks.attach)"),
    *(
        Replacement(kind, name, "in the riding dispatcher class, built with type() (dispatch)")
        for kind in DISPATCHERS
        for name in ("on_start", "on_end", "shutdown", "__eq__", "__hash__")
    ),
    *(
        Replacement(kind, "__class__", "dispatch on an SDK without _tracers: riding and back")
        for kind in DISPATCHERS
    ),
)

# What a riding dispatcher shares.
DISPATCH_STATE = tuple(dict.fromkeys(field.name for field in FIELDS if field.owner in DISPATCHERS))


@functools.cache
def sdk_layout() -> bool:
    """Does this SDK keep what the hooks read where they read it (SpanContext as a
    ``(trace_id, span_id, is_remote, ...)`` tuple, ``_parent``/``_context``/``_name`` and
    ``_attributes._dict``, on live and on finished spans)? Otherwise the same hooks read each
    span through the public API (``hooks.PublicSpan``) and the guard does not ride.
    Probed once, on a span of a throwaway provider."""
    try:
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


_new_tuple = tuple.__new__


def valid_span_context(
    trace_id: int, span_id: int, is_remote: bool, flags: TraceFlags
) -> SpanContext:
    """``SpanContext(trace_id, span_id, is_remote, flags)`` for ids known valid (non-zero, in
    range: the caller checked them), built as the tuple it is, without its Python ``__new__``
    (replay's records make a few a trace). Its layout, ``(trace_id, span_id, is_remote,
    trace_flags, trace_state, is_valid)``, is pinned equal to the constructor's by
    ``tests/otel/test_valid_span_context.py``."""
    return _new_tuple(SpanContext, (trace_id, span_id, is_remote, flags, DEFAULT_TRACE_STATE, True))


def span_attributes(span: ReadableSpan | trace.Span) -> Mapping[str, Any]:
    """The span's attributes, read-only. The SDK's BoundedAttributes is a Python-level Mapping
    whose ``get`` raises and catches KeyError on every miss; its plain dict is read directly
    (dict reads are atomic under the GIL), which keeps unmatched spans cheap. A span with no
    readable attributes (the API's non-recording span) reads as empty."""
    raw = getattr(getattr(span, "_attributes", None), "_dict", None)
    if isinstance(raw, dict):
        return raw
    attributes = getattr(span, "attributes", None)
    if type(attributes) is dict:  # a plain dict (replay's records): no abstract-class check
        return attributes
    return cast(Mapping[str, Any], attributes) if isinstance(attributes, Mapping) else {}


def each_span_attributes(spans: Iterable[Any]) -> list[Mapping[str, Any]]:
    """``span_attributes`` of each of ``spans``, in order: a lineage's spans read in one
    visit."""
    return [span_attributes(span) for span in spans]


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


def override_ok(span: trace.Span, status: Status) -> None:
    """ERROR on a blocked output's span even when an instrumentation already set OK.

    The SDK ignores ``set_status`` once a span is OK, and OpenInference sets OK as the model call
    returns, before the guard reads the answer: the blocked span would be exported as OK. Only
    in that case is the SDK span's status replaced directly (``_status``, in every 1.x SDK).
    """
    current = getattr(span, "status", None)
    if getattr(current, "status_code", None) is StatusCode.OK and hasattr(span, "_status"):
        span._status = status


def span_limits(tracer_provider: Any) -> SpanLimits:
    """The provider's span limits (``_span_limits``); for a provider without them, what the SDK
    derives from the ``OTEL_*`` environment variables."""
    limits = getattr(tracer_provider, "_span_limits", None)
    return limits if isinstance(limits, SpanLimits) else SpanLimits()


def wrap_end(span: Any, wrap: Callable[[Any, Callable[..., None]], Callable[..., None]]) -> None:
    """Replace ``span.end`` on this instance by ``wrap(span, span.end)`` (the guarded end)."""
    span.end = wrap(span, span.end)


def unwrap_end(span: Any, end: Callable[..., None]) -> None:
    """``end`` runs: the instance gets the SDK's ``end()`` back (a second call is harmless)."""
    if getattr(span, "end", None) is end:
        del span.end
