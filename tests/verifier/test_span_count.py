"""``otlp_wire.span_count``: the spans of a serialized trace request, counted from its wire
format (the verifier counts an oversize request's spans so, without decoding it)."""

from __future__ import annotations

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from groundplane_otel.otel.verifier.wire import span_count


def request(shape: list[list[int]]) -> bytes:
    """A request with one resource per item of ``shape``, one scope per number in it, that
    many spans each (with attributes, events and a resource, all stepped over)."""
    built = ExportTraceServiceRequest()
    for scopes in shape:
        resource = built.resource_spans.add()
        resource.resource.attributes.add(key="service.name").value.string_value = "svc"
        resource.schema_url = "https://example.com"
        for spans in scopes:
            scope = resource.scope_spans.add()
            scope.scope.name = "scope"
            for index in range(spans):
                span = scope.spans.add(name="s", trace_id=b"\x01" * 16, span_id=b"\x02" * 8)
                span.start_time_unix_nano = 1_700_000_000_000_000_000 + index
                span.attributes.add(key="k").value.int_value = -index
                span.events.add(name="e")
    return built.SerializeToString()


def test_spans_are_counted_across_resources_and_scopes() -> None:
    assert span_count(request([[3, 0, 2], [], [5]])) == 10
    assert span_count(b"") == 0


def test_bytes_that_are_no_request_or_too_many_fields_are_unknown() -> None:
    assert span_count(b"\xff\xff\xff") is None
    assert span_count(request([[3]])[:-1]) is None  # truncated
    assert span_count(b"\x0b\x0c") is None  # a group (deprecated wire type)
    assert span_count(request([[50]]), max_fields=40) is None
    assert span_count(request([[50]]), max_fields=60) == 50
