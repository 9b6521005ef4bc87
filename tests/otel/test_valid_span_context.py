"""``valid_span_context`` (the SDK contract's builder of a ``SpanContext`` without its Python
``__new__``, for replay's records) makes exactly what the API's constructor makes."""

from __future__ import annotations

import pickle

from opentelemetry.trace import SpanContext, TraceFlags

from groundplane_otel.otel._engine import valid_span_context
from groundplane_otel.otel.replay.records import SpanRecord, recorded_span

SAMPLED = TraceFlags(TraceFlags.SAMPLED)


def test_it_equals_the_constructors_context_field_by_field() -> None:
    for trace_id, span_id, remote in ((1, 1, False), (2**128 - 1, 2**64 - 1, True), (7, 9, True)):
        built = valid_span_context(trace_id, span_id, remote, SAMPLED)
        made = SpanContext(trace_id, span_id, remote, SAMPLED)
        assert type(built) is SpanContext
        assert tuple(built) == tuple(made)
        assert (built.trace_id, built.span_id, built.is_remote) == (trace_id, span_id, remote)
        assert built.trace_flags == made.trace_flags
        assert built.trace_flags.sampled
        assert built.trace_state is made.trace_state  # the shared default, as the constructor's
        assert built.is_valid is True
        assert made.is_valid is True
        assert pickle.loads(pickle.dumps(built)) == made
        assert repr(built) == repr(made)


def test_a_span_records_contexts_are_the_constructors() -> None:
    span = recorded_span(
        bytes.fromhex("0af7651916cd43dd8448eb211c80319c"),
        bytes.fromhex("b7ad6b7169203331"),
        bytes.fromhex("00f067aa0ba902b7"),
        "chat",
        1,
        1,
        2,
        {},
        (),
        0,
        "",
        {},
        0,
    )
    record = SpanRecord(span, parent_present=True)
    trace_id = 0x0AF7651916CD43DD8448EB211C80319C
    assert record.get_span_context() == SpanContext(trace_id, 0xB7AD6B7169203331, False, SAMPLED)
    assert record.get_span_context() is record.get_span_context()  # made once
    assert record.parent == SpanContext(trace_id, 0x00F067AA0BA902B7, False, SAMPLED)
    orphan = SpanRecord(span)  # its parent not in the trace: remote
    assert orphan.parent == SpanContext(trace_id, 0x00F067AA0BA902B7, True, SAMPLED)
