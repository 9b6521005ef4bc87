"""The replay driver's fast paths decide exactly as its general ones: the JSON reader's common
span shape reads as its checked reader does, protobuf resources are shared only when their
encoding is the same, the one-sort timeline equals the general nesting, and a record starts
with its parent record's lineage."""

from __future__ import annotations

import dataclasses
import random
from pathlib import Path
from typing import Any

import orjson
import pytest
from opentelemetry import trace
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import KeyValue
from replay_recording import CONFIG, live_and_recorded

from groundplane_otel.otel._engine.sdk import span_attributes
from groundplane_otel.otel.replay import Replayer, driving, json_reader
from groundplane_otel.otel.replay.json_reader import _checked_span, _span, json_spans
from groundplane_otel.otel.replay.records import (
    RESOURCES_SHARED,
    RecordedSpan,
    SpanRecord,
    proto_spans,
    recorded_span,
    trace_records,
)

TRACE, SPAN = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"


COMMON = {
    "traceId": TRACE,
    "spanId": SPAN,
    "parentSpanId": "",
    "name": "chat m",
    "kind": 1,
    "startTimeUnixNano": "1700000000000000000",
    "endTimeUnixNano": "1700000000000000001",
    "attributes": [{"key": "k", "value": {"stringValue": "v"}}],
    "status": {},
}


def _read(span: dict[str, Any], read: Any) -> Any:
    """What ``read`` (``_span`` or ``_checked_span``) makes of one span, or the error."""
    try:
        return read(orjson.loads(orjson.dumps(span)), {}, 0)
    except ValueError as exc:
        return (type(exc), str(exc))


def test_every_span_of_a_real_recording_takes_the_common_shape_and_reads_alike(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each span the SDK's exporter wrote (and the common shape itself) is read without the
    checked reader, into what the checked reader makes of it."""
    _, path = live_and_recorded(tmp_path)
    spans = [
        span
        for line in path.read_bytes().splitlines()
        for span in orjson.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    ]
    assert len(spans) == 19
    checked = [_checked_span(span, {}, 0) for span in [*spans, COMMON]]
    monkeypatch.setattr(json_reader, "_checked_span", None)  # any call fails
    assert [_span(span, {}, 0) for span in [*spans, COMMON]] == checked


@pytest.mark.parametrize(
    "fields",
    [
        {"kind": True},
        {"kind": 2.0},
        {"kind": "3"},
        {"kind": 7},
        {"kind": "NEW"},
        {"kind": []},
        {"kind": "SPAN_KIND_SERVER"},
        {"startTimeUnixNano": "18446744073709551616"},
        {"startTimeUnixNano": "18446744073709551615"},
        {"endTimeUnixNano": "9999999999999999999"},
        {"startTimeUnixNano": "1_000"},
        {"startTimeUnixNano": "\u0661\u0662"},
        {"startTimeUnixNano": "\u00b2"},
        {"startTimeUnixNano": ""},
        {"startTimeUnixNano": 5},
        {"endTimeUnixNano": "12 "},
        {"endTimeUnixNano": None},
        {"parentSpanId": None},
        {"parentSpanId": "zz"},
        {"traceId": "0af7"},
        {"spanId": 5},
        {"name": 3},
        {"status": {"code": 2, "message": "boom"}},
        {"status": {"message": "groundplane: output blocked"}},
        {"status": []},
        {"status": {"code": "STATUS_CODE_OK"}},
        {"status": {"code": 5}},
        {"status": {"code": True}},
        {"status": {"code": "2"}},
        {"status": {"code": None, "message": None}},
        {"status": {"message": 3}},
        {"events": [{"name": "e"}]},
        {"events": []},
        {"events": {}},
        {"attributes": [{"key": "k", "value": {"boolValue": 1}}]},
    ],
)
def test_a_span_off_the_common_shape_reads_as_the_checked_reader_reads_it(
    fields: dict[str, Any],
) -> None:
    """A field of another type or form than the common shape's gives the checked reader's
    span, or its exact error."""
    span = {**COMMON, **fields}
    fast, checked = _read(span, _span), _read(span, _checked_span)
    assert fast == checked
    assert isinstance(fast, RecordedSpan) or fast[0] is ValueError


def _request(service: str, spans: int = 1) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    resource_spans = request.resource_spans.add()
    resource_spans.resource.attributes.append(KeyValue(key="service.name"))
    resource_spans.resource.attributes[0].value.string_value = service
    scope = resource_spans.scope_spans.add()
    for index in range(spans):
        span = scope.spans.add()
        span.trace_id, span.span_id = bytes.fromhex(TRACE), bytes([index + 1]) * 8
    return request


def test_a_recorded_span_is_built_as_its_dataclass_builds_it() -> None:
    """``recorded_span`` sets a ``RecordedSpan``'s fields without its ``__init__``: every
    field is set, to what the dataclass's own constructor gives (the index included)."""
    fields = [item.name for item in dataclasses.fields(RecordedSpan)]
    attributes = {"k": "v", "groundplane.outcome": "pass"}
    made = recorded_span(
        b"\x01" * 16, b"\x02" * 8, b"", "chat m", 3, 5, 9, attributes, (("e", {}),), 2, "", {}, 4
    )
    expected = RecordedSpan(
        b"\x01" * 16, b"\x02" * 8, b"", "chat m", trace.SpanKind.CLIENT, 5, 9, {"k": "v"},
        (("e", {}),), trace.StatusCode.ERROR, {}, 4,
    )  # fmt: skip
    assert [getattr(made, name) for name in fields] == [getattr(expected, name) for name in fields]
    assert made.index == 4


def test_protobuf_resources_are_shared_only_between_the_same_encodings() -> None:
    """Requests of one resource share one attribute mapping, another resource gets its own,
    past ``RESOURCES_SHARED`` each request reads its own, and the spans equal those read
    unshared."""
    resources: dict[bytes, Any] = {}
    first, second = proto_spans(_request("a"), resources), proto_spans(_request("a"), resources)
    other = proto_spans(_request("b"), resources)
    assert first[0].resource is second[0].resource
    assert other[0].resource is not first[0].resource
    assert (first[0].resource, other[0].resource) == ({"service.name": "a"}, {"service.name": "b"})
    assert first == proto_spans(_request("a"))
    assert other == proto_spans(_request("b"))
    for index in range(RESOURCES_SHARED):
        proto_spans(_request(f"s{index}"), resources)
    assert len(resources) == RESOURCES_SHARED
    late = [proto_spans(_request("late"), resources)[0].resource for _ in range(2)]
    assert late[0] == late[1]
    assert late[0] is not late[1]


def test_a_resource_json_and_protobuf_share_is_bounded_alike() -> None:
    """The JSON reader keeps at most ``RESOURCES_SHARED`` resources too."""
    resources: dict[bytes, Any] = {}
    for index in range(RESOURCES_SHARED + 5):
        line = orjson.dumps(
            {
                "resourceSpans": [
                    {
                        "resource": {
                            "attributes": [
                                {"key": "service.name", "value": {"stringValue": f"s{index}"}}
                            ]
                        },
                        "scopeSpans": [{"spans": [{"traceId": TRACE, "spanId": SPAN}]}],
                    }
                ]
            }
        )
        (span,) = json_spans(line, resources)
        assert span.resource == {"service.name": f"s{index}"}
    assert len(resources) == RESOURCES_SHARED


def _records(parents: list[int | None], starts: list[int]) -> list[SpanRecord]:
    """Records whose parent is ``parents[i]`` (an index, or None for a root), started at
    ``starts[i]``."""
    records = []
    for index, start in enumerate(starts):
        span = RecordedSpan(
            bytes.fromhex(TRACE), bytes([index + 1]) * 8, b"", "s", trace.SpanKind.INTERNAL,
            start, start + 10, {}, (), trace.StatusCode.UNSET, {},
        )  # fmt: skip
        records.append(SpanRecord(span, parent_present=True))
    for record, parent in zip(records, parents, strict=True):
        record.parent_record = records[parent] if parent is not None else None
    return records


def test_the_one_sort_nesting_equals_the_general_one_on_random_traces(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On random trees and forests in any order, with clocks that agree or not and cycles of
    parent ids, the fast nesting gives the general nesting's starts and depths, and an upward
    order (every child before its parent)."""
    general = driving._nesting
    fallbacks: list[int] = []

    def counted(records: Any) -> Any:
        fallbacks.append(len(records))
        return general(records)

    monkeypatch.setattr(driving, "_nesting", counted)
    rng = random.Random(21)
    for _ in range(400):
        size = rng.randint(1, 9)
        if rng.random() < 0.6:  # a forest without cycles: a parent is an earlier index
            parents = [rng.choice([None, *range(index)]) for index in range(size)]
        else:  # any parent ids, cycles and self-parents included
            parents = [rng.choice([None, *range(size)]) for _ in range(size)]
        records = _records(parents, [rng.randint(0, 5) for _ in range(size)])
        rng.shuffle(records)
        starts, depth, upward = driving._nested(records)
        assert (starts, depth) == general(records)
        assert sorted(upward, key=id) == sorted(records, key=id)
        place = {id(record): index for index, record in enumerate(upward)}
        for record in records:
            parent = record.parent_record
            if parent is not None and depth[record] > 0:
                assert place[id(record)] < place[id(parent)]
    assert 50 < len(fallbacks) < 350  # both paths were taken


def test_the_timeline_of_spans_nesting_as_recorded_equals_the_widened_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On random trees and forests in any order, whose spans mostly nest as recorded (each
    within its parent's interval) and otherwise do not, or have cycles of parent ids, or end
    before they start, the timeline is the one the general path widens and orders: the
    recorded order (``_as_recorded``) is taken for the nesting traces, never for the others."""
    rng = random.Random(38)
    taken = 0
    for _ in range(600):
        size = rng.randint(1, 9)
        if rng.random() < 0.8:  # a forest without cycles: a parent is an earlier index
            parents = [rng.choice([None, *range(index)]) for index in range(size)]
        else:  # any parent ids, cycles and self-parents included
            parents = [rng.choice([None, *range(size)]) for _ in range(size)]
        records = _records(parents, [0] * size)
        for record, parent in zip(records, parents, strict=True):  # nested, mostly
            above = records[parent] if parent is not None else None
            low = above.start_time if above is not None and parent < records.index(record) else 0
            record.start_time = low + rng.randint(0 if rng.random() < 0.9 else -2, 3)
        for record in reversed(records):
            record.end_time = record.start_time + rng.randint(-1 if rng.random() < 0.1 else 0, 4)
        for record in records:  # each parent ends after its children, mostly
            child_ends = [r.end_time for r in records if r.parent_record is record]
            if child_ends and rng.random() < 0.9:
                record.end_time = max(record.end_time, *child_ends)
        rng.shuffle(records)
        fast = driving._as_recorded(records)
        with monkeypatch.context() as patched:
            patched.setattr(driving, "_as_recorded", lambda records: None)
            general = driving.timeline(records)
        assert driving.timeline(records) == general
        if fast is not None:
            taken += 1
            assert fast == general
    assert 100 < taken < 550, taken  # both paths were taken


def test_a_record_starts_with_its_parent_records_lineage(monkeypatch: pytest.MonkeyPatch) -> None:
    """The driver hands the engine each span's start with the lineage of its parent record:
    both model calls under one agent span inherit the agent span's (itself first), the root
    inherits none; and the run is decided (no answer anywhere: one outcome)."""
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "analyst"}
    chat = {"gen_ai.operation.name": "chat"}
    spans = {
        span_id: RecordedSpan(
            bytes.fromhex(TRACE),
            span_id,
            parent,
            name,
            trace.SpanKind.INTERNAL,
            start,
            start + 10,
            attributes,
            (),
            trace.StatusCode.UNSET,
            {},
        )  # fmt: skip
        for span_id, parent, name, start, attributes in (
            (b"\x01" * 8, b"", "invoke_agent analyst", 0, agent),
            (b"\x02" * 8, b"\x01" * 8, "chat m", 1, chat),
            (b"\x03" * 8, b"\x01" * 8, "chat m", 2, chat),
        )
    }
    records, orphans = trace_records(bytes.fromhex(TRACE), spans)
    root, left, right = records.values()
    assert (orphans, root.root, left.root, right.root) == (0, True, False, False)
    replayer = Replayer(CONFIG)
    seen: dict[int, Any] = {}
    started = replayer.engine.started

    def noted(span: Any, name: str, attributes: Any, trace_id: int, inherited: Any) -> bool:
        seen[span.span_id] = inherited
        return started(span, name, attributes, trace_id, inherited)

    monkeypatch.setattr(replayer.engine, "started", noted)
    replayer.driver.trace(records.values())
    assert seen[root.span_id] is None
    assert seen[left.span_id] == seen[right.span_id] == (root,)
    # no answer on either model call: the agent's run is counted once, unanswered
    assert replayer.counts()["outputs"] == {("answer", "error"): 1}
    assert replayer.internal_errors == 0
    replayer.close()


def test_a_records_attributes_are_read_as_its_own_dict() -> None:
    """``span_attributes`` of a record is the record's attribute dict itself (what the guard
    writes to, and reads)."""
    (record,) = _records([None], [0])
    record.set_attribute("k", "v")
    assert span_attributes(record) is record.attributes
    assert dict(span_attributes(record)) == {"k": "v"}
