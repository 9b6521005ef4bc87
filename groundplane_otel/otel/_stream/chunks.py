"""What a stream chunk carries: answer text, a tool call, or neither — by shape.

Five shapes are read: ``str`` deltas; LangChain ``ChatGenerationChunk``s (the message's
``content``; tool call chunks are not text); pydantic-ai model response stream events (a text
part's ``content`` and a text delta's ``content_delta`` are answer text; tool call parts and
deltas never are; thinking, tool returns, part ends and the final result carry none; a file or
speech part is unknown); OpenAI Chat Completions chunks (``choices[0].delta``:
``content`` and ``refusal`` are answer text, ``tool_calls`` never are; a chunk with no choices
carries usage); OpenAI Responses events (``response.output_text.delta`` and
``response.refusal.delta`` are answer text; the other known event types carry none that was
not streamed before them). Anything else is a chunk of unknown shape (``UnknownChunk``): the
gate fails closed on it — audio transcripts and several choices (``n > 1``) included.
"""

from __future__ import annotations

from typing import Any, Literal

__all__ = ["Read", "UnknownChunk", "read_chunk", "shape_of"]

Shape = Literal["text", "chat", "responses", "langchain", "pydantic_ai"]
Read = tuple[str, bool]  # (answer text it carries, does it carry a tool call)

_NOTHING: Read = ("", False)
_TEXT_EVENTS = frozenset({"response.output_text.delta", "response.refusal.delta"})
_TOOL_EVENTS = frozenset(
    {
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.custom_tool_call_input.delta",
        "response.custom_tool_call_input.done",
        "response.mcp_call_arguments.delta",
        "response.mcp_call_arguments.done",
    }
)
# Events that carry no answer text, or only text streamed before them in text deltas (a
# ``.done`` event repeats it): held like the text before them, never longer.
_OTHER_EVENTS = frozenset(
    {
        "error",
        "response.created",
        "response.in_progress",
        "response.queued",
        "response.completed",
        "response.failed",
        "response.incomplete",
        "response.output_item.added",
        "response.output_item.done",
        "response.content_part.added",
        "response.content_part.done",
        "response.output_text.done",
        "response.output_text.annotation.added",
        "response.refusal.done",
        "response.reasoning_summary_part.added",
        "response.reasoning_summary_part.done",
        "response.reasoning_summary_text.delta",
        "response.reasoning_summary_text.done",
        "response.reasoning_text.delta",
        "response.reasoning_text.done",
        "response.file_search_call.in_progress",
        "response.file_search_call.searching",
        "response.file_search_call.completed",
        "response.web_search_call.in_progress",
        "response.web_search_call.searching",
        "response.web_search_call.completed",
        "response.code_interpreter_call.in_progress",
        "response.code_interpreter_call.interpreting",
        "response.code_interpreter_call.completed",
        "response.code_interpreter_call_code.delta",
        "response.code_interpreter_call_code.done",
        "response.image_generation_call.in_progress",
        "response.image_generation_call.generating",
        "response.image_generation_call.partial_image",
        "response.image_generation_call.completed",
        "response.mcp_call.in_progress",
        "response.mcp_call.completed",
        "response.mcp_call.failed",
        "response.mcp_list_tools.in_progress",
        "response.mcp_list_tools.completed",
        "response.mcp_list_tools.failed",
    }
)


_PA_EVENTS = frozenset({"part_start", "part_delta", "part_end", "final_result"})
_PA_TOOL_PARTS = frozenset(
    {
        "tool-call",
        "builtin-tool-call",
        "tool-search-call",
        "builtin-tool-search-call",
        "capability-load-call",
    }
)
_PA_SILENT_PARTS = frozenset(
    {"thinking", "builtin-tool-return", "builtin-tool-search-return", "compaction"}
)


class UnknownChunk(TypeError):
    """A chunk the gate cannot read (its answer text, if any, cannot be held back)."""


def shape_of(chunk: Any) -> Shape:
    """The shape of a stream, from its first chunk."""
    if isinstance(chunk, str):
        return "text"
    if getattr(chunk, "object", None) == "chat.completion.chunk":
        return "chat"
    if type(chunk).__name__ == "ChatGenerationChunk":
        return "langchain"
    if _pydantic_ai_event(chunk):
        return "pydantic_ai"
    kind = getattr(chunk, "type", None)
    if isinstance(kind, str) and (kind.startswith("response.") or kind == "error"):
        return "responses"
    raise UnknownChunk(_unknown(chunk))


def read_chunk(shape: Shape, chunk: Any) -> Read:
    """What ``chunk`` carries, read as a chunk of a ``shape`` stream."""
    if shape == "text":
        if isinstance(chunk, str):
            return chunk, False
    elif shape == "chat":
        if getattr(chunk, "object", None) == "chat.completion.chunk":
            return _chat(chunk)
    elif shape == "langchain":
        if type(chunk).__name__ == "ChatGenerationChunk":
            return _langchain(chunk)
    elif shape == "pydantic_ai":
        if _pydantic_ai_event(chunk):
            return _pydantic_ai(chunk)
    else:
        kind = getattr(chunk, "type", None)
        if kind in _TEXT_EVENTS:
            delta = getattr(chunk, "delta", None)
            if isinstance(delta, str):
                return delta, False
        elif kind in _TOOL_EVENTS:
            return "", True
        elif kind in _OTHER_EVENTS:
            return _NOTHING
    raise UnknownChunk(_unknown(chunk))


def _chat(chunk: Any) -> Read:
    text, tool = "", False
    for choice in getattr(chunk, "choices", None) or ():
        if getattr(choice, "index", 0) != 0:
            raise UnknownChunk("a chat completion chunk of a second choice (n > 1)")
        delta = getattr(choice, "delta", None)
        if delta is None:
            continue
        for name in ("content", "refusal"):
            part = getattr(delta, name, None)
            if isinstance(part, str):
                text += part
            elif part is not None:
                raise UnknownChunk(f"a chat completion delta whose {name} is not a str")
        if getattr(delta, "tool_calls", None) or getattr(delta, "function_call", None):
            tool = True
    return text, tool


def _langchain(chunk: Any) -> Read:
    """A LangChain ``ChatGenerationChunk``: its message's ``content`` (a str; content blocks
    are not read: unknown), tool call chunks never text."""
    message = getattr(chunk, "message", None)
    content = getattr(message, "content", None)
    if not isinstance(content, str):
        raise UnknownChunk("a LangChain chunk whose content is not a str (content blocks)")
    tool = bool(getattr(message, "tool_call_chunks", None) or getattr(message, "tool_calls", None))
    return content, tool


def _pydantic_ai_event(chunk: Any) -> bool:
    return type(chunk).__module__.startswith("pydantic_ai.") and (
        getattr(chunk, "event_kind", None) in _PA_EVENTS
    )


def _pydantic_ai(event: Any) -> Read:
    """A pydantic-ai ``ModelResponseStreamEvent`` (by its kinds: no import)."""
    kind = event.event_kind
    if kind == "part_start":
        part = getattr(event, "part", None)
        part_kind = getattr(part, "part_kind", None)
        if part_kind == "text":
            content = getattr(part, "content", None)
            if isinstance(content, str):
                return content, False
        elif part_kind in _PA_TOOL_PARTS:
            return "", True
        elif part_kind in _PA_SILENT_PARTS:
            return _NOTHING
        raise UnknownChunk(f"a pydantic-ai {str(part_kind)[:40]!r} part (not text)")
    if kind == "part_delta":
        delta = getattr(event, "delta", None)
        delta_kind = getattr(delta, "part_delta_kind", None)
        if delta_kind == "text":
            content = getattr(delta, "content_delta", None)
            if isinstance(content, str):
                return content, False
        elif delta_kind == "tool_call":
            return "", True
        elif delta_kind == "thinking":
            return _NOTHING
        raise UnknownChunk(f"a pydantic-ai {str(delta_kind)[:40]!r} delta (not text)")
    return _NOTHING  # part_end, final_result: nothing not streamed before


def _unknown(chunk: Any) -> str:
    kind = getattr(chunk, "type", None)
    named = f" (type {str(kind)[:60]!r})" if kind is not None else ""
    return f"a stream chunk of unknown shape: {type(chunk).__name__}{named}"
