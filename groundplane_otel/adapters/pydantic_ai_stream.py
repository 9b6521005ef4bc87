"""pydantic-ai models whose streamed answers are released sentence by sentence, each checked.

    agent = Agent(model, name=..., capabilities=[Groundplane()])   # wraps streamed requests
    async with agent.run_stream(question) as result:
        async for text in result.stream_text(delta=True): ...      # stream_output() too

A wrapper model (pydantic-ai's own extension point: a ``WrapperModel``, which the
``Groundplane`` capability supplies through ``get_wrapper_model``; ``guarded_model(model)``
builds one by hand). Its ``request_stream`` hands pydantic-ai a ``StreamedResponse`` that reads
the wrapped response's events through the stream gate (``guard_stream``): a text part or delta
is yielded, and applied to the response's parts (what ``stream_text``, ``stream_output`` and
``get()`` read), only once its sentence was checked; a refused sentence raises the boundary's
exception out of ``stream_text`` / ``stream_output`` and the provider's stream is closed.
``request`` (not streamed) goes to the wrapped model unchanged. Verified against
pydantic-ai-slim 2.68.0.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from opentelemetry import trace

from groundplane_otel.adapters._extras import require
from groundplane_otel.otel._stream.units import DEFAULT_BOUND
from groundplane_otel.otel.stream import GuardedStream, guard_stream

if TYPE_CHECKING:
    from groundplane_otel.otel.install import Guard

__all__ = ["guarded_model"]

# What the wrapped response's own iteration adds to the model's events (``PartEndEvent``,
# ``FinalResultEvent``): the outer response adds them again from what it released.
_MODEL_EVENTS = frozenset({"part_start", "part_delta"})


def guarded_model(
    model: Any,
    *,
    boundary: str | None = None,
    bound: int = DEFAULT_BOUND,
    guard: Guard | None = None,
) -> Any:
    """``model`` (a pydantic-ai ``Model``) with its streamed answers gated: ``boundary``
    names the boundary (default: the one the guard matches for the model call's span);
    ``bound``: the longest run with no sentence end before a cut at a safe whitespace;
    ``guard``: default the installed guard."""
    models = require("pydantic_ai.models", extra="pydantic-ai")
    if not isinstance(model, models.Model):
        raise TypeError(f"model must be a pydantic-ai Model, got {type(model).__name__}")
    return _classes()[0](model, boundary, bound, guard)


@functools.cache
def _classes() -> tuple[Any, Any]:
    models = require("pydantic_ai.models", extra="pydantic-ai")
    wrapper = require("pydantic_ai.models.wrapper", extra="pydantic-ai").WrapperModel

    class GuardedStreamedResponse(models.StreamedResponse):  # type: ignore[misc, name-defined]
        """The wrapped response's events, each released once its text was checked."""

        def __init__(self, wrapped: Any, gated: GuardedStream[Any]) -> None:
            super().__init__(wrapped.model_request_parameters)
            self.wrapped, self.gated = wrapped, gated

        async def _get_event_iterator(self) -> AsyncIterator[Any]:
            async with self.gated as events:
                async for event in events:
                    self._follow()
                    self._parts_manager.apply_event(event)
                    yield event
            self._follow()

        def _follow(self) -> None:
            """The wrapped response's metadata, as it stands (usage is read through)."""
            wrapped = self.wrapped
            for name in (
                "provider_response_id",
                "provider_details",
                "canonical_system",
                "finish_reason",
                "state",
                "metadata",
                "failed_attempts",
            ):
                setattr(self, name, getattr(wrapped, name))

        @property
        def usage(self) -> Any:
            return self.wrapped.usage

        @property
        def model_name(self) -> str:
            return str(self.wrapped.model_name)

        @property
        def provider_name(self) -> str | None:
            return self.wrapped.provider_name  # type: ignore[no-any-return]

        @property
        def provider_url(self) -> str | None:
            return self.wrapped.provider_url  # type: ignore[no-any-return]

        @property
        def timestamp(self) -> Any:
            return self.wrapped.timestamp

        def get_stream_cancel_errors(self) -> tuple[type[BaseException], ...]:
            return self.wrapped.get_stream_cancel_errors()  # type: ignore[no-any-return]

        async def close_stream(self) -> None:
            await self.wrapped.close_stream()

    class GuardedModel(wrapper):  # type: ignore[misc, valid-type]
        """A model whose streamed responses pass the stream gate (see the module doc)."""

        def __init__(
            self, wrapped: Any, boundary: str | None, bound: int, guard: Guard | None
        ) -> None:
            super().__init__(wrapped)
            self.boundary, self.bound, self.guard = boundary, bound, guard

        @asynccontextmanager
        async def request_stream(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            async with self.wrapped.request_stream(*args, **kwargs) as response:
                # Counted on the model call's span, current here (pydantic-ai opens it around
                # this call): the gate is chosen now, not at the first chunk.
                gated = guard_stream(
                    _events(response),
                    boundary=self.boundary,
                    span=_recording(),
                    bound=self.bound,
                    guard=self.guard,
                )
                try:
                    yield GuardedStreamedResponse(response, gated)
                finally:  # before the model call's span ends: a stream left unread is
                    await gated.aclose()  # counted abandoned, not concluded by that end

    return GuardedModel, GuardedStreamedResponse


def _recording() -> Any:
    span = trace.get_current_span()
    return span if span.is_recording() else None


async def _events(response: Any) -> AsyncIterator[Any]:
    """The model's own events of ``response`` (closed with it)."""
    iterator = aiter(response)
    try:
        async for event in iterator:
            if getattr(event, "event_kind", None) in _MODEL_EVENTS:
                yield event
    finally:
        close = getattr(iterator, "aclose", None)
        if close is not None:
            await close()
