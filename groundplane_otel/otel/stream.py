"""``guard_stream``: a streamed answer released unit by unit, each unit checked before any of
it reaches the application.

    stream = client.chat.completions.create(..., stream=True)
    for chunk in guard_stream(stream):      # or: async for chunk in guard_stream(astream)
        send(chunk)

Accepts an OpenAI Chat Completions stream (``ChatCompletionChunk``s), an OpenAI Responses
stream (event objects), or any iterable / async iterable of ``str`` deltas; yields the same
objects, unchanged and in order. The gate itself is ``_stream.gate.Gate``; docs/streaming.md
says what is held, when, and how each outcome is counted.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any, Generic, TypeVar

from opentelemetry import trace

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine import STREAM_ATTR, WATCHERS_ATTR, span_attributes
from groundplane_otel.otel._live.processor import LAST_WATCHED, GroundplaneSpanProcessor
from groundplane_otel.otel._stream.gate import Gate
from groundplane_otel.otel._stream.units import DEFAULT_BOUND, Units
from groundplane_otel.otel.install import Guard, active_guard

__all__ = ["DEFAULT_BOUND", "GuardedStream", "guard_stream"]

T = TypeVar("T")


def guard_stream(
    stream: Any,
    *,
    boundary: str | None = None,
    span: trace.Span | None = None,
    bound: int = DEFAULT_BOUND,
    guard: Guard | None = None,
) -> GuardedStream[Any]:
    """Guard ``stream`` (iterate the result with ``for`` or ``async for``, as the stream).

    The boundary is the one the guard matches for the model call the stream came from (its
    span, which the instrumentation ended no earlier than the stream: the last model call
    started in this context), else for the current span; ``boundary=`` names one. ``span``:
    the span to count the answer on (default: as above). ``bound``: the characters a run
    with no sentence or line end may reach before it is cut at a safe whitespace. A stream
    no boundary matches flows through unchanged, as on the span path."""
    Units(bound)  # validates ``bound`` early, with the message users see
    found = guard or active_guard()
    if found is None:
        raise RuntimeError(
            "groundplane_otel is not installed: call install(config, tracer_provider=..., "
            "meter_provider=...) first, or pass guard="
        )
    processor = found.processor
    model_call = _model_call(processor) if span is None else None
    target = span if span is not None else model_call or _current()
    gate: Gate | None = None
    if target is None or not target.is_recording():
        if boundary is not None:
            raise RuntimeError(
                "guard_stream() needs a recording span to count the answer on: call it inside "
                "the model call's or the agent's span, or pass span="
            )
    else:  # nothing matches outside a span, as on the span path
        gate = _gate(processor, target, boundary, bound)
    refresh: Callable[[], Gate | None] | None = None
    if span is None and model_call is None:
        # A framework may start the model call inside the stream (the Agents SDK does): its
        # span, once the first chunk arrived, is the one to count on.
        def refresh() -> Gate | None:
            later = _model_call(processor)
            return None if later is None else _gate(processor, later, boundary, bound)

    return GuardedStream(stream, gate, refresh)


def _gate(
    processor: GroundplaneSpanProcessor, target: Any, boundary: str | None, bound: int
) -> Gate | None:
    """The gate for a stream counted on ``target`` (None: no boundary matches)."""
    spec = processor.engine.stream_spec(target, boundary)
    if spec is None:
        return None
    matched = boundary is None and sc.BOUNDARY not in span_attributes(target)
    return Gate(processor, target, spec, bound=bound, matched=matched)


def _model_call(processor: GroundplaneSpanProcessor) -> Any:
    """The model call's span a stream comes from: the last span this guard watched in this
    context, while it records and has no gate yet (in the current span's trace)."""
    last = LAST_WATCHED.get()
    candidate = last() if last is not None else None
    if (
        candidate is not None
        and candidate.is_recording()
        and not getattr(candidate, STREAM_ATTR, None)
        and processor.guard in getattr(candidate, WATCHERS_ATTR, ())
    ):
        context = trace.get_current_span().get_span_context()
        if not context.is_valid or context.trace_id == candidate.get_span_context().trace_id:
            return candidate
    return None


def _current() -> Any:
    current = trace.get_current_span()
    return current if current.get_span_context().is_valid else None


class GuardedStream(Generic[T]):
    """The guarded stream: iterate it with ``for`` (sync sources) or ``async for`` (async
    sources); ``close()`` / ``aclose()`` stop it (the source is closed, the run counted
    once). ``gate`` is None when no boundary guards the stream (chunks flow through)."""

    def __init__(
        self,
        source: Any,
        gate: Gate | None,
        refresh: Callable[[], Gate | None] | None = None,
    ) -> None:
        self.source = source
        self._gates: list[Gate | None] = [gate]  # shared with the generator (no cycle)
        self._refresh = refresh
        self._sync: Iterator[T] | None = None
        self._async: AsyncIterator[T] | None = None

    @property
    def gate(self) -> Gate | None:
        """The stream's gate (None: nothing guards it)."""
        return self._gates[0]

    def _passthrough(self) -> bool:
        return self._gates[0] is None and self._refresh is None

    # -- sync -----------------------------------------------------------------------------

    def __iter__(self) -> Iterator[T]:
        if self._sync is None:
            if not hasattr(self.source, "__iter__"):
                raise TypeError(f"{type(self.source).__name__} is an async stream: use async for")
            # The generator holds no reference to self (no cycle: a dropped stream is closed at
            # once, before the source's own finalizer).
            source, gates, refresh = self.source, self._gates, self._refresh
            self._sync = iter(source) if self._passthrough() else _run(gates, refresh, source)
        return self._sync

    def __next__(self) -> T:
        return next(iter(self))

    def __enter__(self) -> GuardedStream[T]:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Stop reading: the source is closed; an unfinished run is counted (abandoned)."""
        if self._sync is not None and hasattr(self._sync, "close"):
            self._sync.close()
        elif self._sync is None and self.gate is not None and not self.gate.done:
            self.gate.abandoned()
            _close(self.source)

    # -- async ----------------------------------------------------------------------------

    def __aiter__(self) -> AsyncIterator[T]:
        if self._async is None:
            if not hasattr(self.source, "__aiter__"):
                raise TypeError(f"{type(self.source).__name__} is a sync stream: use for")
            source, gates, refresh = self.source, self._gates, self._refresh
            self._async = aiter(source) if self._passthrough() else _arun(gates, refresh, source)
        return self._async

    async def __anext__(self) -> T:
        return await anext(self.__aiter__())

    async def __aenter__(self) -> GuardedStream[T]:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Stop reading (async): as ``close``."""
        if self._async is not None and hasattr(self._async, "aclose"):
            await self._async.aclose()
        elif self._async is None and self.gate is not None and not self.gate.done:
            self.gate.abandoned()
            await _aclose(self.source)


def _close(source: Any) -> None:
    close = getattr(source, "close", None)
    if callable(close):
        close()


async def _aclose(source: Any) -> None:
    close = getattr(source, "aclose", None) or getattr(source, "close", None)
    if callable(close):
        result = close()
        if hasattr(result, "__await__"):
            await result


def _settle(gates: list[Gate | None], refresh: Callable[[], Gate | None] | None) -> Gate | None:
    """At the first chunk: the model call's span started since ``guard_stream`` (if any)
    replaces the span chosen then (its gate had seen nothing)."""
    if refresh is not None:
        fresh = refresh()
        if fresh is not None:
            old = gates[0]
            if old is not None:
                old.detach()
            gates[0] = fresh
    return gates[0]


def _run(
    gates: list[Gate | None], refresh: Callable[[], Gate | None] | None, source: Any
) -> Iterator[Any]:
    iterator = iter(source)
    ended = False
    gate = gates[0]
    first = True
    try:
        while True:
            try:
                chunk = next(iterator)
            except StopIteration:
                break
            except BaseException as error:
                ended = True
                if gate is not None:
                    gate.failed(error)
                raise
            if first:
                first = False
                gate = _settle(gates, refresh)
                if gate is None:  # nothing guards it after all
                    ended = True
                    yield chunk
                    yield from iterator
                    return
            assert gate is not None  # settled at the first chunk
            try:
                out = gate.take(chunk)
            except BaseException:
                ended = True
                _close(source)
                raise
            if out:
                yield from out
        ended = True
        if first:  # an empty stream: settled now
            gate = _settle(gates, refresh)
        if gate is not None:
            yield from gate.finish()
    finally:
        if not ended and gate is not None:  # the application stopped reading
            gate.abandoned()
            _close(source)


async def _arun(
    gates: list[Gate | None], refresh: Callable[[], Gate | None] | None, source: Any
) -> AsyncIterator[Any]:
    iterator = aiter(source)
    ended = False
    gate = gates[0]
    first = True
    try:
        while True:
            try:
                chunk = await anext(iterator)
            except StopAsyncIteration:
                break
            except BaseException as error:
                ended = True
                if gate is not None:
                    gate.failed(error)
                raise
            if first:
                first = False
                gate = _settle(gates, refresh)
                if gate is None:  # nothing guards it after all
                    ended = True
                    yield chunk
                    async for rest in iterator:
                        yield rest
                    return
            assert gate is not None  # settled at the first chunk
            try:
                out = gate.take(chunk)
            except BaseException:
                ended = True
                await _aclose(source)
                raise
            for item in out:
                yield item
        ended = True
        if first:  # an empty stream: settled now
            gate = _settle(gates, refresh)
        if gate is not None:
            for item in gate.finish():
                yield item
    finally:
        if not ended and gate is not None:  # the application stopped reading
            gate.abandoned()
            await _aclose(source)
