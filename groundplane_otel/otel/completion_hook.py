"""util-genai's completion hook: answers and tool results, in process, with content capture off.

The util-genai based instrumentations (opentelemetry-instrumentation-genai-openai,
-genai-langchain, -genai-openai-agents) call the selected completion hook with the *typed*
input and output messages of each operation before its span ends — whatever
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` says. Selected with
``OTEL_INSTRUMENTATION_GENAI_COMPLETION_HOOK=groundplane`` (entry point group
``opentelemetry_genai_completion_hook``; only one hook can be selected), this one:

- hands the final answer of an inference span (the whole text of the last assistant
  message; a turn that asks for tools is not an answer) to every active guard as that span's
  output (``submit_output``), so the span path checks it when the span ends: the JSON object
  in it for a JSON boundary, the whole text for an ``answer: text`` boundary;
- records each tool result the model is given (a ``tool_call_response`` part, joined by call
  id to the ``tool_call`` that asked for it) as a fact, with the inference span and the tool
  call id as provenance, when a guard's FactSpec names the tool. The result is read as JSON,
  else as a bounded Python literal (the OpenAI Agents SDK sends a dict result as its
  ``repr``: ``_literal``); text that is neither is not a fact (counted, the reason logged at
  DEBUG). A reading that cannot be a fact never spoils the fact another capture path (a
  framework adapter's tool hook) recorded from the same tool call (``TraceStore``).

Nothing is written on the span. util-genai swallows what a hook raises; this hook never raises
(an internal error is logged and counted in the guard's ``internal_errors``).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.trace import Span as SdkSpan

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel.install import Guard, active_guards

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
        except Exception:  # never into the instrumentation (it would only log it)
            logger.exception("groundplane: completion hook failed (the application is unaffected)")
            return
        for guard in guards:
            try:
                _report(guard, span, results, text)
            except Exception:
                guard.processor._internal_error("the completion hook", reraise=False)


def _report(
    guard: Guard, span: SdkSpan, results: list[tuple[str, Any, Any, str]], text: str | None
) -> None:
    """Record the tool results ``guard`` declares facts for; submit the answer text."""
    engine = guard.processor.engine
    for tool, raw_arguments, response, call_id in results:
        problem = engine.record_tool_text(
            span, tool, raw_arguments, response, call_id, source="genai"
        )
        if problem is not None:
            logger.debug(
                "groundplane: a %r result given to the model is not a fact: %s", tool, problem
            )
    if text is not None:
        guard.processor.submit(span, text)  # read per boundary when the span ends


def completion_hook() -> GroundplaneCompletionHook:
    """The entry point util-genai loads (``opentelemetry_genai_completion_hook``)."""
    return GroundplaneCompletionHook()
