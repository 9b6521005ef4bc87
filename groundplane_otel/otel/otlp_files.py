"""Recorded traces in the OpenTelemetry Collector's ``file`` exporter formats, both ways.

- ``json`` (the default): one ``ExportTraceServiceRequest`` per line in OTLP/JSON — protobuf's
  JSON mapping, except that trace and span ids are hex strings, not base64.
- ``proto``: a stream of ``ExportTraceServiceRequest`` messages, each prefixed by its length as a
  4-byte big-endian unsigned integer.

Either may be compressed as the Collector's ``compression`` option writes it: ``gzip`` or
``zstd`` (recognised by their magic bytes). Reading yields each line's or message's spans with
its location: a JSON line as ``RecordedSpan``s (``replay.json_reader``: orjson, no protobuf round
trip), a protobuf message as its ``ExportTraceServiceRequest``; ``Replayer.feed`` takes either.
A line or message that cannot be read (malformed, nested too deep, over the size limit
``max_line_bytes``, decompressing past it, a corrupt compressed stream) is reported with its
location (file, line or byte offset) and skipped, never a crash, and never read whole into memory
when it is over the limit: a line longer than ``_SKIP`` is read on in chunks of that size, and
in a plain file it is measured first (nothing held) and read whole only when within the limit;
in a compressed one its chunks are held until it passes the limit, then let go. Every echoed
value is capped. ``Unreadable`` counts every such input
and keeps only the first locations.
``OtlpFileExporter`` writes the ``json`` format from the SDK (the demo records itself with it).
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import os
import re
import struct
import threading
import zlib
from collections.abc import Generator, Iterator, Sequence
from pathlib import Path
from typing import IO, Any, NamedTuple

import zstandard
from google.protobuf import json_format  # type: ignore[import-untyped]
from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from groundplane_otel._echo import capped
from groundplane_otel.otel.replay.json_reader import (
    JsonResources,
    NestedTooDeep,
    NotTraces,
    json_spans,
)
from groundplane_otel.otel.replay.records import RecordedSpan
from groundplane_otel.otel.replay.unreadable import BadInput, BadSink, Unreadable

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "BadInput",
    "Batch",
    "OtlpFileExporter",
    "ReadProgress",
    "Unit",
    "Unreadable",
    "decode_unit",
    "located_requests",
    "JsonPart",
    "located_units",
    "not_a_recording",
    "plain_file",
    "read_requests",
    "request_from_json",
    "request_to_json",
]

_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024  # a line or message (decompressed) above it is refused
_SKIP = 1 << 20  # an oversize line is skipped in chunks of this many bytes
_ECHO = 80
_GZIP, _ZSTD = b"\x1f\x8b", b"\x28\xb5\x2f\xfd"


# One line's or message's spans: a JSON line's as read, a protobuf message as it came.
Batch = list[RecordedSpan] | ExportTraceServiceRequest


class Unit(NamedTuple):
    """One line or length-prefixed message as read, not yet decoded (``decode_unit``):
    ``resources`` is its JSON file's cache of shared resources (None: a protobuf message)."""

    location: str
    body: bytes
    resources: dict[bytes, Any] | None


_new_tuple = tuple.__new__


def decode_unit(unit: Unit, bad: BadSink, limit: int) -> Batch | None:
    """``unit``'s spans, or None when it is not a trace request (told to ``bad`` with its
    location)."""
    if unit.resources is not None:
        try:
            return json_spans(unit.body, unit.resources)
        except NestedTooDeep:
            bad.append(BadInput(unit.location, "not an OTLP/JSON trace request (nested too deep)"))
        except NotTraces as exc:
            bad.append(BadInput(unit.location, str(exc)))
        except ValueError as exc:
            problem = f"not an OTLP/JSON trace request ({_detail(exc)})"
            bad.append(BadInput(unit.location, problem))
        return None
    try:
        return _parse_message(unit.body, limit)
    except (NestedTooDeep, RecursionError):
        bad.append(BadInput(unit.location, "not a trace request (nested too deep)"))
    except (DecodeError, ValueError, zstandard.ZstdError, OSError, EOFError, zlib.error) as exc:
        bad.append(BadInput(unit.location, f"not a trace request ({_detail(exc)})"))
    return None


_CHAIN = re.compile(r"^(?:Failed to parse (\w+) field: )+")


def _detail(exc: Exception) -> str:
    """What went wrong, short: the first line, protobuf's chain of enclosing fields replaced by
    the innermost one, capped."""
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    chain = _CHAIN.match(text)
    if chain:
        text = f"{text[chain.end() :]} in {chain.group(1)}"
    return capped(text, _ECHO)


def _ids(node: Any, convert: Any) -> Any:
    """Convert every trace/span id in an OTLP/JSON tree (hex <-> base64), in place."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if key in _ID_KEYS and isinstance(value, str):
                    item[key] = convert(value)
                elif isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(value for value in item if isinstance(value, (dict, list)))
    return node


def _hex_to_base64(value: str) -> str:
    return base64.b64encode(bytes.fromhex(value)).decode("ascii")


def _base64_to_hex(value: str) -> str:
    return base64.b64decode(value).hex()


def request_from_json(line: str) -> ExportTraceServiceRequest:
    """One OTLP/JSON line as a protobuf request, through protobuf's JSON mapping (slow: for
    converting a recording to the proto format; replay reads lines with ``json_spans``)."""
    tree = json.loads(line)
    if not isinstance(tree, dict):
        raise ValueError(f"expected a JSON object, got {type(tree).__name__}")
    request = ExportTraceServiceRequest()
    json_format.ParseDict(_ids(tree, _hex_to_base64), request, ignore_unknown_fields=True)
    return request


def _json_units(
    path: Path,
    stream: IO[bytes],
    bad: BadSink,
    limit: int,
    *,
    number: int = 0,
    at: int = 0,
    stop: int | None = None,
    rewind: bool = False,
) -> Generator[Unit, None, int]:
    """Each non-blank line; a line over ``limit`` bytes is told and skipped in chunks (never
    held whole: ``_long_line``). ``number``: the lines before it; ``at``: its byte offset;
    ``stop``: where lines no longer start (None: the end); ``rewind``: ``stream`` is a plain
    file (it can seek back cheaply). Returns the number of the last line read."""
    name = str(path)  # formatted once: every line's location starts with it
    resources = JsonResources()  # one file's resources, shared by its spans
    first = min(limit + 1, _SKIP)  # what one read takes: every line but a long one
    while stop is None or at < stop:
        raw: bytes | None = stream.readline(first)
        if not raw:
            return number
        number += 1
        if len(raw) < first or raw.endswith(b"\n"):
            at += len(raw)
        else:  # a long line: read on in chunks, or skipped when over the limit
            raw, size = _long_line(stream, raw, limit, rewind)
            at += size
            if raw is None:
                problem = f"line over the size limit of {limit} bytes (--max-line-bytes): skipped"
                bad.append(BadInput(f"{path}:{number}", problem))
                continue
        line = raw.strip()
        if line:  # ``Unit(...)`` without its Python ``__new__``: a call less a line
            yield _new_tuple(Unit, (f"{name}:{number}", line, resources))
    return number


def _long_line(
    stream: IO[bytes], head: bytes, limit: int, rewind: bool
) -> tuple[bytes | None, int]:
    """The line whose first ``head`` bytes were read (no newline yet), read on in chunks of
    ``_SKIP``: the whole line, or None when it is over ``limit`` bytes (its newline not
    counted) — then read past to its end, never held whole; and the bytes it took in all.
    ``rewind``: the line is measured first, nothing held, and read again only when within the
    limit; else its chunks are held until it passes the limit."""
    start = stream.tell() - len(head) if rewind else 0
    kept: list[bytes] | None = None if rewind else [head]
    size, over = len(head), False
    while True:
        chunk = stream.readline(_SKIP)
        size += len(chunk)
        ended = not chunk or chunk.endswith(b"\n")
        if not over and size - (1 if chunk.endswith(b"\n") else 0) > limit:
            over, kept = True, None  # let go of what was held
        elif kept is not None and chunk:
            kept.append(chunk)
        if ended:
            break
    if over:
        return None, size
    if kept is not None:
        return b"".join(kept), size
    stream.seek(start)
    return stream.read(size), size


def _proto_units(path: Path, stream: io.BufferedReader, bad: BadSink, limit: int) -> Iterator[Unit]:
    """Each length-prefixed message; one over ``limit`` bytes is told and skipped unread."""
    name = str(path)
    offset = 0
    while True:
        prefix = stream.read(4)
        if not prefix:
            return
        if len(prefix) < 4:
            bad.append(BadInput(f"{path}@{offset}", "truncated length prefix"))
            return
        (size,) = struct.unpack(">I", prefix)
        if size > limit:
            skipped = _skip(stream, size)
            if skipped < size:
                problem = f"truncated message ({skipped}/{size} bytes)"
                bad.append(BadInput(f"{path}@{offset}", problem))
                return
            problem = (
                f"message of {size} bytes over the size limit of {limit} bytes "
                "(--max-line-bytes): skipped"
            )
            bad.append(BadInput(f"{path}@{offset}", problem))
            offset += 4 + size
            continue
        body = stream.read(size)
        if len(body) < size:
            bad.append(
                BadInput(f"{path}@{offset}", f"truncated message ({len(body)}/{size} bytes)")
            )
            return
        yield Unit(f"{name}@{offset}", body, None)
        offset += 4 + size


def _skip(stream: io.BufferedReader, size: int) -> int:
    """Read past ``size`` bytes in bounded chunks; how many there were."""
    skipped = 0
    while skipped < size:
        chunk = stream.read(min(_SKIP, size - skipped))
        if not chunk:
            break
        skipped += len(chunk)
    return skipped


def _parse_message(body: bytes, limit: int) -> Batch:
    """One length-prefixed message: protobuf, or — as a Collector with ``compression`` set
    writes every message, in json or proto format — a compressed frame of either, refused when
    it decompresses past ``limit`` (a compression bomb: never more than that in memory)."""
    if body[:4] == _ZSTD:
        reader = zstandard.ZstdDecompressor().stream_reader(body, read_across_frames=True)
        body = _bounded(reader.read(limit + 1), limit)
    elif body[:2] == _GZIP:
        body = _bounded(zlib.decompressobj(wbits=31).decompress(body, limit + 1), limit)
    else:
        return _message(body)
    if body.lstrip()[:1] == b"{":
        return json_spans(body)
    return _message(body)


def _message(body: bytes) -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    return request


def _bounded(data: bytes, limit: int) -> bytes:
    """Decompressed ``data`` (read up to one byte past the limit), refused past it."""
    if len(data) > limit:
        raise ValueError(f"decompresses to more than {limit} bytes (--max-line-bytes)")
    return data


class _ZstdFrames(io.RawIOBase):
    """A zstd file's content, frame after frame; a file that ends inside a frame is an
    error (``EOFError``), never a silent end (the stdlib gzip reader behaves the same)."""

    _CHUNK = 1 << 16

    def __init__(self, raw: IO[bytes]) -> None:
        self._raw = raw
        self._frame = zstandard.ZstdDecompressor().decompressobj()
        self._started = False  # the current frame has received input
        self._ready = b""  # decompressed, from ``self._at`` on not yet read
        self._at = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while self._at >= len(self._ready):
            chunk = self._raw.read(self._CHUNK)
            if not chunk:
                if self._started:
                    raise EOFError("zstd file ended inside a frame (truncated)")
                return 0
            self._ready, self._at = self._feed(chunk), 0
        size = min(len(buffer), len(self._ready) - self._at)
        buffer[:size] = self._ready[self._at : self._at + size]
        self._at += size
        return size

    def _feed(self, chunk: bytes) -> bytes:
        out = []
        while chunk:
            self._started = True
            out.append(self._frame.decompress(chunk))
            if not self._frame.eof:
                break
            chunk = self._frame.unused_data  # the next frame begins here
            self._frame = zstandard.ZstdDecompressor().decompressobj()
            self._started = False
        return b"".join(out)


class ReadProgress:
    """Bytes read so far over all the input files (for a progress bar)."""

    __slots__ = ("_before", "_stream", "total")

    def __init__(self, paths: Sequence[str | Path]) -> None:
        self.total = sum(Path(p).stat().st_size for p in paths if Path(p).is_file())
        self._stream: IO[bytes] | None = None
        self._before = 0

    def skip(self, size: int) -> None:
        """A file of ``size`` bytes read by another reader: passed over as read."""
        self._before += size

    @property
    def fraction(self) -> float:
        position = self._stream.tell() if self._stream is not None else 0
        return min(1.0, (self._before + position) / self.total) if self.total else 1.0


def located_requests(
    paths: Sequence[str | Path],
    bad: BadSink,
    *,
    format: str = "auto",
    progress: ReadProgress | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> Iterator[tuple[str, Batch]]:
    """Every trace request's spans in ``paths`` with its location (``file:line`` or
    ``file@offset``), in order, streaming (one line or message in memory at a time, at most
    ``max_line_bytes``). ``format``: ``json``, ``proto`` or ``auto`` (by the first byte: ``{``
    is JSON); gzip and zstd files are decompressed as they are read. Unreadable input is
    appended to ``bad`` and skipped (a corrupt compressed stream: the rest of that file); a
    missing file is a ValueError. ``progress`` follows the bytes read."""
    for unit in located_units(
        paths, bad, format=format, progress=progress, max_line_bytes=max_line_bytes
    ):
        batch = decode_unit(unit, bad, max_line_bytes)
        if batch is not None:
            yield unit.location, batch


def located_units(
    paths: Sequence[str | Path],
    bad: BadSink,
    *,
    format: str = "auto",
    progress: ReadProgress | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> Iterator[Unit]:
    """``located_requests`` before decoding: every line or message as read, undecoded
    (``decode_unit`` decodes one); what cannot be read as a line or message (over the size
    limit, truncated, a corrupt compressed stream) is appended to ``bad`` in order."""
    if format not in ("auto", "json", "proto"):
        raise ValueError(f"format must be json, proto or auto, got {format!r}")
    if max_line_bytes < 1:
        raise ValueError(f"max_line_bytes must be >= 1, got {max_line_bytes}")
    for name in paths:
        path = Path(name)
        if not path.is_file():
            raise ValueError(f"{path}: no such file")
        with path.open("rb") as raw:
            if progress is not None:
                progress._stream = raw
            magic = raw.read(4)
            raw.seek(0)
            stream: io.BufferedReader = raw
            if magic[:2] == _GZIP:
                stream = io.BufferedReader(gzip.GzipFile(fileobj=raw, mode="rb"))
            elif magic == _ZSTD:
                stream = io.BufferedReader(_ZstdFrames(raw))
            try:  # the file's lines or messages (one generator less between them and here)
                head = stream.peek(_HEAD)[:_HEAD]
                kind = _kind(head[:1], format)
                problem = not_a_recording(head, kind)
                if problem is not None:  # said once for the file, which is skipped
                    bad.append(BadInput(str(path), problem))
                elif kind == "json":
                    plain = stream is raw  # not decompressed: it can seek back cheaply
                    yield from _json_units(path, stream, bad, max_line_bytes, rewind=plain)
                else:
                    yield from _proto_units(path, stream, bad, max_line_bytes)
            except (OSError, EOFError, zlib.error, zstandard.ZstdError) as exc:
                problem = f"unreadable compressed data ({_detail(exc)})"
                bad.append(BadInput(str(path), problem))
            if progress is not None:
                progress._before += path.stat().st_size
                progress._stream = None


_HEAD = 4096  # what ``not_a_recording`` looks at
_RECORD_HOW = (
    "record with the Collector's file exporter, or in process with "
    "groundplane_otel.otel.otlp_files.OtlpFileExporter"
)


def not_a_recording(head: bytes, kind: str) -> str | None:
    """Why a file that starts with ``head`` (read as ``kind``, ``json`` or ``proto``) is not a
    recording replay reads, or None: the SDK's console exporter output, a multi-line
    (pretty-printed) JSON document, or text. Only a JSON file whose first line opens a
    document alone, or a "protobuf" file that starts with text, is looked into: a recording's
    bytes never are."""
    if kind == "json":
        if head.lstrip().split(b"\n", 1)[0].strip() not in (b"{", b"["):
            return None
    elif len(head) < 4 or not all(32 <= byte < 127 or byte in b"\t\n\r" for byte in head[:4]):
        return None  # a length prefix: a protobuf message's first byte is never text-like
    if b'"context": {' in head and b'"trace_id"' in head:
        return (
            "not an OTLP recording: the OpenTelemetry SDK's console exporter output (one span "
            f"per multi-line JSON object, not OTLP); {_RECORD_HOW}"
        )
    if kind == "json":
        return (
            "not one OTLP/JSON request per line: a multi-line (pretty-printed) JSON document; "
            "write each request on one line (e.g. jq -c . FILE > FILE.jsonl), as the "
            "Collector's file exporter does"
        )
    shown = capped(head[:60].decode("ascii", "replace"), 40)
    return (
        f"not an OTLP recording: it starts with text ({shown!r}), neither OTLP/JSON lines "
        f"nor length-prefixed OTLP protobuf; {_RECORD_HOW}"
    )


def _kind(first: bytes, format: str) -> str:
    """``json`` or ``proto``: ``format``, or for ``auto`` by the (decompressed) first byte."""
    if format != "auto":
        return format
    return "json" if first in (b"{", b" ", b"\n", b"\r", b"\t", b"") else "proto"


def plain_file(path: Path, format: str = "auto") -> tuple[str, int] | None:
    """How ``located_units`` reads ``path`` when it is not compressed, ``json`` (lines) or
    ``proto`` (messages), and its size; None for a compressed or missing file
    (``located_units`` tells). A parallel replay splits such a file without framing it all in
    every worker."""
    try:
        with path.open("rb") as raw:
            head = raw.read(4)
            size = os.fstat(raw.fileno()).st_size
    except OSError:
        return None
    if head[:2] == _GZIP or head == _ZSTD:
        return None
    return _kind(head[:1], format), size


class JsonPart:
    """The lines of the uncompressed OTLP/JSON lines file ``path`` (``size`` bytes: as
    ``plain_file`` found it) that start in its ``part``-th of ``parts`` equal byte
    ranges (over the parts, every line once), refused as ``located_units`` does, but numbered
    from the part's first line (the lines before it are not counted: read, the part tells
    ``lines``, how many it had, for the parts after it to add)."""

    def __init__(
        self,
        path: Path,
        size: int,
        part: int,
        parts: int,
        bad: BadSink,
        *,
        progress: ReadProgress | None = None,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        self.path, self.size, self.bad = path, size, bad
        self.start, self.stop = size * part // parts, size * (part + 1) // parts
        self.progress, self.limit = progress, max_line_bytes
        self.lines = 0

    def __iter__(self) -> Iterator[Unit]:
        progress = self.progress
        with self.path.open("rb") as raw:
            problem = not_a_recording(raw.read(_HEAD), "json")
            if problem is not None:  # the file is skipped by every part, told by the first
                if not self.start:
                    self.bad.append(BadInput(str(self.path), problem))
                if progress is not None:
                    progress._before += self.size
                return
            raw.seek(0)
            if progress is not None:
                progress._stream = raw
            if self.start:
                raw.seek(self.start - 1)
                if raw.read(1) != b"\n":  # inside a line begun in an earlier part: its
                    while (rest := raw.readline(_SKIP)) and not rest.endswith(b"\n"):
                        pass
            at = raw.tell()
            if at < self.stop:
                self.lines = yield from _json_units(
                    self.path, raw, self.bad, self.limit, at=at, stop=self.stop, rewind=True
                )
            if progress is not None:
                progress._before += self.size
                progress._stream = None


def read_requests(
    paths: Sequence[str | Path],
    bad: BadSink,
    *,
    format: str = "auto",
    progress: ReadProgress | None = None,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> Iterator[Batch]:
    """``located_requests`` without the locations."""
    # ``located_requests``' loop, not a generator over it: one hop and one pair less a line
    for unit in located_units(
        paths, bad, format=format, progress=progress, max_line_bytes=max_line_bytes
    ):
        resources = unit[2]
        if resources is None:
            batch = decode_unit(unit, bad, max_line_bytes)
        else:  # a JSON line read here, a call less a line; one refused is read again, and told
            try:
                batch = json_spans(unit[1], resources)
            except ValueError:
                batch = decode_unit(unit, bad, max_line_bytes)
        if batch is not None:
            yield batch


def request_to_json(request: ExportTraceServiceRequest) -> str:
    """One OTLP/JSON line (hex ids), as the Collector's file exporter writes it."""
    tree = json_format.MessageToDict(request)
    return json.dumps(_ids(tree, _base64_to_hex), separators=(",", ":"))


class OtlpFileExporter(SpanExporter):
    """Append finished spans to ``path`` in the Collector's file format (``json`` lines), so
    traces recorded in process can be replayed (``groundplane-otel replay``)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        if not spans:
            return SpanExportResult.SUCCESS
        line = request_to_json(encode_spans(spans)) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as out:
            out.write(line)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass
