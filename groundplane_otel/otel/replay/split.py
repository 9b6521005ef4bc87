"""The reading of a parallel replay, split: each line or message is decoded by exactly one
worker, and every worker still sees every request in input order.

Reading happens in two steps. ``split`` (every worker, at once): the input is framed into lines
and messages by every worker (cheap: compressed files are decompressed by each), and item
``i`` — a line or message, or input that could not be framed (an oversize line, a truncated
message, a corrupt compressed stream) — is handled by worker ``i % N`` alone: it decodes it
and writes, for every worker ``d``, to its spill file ``<k>-<d>`` (``k = i % N``) one record:

- a request: its spans in order — whole for the spans ``d`` owns (``crc32(trace id) % N``;
  spans with bad ids go whole to worker 0, which tells them), just the trace id for every other
  span (what ``d`` needs to time that trace exactly as one process) — and its location, for
  worker 0 when it has a span with bad ids to tell (nothing else reads it), else ``""``;
- ``BadInput`` (to worker 0 only: it tells what could not be read), else ``None``.

``Spilled`` (every worker, once all have split): the records for ``d`` read back in item order,
round robin over the spill files, as the requests one process would feed its replayer, with
what could not be read told at the same moment. Nothing is held but one chunk per spill file;
each file ends with the number of items its writer framed, and the readers fail the replay if
two workers framed different input (a file that changed while it was read).
"""

from __future__ import annotations

import dataclasses
import operator
import pickle
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, Protocol

from groundplane_otel.otel.otlp_files import (
    BadInput,
    ReadProgress,
    Unit,
    decode_unit,
    located_units,
)
from groundplane_otel.otel.replay.pacing import Pacer
from groundplane_otel.otel.replay.records import RecordedSpan, bad_ids, proto_spans
from groundplane_otel.otel.replay.unreadable import BadSink

__all__ = ["InputChanged", "Reading", "Spilled", "owner", "spill_name", "split"]

_CHUNK_ITEMS = 512  # items per pickled chunk, at most
_CHUNK_SPANS = 8192  # spans per pickled chunk (past it, the chunk is written early)
_FIELDS = operator.attrgetter(*(field.name for field in dataclasses.fields(RecordedSpan)))

Record = tuple[str, list[Any]] | BadInput | None


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
    """Worker ``index`` of ``count``'s part of reading ``job``: every
    ``count``-th item decoded and written to the spill files in ``folder``; ``progress`` is told
    the fraction of bytes framed, a few times a second (``pacing``). Returns the items framed."""
    outs = [spill_name(folder, index, reader).open("wb") for reader in range(count)]
    try:
        chunks: list[list[Record]] = [[] for _ in range(count)]
        spans = 0
        seq = 0
        problems = _Problems()
        resources: dict[bytes, Any] = {}  # protobuf resources read, shared (as replay shares)
        read, pacer = ReadProgress(job.files), Pacer()

        def flush() -> None:
            for out, chunk in zip(outs, chunks, strict=True):
                pickle.dump(chunk, out, protocol=pickle.HIGHEST_PROTOCOL)
                chunk.clear()

        def problem(item: BadInput) -> None:
            chunks[0].append(item)
            for chunk in chunks[1:]:
                chunk.append(None)

        units = located_units(
            job.files, problems, format=job.format, progress=read, max_line_bytes=job.max_line_bytes
        )
        for unit in _with_problems(units, problems):
            if seq % count == index:
                if isinstance(unit, BadInput):
                    problem(unit)
                else:
                    decoded = _Problems()
                    batch = decode_unit(unit, decoded, job.max_line_bytes)
                    if batch is None:
                        problem(decoded[0])
                    else:
                        # One resource mapping per distinct resource (the JSON reader shares
                        # them too): pickled once per chunk.
                        request = (
                            batch if isinstance(batch, list) else proto_spans(batch, resources)
                        )
                        _share(unit.location, request, chunks)
                        spans += len(request)
                if len(chunks[0]) >= _CHUNK_ITEMS or spans >= _CHUNK_SPANS:
                    flush()
                    spans = 0
                if progress is not None and pacer.due():
                    progress(read.fraction)
            seq += 1
        flush()
        for out in outs:
            pickle.dump(seq, out, protocol=pickle.HIGHEST_PROTOCOL)
    finally:
        for out in outs:
            out.close()
    return seq


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
    shares: list[list[Any]] = [[] for _ in range(count)]
    told = ""
    crc32 = zlib.crc32
    for span in request:
        if bad_ids(span) is not None:
            shares[0].append(_FIELDS(span))  # worker 0 tells it
            told = location
            continue
        trace_id = span.trace_id
        for share in shares:
            share.append(trace_id)
        shares[crc32(trace_id) % count][-1] = _FIELDS(span)  # ``owner``, inline
    chunks[0].append((told, shares[0]))
    for reader in range(1, count):
        chunks[reader].append(("", shares[reader]))


class Spilled:
    """Worker ``index``'s requests, read back from every spill file for it in input order
    (``requests``); ``fraction``: how much of them is read."""

    def __init__(self, folder: Path, index: int, count: int) -> None:
        self.paths = [spill_name(folder, writer, index) for writer in range(count)]
        self.total = sum(path.stat().st_size for path in self.paths)
        self._files: list[IO[bytes]] = []

    @property
    def fraction(self) -> float:
        if not self._files or not self.total:
            return 0.0
        return min(1.0, sum(file.tell() for file in self._files) / self.total)

    def requests(self, bad: BadSink) -> Iterator[tuple[str, list[RecordedSpan | bytes]]]:
        """Each request's location and spans (another worker's: its trace id, all a share
        needs to time its trace); what could not be read is appended to ``bad`` in its place.
        Raises ``InputChanged`` when the writers framed different input."""
        count = len(self.paths)
        self._files = [path.open("rb") for path in self.paths]
        try:
            current: list[Iterator[Record]] = [iter(()) for _ in self._files]  # each's chunk
            made = RecordedSpan
            seq = 0
            while True:
                writer = seq % count
                record = next(current[writer], _END)
                if record is _END:  # its chunk is read: the next one, or its end
                    chunk = pickle.load(self._files[writer])  # our own files, this replay's
                    if isinstance(chunk, int):
                        _check_ends(seq, chunk, writer, current, self._files)
                        return
                    current[writer] = iter(chunk)
                    continue
                seq += 1
                if record is None:
                    continue
                if isinstance(record, BadInput):
                    bad.append(record)
                    continue
                location, items = record
                yield (
                    location,
                    [item if item.__class__ is bytes else made(*item) for item in items],
                )
        finally:
            for file in self._files:
                file.close()


_END: Any = object()  # a chunk read to its end


def _check_ends(
    seq: int, framed: int, ended: int, current: list[Iterator[Record]], files: list[IO[bytes]]
) -> None:
    """At item ``seq`` the spill file of writer ``ended`` ended, counting ``framed`` items:
    every one must end here, with no record left in its ``current`` chunk, and that count."""
    for writer, file in enumerate(files):
        if writer == ended:
            end: int | None = framed
        elif next(current[writer], _END) is not _END:
            end = None  # its writer framed more
        else:
            end = _rest(file)
        if end != seq:
            raise InputChanged(
                "the input changed while it was read (the workers read different lines or "
                "messages): no report"
            )


def _rest(file: IO[bytes]) -> int | None:
    """What follows in a spill file whose chunks before it are all read: its count, or None
    (more records: its writer framed more)."""
    try:
        end = pickle.load(file)
    except EOFError:
        return None
    return end if isinstance(end, int) else None
