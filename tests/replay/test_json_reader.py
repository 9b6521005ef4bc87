"""The fast OTLP/JSON reader (``json_spans``) reads every line into exactly the spans the
protobuf reader makes of the same line, and refuses what protobuf's JSON mapping refuses."""

from __future__ import annotations

import base64
import json
import math
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import ParseError  # type: ignore[import-untyped]
from opentelemetry.trace import SpanKind, StatusCode
from replay_recording import CONFIG, live_and_recorded

from groundplane_otel.otel.otlp_files import BadInput, read_requests, request_from_json
from groundplane_otel.otel.replay import Replayer
from groundplane_otel.otel.replay.json_reader import NestedTooDeep, json_spans
from groundplane_otel.otel.replay.records import RecordedSpan, proto_spans

TRACE, SPAN, PARENT = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", "00f067aa0ba902b7"


def both(tree: dict[str, Any]) -> tuple[list[RecordedSpan], list[RecordedSpan]]:
    """The spans of one line read both ways: fast, and through protobuf's JSON mapping."""
    line = json.dumps(tree)
    return json_spans(line.encode()), proto_spans(request_from_json(line))


def request(*spans: dict[str, Any], resource: list[Any] | None = None) -> dict[str, Any]:
    return {
        "resourceSpans": [
            {
                "resource": {"attributes": resource or []},
                "scopeSpans": [{"scope": {"name": "s"}, "spans": list(spans)}],
            }
        ]
    }


def span(**fields: Any) -> dict[str, Any]:
    return {"traceId": TRACE, "spanId": SPAN, "name": "chat m", **fields}


def nested(levels: int, wrap: str = "arrayValue") -> dict[str, Any]:
    value: dict[str, Any] = {"stringValue": "x"}
    for _ in range(levels):
        if wrap == "arrayValue":
            value = {"arrayValue": {"values": [value]}}
        else:
            value = {"kvlistValue": {"values": [{"key": "k", "value": value}]}}
    return value


def test_every_line_of_a_real_recording_reads_as_the_protobuf_reader_reads_it(
    tmp_path: Path,
) -> None:
    """Each line of the SDK's recording gives equal ``RecordedSpan``s both ways (ids, times,
    kind, attributes, events, status, resource)."""
    _, path = live_and_recorded(tmp_path)
    lines = path.read_text().splitlines()
    assert len(lines) == 19
    for line in lines:
        fast, slow = json_spans(line.encode()), proto_spans(request_from_json(line))
        assert len(fast) == 1
        assert fast == slow
        assert (fast[0].resource, slow[0].resource) == (slow[0].resource, fast[0].resource)


def test_every_value_type_kind_status_and_event_reads_as_protobuf_does() -> None:
    """Strings, booleans, 64-bit integers as strings and numbers, doubles (quoted NaN and
    Infinity too), bytes, arrays, maps, nulls, enum names and numbers: equal both ways."""
    attributes = [
        {"key": "s", "value": {"stringValue": "é"}},
        {"key": "b", "value": {"boolValue": False}},
        {"key": "i", "value": {"intValue": "-9223372036854775808"}},
        {"key": "j", "value": {"intValue": 42}},
        {"key": "d", "value": {"doubleValue": 1.5}},
        {"key": "e", "value": {"doubleValue": 3}},
        {"key": "inf", "value": {"doubleValue": "-Infinity"}},
        {"key": "y", "value": {"bytesValue": base64.b64encode(b"\x00\xff").decode()}},
        {"key": "a", "value": {"arrayValue": {"values": [{"intValue": "1"}, {}]}}},
        {"key": "m", "value": {"kvlistValue": {"values": [{"key": "k", "value": {}}]}}},
        {"key": "n", "value": None},
        {"key": "deep", "value": nested(20)},
        {"key": "deepmap", "value": nested(18, "kvlistValue")},
    ]
    events = [{"timeUnixNano": "5", "name": "hit", "attributes": attributes[:2]}, {"name": "x"}]
    kinds = [("SPAN_KIND_CLIENT", "STATUS_CODE_ERROR"), (4, 1), (None, None), (9, 0), ("NEW", "7")]
    for kind, code in kinds:
        tree = request(
            span(
                parentSpanId=PARENT,
                kind=kind,
                startTimeUnixNano="1700000000000000000",
                endTimeUnixNano=1700000000000000001,
                attributes=attributes,
                events=events,
                status={"code": code, "message": "boom"},
                links=[{"traceId": TRACE, "spanId": PARENT}],
                unknownField={"x": 1},
            ),
            resource=[{"key": "service.name", "value": {"stringValue": "svc"}}],
        )
        fast, slow = both(tree)
        assert fast == slow
    assert (fast[0].kind, fast[0].status) == (SpanKind.INTERNAL, StatusCode.UNSET)
    (first,) = both(request(span(kind="SPAN_KIND_CLIENT", status={"code": 2})))[0]
    assert (first.kind, first.status) == (SpanKind.CLIENT, StatusCode.ERROR)
    values = fast[0].attributes
    assert (values["i"], values["y"], values["a"], values["m"]) == (
        -(2**63),
        b"\x00\xff",
        (1, None),
        {"k": None},
    )
    assert math.isinf(values["inf"])


def test_a_recording_guards_own_attributes_and_verdict_are_left_out_both_ways() -> None:
    """``groundplane.outcome`` and a ``groundplane: output`` status message are what a recording
    guard wrote: neither reader keeps them (replay decides again)."""
    tree = request(
        span(
            attributes=[
                {"key": "groundplane.outcome", "value": {"stringValue": "blocked"}},
                {"key": "groundplane.boundary", "value": {"stringValue": "answer"}},
            ],
            status={"code": 2, "message": "groundplane: output blocked"},
        )
    )
    fast, slow = both(tree)
    assert fast == slow
    assert (fast[0].attributes, fast[0].status) == (
        {"groundplane.boundary": "answer"},
        StatusCode.UNSET,
    )


@pytest.mark.parametrize(
    ("where", "fits", "refused"),
    [("span", 47, 48), ("resource", 47, 48), ("event", 46, 47), ("map", 31, 32)],
)
def test_the_message_depth_limit_is_protobufs(where: str, fits: int, refused: int) -> None:
    """A value nested one level under protobuf's limit of 100 messages reads (both ways); one
    level more is refused by both, the fast one saying protobuf's words."""

    def tree(levels: int) -> dict[str, Any]:
        value = nested(levels, "kvlistValue" if where == "map" else "arrayValue")
        pair = [{"key": "deep", "value": value}]
        if where == "resource":
            return request(span(), resource=pair)
        if where == "event":
            return request(span(events=[{"name": "e", "attributes": pair}]))
        return request(span(attributes=pair))

    fast, slow = both(tree(fits))
    assert fast == slow
    with pytest.raises(ParseError, match="Message too deep"):
        request_from_json(json.dumps(tree(refused)))
    with pytest.raises(ValueError) as refusal:
        json_spans(json.dumps(tree(refused)).encode())
    assert str(refusal.value) == "Message too deep. Max recursion depth is 100"


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"name": 5}, "expected a string, got number in name"),
        ({"spanId": "zz"}, "non-hexadecimal number found in fromhex() arg at position 0"),
        ({"traceId": 7}, "expected a hex string, got number in traceId"),
        ({"startTimeUnixNano": "1.5"}, "not an integer: '1.5' in startTimeUnixNano"),
        ({"startTimeUnixNano": "-1"}, "integer out of range in startTimeUnixNano"),
        ({"endTimeUnixNano": True}, "expected an integer, got bool in endTimeUnixNano"),
        ({"attributes": {"a": 1}}, "expected an array, got object in attributes"),
        ({"events": [None]}, "expected an object, got null in events"),
        (
            {"attributes": [{"key": "k", "value": {"stringValue": "a", "intValue": "1"}}]},
            "more than one value in one AnyValue",
        ),
        (
            {"attributes": [{"key": "k", "value": {"intValue": "9223372036854775808"}}]},
            "integer out of range in intValue",
        ),
        (
            {"attributes": [{"key": "k", "value": {"boolValue": "true"}}]},
            "expected true or false, got string in boolValue",
        ),
    ],
)
def test_values_protobuf_refuses_make_the_line_unreadable(
    fields: dict[str, Any], problem: str
) -> None:
    """A value of the wrong type or out of range is refused by protobuf's mapping and by the
    fast reader alike, which names the innermost field."""
    line = json.dumps(request(span(**fields)))
    with pytest.raises((ParseError, ValueError)):
        request_from_json(line)
    with pytest.raises(ValueError) as refusal:
        json_spans(line.encode())
    assert str(refusal.value) == problem


def test_a_line_nested_past_the_decoders_depth_is_nested_too_deep() -> None:
    """200,000 nested arrays are ``NestedTooDeep`` (a ValueError), never a RecursionError."""
    with pytest.raises(NestedTooDeep):
        json_spans(b'{"resourceSpans":' + b"[" * 200_000 + b"]" * 200_000 + b"}")


def test_both_readers_decide_a_recording_alike_and_a_span_in_both_formats_is_one(
    tmp_path: Path,
) -> None:
    """The recording read as JSON lines and as protobuf messages decides the same outputs and
    findings; the same span read once from each format is one span, counted duplicate."""
    _, path = live_and_recorded(tmp_path)
    lines = path.read_text().splitlines()
    proto = tmp_path / "traces.pb"
    proto.write_bytes(
        b"".join(
            len(body).to_bytes(4, "big") + body
            for body in (request_from_json(line).SerializeToString() for line in lines)
        )
    )
    decided = []
    for paths in ([path], [proto], [path, proto]):
        replayer, bad = Replayer(CONFIG), list[BadInput]()
        for batch in read_requests(paths, bad):
            replayer.feed(batch)
        replayer.finish()
        assert bad == []
        stats = replayer.stats
        findings = sorted((finding.span_id, finding.reason) for finding in stats.findings)
        decided.append((stats.outputs, findings, stats.duplicate_spans, stats.conflicting_traces))
    assert decided[0] == decided[1] == (decided[0][0], decided[0][1], 0, 0)
    assert decided[2] == (decided[0][0], decided[0][1], len(lines), 0)
    assert decided[0][0] == {
        ("answer", "passed"): 4,
        ("answer", "blocked"): 1,
        ("answer", "error"): 2,
    }
