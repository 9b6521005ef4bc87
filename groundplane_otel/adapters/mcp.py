"""MCP adapter: tool results (SDK objects or wire dicts) become facts with the call as provenance.

``payload_of`` and ``record_result`` duck-type the result, so they work without the ``mcp``
package; ``call_and_record`` only needs an object with ``async call_tool(name, arguments)``
(a ``ClientSession``, a ``ClientSessionGroup`` …). ``stdio_session`` is the one helper that
builds MCP objects and imports ``mcp`` lazily. Verified against mcp 2.3.0.
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import IO, TYPE_CHECKING, Any, Protocol

from groundplane_otel._copy import copy_in
from groundplane_otel.adapters._extras import require
from groundplane_otel.facts import Fact, Provenance
from groundplane_otel.registry import FactRegistry

if TYPE_CHECKING:
    from opentelemetry.trace import TracerProvider

__all__ = [
    "MCPToolError",
    "McpSession",
    "call_and_record",
    "payload_of",
    "record_result",
    "stdio_session",
]

_MISSING: Any = object()


class MCPToolError(ValueError):
    """An MCP tool result flagged ``isError``: it is never a fact. ``text`` holds its text."""

    def __init__(self, text: str, tool: str | None = None) -> None:
        self.text = text
        self.tool = tool
        where = f"MCP tool {tool!r}" if tool is not None else "MCP tool"
        super().__init__(f"{where} returned an error result (isError=true): {text!r}")


class McpSession(Protocol):
    """What ``call_and_record`` needs from a session."""

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> Any: ...


def _field(result: Any, snake: str, camel: str) -> Any:
    """Read a result field from an SDK object (snake_case, or camelCase in mcp 1.x) or a dict."""
    if isinstance(result, Mapping):
        return result.get(camel, result.get(snake, _MISSING))
    value = getattr(result, snake, _MISSING)
    return getattr(result, camel, _MISSING) if value is _MISSING else value


def _texts(result: Any) -> list[str]:
    content = _field(result, "content", "content")
    if content is _MISSING or content is None:
        return []
    if isinstance(content, (str, bytes)) or not isinstance(content, Sequence):
        raise TypeError(f"MCP result content must be a list of blocks, got {_capped(content)}")
    texts = []
    for block in content:
        kind = block.get("type") if isinstance(block, Mapping) else getattr(block, "type", None)
        if kind == "text":
            text = block.get("text") if isinstance(block, Mapping) else getattr(block, "text", None)
            if not isinstance(text, str):
                raise ValueError(
                    f"MCP text block's text must be a string, got {type(text).__name__}: "
                    f"{_capped(block)}"
                )
            texts.append(text)
    return texts


def _capped(value: Any, limit: int = 200) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "…"


class _Strict:
    """What a lenient parse of a text met that strict JSON refuses: the first non-finite
    constant and the first repeated key. Recorded, not raised, so text that turns out not to be
    JSON at all (prose starting with "NaN", say) is returned as text, not refused."""

    __slots__ = ("constant", "duplicate")

    def __init__(self) -> None:
        self.constant: str | None = None
        self.duplicate: str | None = None

    def on_constant(self, token: str) -> float:
        if self.constant is None:
            self.constant = token
        return 0.0

    def on_object(self, pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result and self.duplicate is None:
                self.duplicate = key
            result[key] = value
        return result

    def refuse(self) -> None:
        """Raise for what the parse met (called once the whole text parsed as JSON)."""
        if self.constant is not None:
            raise ValueError(
                f"MCP result text holds the non-finite number {self.constant}; it cannot be a fact"
            )
        if self.duplicate is not None:
            raise ValueError(
                f"MCP result text is JSON with a duplicate key {self.duplicate!r}: which value "
                "is the fact is ambiguous, so it is refused"
            )


def _refuse_non_finite(value: Any, where: str) -> None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            raise ValueError(
                f"MCP {where} holds the non-finite number {item!r}; it cannot be a fact"
            )
        if isinstance(item, Mapping):
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)


def payload_of(result: Any, parse_json: bool = True) -> Any:
    """The value an MCP tool result carries.

    An ``isError`` result raises MCPToolError. Structured content wins over the text blocks (a
    rendering of it). Otherwise the text blocks are joined with a newline; with ``parse_json``
    the text is parsed when it is JSON (strict: NaN/Infinity and duplicate keys are a
    ValueError) and returned as the string when it is not; without, it is returned as is. A
    result with neither structured content nor text blocks is a ValueError. Accepts SDK
    objects (``CallToolResult``) and wire-format dicts.
    """
    flag = _field(result, "is_error", "isError")
    if flag is not _MISSING and flag:  # fail closed on any truthy flag
        raise MCPToolError("\n".join(_texts(result)))
    structured = _field(result, "structured_content", "structuredContent")
    if structured is not _MISSING and structured is not None:
        _refuse_non_finite(structured, "structured content")
        return structured
    texts = _texts(result)
    if not texts:
        raise ValueError(
            f"MCP result carries neither structured content nor text blocks: {_capped(result)}"
        )
    text = "\n".join(texts)
    if not parse_json:
        return text
    strict = _Strict()
    try:
        value = json.loads(
            text, parse_constant=strict.on_constant, object_pairs_hook=strict.on_object
        )
    except json.JSONDecodeError:
        return text  # not JSON: the text itself is the payload
    strict.refuse()
    _refuse_non_finite(value, "result text")  # 1e999 parses as inf
    return value


def record_result(
    registry: FactRegistry,
    name: str,
    result: Any,
    tool: str | None = None,
    args: Mapping[str, Any] | None = None,
    parse_json: bool = True,
) -> Fact:
    """Register ``payload_of(result, parse_json)`` under ``name`` with the call (``tool``,
    ``args``) as provenance. Write-once, deep-copied, like ``FactRegistry.record``."""
    try:
        payload = payload_of(result, parse_json)
    except MCPToolError as exc:
        raise MCPToolError(exc.text, tool) from None
    return registry.record(name, payload, tool=tool, args=args)


async def call_and_record(
    session: McpSession,
    registry: FactRegistry,
    fact: str,
    tool: str,
    arguments: Mapping[str, Any] | None = None,
    parse_json: bool = True,
    *,
    tool_call_id: str | None = None,
    tracer_provider: TracerProvider | None = None,
) -> Any:
    """Await ``session.call_tool(tool, arguments)``, record ``payload_of(result, parse_json)``
    as ``fact`` and return the raw result the session gave back (the fact is in
    ``registry``: ``registry.get(fact)``).

    The provenance arguments are a copy taken before the call (what was sent, even if something
    mutates the dict later). The call runs inside a GenAI ``execute_tool {tool}`` span from
    ``tracer_provider`` (default: the installed guard's, else the global one); when that span
    has a valid context (or, with a no-op tracer, the span active around the call does), its
    trace and span ids are the fact's provenance, so the guard links violations to it.
    ``tool_call_id`` is the model's tool call id (``gen_ai.tool.call.id``).

    With the guard installed the payload is also recorded in the trace's registry (source
    ``mcp``, typed by the guard's FactSpec for ``tool`` if any); arguments and result go on the
    span only when the guard captures content. Failures set the span to ERROR with
    ``error.type`` but no message: tool output is content.
    """
    from opentelemetry import trace
    from opentelemetry.trace import SpanKind, Status, StatusCode

    from groundplane_otel.adapters._otel import active_guard, content_json, mirror_fact
    from groundplane_otel.otel.tools import tool_content_on

    sent = copy_in(dict(arguments or {}), fact=fact, where="arguments")
    guard = active_guard()
    if tracer_provider is None and guard is not None:
        tracer_provider = guard.tracer_provider
    capture = tool_content_on(guard)  # as an instrumented tool span would
    tracer = trace.get_tracer("groundplane_otel.adapters.mcp", tracer_provider=tracer_provider)
    attributes: dict[str, str] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.type": "extension",
    }
    if tool_call_id is not None:
        attributes["gen_ai.tool.call.id"] = tool_call_id
    if guard is not None:
        attributes["groundplane.fact.source"] = "mcp"  # recorded below, not captured from the span
    if capture:
        attributes["gen_ai.tool.call.arguments"] = content_json(sent)
    with tracer.start_as_current_span(
        f"execute_tool {tool}",
        kind=SpanKind.INTERNAL,
        attributes=attributes,
        record_exception=False,
        set_status_on_exception=False,
    ) as span:
        try:
            result = await session.call_tool(tool, dict(arguments or {}))
            payload = payload_of(result, parse_json)
        except MCPToolError as exc:
            span.set_attribute("error.type", "tool_error")
            span.set_status(Status(StatusCode.ERROR, "MCP tool returned isError"))
            raise MCPToolError(exc.text, tool) from None
        except BaseException as exc:
            span.set_attribute("error.type", type(exc).__qualname__)
            span.set_status(Status(StatusCode.ERROR, type(exc).__qualname__))
            raise
        if capture and not (guard is not None and guard.processor.engine.restricts(tool)):
            span.set_attribute("gen_ai.tool.call.result", content_json(payload))
        context = span.get_span_context()
        ids: dict[str, str | None] = {"trace_id": None, "span_id": None}
        if context.is_valid:
            ids = {
                "trace_id": trace.format_trace_id(context.trace_id),
                "span_id": trace.format_span_id(context.span_id),
            }
        provenance = Provenance(tool, sent, tool_call_id=tool_call_id, **ids)
        registry.record(fact, payload, provenance=provenance)
        mirror_fact(
            guard,
            span,
            tool=tool,
            fact=fact,
            value=payload,
            arguments=sent,
            source="mcp",
            tool_call_id=tool_call_id,
        )
        return result


def _sole(error: BaseException) -> BaseException | None:
    """The one leaf of a chain of single-member exception groups (None if one has more)."""
    while True:
        members = getattr(error, "exceptions", None)
        if not isinstance(members, tuple):
            return error
        if len(members) != 1:
            return None
        error = members[0]


def _server_stderr() -> IO[str]:
    """Where the server's stderr goes: this process's ``sys.stderr`` as it is now when it is a
    real file (mcp's default is the stream at *its* import time, which under pytest or a
    notebook may have no file descriptor: the spawn then fails), else the process's own."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return sys.__stderr__ if sys.__stderr__ is not None else sys.stderr
    return sys.stderr


@asynccontextmanager
async def stdio_session(
    command: str, args: Sequence[str] = (), env: Mapping[str, str] | None = None
) -> AsyncIterator[Any]:
    """Spawn an MCP server over stdio and yield an initialized ``mcp.ClientSession``.

    The SDK's task groups wrap an exception raised in the ``async with`` body in nested
    exception groups; a lone exception (an UnsupportedClaim, an MCPToolError …) is re-raised
    as itself so ``except UnsupportedClaim`` works around the block.
    """
    mcp = require("mcp", extra="mcp")
    params = mcp.StdioServerParameters(
        command=command, args=list(args), env=None if env is None else dict(env)
    )
    try:
        async with (
            mcp.stdio_client(params, errlog=_server_stderr()) as (read, write),
            mcp.ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session
    except BaseException as error:
        sole = _sole(error)
        if sole is None or sole is error:
            raise
        raise sole from None
