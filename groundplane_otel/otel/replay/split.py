"""The reading of a parallel replay, split: each line or message is decoded by exactly one
worker, and every worker still sees every request in input order.

Reading happens in two steps. ``split`` (every worker, at once): an uncompressed JSON lines
file is cut into ``N`` equal byte ranges, and worker ``k`` frames and decodes the lines that
start in its ``k``-th (``otlp_files.json_part``: it seeks there, and reads no other line);
any other file (protobuf, compressed: decompressed by each) is framed by every worker, and its
item ``i`` — a line or message, or input that could not be framed (an oversize line, a
truncated message, a corrupt compressed stream) — is decoded by worker ``i % N`` alone. Each
item decoded by worker ``k`` becomes, in its spill file ``<k>-<d>`` for every worker ``d``,
one record:

- a request: the list of its spans in order — whole (pickled as their fields) for the spans
  ``d`` owns (``crc32(trace id) % N``; spans with bad ids go whole to worker 0, which tells
  them, and to the owner of their trace when its id is usable, which marks it incomplete), just
  the trace id for every other span (what ``d`` needs to time that trace exactly as
  one process) — paired with its location, ``(location, spans)``, only for worker 0 when it has
  a span with bad ids to tell (nothing else reads it);
- ``BadInput`` (to worker 0 only: it tells what could not be read), else ``None``;

and a file cut in byte ranges starts with a ``Part`` (its size as that worker found it) and
ends with ``PART_END`` in every spill file.

``Spilled`` (every worker, once all have split): the records for ``d`` read back in input
order — round robin over the spill files, but each cut file part after part, writer after
writer — as the requests one process would feed its replayer, with what could not be read told
at the same moment. Nothing is held but one chunk per spill file; each file ends with the
number of items its writer framed round robin. The replay fails (``InputChanged``) when the
workers framed different input: a file that changed while it was read (a different size or
number of items, or a cut file's size when its split ended not the one it began with).
"""

from __future__ import annotations

import pickle
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, NamedTuple, Protocol

from groundplane_otel.otel.otlp_files import (
    BadInput,
    JsonPart,
    ReadProgress,
    Unit,
    decode_unit,
    located_units,
    plain_file,
)
from groundplane_otel.otel.replay.pacing import Pacer
from groundplane_otel.otel.replay.records import (
    RecordedSpan,
    bad_ids,
    lost_from,
    proto_share,
    proto_spans,
)
from groundplane_otel.otel.replay.unreadable import BadSink

__all__ = ["InputChanged", "Reading", "Spilled", "owner", "spill_name", "split"]

_CHUNK_ITEMS = 512  # items per pickled chunk, at most
_CHUNK_SPANS = 8192  # spans per pickled chunk (past it, the chunk is written early)


class Part(NamedTuple):
    """The start of a file cut in byte ranges, in every spill file (its size: every writer
    must have cut the same bytes)."""

    size: int


class PartEnd(NamedTuple):
    """The end of one writer's part of a cut file: how many lines it had (a part numbers its
    lines from its first: the reader adds the lines of the parts before it)."""

    lines: int


class Direct(NamedTuple):
    """An uncompressed protobuf file, read by every share itself (``job.files[file]``, of
    ``size`` bytes when split): its messages are parsed by each (protobuf's parser, in C), and
    each share reads whole only the spans it keeps (``records.proto_share``), so none is
    spilled."""

    file: int
    size: int


Record = list[Any] | tuple[str, list[Any]] | BadInput | Part | PartEnd | Direct | None


class Reading(Protocol):
    """What is read, and how (a ``ReplayJob``)."""

    @property
    def files(self) -> tuple[str, ...]: ...
    @property
    def format(self) -> str: ...
    @property
    def max_line_bytes(self) -> int: ...


class InputChanged(RuntimeError):
    """Two workers framed different input: a file changed while it was replayed."""


class _Problems(list[BadInput]):
    """What the framing could not read, collected until it is handed on in order."""


def owner(trace_id: bytes, count: int) -> int:
    """The worker of ``count`` that owns trace ``trace_id``: ``crc32(trace id) % count``; input
    of no trace (``b""``) is worker 0's."""
    return zlib.crc32(trace_id) % count if trace_id else 0


def spill_name(folder: Path, writer: int, reader: int) -> Path:
    """The spill file worker ``writer`` fills for worker ``reader``."""
    return folder / f"{writer}-{reader}"


def split(
    job: Reading,
    index: int,
    count: int,
    folder: Path,
    progress: Callable[[float], None] | None = None,
) -> int:
    """Worker ``index`` of ``count``'s part of reading ``job``, decoded and written to the spill
    files in ``folder``: its byte range of each uncompressed JSON lines file, every
    ``count``-th item of any other; ``progress`` is told the fraction of bytes framed, a few
    times a second (``pacing``). Returns the items framed round robin (by every worker)."""
    writer = _Writer(folder, index, count, job.max_line_bytes)
    try:
        seq = 0  # items framed round robin
        problems = _Problems()
        read, pacer = ReadProgress(job.files), Pacer()
        for number, name in enumerate(job.files):
            path = Path(name)
            plain = plain_file(path, job.format)
            if plain is not None and plain[0] == "proto":  # every share reads it: marked
                writer.mark(Direct(number, plain[1]))
                read.skip(plain[1])
                continue
            if plain is not None:  # this worker's part alone, framed and decoded, marked
                size = plain[1]
                part = JsonPart(
                    path,
                    size,
                    index,
                    count,
                    problems,
                    progress=read,
                    max_line_bytes=job.max_line_bytes,
                )
                writer.mark(Part(size))
                for unit in _with_problems(iter(part), problems):
                    writer.item(unit)
                    if progress is not None and pacer.due():
                        progress(read.fraction)
                writer.mark(PartEnd(part.lines))
                if path.stat().st_size != size:
                    raise InputChanged(_CHANGED)
                continue
            units = located_units(
                [path],
                problems,
                format=job.format,
                progress=read,
                max_line_bytes=job.max_line_bytes,
            )
            for unit in _with_problems(units, problems):
                if seq % count == index:
                    writer.item(unit)
                    if progress is not None and pacer.due():
                        progress(read.fraction)
                seq += 1
        writer.end(seq)
    finally:
        writer.close()
    return seq


class _Writer:
    """One worker's spill files, one for each worker: its items' records in chunks."""

    def __init__(self, folder: Path, index: int, count: int, limit: int) -> None:
        self.outs = [spill_name(folder, index, reader).open("wb") for reader in range(count)]
        self.chunks: list[list[Record]] = [[] for _ in range(count)]
        self.spans = 0
        self.limit = limit
        self.resources: dict[bytes, Any] = {}  # protobuf resources read, shared (as replay)

    def item(self, unit: Unit | BadInput) -> None:
        """One line or message (or input that could not be framed) decoded and recorded for
        every worker."""
        chunks = self.chunks
        if isinstance(unit, BadInput):
            self._problem(unit)
        else:
            decoded = _Problems()
            batch = decode_unit(unit, decoded, self.limit)
            if batch is None:
                self._problem(decoded[0])
            else:
                # One resource mapping per distinct resource (the JSON reader shares them
                # too): pickled once per chunk.
                request = batch if isinstance(batch, list) else proto_spans(batch, self.resources)
                _share(unit.location, request, chunks)
                self.spans += len(request)
        self._flush_full()

    def _problem(self, item: BadInput) -> None:
        self.chunks[0].append(item)  # worker 0 tells it
        for chunk in self.chunks[1:]:
            chunk.append(None)

    def mark(self, marker: Part | PartEnd | Direct) -> None:
        """A cut file's start or a part's end, or a file every share reads, for every
        worker."""
        for chunk in self.chunks:
            chunk.append(marker)
        self._flush_full()

    def _flush_full(self) -> None:
        if len(self.chunks[0]) >= _CHUNK_ITEMS or self.spans >= _CHUNK_SPANS:
            self.flush()

    def flush(self) -> None:
        for out, chunk in zip(self.outs, self.chunks, strict=True):
            pickle.dump(chunk, out, protocol=pickle.HIGHEST_PROTOCOL)
            chunk.clear()
        self.spans = 0

    def end(self, framed: int) -> None:
        """The last chunk, then the count of items framed round robin."""
        self.flush()
        for out in self.outs:
            pickle.dump(framed, out, protocol=pickle.HIGHEST_PROTOCOL)

    def close(self) -> None:
        for out in self.outs:
            out.close()


def _with_problems(units: Iterator[Unit], problems: _Problems) -> Iterator[Unit | BadInput]:
    """The units and, in their place in the input, what could not be framed."""
    for unit in units:
        if problems:
            yield from problems
            problems.clear()
        yield unit
    yield from problems
    problems.clear()


def _share(location: str, request: list[RecordedSpan], chunks: list[list[Record]]) -> None:
    """One decoded request's record for every worker: its own spans whole, others' trace ids;
    the location goes to worker 0 when it has a span with bad ids to tell, else to none."""
    count = len(chunks)
    crc32 = zlib.crc32
    if len(request) == 1 and bad_ids(request[0]) is None:  # one span (the common request)
        span = request[0]
        trace_id = span.trace_id
        mine = crc32(trace_id) % count  # ``owner``, inline
        for reader, chunk in enumerate(chunks):
            chunk.append([span] if reader == mine else [trace_id])
        return
    shares: list[list[Any]] = [[] for _ in range(count)]
    told = ""
    for span in request:
        if bad_ids(span) is not None:
            told = location  # worker 0 tells it
            lost = span.trace_id
            if not lost_from(lost):
                shares[0].append(span)
                continue
            keeper = crc32(lost) % count  # ``owner``: its trace lost it, and every share times it
            for reader, share in enumerate(shares):
                share.append(span if reader in (0, keeper) else lost)
            continue
        trace_id = span.trace_id
        for share in shares:
            share.append(trace_id)
        shares[crc32(trace_id) % count][-1] = span  # ``owner``, inline
    chunks[0].append((told, shares[0]) if told else shares[0])
    for reader in range(1, count):
        chunks[reader].append(shares[reader])


class Spilled:
    """Worker ``index``'s requests, read back from every spill file for it in input order
    (``requests``), with the files every share reads itself (``Direct``) in their place;
    ``fraction``: how much of them is read."""

    def __init__(self, job: Reading, folder: Path, index: int, count: int) -> None:
        self.job, self.index, self.count = job, index, count
        self.paths = [spill_name(folder, writer, index) for writer in range(count)]
        direct = [plain_file(Path(name), job.format) for name in job.files]
        self.total = sum(path.stat().st_size for path in self.paths) + sum(
            plain[1] for plain in direct if plain is not None and plain[0] == "proto"
        )
        self._files: list[IO[bytes]] = []
        self._direct = ReadProgress(())  # the files read directly, as read so far
        self._resources: dict[bytes, Any] = {}  # their resources, shared

    @property
    def fraction(self) -> float:
        if not self._files or not self.total:
            return 0.0
        direct = self._direct
        read = direct._before + (direct._stream.tell() if direct._stream is not None else 0)
        return min(1.0, (sum(file.tell() for file in self._files) + read) / self.total)

    def requests(self, bad: BadSink) -> Iterator[tuple[str, list[RecordedSpan | bytes]]]:
        """Each request's location and spans (another worker's: its trace id, all a share
        needs to time its trace), in input order: round robin over the spill files, but each
        part of a cut file whole, writer after writer; what could not be read is appended to
        ``bad`` in its place. Raises ``InputChanged`` when the writers framed different
        input."""
        count = len(self.paths)
        files: list[IO[bytes]] = [path.open("rb") for path in self.paths]
        self._files = files
        current: list[Iterator[Record]] = [iter(()) for _ in files]  # each file's chunk

        def take(writer: int) -> Record | int:
            """The writer's next record, or the count its spill file ends with."""
            record = next(current[writer], _END)
            while record is _END:
                chunk = pickle.load(files[writer])  # our own files, this replay's
                if isinstance(chunk, int):
                    return chunk
                current[writer] = iter(chunk)
                record = next(current[writer], _END)
            return record

        seq = 0  # items read round robin
        part = -1  # the writer whose part of a cut file is read (-1: none, round robin)
        before = 0  # the lines of the cut file's parts read
        try:
            while True:
                writer = seq % count if part < 0 else part
                record = next(current[writer], _END)
                if record is _END:  # its chunk is read
                    record = take(writer)
                if record.__class__ is list:  # a request: the common case first
                    if part < 0:
                        seq += 1
                    yield "", record
                elif record.__class__ is tuple:  # a request, and where it is (to tell)
                    location, items = record
                    if before:
                        location = _moved(location, before)
                    if part < 0:
                        seq += 1
                    yield location, items
                elif isinstance(record, int):  # its end: every file ends here, this count
                    others = (take(other) for other in range(count) if other != writer)
                    if part >= 0 or record != seq or any(end != seq for end in others):
                        raise InputChanged(_CHANGED)
                    return
                elif isinstance(record, Part):  # a cut file: every writer starts it alike
                    others = (take(other) for other in range(count) if other != writer)
                    if part >= 0 or any(start != record for start in others):
                        raise InputChanged(_CHANGED)
                    part, before = 0, 0
                elif isinstance(record, Direct):  # read here: every writer marks it alike
                    others = (take(other) for other in range(count) if other != writer)
                    if part >= 0 or any(mark != record for mark in others):
                        raise InputChanged(_CHANGED)
                    yield from self._read_direct(record, bad)
                elif isinstance(record, PartEnd):  # the next writer's part, or round robin
                    if part < 0:
                        raise InputChanged(_CHANGED)
                    part, before = part + 1, before + record.lines
                    if part == count:
                        part, before = -1, 0
                else:  # what could not be read (worker 0's), or nothing
                    if part < 0:
                        seq += 1
                    if isinstance(record, BadInput):
                        bad.append(
                            BadInput(_moved(record.location, before), record.problem)
                            if before
                            else record
                        )
        finally:
            for file in files:
                file.close()

    def _read_direct(
        self, marker: Direct, bad: BadSink
    ) -> Iterator[tuple[str, list[RecordedSpan | bytes]]]:
        """A protobuf file every share reads: each message parsed, this share's spans read
        whole, every other's trace id alone; what could not be read told by worker 0 alone
        (as split spills it). Raises ``InputChanged`` when the file is not the size it was
        when split."""
        path, limit = Path(self.job.files[marker.file]), self.job.max_line_bytes
        count, index, tells = self.count, self.index, self.index == 0
        crc32 = zlib.crc32

        def owned(trace_id: bytes) -> bool:
            return crc32(trace_id) % count == index  # ``owner``, for ids known good

        problems = _Problems()
        units = located_units(
            [path], problems, format="proto", progress=self._direct, max_line_bytes=limit
        )
        for unit in _with_problems(units, problems):
            if isinstance(unit, BadInput):
                if tells:
                    bad.append(unit)
                continue
            decoded = _Problems()
            batch = decode_unit(unit, decoded, limit)
            if batch is None:
                if tells:
                    bad.append(decoded[0])
                continue
            if isinstance(batch, list):  # a compressed message of OTLP/JSON: read whole
                yield unit.location, _kept(batch, owned, tells)
            else:
                yield unit.location, proto_share(batch, self._resources, owned, tells)
        if path.stat().st_size != marker.size:
            raise InputChanged(_CHANGED)


def _kept(
    spans: list[RecordedSpan], owned: Callable[[bytes], bool], tells_bad: bool
) -> list[RecordedSpan | bytes]:
    """``records.proto_share`` of spans already read."""
    kept: list[RecordedSpan | bytes] = []
    for span in spans:
        trace_id = span.trace_id
        if bad_ids(span) is None:
            kept.append(span if owned(trace_id) else trace_id)
        elif tells_bad or (lost_from(trace_id) and owned(trace_id)):
            kept.append(span)
        elif lost_from(trace_id):
            kept.append(trace_id)
    return kept


_END: Any = object()  # a chunk read to its end


def _moved(location: str, before: int) -> str:
    """``path:number`` as ``path:(number + before)``."""
    path, number = location.rsplit(":", 1)
    return f"{path}:{int(number) + before}"


_CHANGED = (
    "the input changed while it was read (the workers read different lines or messages): no report"
)
