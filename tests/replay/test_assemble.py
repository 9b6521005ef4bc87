"""The one trace assembler replay, the verifier and suggest read through (``replay.assemble``):
when each trace is decided (idle for ``decision_wait`` spans read, the longest idle pushed out
early by a full buffer, on demand, at the end), what a full trace drops, how unusable ids are
told, what a share keeps, and that the Replayer and suggest count one input alike."""

from __future__ import annotations

from dataclasses import dataclass, field

from opentelemetry.trace import SpanKind, StatusCode
from replay_recording import CONFIG

from groundplane_otel.otel.replay import Replayer
from groundplane_otel.otel.replay.assemble import Assembler, PendingTrace
from groundplane_otel.otel.replay.records import RecordedSpan
from groundplane_otel.otel.replay.unreadable import BadInput
from groundplane_otel.otel.suggest.runs import RunReader

A, B, C = (bytes([n]) * 16 for n in (0xA, 0xB, 0xC))


def span(trace_id: bytes, number: int, name: str = "s", index: int = 0) -> RecordedSpan:
    """A root span ``number`` of ``trace_id``."""
    return RecordedSpan(
        trace_id, bytes([number]) * 8, b"", name, SpanKind.INTERNAL, number, number + 1,
        {"n": number}, (), StatusCode.UNSET, {}, index,
    )  # fmt: skip


@dataclass
class Counts:
    requests: int = 0
    spans: int = 0
    bad_spans: int = 0
    dropped_spans: int = 0


@dataclass
class Reader:
    """What an assembler handed its reader: (trace id, span numbers kept, early, dropped),
    in the order decided, with the spans read when each was decided."""

    decided: list[tuple[bytes, list[int], bool, bool]] = field(default_factory=list)
    at: list[int] = field(default_factory=list)
    counts: Counts = field(default_factory=Counts)
    bad: list[BadInput] = field(default_factory=list)
    assembler: Assembler | None = None

    def decide(self, trace_id: bytes, trace: PendingTrace, early: bool) -> None:
        numbers = [item.span_id[0] for item in trace.spans]
        self.decided.append((trace_id, numbers, early, trace.dropped))
        assert self.assembler is not None
        self.at.append(self.assembler.spans_read)


def assembler(**options: object) -> tuple[Assembler, Reader]:
    reader = Reader()
    reader.assembler = Assembler(reader.decide, reader.counts, reader.bad, **options)  # type: ignore[arg-type]
    return reader.assembler, reader


def test_a_trace_is_decided_once_decision_wait_spans_were_read_since_its_last() -> None:
    """With a wait of 3, A (last span the 2nd read) is decided after the 5th span's request,
    B (last the 4th) waits until the 7th, and C (the 7th) only at ``finish``."""
    buffer, reader = assembler(decision_wait=3)
    buffer.feed([span(A, 1), span(A, 2), span(B, 3)])
    buffer.feed([span(B, 4)])
    assert reader.decided == []
    buffer.feed([span(C, 5)])
    assert reader.decided == [(A, [1, 2], False, False)]
    buffer.feed([span(C, 6)])
    assert len(reader.decided) == 1
    buffer.feed([span(C, 7)])
    assert reader.decided[1:] == [(B, [3, 4], False, False)]
    assert buffer.buffered == 1
    buffer.finish()
    assert reader.decided[2:] == [(C, [5, 6, 7], False, False)]
    assert reader.at == [5, 7, 7]
    assert reader.counts == Counts(requests=5, spans=7)


def test_a_full_buffer_decides_the_longest_idle_early_not_the_first_seen() -> None:
    """With room for two traces, A's late span makes B the longest idle: C's arrival decides
    B early, at once, and the rest are decided at the end in order of last arrival."""
    buffer, reader = assembler(max_traces=2)
    buffer.feed([span(A, 1), span(B, 2), span(A, 3)])
    buffer.feed([span(C, 4)])
    assert reader.decided == [(B, [2], True, False)]
    assert reader.at == [4]
    buffer.feed([span(A, 5)])
    buffer.finish()
    assert reader.decided[1:] == [(C, [4], False, False), (A, [1, 3, 5], False, False)]


def test_spans_past_max_spans_per_trace_are_dropped_counted_and_mark_the_trace() -> None:
    """A trace keeps its first two spans; the third and fourth are counted dropped (and in
    spans read), and the trace is marked as having lost spans; another trace is untouched."""
    buffer, reader = assembler(max_spans_per_trace=2)
    buffer.feed([span(A, 1), span(A, 2), span(B, 3), span(A, 4), span(A, 5)])
    buffer.finish()
    assert reader.decided == [(B, [3], False, False), (A, [1, 2], False, True)]
    assert reader.counts == Counts(requests=1, spans=5, dropped_spans=2)
    assert buffer.spans_read == 5


def test_unusable_ids_are_counted_told_with_their_location_and_not_buffered() -> None:
    """A span with a short trace id is told as ``location span index 'name'`` with its
    problem, counted in spans and bad spans, and neither buffered nor read on the clock."""
    buffer, reader = assembler()
    buffer.feed([span(A, 1), span(b"\x01" * 3, 2, name="short", index=1)], "f.jsonl:7")
    assert reader.bad == [
        BadInput("f.jsonl:7 span 1 'short'", "invalid trace id (3 bytes, need 16, not all zero)")
    ]
    assert reader.counts == Counts(requests=1, spans=2, bad_spans=1)
    assert (buffer.buffered, buffer.spans_read) == (1, 1)


def test_decide_takes_one_trace_now_and_answers_false_for_one_not_buffered() -> None:
    """``decide`` hands a buffered trace to the reader at once (not early), once."""
    buffer, reader = assembler()
    buffer.feed([span(A, 1), span(B, 2)])
    assert buffer.decide(B) is True
    assert buffer.decide(B) is False
    assert buffer.decide(C) is False
    assert reader.decided == [(B, [2], False, False)]
    assert buffer.buffered == 1


def test_a_share_times_every_trace_but_keeps_and_counts_only_its_own() -> None:
    """Owning only A: B's spans move the clock and B is decided on time (not owned, no spans
    kept), but only A's spans are counted; a bad span is told by the share owning ``b""``."""
    buffer, reader = assembler(decision_wait=2, owns=lambda trace_id: trace_id == A)
    buffer.feed([span(B, 1), span(A, 2), span(A, 3), span(b"", 4)])
    assert reader.decided == [(B, [], False, False)]
    assert reader.counts == Counts(requests=1, spans=2)
    assert reader.bad == []
    assert buffer.spans_read == 3
    teller, told = assembler(owns=lambda trace_id: trace_id == b"")
    teller.feed([span(b"", 4)])
    assert (len(told.bad), told.counts.bad_spans) == (1, 1)


def test_distinct_collapses_identical_copies_and_lists_each_differing_one() -> None:
    """Of five spans with two ids, one byte-identical copy is counted and the two that differ
    from the first of their id are listed, in arrival order."""
    trace = PendingTrace()
    first, other = span(A, 1), span(A, 2)
    differing = RecordedSpan(**{**vars_of(first), "name": "other"})
    trace.spans = [first, other, span(A, 1), differing, differing]
    spans, copies, conflicts = trace.distinct()
    assert list(spans.values()) == [first, other]
    assert (copies, conflicts) == (1, [first.span_id, first.span_id])


def vars_of(recorded: RecordedSpan) -> dict[str, object]:
    return {name: getattr(recorded, name) for name in RecordedSpan.__slots__}


def test_replay_and_suggest_count_one_input_alike() -> None:
    """The same requests give the Replayer and suggest's reader the same intake counts: bad
    spans, spans past the limit of a trace, requests and spans."""
    requests = [
        [span(A, 1), span(A, 2), span(b"", 3, name="no trace")],
        [span(A, 4), span(B, 5)],
    ]
    replayer = Replayer(CONFIG, max_spans_per_trace=2, unreadable=[])
    suggest = RunReader(lambda run: None, [], max_spans_per_trace=2)
    for request in requests:
        replayer.feed(request)
        suggest.feed(request)
    replayer.finish()
    suggest.finish()
    stats, counts = replayer.stats, suggest.counts
    intake = ("requests", "spans", "bad_spans", "dropped_spans", "traces")
    assert [getattr(stats, name) for name in intake] == [2, 5, 1, 1, 2]
    assert [getattr(counts, name) for name in intake] == [2, 5, 1, 1, 2]
