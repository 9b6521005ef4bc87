"""Read the structured output (a JSON object) a model produced, from its span's attributes.

Sources, in order: an output the application submitted for the span; GenAI
``gen_ai.output.messages`` (JSON string or structured value); OpenInference
``llm.output_messages.{i}.*``; legacy Traceloop ``gen_ai.completion.{i}.*``; ``output.value``.
A turn that only asks for tool calls is not an output.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from groundplane_otel._frozen import draft_class, finish
from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine.payload import Parsed, decode_payload
from groundplane_otel.otel.config import Limits
from groundplane_otel.otel.environment import CONTENT_OFF_FIX

__all__ = ["OutputRead", "parse_answer", "read_output", "tool_call_finish"]

ReadStatus = Literal["output", "not_output", "absent", "unreadable", "refusal"]
_FENCE = re.compile(r"```[a-zA-Z0-9_-]*\s*\n?(.*?)```", re.DOTALL)
_TOOL_PARTS = frozenset({"tool_call", "function_call"})


@dataclass(frozen=True, slots=True)
class OutputRead:
    """``output``: ``value`` is the JSON object; ``not_output``: a tool-call turn (ignored);
    ``absent``: nothing to read; ``unreadable``: no usable JSON object (``missing_content``:
    a part or message that has a type but no content — content capture off); ``refusal``."""

    status: ReadStatus
    value: Mapping[str, Any] | None = None
    problem: str = ""
    missing_content: bool = False
    # The answer text it was read from (for ``answer: text``); not part of what a read *is*.
    text: str | None = field(default=None, compare=False)
    # What the checks receive: the JSON object, else the answer text (a field, set as the read
    # is built: reading it is no call).
    answer: Any = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "answer", self.value if self.value is not None else self.text)

    def as_text(self) -> OutputRead:
        """This read for a boundary whose checks read the whole answer text: an answer with
        text is an output (its value the text), whatever JSON it holds or lacks."""
        if self.text is None or self.status in ("not_output", "refusal") or self.missing_content:
            return self
        return OutputRead("output", None, text=self.text)

    def with_text(self, text: str) -> OutputRead:
        """This read, keeping the answer text it was read from."""
        return OutputRead(self.status, self.value, self.problem, self.missing_content, text)


_OutputReadDraft = draft_class(OutputRead)
_NO_JSON = "no JSON object in the answer text"
_ABSENT = OutputRead("absent")
_NOT_OUTPUT = OutputRead("not_output")
_REFUSAL = OutputRead("refusal")
_NO_OBJECT = OutputRead("unreadable", problem=_NO_JSON)


def parse_answer(text: str, limits: Limits, length_limit: int | None = None) -> OutputRead:
    """The JSON object in a model's answer text: bare, in markdown fences (several fenced
    objects must agree: two different answers are ambiguous), or embedded. The read keeps
    ``text`` (a text that does not fit ``max_payload_bytes`` keeps none)."""
    keep = text if len(text) <= limits.max_payload_bytes else None
    read = _parse(text.strip(), limits, length_limit, keep)
    if read is _NO_OBJECT:  # not a bare object (the one read saying so)
        read = _enclosed(text, limits)
    return read if keep is None or read.text is keep else read.with_text(text)


def _enclosed(text: str, limits: Limits) -> OutputRead:
    """The JSON object in markdown fences, else between the first ``{`` and the last ``}``."""
    fenced = [_parse(match.group(1).strip(), limits, None) for match in _FENCE.finditer(text)]
    if fenced:
        read = _agreeing(fenced)
        if read.status == "output" or read.problem != _NO_JSON:
            return read
    first, last = text.find("{"), text.rfind("}")
    if 0 <= first < last:
        return _parse(text[first : last + 1], limits, None)
    return _NO_OBJECT


def _parse(
    candidate: str, limits: Limits, length_limit: int | None, keep: str | None = None
) -> OutputRead:
    """The JSON object ``candidate`` is (an output read keeping the answer text ``keep``);
    ``_NO_OBJECT`` itself when it is no JSON or JSON but no object."""
    decoded = decode_payload(candidate, limits.max_payload_bytes, limits.max_depth, length_limit)
    if isinstance(decoded, Parsed):
        return _failed(decoded)
    if type(decoded[0]) is dict:  # parsed text: its objects are plain dicts
        read = _OutputReadDraft()  # OutputRead("output", ...), built cheaply (``_frozen``)
        read.status = "output"
        read.value = decoded[0]
        read.problem = ""
        read.missing_content = False
        read.text = keep
        read.answer = read.value
        return finish(read, OutputRead)
    return _NO_OBJECT


def _failed(parsed: Parsed) -> OutputRead:
    """The unreadable answer a text that did not parse is."""
    if parsed.status == "truncated":
        return OutputRead("unreadable", problem=f"truncated: {parsed.problem}")
    if parsed.problem.startswith("invalid JSON"):
        return _NO_OBJECT
    return OutputRead("unreadable", problem=f"{parsed.status}: {parsed.problem}")


def _are_reasons(reasons: Any) -> bool:
    """Span-level finish reasons: a string (OpenInference) or a list of strings (GenAI)."""
    if isinstance(reasons, str):
        return True
    return isinstance(reasons, (list, tuple)) and all(isinstance(r, str) for r in reasons)


def tool_call_finish(reasons: Any) -> bool:
    """Do finish reasons (one string, or a list of them) say the turn asks for tool calls?"""
    if isinstance(reasons, str):
        return reasons in sc.TOOL_CALL_FINISH_REASONS
    if isinstance(reasons, (list, tuple)) and reasons:
        return all(isinstance(r, str) and r in sc.TOOL_CALL_FINISH_REASONS for r in reasons)
    return False


_CONTENT_OFF = f"content capture is probably off in the instrumentation: {CONTENT_OFF_FIX}"
_MISSING = OutputRead(
    "unreadable", problem=f"a text part has no content; {_CONTENT_OFF}", missing_content=True
)


def _beside_tool_calls(read: OutputRead) -> OutputRead:
    """Text sent alongside tool calls: a JSON answer is an output (checked); prose without one
    is the turn's preamble, not an answer."""
    if read.status == "unreadable" and read.problem == _NO_JSON:
        return _NOT_OUTPUT
    return read


def _from_message(
    message: Mapping[str, Any], reasons: Any, limits: Limits, cut: int | None
) -> OutputRead:
    """One GenAI message: its parts, or OpenAI-style ``content``/``tool_calls``/``refusal``.
    The turn's finish reason is the message's own ``finish_reason`` (a string), else the
    span's ``reasons``."""
    own = message.get("finish_reason")
    if own is not None and not isinstance(own, str):
        return OutputRead("unreadable", problem="finish_reason is not a string")
    # ``tool_call_finish`` of the message's own reason inline (a string: a call less).
    tool_turn = own in sc.TOOL_CALL_FINISH_REASONS if own is not None else tool_call_finish(reasons)
    parts = message.get("parts")
    if parts is None:  # OpenAI chat message shape (OpenInference output.value, flattening)
        content = message.get("content")
        calls = bool(message.get("tool_calls"))
        if isinstance(content, str) and content:
            read = parse_answer(content, limits, cut)
            return _beside_tool_calls(read) if calls or tool_turn else read
        if content is not None and not isinstance(content, str):
            return OutputRead("unreadable", problem="message content is not a string")
        if message.get("refusal"):
            return _REFUSAL
        if calls or tool_turn:
            return _NOT_OUTPUT
        return _ABSENT
    if not isinstance(parts, list):
        return OutputRead("unreadable", problem="parts is not a list")
    if len(parts) == 1:  # the common shape, one text part: the loops below read it the same
        part = parts[0]
        if type(part) is dict and part.get("type") == "text":
            text = part.get("content")
            if isinstance(text, str):
                read = parse_answer(text, limits, cut)
                return _beside_tool_calls(read) if tool_turn else read
    typed: list[tuple[Mapping[str, Any], Any]] = []  # each part and its type
    for part in parts:
        if type(part) is not dict and not isinstance(part, Mapping):
            return OutputRead("unreadable", problem="a part is not an object")
        typed.append((part, part.get("type")))
    contents: list[Any] = []  # the text parts' contents
    calls = refused = missing = False  # a tool call part, a refusal part, a text without content
    for part, kind in typed:
        if not isinstance(kind, str):
            return OutputRead("unreadable", problem="a part has no string type")
        if kind == "text":
            text = part.get("content")
            contents.append(text)
            missing = missing or not isinstance(text, str)
        elif kind in _TOOL_PARTS:
            calls = True
        elif kind == "refusal":
            refused = True
    if not contents:
        if calls or tool_turn:
            return _NOT_OUTPUT
        if refused:
            return _REFUSAL
        return _ABSENT
    if missing:
        return _MISSING if not calls else _NOT_OUTPUT
    joined = "".join(contents)
    read = parse_answer(joined, limits, cut)
    if read.status != "output" and len(contents) > 1:  # not one answer in chunks: one per part?
        read = _agreeing([parse_answer(content, limits, cut) for content in contents])
        if len(joined) <= limits.max_payload_bytes:
            read = read.with_text(joined)
    return _beside_tool_calls(read) if calls or tool_turn else read


def _agreeing(reads: list[OutputRead]) -> OutputRead:
    """The one JSON answer several texts carry (two different ones are ambiguous)."""
    answers = [read for read in reads if read.status == "output"]
    if answers:
        if any(read.value != answers[0].value for read in answers[1:]):
            problem = f"ambiguous: {len(answers)} different JSON objects"
            return OutputRead("unreadable", problem=problem)
        return answers[0]
    failed = [read for read in reads if read.problem != _NO_JSON]
    return failed[0] if failed else _NO_OBJECT


def _last_assistant(messages: Any) -> Mapping[str, Any] | None:
    if not isinstance(messages, list):
        if not isinstance(messages, Mapping):
            return None
        messages = [messages]
    for message in reversed(messages):
        if (type(message) is dict or isinstance(message, Mapping)) and message.get(
            "role", "assistant"
        ) == "assistant":
            return message
    return None


class _Malformed(ValueError):
    """A flattened key that does not follow the convention."""


def _flattened(attributes: Mapping[str, Any], prefix: str, inner: str) -> dict[int, dict[str, Any]]:
    """OpenInference / Traceloop flattening: ``{prefix}{i}.{inner}role|content|tool_calls...``."""
    messages: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        index, _, rest = key[len(prefix) :].partition(".")
        if not (index.isascii() and index.isdigit()):
            raise _Malformed(f"flattened key with index {index[:20]!r}")
        rest = rest.removeprefix(inner)
        entry = messages.setdefault(int(index), {})
        if rest.startswith("tool_calls."):
            entry["tool_calls"] = True
        else:
            entry[rest] = value
    return messages


_FLATTENED = ((sc.OI_OUTPUT_MESSAGES_PREFIX, "message."), (sc.GEN_AI_COMPLETION_PREFIX, ""))


_FLATTENED_PREFIXES = tuple(prefix for prefix, _ in _FLATTENED)


def read_output(
    attributes: Mapping[str, Any], limits: Limits, length_limit: int | None = None
) -> OutputRead:
    """The structured output a span's attributes carry (see the module docstring)."""
    reasons = attributes.get(sc.GEN_AI_RESPONSE_FINISH_REASONS)
    if reasons is None:
        reasons = attributes.get(sc.OI_LLM_FINISH_REASON)
    if reasons is not None and not _are_reasons(reasons):
        return OutputRead("unreadable", problem="the finish reasons are not strings")
    raw = attributes.get(sc.GEN_AI_OUTPUT_MESSAGES)
    if raw is not None:
        decoded = decode_payload(raw, limits.max_payload_bytes, limits.max_depth, length_limit)
        if isinstance(decoded, Parsed):
            return OutputRead("unreadable", problem=f"{decoded.status}: {decoded.problem}")
        messages = decoded[0]
        message: Mapping[str, Any] | None
        if type(messages) is list and len(messages) == 1 and type(messages[0]) is dict:
            # ``_last_assistant`` inline for the usual one message (a call less).
            message = messages[0]
            if message.get("role", "assistant") != "assistant":
                message = None
        else:
            message = _last_assistant(messages)
        if message is None:
            return _ABSENT
        return _from_message(message, reasons, limits, length_limit)
    # A snapshot of the keys (a live span's attributes may change while they are read), and a
    # loop, not ``any`` over a generator (no generator to build: most spans have no such key).
    flattened = False
    for key in tuple(attributes):
        if key.startswith(_FLATTENED_PREFIXES):
            flattened = True
            attributes = dict(attributes)  # the snapshot ``_flattened`` iterates
            break
    for prefix, inner in _FLATTENED if flattened else ():
        try:
            messages = _flattened(attributes, prefix, inner)
        except _Malformed as malformed:
            return OutputRead("unreadable", problem=str(malformed))
        assistant = [
            i for i in sorted(messages) if messages[i].get("role", "assistant") == "assistant"
        ]
        if assistant:
            return _from_message(messages[assistant[-1]], reasons, limits, length_limit)
    value = attributes.get(sc.OI_OUTPUT_VALUE)
    if isinstance(value, str) and value:
        return _output_value(value, reasons, limits, length_limit)
    if reasons is not None and tool_call_finish(reasons):
        return _NOT_OUTPUT
    if reasons:  # the model finished an answer turn, but the span carries no content
        problem = f"the span carries no output content; {_CONTENT_OFF}"
        return OutputRead("unreadable", problem=problem, missing_content=True)
    return _ABSENT


def _output_value(value: str, reasons: Any, limits: Limits, length_limit: int | None) -> OutputRead:
    """OpenInference ``output.value``: an OpenAI response (``choices``) or the answer itself."""
    decoded = decode_payload(value, limits.max_payload_bytes, limits.max_depth)
    response = None if isinstance(decoded, Parsed) else decoded[0]
    if not (isinstance(response, dict) and "choices" in response):
        return parse_answer(value, limits, length_limit)
    choices = response["choices"]
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], Mapping):
        return OutputRead("unreadable", problem="output.value choices is not a list of objects")
    first = choices[0]
    message = first.get("message")
    if not isinstance(message, Mapping):
        return OutputRead("unreadable", problem="output.value choices[0].message is not an object")
    finish = first.get("finish_reason")
    if finish is not None and not isinstance(finish, str):
        return OutputRead(
            "unreadable", problem="output.value choices[0].finish_reason is not a string"
        )
    return _from_message(message, reasons if finish is None else finish, limits, length_limit)
