"""Explicit scopes for code the span-end path cannot reach on its own.

``enforce()`` raises on exit if a violation was recorded in its scope (frameworks that swallow
exceptions, spans ended on other threads); ``submit_output`` hands the guard an output for a
span; ``trace_registry`` / ``boundary`` give code the current trace's registry.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar, Token
from types import TracebackType
from typing import Any, TypeVar, cast

from opentelemetry import trace
from opentelemetry.sdk.trace import Span as SdkSpan

from groundplane_otel.boundary import BoundaryDeclaration, CheckFn, ReportMode
from groundplane_otel.boundary import boundary as core_boundary
from groundplane_otel.otel._live.handoff import Handoff, ScopeState, in_flight
from groundplane_otel.otel.install import Guard, active_guard, active_guards
from groundplane_otel.registry import FactRegistry

__all__ = ["boundary", "enforce", "submit_output", "trace_registry"]

F = TypeVar("F", bound=Callable[..., Any])
_Entry = tuple[Handoff, ScopeState, Token[tuple[ScopeState, ...]]]  # one guard's part of a scope


def _guard(guard: Guard | None) -> Guard:
    found = guard or active_guard()
    if found is None:
        raise RuntimeError(
            "groundplane_otel is not installed: call install(config, tracer_provider=..., "
            "meter_provider=...) first, or pass guard="
        )
    return found


def _span(span: trace.Span | None, what: str) -> trace.Span:
    span = span if span is not None else trace.get_current_span()
    if not span.get_span_context().is_valid:
        raise RuntimeError(f"{what} needs a span: call it inside the LLM span, or pass span=")
    return span


def trace_registry(span: trace.Span | None = None, *, guard: Guard | None = None) -> FactRegistry:
    """The fact registry of the current span's request — the spans under its local root span
    (writable; bounded like captured facts)."""
    processor = _guard(guard).processor
    return processor.engine.registry(_span(span, "trace_registry()"))


def boundary(
    facts: Sequence[str] = (),
    checks: Sequence[CheckFn] = (),
    require_output: bool = True,
    mode: ReportMode = "first",
    *,
    name: str | None = None,
    span: trace.Span | None = None,
    guard: Guard | None = None,
) -> BoundaryDeclaration:
    """groundplane's ``boundary(...)`` over the current trace's registry."""
    registry = trace_registry(span, guard=guard)
    return core_boundary(registry, facts, checks, require_output, mode, name=name)


def submit_output(
    output: Mapping[str, Any] | str,
    span: trace.Span | None = None,
    *,
    boundary: str | None = None,
    guard: Guard | None = None,
) -> None:
    """Check ``output`` when ``span`` (default: the current span) ends, instead of reading the
    span's attributes: the answer's fields (a mapping), or its text (a ``str``: parsed like a
    model's answer; the whole text for an ``answer: text`` boundary). ``boundary`` names the
    boundary (sets ``groundplane.boundary``)."""
    if not isinstance(output, (Mapping, str)):
        kind = type(output).__name__
        raise TypeError(f"output must be a mapping of fields or an answer text, got {kind}")
    target = _span(span, "submit_output()")
    if not isinstance(target, SdkSpan) or not target.is_recording():
        raise TypeError("submit_output() needs a recording SDK span (opentelemetry.sdk.trace)")
    _guard(guard).processor.submit(target, output, boundary)


class enforce:
    """Raise on exit if a guarded output in this scope was blocked — exactly once: not when the
    exception already propagates through the scope. ``defer=True`` leaves the raising to the
    scope only (spans ending in it never raise themselves). The scope waits for ``guard``'s
    refusals, by default those of every guard active when it is entered: a guard installed
    later, a replay or the verifier never hands it anything, nor sees it."""

    def __init__(self, *, defer: bool = False, guard: Guard | None = None) -> None:
        self.defer = defer
        self.guard = guard
        self._entered: ContextVar[tuple[tuple[_Entry, ...], ...]] = ContextVar(
            "groundplane_enforce_entered", default=()
        )

    def __enter__(self) -> enforce:
        context = trace.get_current_span().get_span_context()
        trace_id = context.trace_id if context.is_valid else None
        guards = (self.guard,) if self.guard is not None else active_guards()
        entries = []
        for guard in guards:
            handoff, state = guard.processor.handoff, ScopeState(self.defer)
            entries.append((handoff, state, handoff.enter(state, trace_id)))
        self._entered.set((*self._entered.get(), tuple(entries)))
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        *rest, entries = self._entered.get()
        self._entered.set(tuple(rest))
        pending: list[BaseException] = []
        for handoff, state, token in reversed(entries):
            handoff.leave(state, token)
        for _, state, _ in entries:
            pending.extend(error for error in state.pending if error not in pending)
        for error in pending:
            if in_flight(error, exc):
                _settle(entries, error)
                return
        if pending:
            _settle(entries, pending[0])
            raise pending[0]

    def __call__(self, fn: F) -> F:
        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                with self:
                    return await fn(*args, **kwargs)

            return cast(F, async_wrapper)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return cast(F, wrapper)


def _settle(entries: tuple[_Entry, ...], error: BaseException) -> None:
    """``error`` reached the application through this scope: no other scope raises it again."""
    for handoff, state, _ in entries:
        handoff.settle(state, error)
