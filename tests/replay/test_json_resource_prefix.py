"""A line that starts with the last line's first resource (``JsonResources.last``) is decoded
with that resource's text left out: it reads exactly as the line read alone, is refused with
the same message, and a later ``resource`` key in the same object still wins."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from groundplane_otel.otel.otlp_files import BadInput, read_requests
from groundplane_otel.otel.replay.json_reader import JsonResources, NestedTooDeep, json_spans

TRACE, SPAN, PARENT = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331", "00f067aa0ba902b7"
SERVICE = {"attributes": [{"key": "service.name", "value": {"stringValue": "svc"}}]}
OTHER = {"attributes": [{"key": "service.name", "value": {"stringValue": "other"}}]}


def span(name: str = "chat m", **fields: Any) -> dict[str, Any]:
    return {"traceId": TRACE, "spanId": SPAN, "parentSpanId": PARENT, "name": name, **fields}


def line(*spans: dict[str, Any], resource: Any = SERVICE) -> bytes:
    item = {"resource": resource, "scopeSpans": [{"scope": {"name": "s"}, "spans": list(spans)}]}
    return orjson.dumps({"resourceSpans": [item]})


def primed() -> JsonResources:
    """A file's resources after one line of ``SERVICE``: its prefix kept."""
    resources = JsonResources()
    json_spans(line(span("first")), resources)
    assert resources.last is not None
    assert resources.last[0] == b'{"resourceSpans":[{"resource":' + orjson.dumps(SERVICE) + b',"'
    return resources


def test_lines_of_one_resource_read_as_each_line_alone_and_share_its_attributes() -> None:
    resources = primed()
    texts = [
        line(span("a", attributes=[{"key": "k", "value": {"intValue": "3"}}])),
        line(span("b"), span("c", kind=3)),
        line(span("d"), resource=OTHER),  # another resource: read, and its prefix kept
        line(span("e"), resource=OTHER),
        line(span("f")),
    ]
    read = [json_spans(text, resources) for text in texts]
    assert read == [json_spans(text) for text in texts]
    resources_read = [spans[0].resource for spans in read]
    assert resources_read == [{"service.name": name} for name in ("svc",) * 2 + ("other",) * 2] + [
        {"service.name": "svc"}
    ]
    assert resources_read[0] is resources_read[1] is resources_read[4]  # shared, not re-read
    assert resources_read[2] is resources_read[3]
    assert [spans[0].attributes for spans in read][0] == {"k": 3}


def test_a_prefix_is_kept_only_when_the_line_starts_with_its_exact_text() -> None:
    resources = JsonResources()
    spaced = line(span()).replace(b'"resource":', b'"resource": ', 1)  # not orjson's text
    assert json_spans(spaced, resources) == json_spans(spaced)
    assert resources.last is None
    alone = orjson.dumps({"resourceSpans": [{"resource": SERVICE}]})  # no key after it
    assert json_spans(alone, resources) == []
    assert resources.last is None
    plain: dict[bytes, Any] = {}  # a plain dict shares resources but keeps no prefix
    assert json_spans(line(span()), plain) == json_spans(line(span()))
    assert len(plain) == 1


def test_a_later_resource_key_in_the_same_object_wins_as_in_a_full_decode() -> None:
    head = b'{"resourceSpans":[{"resource":' + orjson.dumps(SERVICE) + b","
    scopes = b'"scopeSpans":[{"spans":[' + orjson.dumps(span()) + b"]}]"
    again = head + scopes + b',"resource":' + orjson.dumps(OTHER) + b"}]}"
    (read,) = json_spans(again, primed())
    assert read == json_spans(again)[0]
    assert read.resource == {"service.name": "other"}
    bad = head + scopes + b',"resource":{"attributes":[{"key":5}]}}]}'
    with pytest.raises(ValueError) as alone:
        json_spans(bad)
    with pytest.raises(ValueError) as shared:
        json_spans(bad, primed())
    assert str(shared.value) == str(alone.value) == "expected a string, got number in key"


@pytest.mark.parametrize(
    ("tail", "problem"),
    [
        (
            b'"scopeSpans":[{"spans":[{"traceId":}]}]}]}',
            "unexpected character, expected a JSON value: line 1 column 136",
        ),
        (b'"scopeSpans":[{"spans":[{"name":5}]}]}]}', "expected a string, got number in name"),
        (b'"scopeSpans":7}]}', "expected an array, got number in scopeSpans"),
        (b'"scopeSpans":[]}]}trailing', "unexpected content after document: line 1 column 119"),
    ],
)
def test_a_bad_line_after_the_prefix_is_refused_with_its_own_message(
    tail: bytes, problem: str
) -> None:
    text = b'{"resourceSpans":[{"resource":' + orjson.dumps(SERVICE) + b"," + tail
    with pytest.raises(ValueError) as alone:
        json_spans(text)
    with pytest.raises(ValueError) as shared:
        json_spans(text, primed())
    assert str(shared.value) == str(alone.value)
    assert str(shared.value).startswith(problem)
    assert type(shared.value) is type(alone.value)


def test_a_line_nested_too_deep_after_the_prefix_is_refused_as_such() -> None:
    deep = b'"scopeSpans":' + b"[" * 2000 + b"]" * 2000 + b"}]}"
    text = b'{"resourceSpans":[{"resource":' + orjson.dumps(SERVICE) + b"," + deep
    with pytest.raises(NestedTooDeep) as alone:
        json_spans(text)
    with pytest.raises(NestedTooDeep) as shared:
        json_spans(text, primed())
    assert str(shared.value) == str(alone.value)


def test_a_file_reads_the_same_spans_and_refusals_with_the_prefix(tmp_path: Path) -> None:
    texts = [
        line(span("a")),
        line(span("b")),
        b'{"resourceSpans":[{"resource":' + orjson.dumps(SERVICE) + b',"scopeSpans":5}]}',
        line(span("c"), resource=OTHER),
        line(span("d")),
    ]
    path = tmp_path / "traces.jsonl"
    path.write_bytes(b"\n".join(texts) + b"\n")
    bad: list[BadInput] = []
    read = list(read_requests([path], bad))
    assert read == [json_spans(text) for index, text in enumerate(texts) if index != 2]
    assert bad == [
        BadInput(
            f"{path}:3",
            "not an OTLP/JSON trace request (expected an array, got number in scopeSpans)",
        )
    ]


@pytest.mark.parametrize(
    ("pair", "read"),
    [
        ({"key": "k", "value": {"stringValue": "v"}}, {"k": "v"}),
        ({"value": {"stringValue": "v"}}, {"": "v"}),  # no key: the empty one
        ({"key": None, "value": {"stringValue": "v"}}, {"": "v"}),
        ({"key": "k"}, {"k": None}),
        ({"key": "k", "value": None}, {"k": None}),
        ({"key": "k", "value": {"stringValue": "v", "other": 1}}, {"k": "v"}),
        ({"key": "k", "value": {"intValue": "7"}}, {"k": 7}),
        ({"key": "k", "value": {"stringValue": None}}, {"k": None}),
    ],
)
def test_a_span_attribute_of_any_shape_reads_as_protobufs_mapping_reads_it(
    pair: dict[str, Any], read: dict[str, Any]
) -> None:
    (spans,) = [json_spans(line(span(attributes=[pair])))]
    assert spans[0].attributes == read


@pytest.mark.parametrize(
    ("pair", "problem"),
    [
        ("x", "expected an object, got string in attributes"),
        (["k"], "expected an object, got array in attributes"),
        ({"key": 5, "value": {"stringValue": "v"}}, "expected a string, got number in key"),
        ({"key": "k", "value": {"stringValue": 5}}, "expected a string, got number in stringValue"),
        ({"key": "k", "value": "v"}, "expected an object, got string in value"),
        ({"key": "k", "value": ["v"]}, "expected an object, got array in value"),
        (
            {"key": "k", "value": {"stringValue": "v", "intValue": "1"}},
            "more than one value in one AnyValue",
        ),
    ],
)
def test_a_span_attribute_of_a_wrong_shape_is_refused_with_its_message(
    pair: Any, problem: str
) -> None:
    with pytest.raises(ValueError) as refusal:
        json_spans(line(span(attributes=[pair])))
    assert str(refusal.value) == problem
