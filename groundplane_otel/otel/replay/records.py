"""A recorded span, replayed through the guard: the minimal span record the engine works on.

``SpanRecord`` is built from an OTLP protobuf span (ids, parent, name, kind, attributes, events,
status, resource) and behaves like the SDK span the guard's processor reads and annotates:
exactly the SDK span fields the guard relies on (``_engine.sdk.SPAN_FIELDS``: ``_context``,
``_parent``, ``_name``, ``_attributes`` as a plain dict, ``_status``), a ``__dict__`` for the
lineage the guard keeps on span instances, and the public writers (``set_attributes``,
``add_event``, ``set_status``, ``add_link``) collecting what the guard writes. ``end()`` hands
the record to the processor's ``on_end``, as the SDK does.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan
from opentelemetry.proto.trace.v1.trace_pb2 import Status as ProtoStatus
from opentelemetry.sdk.trace import SpanProcessor
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.util.types import Attributes

from groundplane_otel.otel import semconv as sc

__all__ = ["SpanRecord", "attribute_value", "attributes_of", "replayable_attributes"]

# What a guard wrote on a span it recorded live; ``groundplane.boundary`` only when marked
# ``groundplane.boundary_matched`` (else the app named the boundary: it stays).
GUARD_WRITTEN = frozenset(
    {sc.OUTCOME, sc.VIOLATIONS, sc.FACTS, sc.MODE, sc.FACT_LINKS, sc.BOUNDARY_MATCHED}
)
GUARD_STATUS_PREFIX = "groundplane: output"
_KINDS = {
    ProtoSpan.SPAN_KIND_INTERNAL: SpanKind.INTERNAL,
    ProtoSpan.SPAN_KIND_SERVER: SpanKind.SERVER,
    ProtoSpan.SPAN_KIND_CLIENT: SpanKind.CLIENT,
    ProtoSpan.SPAN_KIND_PRODUCER: SpanKind.PRODUCER,
    ProtoSpan.SPAN_KIND_CONSUMER: SpanKind.CONSUMER,
}
_STATUS = {
    ProtoStatus.STATUS_CODE_OK: StatusCode.OK,
    ProtoStatus.STATUS_CODE_ERROR: StatusCode.ERROR,
}


def attribute_value(value: AnyValue, depth: int = 0) -> Any:
    """An OTLP AnyValue as the SDK stores attributes (arrays as tuples, maps as dicts)."""
    field = value.WhichOneof("value")
    if field is None:
        return None
    if field == "array_value":
        if depth > 16:
            return None
        return tuple(attribute_value(item, depth + 1) for item in value.array_value.values)
    if field == "kvlist_value":
        if depth > 16:
            return None
        return attributes_of(value.kvlist_value.values, depth + 1)
    return getattr(value, field)


def attributes_of(pairs: Sequence[KeyValue], depth: int = 0) -> dict[str, Any]:
    return {pair.key: attribute_value(pair.value, depth) for pair in pairs}


def replayable_attributes(
    attributes: Mapping[str, Any], *, rematch: bool = False
) -> dict[str, Any]:
    """A recorded span's attributes without what a recording guard wrote, so the span is
    decided again, not echoed: its summary attributes, and ``groundplane.boundary`` when the
    guard marked it as its own match (``groundplane.boundary_matched``) — or always, with
    ``rematch`` (recordings made before the mark, or to try a policy's match rules on spans
    the app named). A boundary the app set on the span still names it."""
    drop_boundary = rematch or attributes.get(sc.BOUNDARY_MATCHED) is True
    return {
        key: value
        for key, value in attributes.items()
        if key not in GUARD_WRITTEN and not (drop_boundary and key == sc.BOUNDARY)
    }


def _span_id(raw: bytes) -> int:
    return int.from_bytes(raw, "big") if raw else 0


class SpanRecord(trace.Span):
    """One recorded span (see the module docstring)."""

    def __init__(
        self,
        span: ProtoSpan,
        resource: Mapping[str, Any],
        *,
        parent_present: bool,
        rematch: bool = False,
    ) -> None:
        trace_id, span_id = _span_id(span.trace_id), _span_id(span.span_id)
        self._context = SpanContext(trace_id, span_id, False, TraceFlags(TraceFlags.SAMPLED))
        parent_id = _span_id(span.parent_span_id)
        # A parent in the same assembled trace is local: the whole trace is one request, across
        # services. A parent that never arrived is remote: its span is a local root.
        self._parent = (
            SpanContext(trace_id, parent_id, not parent_present, TraceFlags(TraceFlags.SAMPLED))
            if parent_id
            else None
        )
        self._name = span.name
        self._attributes = replayable_attributes(attributes_of(span.attributes), rematch=rematch)
        self.kind = _KINDS.get(span.kind, SpanKind.INTERNAL)
        self.resource = dict(resource)
        self.start_time = span.start_time_unix_nano
        self.end_time = span.end_time_unix_nano
        self.recorded_events = [
            (event.name, attributes_of(event.attributes)) for event in span.events
        ]
        code = _STATUS.get(span.status.code, StatusCode.UNSET)
        if span.status.message.startswith(GUARD_STATUS_PREFIX):
            code = StatusCode.UNSET  # the recording guard's own verdict: decided again here
        self._status = Status(code)
        self.written: list[tuple[str, dict[str, Any]]] = []  # events the guard added
        self.links: list[tuple[SpanContext, dict[str, Any]]] = []
        self._ended = False
        self._processor: SpanProcessor | None = None

    # -- what the guard reads ----------------------------------------------------------------

    @property
    def name(self) -> str:
        return self._name

    @property
    def attributes(self) -> Mapping[str, Any]:
        return self._attributes

    @property
    def parent(self) -> SpanContext | None:
        return self._parent

    @property
    def status(self) -> Status:
        return self._status

    def get_span_context(self) -> SpanContext:
        return self._context

    def is_recording(self) -> bool:
        return not self._ended

    # -- what the guard writes ---------------------------------------------------------------

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        if not self._ended:
            self._attributes.update(attributes)

    def set_attribute(self, key: str, value: Any) -> None:
        if not self._ended:
            self._attributes[key] = value

    def add_event(
        self, name: str, attributes: Attributes = None, timestamp: int | None = None
    ) -> None:
        if not self._ended:
            self.written.append((name, dict(attributes or {})))

    def add_link(self, context: SpanContext, attributes: Attributes = None) -> None:
        if not self._ended:
            self.links.append((context, dict(attributes or {})))

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        if self._ended:
            return
        if isinstance(status, StatusCode):
            status = Status(status, description)
        if self._status.status_code is not StatusCode.OK:
            self._status = status

    def update_name(self, name: str) -> None:
        self._name = name

    def record_exception(
        self,
        exception: BaseException,
        attributes: Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        """Replay records nothing about exceptions (the recorded span already has them)."""

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self, processor: SpanProcessor, parent: SpanRecord | None) -> None:
        """The span starts: the processor's ``on_start``, its parent current in the context."""
        self._processor = processor
        context = trace.set_span_in_context(parent) if parent is not None else None
        processor.on_start(self, context)  # type: ignore[arg-type]

    def end(self, end_time: int | None = None) -> None:
        if self._ended:
            return
        self._ended = True
        if self._processor is not None:
            self._processor.on_end(self)  # type: ignore[arg-type]

    def events(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """The recorded events, then those the guard wrote."""
        yield from self.recorded_events
        yield from self.written
