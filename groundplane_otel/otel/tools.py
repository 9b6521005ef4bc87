"""``tool(name, fact=)``: groundplane's tool decorator, as a GenAI ``execute_tool`` span.

The return value is recorded in the current trace's registry (typed by the guard's FactSpec
for that tool when there is one, else as a value under ``fact``), with the tool span as
provenance. Arguments and result go on the span (``gen_ai.tool.call.arguments`` /
``gen_ai.tool.call.result``, what ``suggest`` and ``replay`` read) when content capture is on —
by the switch the instrumentations follow (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``)
or the guard's own ``capture_content`` — like an instrumented tool's; never a restricted fact's.
"""

from __future__ import annotations

import copy
import functools
import inspect
import json
import logging
from collections.abc import Callable
from typing import Any, TypeVar, cast

from opentelemetry import trace
from opentelemetry.trace import Span, SpanKind

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel.environment import genai_content_on
from groundplane_otel.otel.install import Guard, active_guard

__all__ = ["tool", "tool_content_on"]

F = TypeVar("F", bound=Callable[..., Any])
logger = logging.getLogger(__name__)


def _json(value: Any) -> str:
    return json.dumps(value, default=repr)


def tool_content_on(installed: Guard | None) -> bool:
    """Do tool spans groundplane opens carry arguments and result (``@tool``, the MCP
    adapter)? When the instrumentations' content switch is on, or the guard's."""
    return genai_content_on() or (installed is not None and installed.config.capture_content)


def tool(name: str, fact: str | None = None, *, guard: Guard | None = None) -> Callable[[F], F]:
    """Decorate a tool function (sync or async): each call opens ``execute_tool {name}`` and
    records the return value under ``fact`` (default: the guard's FactSpecs for ``name``, else
    ``name``). Provenance args are the call bound to the signature, defaults applied."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"tool name must be a non-empty string, got {name!r}")

    def decorate(fn: F) -> F:
        signature = inspect.signature(fn)

        def start(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, Any, dict[str, Any]]:
            installed = guard or active_guard()
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            call_args = copy.deepcopy(dict(bound.arguments))
            tracer = installed.tracer if installed else trace.get_tracer("groundplane_otel")
            attributes: dict[str, Any] = {
                sc.GEN_AI_OPERATION_NAME: sc.OP_EXECUTE_TOOL,
                sc.GEN_AI_TOOL_NAME: name,
                sc.GEN_AI_TOOL_TYPE: "function",
                sc.FACT_SOURCE: "code",  # capture skips it: recorded here, not from the span
            }
            if tool_content_on(installed):
                attributes[sc.GEN_AI_TOOL_CALL_ARGUMENTS] = _json(call_args)
            span_cm = tracer.start_as_current_span(
                f"{sc.OP_EXECUTE_TOOL} {name}", kind=SpanKind.INTERNAL, attributes=attributes
            )
            return installed, span_cm, call_args

        def finish(installed: Guard | None, span: Span, result: Any, call_args: Any) -> None:
            if installed is None:
                return
            if tool_content_on(installed) and not installed.processor.engine.restricts(name):
                span.set_attribute(sc.GEN_AI_TOOL_CALL_RESULT, _json(result))
            installed.record_fact(span, tool=name, fact=fact, value=result, arguments=call_args)

        if inspect.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                installed, span_cm, call_args = start(args, kwargs)
                with span_cm as span:
                    result = await fn(*args, **kwargs)
                    finish(installed, span, result, call_args)
                    return result

            return cast(F, async_wrapper)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            installed, span_cm, call_args = start(args, kwargs)
            with span_cm as span:
                result = fn(*args, **kwargs)
                finish(installed, span, result, call_args)
                return result

        return cast(F, wrapper)

    return decorate
