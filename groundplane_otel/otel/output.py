"""Read the structured output (a JSON object) a model produced, from its span's attributes.

Sources, in order: an output the application submitted for the span; GenAI
``gen_ai.output.messages`` (JSON string or structured value); OpenInference
``llm.output_messages.{i}.*``; legacy Traceloop ``gen_ai.completion.{i}.*``; ``output.value``.
A turn that only asks for tool calls is not an output.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel.config import Limits
from groundplane_otel.otel.payload import parse_payload

__all__ = ["OutputRead", "parse_answer", "read_output"]

ReadStatus = Literal["output", "not_output", "absent", "unreadable", "refusal"]
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_TOOL_PARTS = frozenset({"tool_call", "function_call"})


@dataclass(frozen=True, slots=True)
class OutputRead:
    """``output``: ``value`` is the JSON object; ``not_output``: a tool-call turn (ignored);
    ``absent``: nothing to read; ``unreadable``: text without a JSON object; ``refusal``."""

    status: ReadStatus
    value: Mapping[str, Any] | None = None
    problem: str = ""


def parse_answer(text: str, limits: Limits, length_limit: int | None = None) -> OutputRead:
    """The JSON object in a model's answer text: bare, in a markdown fence, or embedded."""
    problem = "no JSON object in the answer text"
    for position, candidate in enumerate(_candidates(text)):
        parsed = parse_payload(
            candidate,
            max_bytes=limits.max_payload_bytes,
            max_depth=limits.max_depth,
            length_limit=length_limit if position == 0 else None,
        )
        if parsed.ok:
            if isinstance(parsed.value, dict):
                return OutputRead("output", parsed.value)
            continue
        if parsed.status == "truncated":
            return OutputRead("unreadable", problem=f"truncated: {parsed.problem}")
        if not parsed.problem.startswith("invalid JSON"):
            problem = f"{parsed.status}: {parsed.problem}"  # a real problem beats "not found"
    return OutputRead("unreadable", problem=problem)


def _candidates(text: str) -> Iterator[str]:
    """Where the JSON object may be, most likely first (computed only as far as needed)."""
    yield text.strip()
    for match in _FENCE.finditer(text):
        yield match.group(1).strip()
    first, last = text.find("{"), text.rfind("}")
    if 0 <= first < last:
        yield text[first : last + 1]


def _from_message(message: Mapping[str, Any], limits: Limits, cut: int | None) -> OutputRead:
    """One GenAI message: its parts, or OpenAI-style ``content``/``tool_calls``/``refusal``."""
    if message.get("finish_reason") in sc.TOOL_CALL_FINISH_REASONS:
        return OutputRead("not_output")
    parts = message.get("parts")
    if parts is None:  # OpenAI chat message shape (OpenInference output.value)
        content = message.get("content")
        if isinstance(content, str) and content:
            return parse_answer(content, limits, cut)
        if message.get("refusal"):
            return OutputRead("refusal")
        if message.get("tool_calls"):
            return OutputRead("not_output")
        return OutputRead("absent")
    if not isinstance(parts, list):
        return OutputRead("unreadable", problem="parts is not a list")
    kinds = [part.get("type") for part in parts if isinstance(part, Mapping)]
    if kinds and all(kind in _TOOL_PARTS for kind in kinds):
        return OutputRead("not_output")
    result = OutputRead("absent")
    for part in reversed(parts):
        if not isinstance(part, Mapping):
            continue
        if part.get("type") == "text" and isinstance(part.get("content"), str):
            result = parse_answer(part["content"], limits, cut)
            if result.status == "output":
                return result
        elif part.get("type") == "refusal" and result.status == "absent":
            result = OutputRead("refusal")
    return result


def _last_assistant(messages: Any) -> Mapping[str, Any] | None:
    if isinstance(messages, Mapping):
        messages = [messages]
    if not isinstance(messages, list):
        return None
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role", "assistant") == "assistant":
            return message
    return None


def _flattened(
    attributes: Mapping[str, Any], prefix: str, inner: str, limits: Limits, cut: int | None
) -> OutputRead:
    """OpenInference / Traceloop flattening: ``{prefix}{i}.{inner}role|content|tool_calls...``."""
    messages: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        index, _, rest = key[len(prefix) :].partition(".")
        if not index.isdigit():
            continue
        rest = rest.removeprefix(inner)
        entry = messages.setdefault(int(index), {})
        if rest.startswith("tool_calls."):
            entry["tool_calls"] = True
        else:
            entry[rest] = value
    if not messages:
        return OutputRead("absent")
    assistant = [i for i in sorted(messages) if messages[i].get("role", "assistant") == "assistant"]
    if not assistant:
        return OutputRead("absent")
    return _from_message(messages[assistant[-1]], limits, cut)


def read_output(
    attributes: Mapping[str, Any], limits: Limits, length_limit: int | None = None
) -> OutputRead:
    """The structured output a span's attributes carry (see the module docstring)."""
    raw = attributes.get(sc.GEN_AI_OUTPUT_MESSAGES)
    if raw is not None:
        parsed = parse_payload(
            raw,
            max_bytes=limits.max_payload_bytes,
            max_depth=limits.max_depth,
            length_limit=length_limit,
        )
        if not parsed.ok:
            return OutputRead("unreadable", problem=f"{parsed.status}: {parsed.problem}")
        message = _last_assistant(parsed.value)
        return (
            OutputRead("absent")
            if message is None
            else _from_message(message, limits, length_limit)
        )
    for prefix, inner in (
        (sc.OI_OUTPUT_MESSAGES_PREFIX, "message."),
        (sc.GEN_AI_COMPLETION_PREFIX, ""),
    ):
        flat = _flattened(attributes, prefix, inner, limits, length_limit)
        if flat.status != "absent":
            return flat
    value = attributes.get(sc.OI_OUTPUT_VALUE)
    if isinstance(value, str) and value:
        parsed = parse_payload(
            value, max_bytes=limits.max_payload_bytes, max_depth=limits.max_depth
        )
        if (
            parsed.ok
            and isinstance(parsed.value, dict)
            and isinstance(parsed.value.get("choices"), list)
        ):
            choices = parsed.value["choices"]
            first = choices[0] if choices and isinstance(choices[0], Mapping) else {}
            message = dict(first.get("message") or {})
            message.setdefault("finish_reason", first.get("finish_reason"))
            return _from_message(message, limits, length_limit)
        return parse_answer(value, limits, length_limit)
    reasons = attributes.get(sc.GEN_AI_RESPONSE_FINISH_REASONS)
    if reasons and all(reason in sc.TOOL_CALL_FINISH_REASONS for reason in reasons):
        return OutputRead("not_output")
    return OutputRead("absent")
