"""LangChain chat models whose streamed answers are released sentence by sentence, each checked.

    model = guarded_chat_model(ChatOpenAI(...))         # then use it as the model itself
    for chunk in model.stream(messages): ...            # LangGraph stream_mode="messages" too

A wrapped chat model (LangChain's own extension point: a ``BaseChatModel`` delegating to the
model it wraps). Its ``_stream`` / ``_astream`` read the wrapped model's chunks through the
stream gate (``guard_stream``), so ``.stream()`` / ``.astream()`` and the token callbacks that
LangGraph's ``stream_mode="messages"`` reads get a chunk only once its sentence was checked; a
refused sentence raises the boundary's exception out of the stream. Non-streamed calls go to the
wrapped model unchanged (the span path and the middleware check them as before). Tools bound
with ``bind_tools`` are the wrapped model's. Verified against langchain-core 1.8.3.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Iterator
from typing import Any

from groundplane_otel.adapters._extras import require
from groundplane_otel.otel._stream.units import DEFAULT_BOUND
from groundplane_otel.otel.stream import guard_stream

__all__ = ["guarded_chat_model"]


def guarded_chat_model(
    model: Any, *, boundary: str | None = None, bound: int = DEFAULT_BOUND
) -> Any:
    """``model`` (a LangChain chat model) with its streamed answers gated: ``boundary`` names
    the boundary (default: the one the guard matches for the model call's span); ``bound``:
    the longest run with no sentence end before a cut at a safe whitespace."""
    cls = _model_class()
    if not isinstance(model, cls.__mro__[1]):
        raise TypeError(f"model must be a LangChain BaseChatModel, got {type(model).__name__}")
    return cls(model=model, boundary=boundary, bound=bound)


@functools.cache
def _model_class() -> Any:
    chat_models = require("langchain_core.language_models", extra="langchain")
    base = chat_models.BaseChatModel

    class GuardedChatModel(base):  # type: ignore[misc, valid-type]
        """A chat model whose streamed chunks pass the stream gate (see the module doc)."""

        model: Any
        boundary: str | None = None
        bound: int = DEFAULT_BOUND

        @property
        def _llm_type(self) -> str:
            return str(self.model._llm_type)

        def _generate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> Any:
            return self.model._generate(messages, stop=stop, run_manager=run_manager, **kw)

        async def _agenerate(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> Any:
            return await self.model._agenerate(messages, stop=stop, run_manager=run_manager, **kw)

        def _stream(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> Iterator[Any]:
            # No run_manager for the wrapped model: its token callbacks would see every chunk
            # before the gate; LangChain calls them for the chunks this yields.
            source = self.model._stream(messages, stop=stop, **kw)
            yield from guard_stream(source, boundary=self.boundary, bound=self.bound)

        async def _astream(
            self, messages: Any, stop: Any = None, run_manager: Any = None, **kw: Any
        ) -> AsyncIterator[Any]:
            source = self.model._astream(messages, stop=stop, **kw)
            async for chunk in guard_stream(source, boundary=self.boundary, bound=self.bound):
                yield chunk

        def bind_tools(self, tools: Any, **kw: Any) -> Any:
            """The wrapped model's tool binding, on this model."""
            return self.bind(**self.model.bind_tools(tools, **kw).kwargs)

    return GuardedChatModel
