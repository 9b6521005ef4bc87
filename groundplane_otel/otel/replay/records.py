"""A recorded span, replayed through the guard: the one span form both readers produce, and the
span record the engine works on.

``RecordedSpan`` is the neutral form of one recorded span (ids as bytes, name, kind, times,
attributes, events, status, resource), built by either reader — OTLP/JSON lines
(``replay.json_reader``) or OTLP protobuf (``proto_spans``) — and always through
``replayable_attributes``, which leaves out what a recording guard wrote. ``SpanRecord`` is built
from it when its trace is decided: the opaque handle the engine keeps its lineage on, in plain
public fields (ids as ints, name, attributes as a plain dict, status, its parent's record), the
public span API the engine reads (``name``, ``attributes``, ``parent``, ``status``,
``get_span_context()``, ``is_recording()``) and the public writers a driver's results use
(``set_attribute(s)``, ``add_event``, ``add_link``, ``set_status``), collecting what they
write. The replay driver (``replay.driving``) feeds it to the engine: nothing of the SDK's
span layout is mimicked.
"""

from __future__ import annotations

import dataclasses
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from opentelemetry import trace
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.resource.v1.resource_pb2 import Resource
from opentelemetry.proto.trace.v1.trace_pb2 import Span as ProtoSpan
from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags
from opentelemetry.util.types import Attributes

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine import valid_span_context

__all__ = [
    "MAX_VALUE_DEPTH",
    "RESOURCES_SHARED",
    "RecordedSpan",
    "SpanRecord",
    "attribute_value",
    "attributes_of",
    "bad_ids",
    "lost_from",
    "ids_problem",
    "keep_resource",
    "proto_share",
    "proto_spans",
    "recorded_span",
    "replayable_attributes",
    "trace_records",
]

# What a guard wrote on a span it recorded live; ``groundplane.boundary`` only when marked
# ``groundplane.boundary_matched`` (else the app named the boundary: it stays). The fact-source
# mark (the ``tool`` decorator, ``call_and_record``) only told the live guard the fact was
# recorded in code: replay captures it from the result on the span, when content capture kept it.
GUARD_WRITTEN = frozenset(
    {
        sc.OUTCOME,
        sc.VIOLATIONS,
        sc.FACTS,
        sc.MODE,
        sc.FACT_LINKS,
        sc.BOUNDARY_MATCHED,
        sc.FACT_SOURCE,
    }
)
GUARD_STATUS_PREFIX = "groundplane: output"
_SAMPLED = TraceFlags(TraceFlags.SAMPLED)
_ZERO_TRACE_ID, _ZERO_SPAN_ID = bytes(16), bytes(8)
MAX_VALUE_DEPTH = 16  # arrays and maps nested deeper than this read as None
RESOURCES_SHARED = 64  # distinct resources shared per input (services, hosts); past it, per request
# OTLP's enum numbers (the proto's and OTLP/JSON's) -> the API's.
KINDS: dict[int, SpanKind] = {
    1: SpanKind.INTERNAL,  # SPAN_KIND_INTERNAL; 0, unspecified, reads as internal too
    2: SpanKind.SERVER,
    3: SpanKind.CLIENT,
    4: SpanKind.PRODUCER,
    5: SpanKind.CONSUMER,
}
STATUS_CODES = {1: StatusCode.OK, 2: StatusCode.ERROR}  # STATUS_CODE_OK, STATUS_CODE_ERROR
_UNSET, _INTERNAL = StatusCode.UNSET, SpanKind.INTERNAL
_from_bytes = int.from_bytes  # read once: three a record


# Not frozen: built once per span read (the hottest constructor of a replay) and never
# changed after it; equality over every field but ``index`` tells a retried copy of a span.
@dataclass(slots=True)
class RecordedSpan:
    """One recorded span, as read (see the module docstring). ``index``: its position in its
    request's scope (for locating it), not part of what the span is."""

    trace_id: bytes
    span_id: bytes
    parent_span_id: bytes
    name: str
    kind: SpanKind
    start_time: int
    end_time: int
    attributes: dict[str, Any]
    events: tuple[tuple[str, dict[str, Any]], ...]
    status: StatusCode
    resource: Mapping[str, Any]
    index: int = field(default=0, compare=False)

    def __reduce__(self) -> tuple[type[RecordedSpan], tuple[Any, ...]]:
        # Pickled as its fields (a parallel replay's spill): unpickled by one call.
        return RecordedSpan, _FIELDS(self)


_FIELDS = operator.attrgetter(*(item.name for item in dataclasses.fields(RecordedSpan)))
_new = object.__new__


def replayable_attributes(attributes: dict[str, Any]) -> dict[str, Any]:
    """A recorded span's attributes without what a recording guard wrote, so the span is
    decided again, not echoed: its summary attributes, and ``groundplane.boundary`` when the
    guard marked it as its own match (``groundplane.boundary_matched``). A boundary the app set
    on the span still names it (``SpanRecord(rematch=True)`` drops that too). Both readers call
    this, once per span."""
    if GUARD_WRITTEN.isdisjoint(attributes):
        return attributes
    drop_boundary = attributes.get(sc.BOUNDARY_MATCHED) is True
    return {
        key: value
        for key, value in attributes.items()
        if key not in GUARD_WRITTEN and not (drop_boundary and key == sc.BOUNDARY)
    }


def recorded_span(
    trace_id: bytes,
    span_id: bytes,
    parent_span_id: bytes,
    name: str,
    kind: int,
    start_time: int,
    end_time: int,
    attributes: dict[str, Any],
    events: tuple[tuple[str, dict[str, Any]], ...],
    status: int,
    message: str,
    resource: Mapping[str, Any],
    index: int,
) -> RecordedSpan:
    """A ``RecordedSpan`` from OTLP's numbers (``kind``, the ``status`` code and its
    ``message``): the one place both readers build it, leaving out what a recording guard
    wrote."""
    code = STATUS_CODES.get(status, _UNSET)
    if message and message.startswith(GUARD_STATUS_PREFIX):
        code = _UNSET  # the recording guard's own verdict: decided again here
    if not GUARD_WRITTEN.isdisjoint(attributes):  # ``replayable_attributes``' test, inline
        attributes = replayable_attributes(attributes)
    # Its fields set here, not through the dataclass's ``__init__`` (a class call into Python
    # code, about half again as dear): once a span read, by both readers.
    span = _new(RecordedSpan)
    span.trace_id = trace_id
    span.span_id = span_id
    span.parent_span_id = parent_span_id
    span.name = name
    span.kind = KINDS.get(kind, _INTERNAL)
    span.start_time = start_time
    span.end_time = end_time
    span.attributes = attributes
    span.events = events
    span.status = code
    span.resource = resource
    span.index = index
    return span


def bad_ids(span: RecordedSpan) -> str | None:
    """Why ``span``'s ids make it unreplayable (a trace id not 16 bytes, a span id not 8, zero
    ids, a parent id neither empty nor 8 bytes), or None: replay and suggest judge alike."""
    return ids_problem(span.trace_id, span.span_id, span.parent_span_id)


def lost_from(trace_id: bytes) -> bool:
    """Whether a span with bad ids but this trace id is lost from a trace that can be decided
    (the id is usable: 16 bytes, not zero): that trace is then incomplete."""
    return len(trace_id) == 16 and trace_id != _ZERO_TRACE_ID


def ids_problem(trace_id: bytes, span_id: bytes, parent_span_id: bytes) -> str | None:
    """``bad_ids`` of a span with these ids."""
    if (
        len(trace_id) == 16
        and len(span_id) == 8
        and len(parent_span_id) in (0, 8)
        and trace_id != _ZERO_TRACE_ID
        and span_id != _ZERO_SPAN_ID
    ):
        return None  # the common case, in one test
    if len(trace_id) != 16 or not any(trace_id):
        return f"invalid trace id ({len(trace_id)} bytes, need 16, not all zero)"
    if len(span_id) != 8 or not any(span_id):
        return f"invalid span id ({len(span_id)} bytes, need 8, not all zero)"
    if len(parent_span_id) not in (0, 8):
        return f"invalid parent span id ({len(parent_span_id)} bytes, need 0 or 8)"
    return None


def attribute_value(value: AnyValue, depth: int = 0) -> Any:
    """An OTLP AnyValue as the SDK stores attributes (arrays as tuples, maps as dicts)."""
    which = value.WhichOneof("value")
    if which is None:
        return None
    if which == "array_value":
        if depth > MAX_VALUE_DEPTH:
            return None
        return tuple(attribute_value(item, depth + 1) for item in value.array_value.values)
    if which == "kvlist_value":
        if depth > MAX_VALUE_DEPTH:
            return None
        return attributes_of(value.kvlist_value.values, depth + 1)
    return getattr(value, which)


def attributes_of(pairs: Sequence[KeyValue], depth: int = 0) -> dict[str, Any]:
    """KeyValues as a dict. A non-empty ``string_value`` is the value that is set (the
    others of the oneof read as their defaults): the common case, in one read."""
    attributes: dict[str, Any] = {}
    for pair in pairs[:]:  # a slice: see ``proto_spans``
        value = pair.value
        text = value.string_value
        attributes[pair.key] = text if text else attribute_value(value, depth)
    return attributes


def keep_resource(
    resources: dict[bytes, Any], key: bytes, attributes: Mapping[str, Any]
) -> Mapping[str, Any]:
    """``attributes``, a resource's just read, kept in ``resources`` under ``key`` (its
    encoding) for later requests to share, up to ``RESOURCES_SHARED`` of them."""
    if len(resources) < RESOURCES_SHARED:
        resources[key] = attributes
    return attributes


def _resource(resource: Resource, resources: dict[bytes, Any] | None) -> Mapping[str, Any]:
    """A resource's attributes: read once per distinct encoding, then shared."""
    if resources is None:
        return attributes_of(resource.attributes)
    key = resource.SerializeToString()
    known = resources.get(key)
    if known is not None:
        return known  # type: ignore[no-any-return]
    return keep_resource(resources, key, attributes_of(resource.attributes))


def proto_spans(
    request: ExportTraceServiceRequest, resources: dict[bytes, Any] | None = None
) -> list[RecordedSpan]:
    """Every span of a protobuf trace request, in order, as ``RecordedSpan``s. ``resources``:
    resource attributes already read (by their protobuf encoding), shared by the spans of
    later requests rather than read and held once per request."""
    spans: list[RecordedSpan] = []
    # Repeated fields read as slices: upb iterates them through Python's generic sequence
    # iterator, slower than one slice (a fifth of the walk's cost).
    for resource_spans in request.resource_spans[:]:
        resource = _resource(resource_spans.resource, resources)
        for scope_spans in resource_spans.scope_spans[:]:
            for index, span in enumerate(scope_spans.spans[:]):
                spans.append(proto_span(span, resource, index))
    return spans


def proto_share(
    request: ExportTraceServiceRequest,
    resources: dict[bytes, Any],
    owned: Callable[[bytes], bool],
    tells_bad: bool,
) -> list[RecordedSpan | bytes]:
    """A protobuf request's spans as one share of a parallel replay is fed them: the spans
    of the traces it keeps (``owned(trace id)``) read whole, every other span's trace id alone
    (all it needs to time that trace: nothing else of it is read), a span with bad ids read
    whole where ``tells_bad`` (it is told there) or its trace is kept (``lost_from``: the trace
    is marked incomplete), its trace id alone elsewhere (or left out: no usable trace id)."""
    spans: list[RecordedSpan | bytes] = []
    for resource_spans in request.resource_spans[:]:  # slices: see ``proto_spans``
        resource: Mapping[str, Any] | None = None  # read once a span of it is
        for scope_spans in resource_spans.scope_spans[:]:
            for index, span in enumerate(scope_spans.spans[:]):
                trace_id = span.trace_id
                if ids_problem(trace_id, span.span_id, span.parent_span_id) is None:
                    if not owned(trace_id):
                        spans.append(trace_id)
                        continue
                elif not (tells_bad or (lost_from(trace_id) and owned(trace_id))):
                    if lost_from(trace_id):
                        spans.append(trace_id)  # timed, as its trace is everywhere
                    continue
                if resource is None:
                    resource = _resource(resource_spans.resource, resources)
                spans.append(proto_span(span, resource, index))
    return spans


def proto_span(span: ProtoSpan, resource: Mapping[str, Any], index: int = 0) -> RecordedSpan:
    """One protobuf span as a ``RecordedSpan``."""
    status, events = span.status, span.events  # each upb read makes a new wrapper: read once
    return recorded_span(
        span.trace_id,
        span.span_id,
        span.parent_span_id,
        span.name,
        span.kind,
        span.start_time_unix_nano,
        span.end_time_unix_nano,
        attributes_of(span.attributes),
        _events(events) if events else (),  # most spans have none: no generator for them
        status.code,
        status.message,
        resource,
        index,
    )


def _events(events: Sequence[ProtoSpan.Event]) -> tuple[tuple[str, dict[str, Any]], ...]:
    """A protobuf span's events as (name, attributes) pairs."""
    return tuple((event.name, attributes_of(event.attributes)) for event in events)


# A status holds no state of its own beyond its code: one shared per code (``set_status``
# replaces a record's, never changes it).
_STATUSES = {code: Status(code) for code in StatusCode}


class SpanRecord(trace.Span):
    """One recorded span as the engine's handle (see the module docstring), in plain public
    fields: ``recorded`` (the span as read), ``trace_id``/``span_id``/``parent_id`` (ints;
    ``parent_id`` 0 when it has none), ``parent_record`` (its parent's record, when the trace
    holds it: ``trace_records`` links them), ``root`` (no parent in its trace: a local root,
    the start of a request), ``name``, ``attributes`` (a plain dict), ``start_time``,
    ``end_time``, ``status``, and what the replay driver sets: ``watched`` (the engine decides
    its end) and ``ended``. A subclass of the API's ``Span``, so a context holding it (an
    exemplar's) points at its trace."""

    # Set on every record (``_fill``).
    recorded: RecordedSpan
    trace_id: int
    span_id: int
    parent_id: int
    name: str
    attributes: dict[str, Any]
    start_time: int
    end_time: int
    # What a record starts with, until linked, watched, ended or written to: not stored per
    # record.
    parent_record: SpanRecord | None = None
    root = True  # until its parent is found in its trace (``trace_records``)
    watched = False
    ended = False
    owned = False  # ``attributes`` is its own copy (written to), not the recorded span's dict
    span_context: SpanContext | None = None  # ``get_span_context()``, made when first asked
    status = _STATUSES[StatusCode.UNSET]  # most recorded spans' (set per record otherwise)
    written: tuple[tuple[str, dict[str, Any]], ...] = ()  # events the guard added
    links: tuple[tuple[SpanContext, dict[str, Any]], ...] = ()

    def __init__(
        self, span: RecordedSpan, *, parent_present: bool = False, rematch: bool = False
    ) -> None:
        """``parent_present``: its parent is in the same assembled trace (a local parent: the
        whole trace is one request, across services); a parent that never arrived is remote
        (the span is a local root). ``rematch``: every recorded boundary ignored (the policy's
        match rules decide)."""
        _fill(self, span, _from_bytes(span.trace_id, "big"), rematch)
        if parent_present and self.parent_id:
            self.root = False

    # -- what the engine reads ---------------------------------------------------------------

    @property
    def parent(self) -> SpanContext | None:
        """Its parent's context (remote when the trace does not hold it), or None."""
        if not self.parent_id:
            return None
        return valid_span_context(self.trace_id, self.parent_id, self.root, _SAMPLED)

    def get_span_context(self) -> SpanContext:
        context = self.span_context
        if context is None:  # its ids are valid (``bad_ids``): no constructor's checks
            context = valid_span_context(self.trace_id, self.span_id, False, _SAMPLED)
            self.span_context = context
        return context

    def is_recording(self) -> bool:
        return not self.ended

    # -- what a driver's results write -------------------------------------------------------

    def _writable(self) -> dict[str, Any]:
        """Its attributes, made its own first (the span read stays as read)."""
        if not self.owned:
            self.attributes = dict(self.attributes)
            self.owned = True
        return self.attributes

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        if not self.ended:
            self._writable().update(attributes)

    def set_attribute(self, key: str, value: Any) -> None:
        if not self.ended:
            self._writable()[key] = value

    def add_event(
        self, name: str, attributes: Attributes = None, timestamp: int | None = None
    ) -> None:
        if not self.ended:
            self.written = (*self.written, (name, dict(attributes or {})))

    def add_link(self, context: SpanContext, attributes: Attributes = None) -> None:
        if not self.ended:
            self.links = (*self.links, (context, dict(attributes or {})))

    def set_status(self, status: Status | StatusCode, description: str | None = None) -> None:
        if self.ended:
            return
        if isinstance(status, StatusCode):
            status = Status(status, description)
        if self.status.status_code is not StatusCode.OK:
            self.status = status

    def update_name(self, name: str) -> None:
        self.name = name

    def record_exception(
        self,
        exception: BaseException,
        attributes: Attributes = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        """Replay records nothing about exceptions (the recorded span already has them)."""

    def end(self, end_time: int | None = None) -> None:
        """Nothing is written to it any more (the replay driver ends it: ``driving``)."""
        self.ended = True


def _fill(record: SpanRecord, span: RecordedSpan, trace_id: int, rematch: bool) -> None:
    """``record``'s fields from ``span`` of the trace ``trace_id`` (as an int): what
    ``SpanRecord.__init__`` sets, and ``trace_records`` on records made without that call."""
    record.recorded = span
    record.trace_id = trace_id
    record.span_id = _from_bytes(span.span_id, "big")
    record.parent_id = _from_bytes(span.parent_span_id, "big")
    record.name = span.name
    attributes = span.attributes  # shared with the span read until written to
    if rematch and sc.BOUNDARY in attributes:
        attributes = dict(attributes)
        del attributes[sc.BOUNDARY]
        record.owned = True
    record.attributes = attributes
    record.start_time = span.start_time
    record.end_time = span.end_time
    if span.status is not _UNSET:
        record.status = _STATUSES[span.status]


def trace_records(
    trace_id: bytes, spans: Mapping[bytes, RecordedSpan], *, rematch: bool = False
) -> tuple[dict[bytes, SpanRecord], int]:
    """One trace's spans (by span id) as records, each linked to the record of its parent
    when the trace holds it (a local parent); and how many have a parent the trace does not
    hold (orphans: local roots under a remote parent)."""
    number = _from_bytes(trace_id, "big")  # once a trace, not once a span
    records: dict[bytes, SpanRecord] = {}
    for span_id, span in spans.items():
        # Made without the class call (``type.__call__`` into ``__init__``: dearer than the
        # plain call to ``_fill``), once a span decided.
        record = records[span_id] = _new(SpanRecord)
        _fill(record, span, number, rematch)
    orphans = 0
    for record in records.values():
        if record.parent_id:
            parent = records.get(record.recorded.parent_span_id)
            if parent is None:
                orphans += 1
            else:
                record.parent_record = parent
                record.root = False
    return records, orphans
