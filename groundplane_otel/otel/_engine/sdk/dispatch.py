"""The guard rides on the provider's own span-processor dispatch.

A processor added with ``add_span_processor`` costs every span of the application three calls
(``on_start``, ``_on_ending``, ``on_end``) even when the guard ignores it, and under
``ConcurrentMultiSpanProcessor`` its hooks run on a worker thread, where the span's parent is
not the current span (the guard could not see an enclosing agent). So on the SDK's two
dispatchers the provider (and every tracer it handed out) gets a dispatcher of a subclass
that shares the original's processors and lock, whose ``on_start``/``on_end`` are the guard's
hooks (``hooks.span_hooks``, reading the SDK span's fields inline): they hand the span to
every registered processor first (inline for ``SynchronousMultiSpanProcessor``; through the
dispatcher's own hook for ``ConcurrentMultiSpanProcessor``, called by a small wrapper before
the guard's), then do the guard's part on the caller's thread.
Processors keep their order (the guard acts after all of them, as if it were the last one
added). The two dispatchers hold one list of processors while the guard rides (the SDK's
``add_span_processor`` extends it in place), so a processor added to either — through the
provider, or to the application's own dispatcher object — is called, and stays after
``shutdown`` (the provider's, or the guard's ``uninstall()``) gives the provider and its
tracers the application's dispatcher back, with its processors as a tuple again (on an SDK that
keeps no tracers, the dispatcher instance's class is changed instead, and back). The provider
is held weakly: the guard never keeps a provider the application dropped alive. Any other
dispatcher (a custom class, one whose class something else changed), or an SDK whose span
layout the hooks do not know (they read each span through the public API there): the guard is
added as a span processor, its own hooks (``hooks.attach``) called by the dispatcher.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from opentelemetry.context import Context
from opentelemetry.sdk.trace import ConcurrentMultiSpanProcessor, SynchronousMultiSpanProcessor

from groundplane_otel.otel._engine.sdk import DISPATCH_STATE, DISPATCHERS
from groundplane_otel.otel._engine.sdk.hooks import NO_PROCESSORS, Hook, span_hooks

if TYPE_CHECKING:
    from groundplane_otel.otel._engine.sdk.hooks import Driven

__all__ = ["ride"]

_ORIGINAL = "_groundplane_original"  # on a riding dispatcher: the one it stands for


def ride(processor: Driven, tracer_provider: Any) -> Callable[[], None] | None:
    """Make ``processor``'s hooks the provider's dispatch; returns how to undo it (None: not
    possible here, add the processor instead)."""
    dispatch = getattr(tracer_provider, "_active_span_processor", None)
    kind = type(dispatch)
    if kind not in DISPATCHERS or not processor.known_layout:
        return None
    on_start, on_end, stop = span_hooks(processor)
    if kind is not SynchronousMultiSpanProcessor:
        on_start, on_end = _after_dispatch(kind, on_start, on_end)

    def shutdown(owner: Any) -> None:
        kind.shutdown(owner)
        processor.shutdown()

    riding = type(
        "GuardedSpanDispatch",
        (kind,),
        {
            "on_start": on_start,
            "on_end": on_end,
            "shutdown": shutdown,
            "__eq__": _stands_for,
            "__hash__": _hash_of_original,
            "__module__": __name__,
        },
    )
    tracers = getattr(tracer_provider, "_tracers", None)
    lock = getattr(tracer_provider, "_tracers_lock", None)
    if isinstance(tracers, dict) and lock is not None:
        return _replace(tracer_provider, tracers, lock, dispatch, riding, stop)
    dispatch.__class__ = riding  # an SDK that keeps no tracers: this instance changes class

    def leave() -> None:
        stop()  # if something changed the class again, the hooks only hand spans over
        if type(dispatch) is riding:
            dispatch.__class__ = kind

    return leave


def _stands_for(self: Any, other: object) -> bool:
    """A riding dispatcher equals the application's dispatcher it stands for (they share its
    processors, lock and executor): ``provider._active_span_processor == mine`` holds."""
    return other is self or other is getattr(self, _ORIGINAL, None)


def _hash_of_original(self: Any) -> int:
    return object.__hash__(getattr(self, _ORIGINAL, self))


def _replace(
    provider: Any, tracers: dict[Any, Any], lock: Any, dispatch: Any, riding: type, stop: Hook
) -> Callable[[], None]:
    """The provider and the tracers it handed out get a dispatcher of the riding class with
    ``dispatch``'s state (one list of processors, its lock): the SDK's per-span method lookups
    on it stay as fast as on the original (changing an instance's class in place slows them),
    and spans already started end through the dispatcher they started with."""
    fresh = riding()  # the SDK dispatcher's own fields, then the state it shares with dispatch
    with dispatch._lock:  # add_span_processor's lock: no processor is added meanwhile
        shared = list(dispatch._span_processors)  # ``+=`` extends a list in place: both see it
        dispatch._span_processors = shared
        for name in DISPATCH_STATE:  # by name: ``vars()`` would slow its method lookups for good
            if hasattr(dispatch, name):
                setattr(fresh, name, getattr(dispatch, name))
        setattr(fresh, _ORIGINAL, dispatch)
    owner = weakref.ref(provider)  # the guard never keeps a dropped provider alive

    def point(old: Any, new: Any) -> None:
        with lock:  # get_tracer reads the provider's dispatcher under this lock
            held = owner()
            if held is not None and held._active_span_processor is old:
                held._active_span_processor = new
            for tracer in tracers.values():
                if getattr(tracer, "span_processor", None) is old:
                    tracer.span_processor = new

    point(dispatch, fresh)

    def leave() -> None:
        stop()  # spans started meanwhile end through ``fresh``: it only hands them over
        with dispatch._lock:  # every processor added meanwhile, to either, stays
            if dispatch._span_processors is shared:
                dispatch._span_processors = tuple(shared)
        point(fresh, dispatch)

    return leave


def _after_dispatch(
    kind: type[ConcurrentMultiSpanProcessor], on_start: Hook, on_end: Hook
) -> tuple[Hook, Hook]:
    """Hooks that hand the span over through the dispatcher class's own hooks, then run the
    guard's (which hand it to no one else)."""
    others_start, others_end = kind.on_start, kind.on_end

    def start(owner: Any, span: Any, parent_context: Context | None = None) -> None:
        others_start(owner, span, parent_context)
        on_start(NO_PROCESSORS, span, parent_context)

    def end(owner: Any, span: Any) -> None:
        try:
            others_end(owner, span)
        except BaseException:  # another processor raised: the guard's part still runs
            on_end(NO_PROCESSORS, span)
            raise
        on_end(NO_PROCESSORS, span)

    return start, end
