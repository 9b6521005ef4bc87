"""OTLP/JSON lines straight into ``RecordedSpan``s: ``orjson`` decodes, one walk converts.

No protobuf round trip, and the same refusals as protobuf's JSON mapping where the spans are
concerned: keys in lowerCamelCase (as OTLP/JSON requires), ids as hex, 64-bit integers as
strings or numbers, enums as numbers or names (anything else: unspecified), ``null`` as
absent, unknown fields ignored, messages nested more than 100 deep refused, and a value of the
wrong type makes the whole line unreadable (``ValueError``, short and naming the innermost
field). Fields the engine never reads
(links, trace state, dropped counts, the instrumentation scope) are not read, so not checked.
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Mapping
from typing import Any

import orjson

from groundplane_otel._echo import capped
from groundplane_otel.otel.replay.records import (
    MAX_VALUE_DEPTH,
    RecordedSpan,
    keep_resource,
    recorded_span,
)

__all__ = ["MAX_MESSAGE_DEPTH", "JsonResources", "NestedTooDeep", "NotTraces", "json_spans"]

MAX_MESSAGE_DEPTH = 100  # protobuf's JSON parser's limit on nested messages
# The message depth of an attribute's value (AnyValue): request > resourceSpans > resource >
# KeyValue > AnyValue; a span's KeyValue sits under scopeSpans > spans, an event's one deeper.
_RESOURCE_VALUE, _SPAN_VALUE, _EVENT_VALUE = 5, 6, 7
_KIND_NAMES = {
    "SPAN_KIND_UNSPECIFIED": 0,
    "SPAN_KIND_INTERNAL": 1,
    "SPAN_KIND_SERVER": 2,
    "SPAN_KIND_CLIENT": 3,
    "SPAN_KIND_PRODUCER": 4,
    "SPAN_KIND_CONSUMER": 5,
}
_CODE_NAMES = {"STATUS_CODE_UNSET": 0, "STATUS_CODE_OK": 1, "STATUS_CODE_ERROR": 2}
# The kinds and status codes the common shape writes, by name and by number.
_KIND_NUMBERS: dict[str | int, int] = {number: number for number in range(6)}
_KIND_NUMBERS.update(_KIND_NAMES)
_CODE_NUMBERS: dict[str | int, int] = {number: number for number in range(3)}
_CODE_NUMBERS.update(_CODE_NAMES)
_ENUM_TYPES = (str, int)  # their types (bool, a subclass of int, is not one)
_NO_STATUS: dict[str, Any] = {}
_UINT64_DIGITS = 20  # a decimal string shorter than this is a uint64 (2**64 has 20 digits)
_TYPES = {dict: "object", list: "array", str: "string", int: "number", float: "number"}
_INT64, _UINT64 = (-(2**63), 2**63 - 1), (0, 2**64 - 1)
_fromhex = bytes.fromhex  # read once: three a span (a class attribute is a dearer lookup)


class NestedTooDeep(ValueError):
    """The line is nested deeper than the JSON decoder reads."""


class JsonResources(dict[bytes, Any]):
    """One file's resources read so far, by their JSON (``orjson.dumps`` of the resource
    object), shared by the spans of its later lines; and ``last``, the line prefix that holds
    the first resource of the last line read (``{"resourceSpans":[{"resource":`` and its JSON,
    then ``,"``) with its attributes, or None."""

    last: tuple[bytes, Mapping[str, Any]] | None = None


_OPEN = b'{"resourceSpans":[{"resource":'  # a line's first resource follows it
# A line whose first resource is the last line's, as parsed: that resource replaced by null.
_MARKED = b'{"resourceSpans":[{"resource":null,'


def json_spans(line: bytes, resources: dict[bytes, Any] | None = None) -> list[RecordedSpan]:
    """Every span of one OTLP/JSON ``ExportTraceServiceRequest`` line, in order; a ValueError
    says why the line is not one (``NestedTooDeep`` past the decoder's depth). ``resources``:
    resource attributes already read (by their JSON), shared by the spans of later lines
    rather than held once per line.

    A line that starts with the text of the last line's first resource (``JsonResources``:
    the common file, one service) is decoded with that resource's text replaced by ``null``:
    the resource is neither decoded nor encoded again, its attributes are the last line's.
    The rest of the line reads alike (a key follows in both), so it is refused alike (then
    decoded as it is, for the same message); a later ``resource`` key in the same object
    replaces the ``null``, as it would have replaced the resource (the last key wins). Only a
    repeated key set to null there (``resource``, or ``resourceSpans`` with a null first
    resource) reads the first resource's attributes where decoding it all reads none: a
    resource's attributes ride on the spans read, the guard never reads them."""
    shared = None  # the first resource's attributes, when its text was the last line's
    body = line
    last = getattr(resources, "last", None)
    if last is not None and line.startswith(last[0]):
        shared = last[1]
        body = _MARKED + line[len(last[0]) - 1 :]  # from the next key's opening quote on
    try:
        tree = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        if body is not line:
            return json_spans(line)  # refused alike: its own message, from its own text
        if str(exc).startswith("depth limit exceeded"):
            raise NestedTooDeep(str(exc)) from None
        raise
    if not isinstance(tree, dict):
        raise ValueError(f"expected a JSON object, got {type(tree).__name__}")
    if tree and "resourceSpans" not in tree:
        raise NotTraces(_not_traces(tree))
    spans: list[RecordedSpan] = []
    # Each level read inline when it has the expected type (the common case, no call): any
    # other value is refused (``_list``/``_object`` tell why; a null list or resource is empty).
    items = tree.get("resourceSpans")
    if items.__class__ is not list:
        items = _list(tree, "resourceSpans")
    for item in items:
        if item.__class__ is not dict:
            raise _wrong("an object", item, "resourceSpans")
        resource = item.get("resource")
        if shared is not None and resource is None:  # the marked first resource
            attributes, shared = shared, None
        else:
            shared = None  # the first item only
            if resource.__class__ is not dict:
                resource = _object(resource, "resource")
            attributes = _resource(resource, resources, line if item is items[0] else None)
        scopes = item.get("scopeSpans")
        if scopes.__class__ is not list:
            scopes = _list(item, "scopeSpans")
        for scope in scopes:
            if scope.__class__ is not dict:
                raise _wrong("an object", scope, "scopeSpans")
            listed = scope.get("spans")
            if listed.__class__ is not list:
                listed = _list(scope, "spans")
            for index, span in enumerate(listed):
                if span.__class__ is not dict:
                    raise _wrong("an object", span, "spans")
                spans.append(_span(span, attributes, index))
    return spans


class NotTraces(ValueError):
    """A JSON object that is not a trace request; its message (ours, echoes capped) says
    what it is."""


def _not_traces(tree: dict[str, Any]) -> str:
    """Why a JSON object with keys but no ``resourceSpans`` is not a trace request."""
    if "resource_spans" in tree:
        return (
            "not an OTLP/JSON trace request: snake_case keys ('resource_spans'); OTLP/JSON "
            "keys are lowerCamelCase ('resourceSpans', 'scopeSpans', 'traceId'), as the "
            "Collector's file exporter writes them"
        )
    for key, signal in (("resourceLogs", "logs"), ("resourceMetrics", "metrics")):
        if key in tree:
            return f"not an OTLP/JSON trace request: an OTLP {signal} request ({key!r})"
    keys = ", ".join(repr(capped(str(key), 40)) for key in list(tree)[:3])
    more = ", …" if len(tree) > 3 else ""
    return f"not an OTLP/JSON trace request: no 'resourceSpans' key (keys: {keys}{more})"


def _resource(
    resource: dict[str, Any], resources: dict[bytes, Any] | None, line: bytes | None
) -> Mapping[str, Any]:
    """A resource's attributes: read once per distinct JSON (already checked), then shared.
    ``line``: the line, when this is its first resource (then, when the line starts with it,
    kept as ``JsonResources.last``)."""
    pairs = resource.get("attributes")
    if resources is None:
        return _attributes(pairs, _RESOURCE_VALUE, "attributes")
    key = orjson.dumps(resource)
    known = resources.get(key)
    if known is None:
        known = keep_resource(resources, key, _attributes(pairs, _RESOURCE_VALUE, "attributes"))
    if line is not None and isinstance(resources, JsonResources):
        prefix = b"".join((_OPEN, key, b',"'))
        resources.last = (prefix, known) if line.startswith(prefix) else None
    return known


def _span(span: dict[str, Any], resource: Mapping[str, Any], index: int) -> RecordedSpan:
    """One span. The shape the Collector and the SDK's exporters write (hex ids, names and
    times as strings, the kind and status code as numbers or names) is read with its types
    checked in one test (its attributes and events as the checked reader reads them); any
    other span goes through ``_checked_span``, which reads it alike and locates what is
    wrong."""
    get = span.get
    trace_id, span_id, parent_id = get("traceId"), get("spanId"), get("parentSpanId", "")
    name, kind = get("name", ""), get("kind", 0)
    start, end, status = get("startTimeUnixNano"), get("endTimeUnixNano"), get("status")
    code: Any = 0
    message: Any = ""
    if status is not None and status != _NO_STATUS:  # a status set (most spans have none)
        if status.__class__ is not dict:
            return _checked_span(span, resource, index)
        code, message = status.get("code", 0), status.get("message", "")
        if not (
            code.__class__ in _ENUM_TYPES and code in _CODE_NUMBERS and message.__class__ is str
        ):
            return _checked_span(span, resource, index)
        code = _CODE_NUMBERS[code]
    if (
        trace_id.__class__ is str
        and span_id.__class__ is str
        and parent_id.__class__ is str
        and name.__class__ is str
        and kind.__class__ in _ENUM_TYPES
        and (number := _KIND_NUMBERS.get(kind)) is not None
        and start.__class__ is str
        and end.__class__ is str
        and len(start) < _UINT64_DIGITS
        and len(end) < _UINT64_DIGITS
        and start.isdigit()
        and end.isdigit()
        and start.isascii()
        and end.isascii()
    ):
        events = get("events")
        events = () if events is None else _events(span)  # as ``_checked_span``: before the ids
        return recorded_span(
            _fromhex(trace_id),  # ValueError: not hex (as ``_id``)
            _fromhex(span_id),
            _fromhex(parent_id),
            name,
            number,
            int(start),
            int(end),
            _attributes(get("attributes"), _SPAN_VALUE, "attributes"),
            events,
            code,
            message,
            resource,
            index,
        )
    return _checked_span(span, resource, index)


def _checked_span(span: dict[str, Any], resource: Mapping[str, Any], index: int) -> RecordedSpan:
    """One span of any shape, each field read and checked on its own."""
    status = _object(span.get("status"), "status")
    events = _events(span)
    return recorded_span(
        _id(span.get("traceId"), "traceId"),
        _id(span.get("spanId"), "spanId"),
        _id(span.get("parentSpanId"), "parentSpanId"),
        _string(span.get("name"), "name"),
        _enum(span.get("kind"), _KIND_NAMES, "kind"),
        _integer(span.get("startTimeUnixNano"), _UINT64, "startTimeUnixNano"),
        _integer(span.get("endTimeUnixNano"), _UINT64, "endTimeUnixNano"),
        _attributes(span.get("attributes"), _SPAN_VALUE, "attributes"),
        events,
        _enum(status.get("code"), _CODE_NAMES, "code"),
        _string(status.get("message"), "message"),
        resource,
        index,
    )


def _events(span: dict[str, Any]) -> tuple[tuple[str, dict[str, Any]], ...]:
    return tuple(
        (
            _string(event.get("name"), "name"),
            _attributes(event.get("attributes"), _EVENT_VALUE, "attributes"),
        )
        for event in map(_event, _list(span, "events"))
    )


def _event(event: Any) -> dict[str, Any]:
    return _object(event, "events")


# -- the message shapes ------------------------------------------------------------------------


def _wrong(expected: str, value: Any, field: str) -> ValueError:
    got = "null" if value is None else _TYPES.get(type(value), type(value).__name__)
    return ValueError(f"expected {expected}, got {got} in {field}")


def _object(value: Any, field: str) -> dict[str, Any]:
    if isinstance(value, dict):
        return value
    if value is None and field in ("resource", "status", "arrayValue", "kvlistValue"):
        return {}  # a single message field: null is absent (in a list it is refused)
    raise _wrong("an object", value, field)


def _list(node: dict[str, Any], field: str) -> list[Any]:
    value = node.get(field)
    if isinstance(value, list):
        return value
    if value is None:
        return []
    raise _wrong("an array", value, field)


def _string(value: Any, field: str) -> str:
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    raise _wrong("a string", value, field)


def _id(value: Any, field: str) -> bytes:
    if isinstance(value, str):
        return bytes.fromhex(value)  # ValueError: not hex
    if value is None:
        return b""
    raise _wrong("a hex string", value, field)


def _integer(value: Any, bounds: tuple[int, int], field: str) -> int:
    """A 64-bit integer as protobuf's JSON mapping reads one: a number or a decimal string."""
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise _wrong("an integer", value, field)
    if isinstance(value, str) and " " in value:
        raise ValueError(f"not an integer: {value[:40]!r} in {field}")
    try:
        number = int(value)
        if isinstance(value, float) and number != value:
            raise ValueError
    except (ValueError, OverflowError):
        try:
            real = float(value)
        except ValueError:
            raise ValueError(f"not an integer: {str(value)[:40]!r} in {field}") from None
        if not real.is_integer():
            raise ValueError(f"not an integer: {str(value)[:40]!r} in {field}") from None
        number = int(real)
    if not bounds[0] <= number <= bounds[1]:
        raise ValueError(f"integer out of range in {field}")
    return number


def _enum(value: Any, names: dict[str, int], field: str) -> int:
    """An enum as protobuf's mapping reads one: a number, a name, or (an unknown name or
    anything else, which it ignores) unspecified."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str):
        return int(value) if value.isdigit() else names.get(value, 0)
    return 0


# -- attributes ----------------------------------------------------------------------------------


def _attributes(pairs: Any, depth: int, field: str, level: int = 0) -> dict[str, Any]:
    """KeyValues whose values sit at message ``depth``, nested ``level`` maps deep."""
    if pairs is None:
        return {}
    if pairs.__class__ is not list:
        raise _wrong("an array", pairs, field)
    attributes: dict[str, Any] = {}
    inline = depth <= MAX_MESSAGE_DEPTH  # a string value is read inline (within the depth)
    for pair in pairs:
        try:  # the common pair, a string value, by subscripts (dearer calls to ``get`` else)
            key, node = pair["key"], pair["value"]
            item = node["stringValue"]
        except (KeyError, TypeError):
            pass  # any other pair: read below
        else:
            if key.__class__ is str and item.__class__ is str and len(node) == 1 and inline:
                attributes[key] = item
                continue
        if pair.__class__ is not dict:
            raise _wrong("an object", pair, field)
        key, node = pair.get("key"), pair.get("value")
        if key.__class__ is not str:
            key = _string(key, "key")
        attributes[key] = _value(node, depth, level)
    return attributes


def _value(node: Any, depth: int, level: int) -> Any:
    """An AnyValue (at message ``depth``) as the SDK stores attributes, arrays and maps
    nested past ``MAX_VALUE_DEPTH`` read as None (as the protobuf reader's)."""
    if depth > MAX_MESSAGE_DEPTH:
        raise ValueError(f"Message too deep. Max recursion depth is {MAX_MESSAGE_DEPTH}")
    if node is None:
        return None
    if not isinstance(node, dict):
        raise _wrong("an object", node, "value")
    found, result = False, None
    for key, item in node.items():
        if item is None:
            continue  # null: the field is absent
        scalar = _SCALARS.get(key)
        if scalar is not None:
            value = scalar(item)
        elif key == "arrayValue":
            value = _array(item, depth + 1, level)
        elif key == "kvlistValue":
            value = _kvlist(item, depth + 1, level)
        else:
            continue  # an unknown field
        if found:
            raise ValueError("more than one value in one AnyValue")
        found, result = True, value
    return result


def _array(node: Any, depth: int, level: int) -> tuple[Any, ...] | None:
    if depth > MAX_MESSAGE_DEPTH:
        raise ValueError(f"Message too deep. Max recursion depth is {MAX_MESSAGE_DEPTH}")
    items = tuple(_value(item, depth + 1, level + 1) for item in _items(node, "arrayValue"))
    return items if level <= MAX_VALUE_DEPTH else None


def _kvlist(node: Any, depth: int, level: int) -> dict[str, Any] | None:
    if depth > MAX_MESSAGE_DEPTH:
        raise ValueError(f"Message too deep. Max recursion depth is {MAX_MESSAGE_DEPTH}")
    pairs = _items(node, "kvlistValue")
    if pairs and depth + 1 > MAX_MESSAGE_DEPTH:
        raise ValueError(f"Message too deep. Max recursion depth is {MAX_MESSAGE_DEPTH}")
    mapping = _attributes(pairs, depth + 2, "values", level + 1)
    return mapping if level <= MAX_VALUE_DEPTH else None


def _items(node: Any, field: str) -> list[Any]:
    values = _object(node, field).get("values")
    if values is None:
        return []
    if not isinstance(values, list):
        raise _wrong("an array", values, "values")
    if any(item is None for item in values):
        raise ValueError("null in a repeated field in values")
    return values


def _string_value(value: Any) -> str:
    return _string(value, "stringValue") if value is not None else ""


def _bool_value(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    raise _wrong("true or false", value, "boolValue")


def _int_value(value: Any) -> int:
    return _integer(value, _INT64, "intValue")


_SPECIAL_DOUBLES = {"NaN": float("nan"), "Infinity": float("inf"), "-Infinity": float("-inf")}


def _double_value(value: Any) -> float:
    if isinstance(value, float):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str):
        special = _SPECIAL_DOUBLES.get(value)
        if special is not None:
            return special
        try:
            return float(value)
        except ValueError:
            raise ValueError(f"not a number: {value[:40]!r} in doubleValue") from None
    raise _wrong("a number", value, "doubleValue")


def _bytes_value(value: Any) -> bytes:
    if not isinstance(value, str):
        raise _wrong("a base64 string", value, "bytesValue")
    encoded = value.encode("utf-8")
    try:
        return base64.urlsafe_b64decode(encoded + b"=" * (4 - len(encoded) % 4))
    except ValueError:
        raise ValueError("not base64 in bytesValue") from None


_SCALARS: dict[str, Callable[[Any], Any]] = {
    "stringValue": _string_value,
    "boolValue": _bool_value,
    "intValue": _int_value,
    "doubleValue": _double_value,
    "bytesValue": _bytes_value,
}
