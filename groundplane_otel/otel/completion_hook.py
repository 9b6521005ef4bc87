"""util-genai's completion hook: answers and tool results, in process, with content capture off.

The util-genai based instrumentations (opentelemetry-instrumentation-genai-openai,
-genai-langchain, -genai-openai-agents) call the selected completion hook with the *typed*
input and output messages of each operation before its span ends — whatever
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` says. Selected with
``OTEL_INSTRUMENTATION_GENAI_COMPLETION_HOOK=groundplane`` (entry point group
``opentelemetry_genai_completion_hook``; only one hook can be selected), this one:

- hands the final answer of an inference span (the JSON object in the last assistant
  message's text; a turn that asks for tools is not an answer) to every active guard as that
  span's output (``submit_output``), so the span path checks it when the span ends;
- records each tool result the model is given (a ``tool_call_response`` part, joined by call
  id to the ``tool_call`` that asked for it) as a fact, with the inference span and the tool
  call id as provenance, when a guard's FactSpec names the tool.

Nothing is written on the span. util-genai swallows what a hook raises; this hook never raises.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from opentelemetry.sdk.trace import Span as SdkSpan

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel.install import Guard, active_guards
from groundplane_otel.otel.output import parse_answer
from groundplane_otel.otel.payload import parse_payload

__all__ = ["GroundplaneCompletionHook", "completion_hook"]

logger = logging.getLogger(__name__)


def _parts(message: Any) -> Sequence[Any]:
    parts = getattr(message, "parts", None)
    return parts if isinstance(parts, (list, tuple)) else ()


def _kind(part: Any) -> Any:
    return getattr(part, "type", None)


def answer_text(outputs: Sequence[Any]) -> str | None:
    """The text of the last assistant message, None when it asks for tools (not an answer)."""
    for message in reversed(outputs):
        if getattr(message, "role", None) != "assistant":
            continue
        parts = _parts(message)
        if any(_kind(part) == "tool_call" for part in parts):
            return None
        texts = [part.content for part in parts if _kind(part) == "text"]
        texts = [text for text in texts if isinstance(text, str)]
        return "".join(texts) if texts else None
    return None


def tool_results(inputs: Sequence[Any]) -> list[tuple[str, Any, Any, str]]:
    """(tool, arguments, response, call id) for every tool result given to the model."""
    calls: dict[str, tuple[str, Any]] = {}
    found: list[tuple[str, Any, Any, str]] = []
    for message in inputs:
        for part in _parts(message):
            kind, call_id = _kind(part), getattr(part, "id", None)
            if not isinstance(call_id, str):
                continue
            if kind == "tool_call" and isinstance(getattr(part, "name", None), str):
                calls[call_id] = (part.name, getattr(part, "arguments", None))
            elif kind == "tool_call_response" and call_id in calls:
                name, arguments = calls[call_id]
                found.append((name, arguments, getattr(part, "response", None), call_id))
    return found


def _plain(value: Any, guard: Guard) -> Any:
    if isinstance(value, (str, bytes)):
        limits = guard.config.limits
        parsed = parse_payload(
            value, max_bytes=limits.max_payload_bytes, max_depth=limits.max_depth
        )
        return parsed.value if parsed.ok else value
    return value


class GroundplaneCompletionHook:
    """The hook (see the module docstring). Stateless: it reports to the guards active when
    an operation completes."""

    def on_completion(
        self,
        *,
        inputs: list[Any],
        outputs: list[Any],
        system_instruction: list[Any],
        tool_definitions: list[Any] | None = None,
        span: Any = None,
        log_record: Any = None,
    ) -> None:
        if not isinstance(span, SdkSpan) or not span.is_recording():
            return
        guards = active_guards()
        if not guards:
            return
        try:
            operation = (span.attributes or {}).get(sc.GEN_AI_OPERATION_NAME)
            if operation not in sc.LLM_OPERATIONS or operation == sc.OP_INVOKE_AGENT:
                return
            results = tool_results(inputs)
            text = answer_text(outputs)
            for guard in guards:
                self._report(guard, span, results, text)
        except Exception:  # never into the instrumentation (it would only log it)
            logger.exception("groundplane: completion hook failed (the application is unaffected)")

    @staticmethod
    def _report(
        guard: Guard, span: SdkSpan, results: list[tuple[str, Any, Any, str]], text: str | None
    ) -> None:
        tools = {spec.tool for spec in guard.config.facts}
        for tool, arguments, response, call_id in results:
            if tool not in tools:
                continue
            args = _plain(arguments, guard)
            guard.record_fact(
                span,
                tool=tool,
                fact=None,
                value=_plain(response, guard),
                arguments=args if isinstance(args, Mapping) else {},
                source="genai",
                tool_call_id=call_id,
            )
        if text is None:
            return
        read = parse_answer(text, guard.config.limits)
        if read.status == "output" and read.value is not None:
            guard.processor.submit(span, read.value)


def completion_hook() -> GroundplaneCompletionHook:
    """The entry point util-genai loads (``opentelemetry_genai_completion_hook``)."""
    return GroundplaneCompletionHook()
