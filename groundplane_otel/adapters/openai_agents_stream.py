"""OpenAI Agents SDK models whose streamed answers are released sentence by sentence.

    agent = guard(Agent(name=..., model=guarded_model(OpenAIChatCompletionsModel(...))))
    result = Runner.run_streamed(agent, question)
    async for event in result.stream_events(): ...

A model wrapper (the SDK's own extension point: a ``Model`` delegating to the model it wraps).
Its ``stream_response`` reads the wrapped model's Responses-format events through the stream
gate (``guard_stream``), so ``Runner.run_streamed(...).stream_events()`` yields a text delta
only once its sentence was checked, and a refused sentence raises the boundary's exception out
of ``stream_events()`` (the SDK re-raises what the model stream raised). ``get_response`` (not
streamed) goes to the wrapped model unchanged: the output guardrail checks it as before, and
its check of a right streamed answer takes the stream's check (counted once). Verified against
openai-agents 0.24.0.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from typing import Any

from groundplane_otel.adapters._extras import require
from groundplane_otel.otel._stream.units import DEFAULT_BOUND
from groundplane_otel.otel.stream import guard_stream

__all__ = ["guarded_model"]


def guarded_model(model: Any, *, boundary: str | None = None, bound: int = DEFAULT_BOUND) -> Any:
    """``model`` (an Agents SDK ``Model``) with its streamed answers gated: ``boundary`` names
    the boundary (default: the one the guard matches for the model call's span); ``bound``:
    the longest run with no sentence end before a cut at a safe whitespace."""
    cls = _model_class()
    if not isinstance(model, cls.__mro__[1]):
        raise TypeError(f"model must be an Agents SDK Model, got {type(model).__name__}")
    return cls(model, boundary, bound)


@functools.cache
def _model_class() -> Any:
    base = require("agents.models.interface", extra="openai-agents").Model

    class GuardedModel(base):  # type: ignore[misc, valid-type]
        """A model whose streamed events pass the stream gate (see the module doc)."""

        def __init__(self, model: Any, boundary: str | None, bound: int) -> None:
            self.model, self.boundary, self.bound = model, boundary, bound

        async def get_response(self, *args: Any, **kwargs: Any) -> Any:
            return await self.model.get_response(*args, **kwargs)

        def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
            source = self.model.stream_response(*args, **kwargs)
            return aiter(guard_stream(source, boundary=self.boundary, bound=self.bound))

        async def close(self) -> None:
            await self.model.close()

    return GuardedModel
