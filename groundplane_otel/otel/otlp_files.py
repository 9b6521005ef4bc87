"""Recorded traces in the OpenTelemetry Collector's ``file`` exporter formats, both ways.

- ``json`` (the default): one ``ExportTraceServiceRequest`` per line in OTLP/JSON — protobuf's
  JSON mapping, except that trace and span ids are hex strings, not base64.
- ``proto``: a stream of ``ExportTraceServiceRequest`` messages, each prefixed by its length as a
  4-byte big-endian unsigned integer.

Either may be compressed as the Collector's ``compression`` option writes it: ``gzip`` or
``zstd`` (recognised by their magic bytes). Parsing uses ``opentelemetry-proto``. A line or
message that cannot be read (malformed, nested too deep, a corrupt compressed stream) is reported
with its location (file, line or byte offset) and skipped, never a crash; every echoed value is
capped. ``Unreadable`` counts every such input and keeps only the first locations.
``OtlpFileExporter`` writes the ``json`` format from the SDK (the demo records itself with it).
"""

from __future__ import annotations

import base64
import gzip
import io
import json
import re
import struct
import threading
import zlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Protocol

import zstandard
from google.protobuf import json_format  # type: ignore[import-untyped]
from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

from groundplane_otel._echo import capped

__all__ = [
    "BadInput",
    "OtlpFileExporter",
    "ReadProgress",
    "Unreadable",
    "located_requests",
    "read_requests",
    "request_to_json",
]

_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})
_MAX_MESSAGE = 64 * 1024 * 1024  # a length prefix above this is a corrupt or foreign file
_ECHO = 80
_GZIP, _ZSTD = b"\x1f\x8b", b"\x28\xb5\x2f\xfd"


@dataclass(frozen=True, slots=True)
class BadInput:
    """One unreadable line or message: where, and what was wrong (short, content capped)."""

    location: str
    problem: str

    def __str__(self) -> str:
        return f"{self.location}: {self.problem}"


class BadSink(Protocol):
    """Where unreadable input is told: a list, or ``Unreadable``."""

    def append(self, item: BadInput, /) -> None: ...


class Unreadable:
    """Every unreadable input counted (``count``), only the first ``keep`` located (``kept``):
    memory stays bounded however bad the input."""

    __slots__ = ("count", "keep", "kept")

    def __init__(self, keep: int = 100) -> None:
        self.keep = keep
        self.count = 0
        self.kept: list[BadInput] = []

    def append(self, item: BadInput, /) -> None:
        self.count += 1
        if len(self.kept) < self.keep:
            self.kept.append(item)

    @property
    def left_out(self) -> int:
        """Counted but not located (past ``keep``)."""
        return self.count - len(self.kept)


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


def _parse_json_line(line: str) -> ExportTraceServiceRequest:
    tree = json.loads(line)
    if not isinstance(tree, dict):
        raise ValueError(f"expected a JSON object, got {type(tree).__name__}")
    request = ExportTraceServiceRequest()
    json_format.ParseDict(_ids(tree, _hex_to_base64), request, ignore_unknown_fields=True)
    return request


def _json_requests(
    path: Path, stream: io.BufferedReader, bad: BadSink
) -> Iterator[tuple[str, ExportTraceServiceRequest]]:
    for number, raw in enumerate(stream, start=1):
        line = raw.strip()
        if not line:
            continue
        try:
            request = _parse_json_line(line.decode("utf-8"))
        except RecursionError:
            problem = "not an OTLP/JSON trace request (nested too deep)"
            bad.append(BadInput(f"{path}:{number}", problem))
        except (ValueError, json_format.ParseError, UnicodeDecodeError) as exc:
            problem = f"not an OTLP/JSON trace request ({_detail(exc)})"
            bad.append(BadInput(f"{path}:{number}", problem))
        else:
            yield f"{path}:{number}", request


def _proto_requests(
    path: Path, stream: io.BufferedReader, bad: BadSink
) -> Iterator[tuple[str, ExportTraceServiceRequest]]:
    offset = 0
    while True:
        prefix = stream.read(4)
        if not prefix:
            return
        if len(prefix) < 4:
            bad.append(BadInput(f"{path}@{offset}", "truncated length prefix"))
            return
        (size,) = struct.unpack(">I", prefix)
        if size > _MAX_MESSAGE:
            bad.append(BadInput(f"{path}@{offset}", f"message length {size} is implausible"))
            return
        body = stream.read(size)
        if len(body) < size:
            bad.append(
                BadInput(f"{path}@{offset}", f"truncated message ({len(body)}/{size} bytes)")
            )
            return
        try:
            request = _parse_message(body)
        except RecursionError:
            bad.append(BadInput(f"{path}@{offset}", "not a trace request (nested too deep)"))
        except (
            DecodeError,
            ValueError,
            json_format.ParseError,
            zstandard.ZstdError,
            OSError,
            EOFError,
            zlib.error,
        ) as exc:
            bad.append(BadInput(f"{path}@{offset}", f"not a trace request ({_detail(exc)})"))
        else:
            yield f"{path}@{offset}", request
        offset += 4 + size


def _parse_message(body: bytes) -> ExportTraceServiceRequest:
    """One length-prefixed message: protobuf, or — as a Collector with ``compression`` set
    writes every message, in json or proto format — a compressed frame of either."""
    if body[:4] == _ZSTD:
        reader = zstandard.ZstdDecompressor().stream_reader(body, read_across_frames=True)
        body = _bounded(reader.read(_MAX_MESSAGE + 1))
    elif body[:2] == _GZIP:
        body = _bounded(zlib.decompressobj(wbits=31).decompress(body, _MAX_MESSAGE + 1))
    else:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        return request
    if body.lstrip()[:1] == b"{":
        return _parse_json_line(body.decode("utf-8"))
    request = ExportTraceServiceRequest()
    request.ParseFromString(body)
    return request


def _bounded(data: bytes) -> bytes:
    """Decompressed ``data`` (read up to one byte past the limit), refused past the message
    size limit: a compression bomb."""
    if len(data) > _MAX_MESSAGE:
        raise ValueError(f"decompresses to more than {_MAX_MESSAGE} bytes")
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
) -> Iterator[tuple[str, ExportTraceServiceRequest]]:
    """Every trace request in ``paths`` with its location (``file:line`` or ``file@offset``), in
    order, streaming (one line or message in memory at a time). ``format``: ``json``, ``proto``
    or ``auto`` (by the first byte: ``{`` is JSON); gzip and zstd files are decompressed first.
    Unreadable input is appended to ``bad`` and skipped (a corrupt compressed stream: the rest of
    that file); a missing file is a ValueError. ``progress`` follows the bytes read."""
    if format not in ("auto", "json", "proto"):
        raise ValueError(f"format must be json, proto or auto, got {format!r}")
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
            try:
                yield from _file_requests(path, stream, bad, format)
            except (OSError, EOFError, zlib.error, zstandard.ZstdError) as exc:
                problem = f"unreadable compressed data ({_detail(exc)})"
                bad.append(BadInput(str(path), problem))
            if progress is not None:
                progress._before += path.stat().st_size
                progress._stream = None


def _file_requests(
    path: Path, stream: io.BufferedReader, bad: BadSink, format: str
) -> Iterator[tuple[str, ExportTraceServiceRequest]]:
    kind = format
    if kind == "auto":
        first = stream.peek(1)[:1]
        kind = "json" if first in (b"{", b" ", b"\n", b"\r", b"\t", b"") else "proto"
    if kind == "json":
        yield from _json_requests(path, stream, bad)
    else:
        yield from _proto_requests(path, stream, bad)


def read_requests(
    paths: Sequence[str | Path],
    bad: BadSink,
    *,
    format: str = "auto",
    progress: ReadProgress | None = None,
) -> Iterator[ExportTraceServiceRequest]:
    """``located_requests`` without the locations."""
    for _, request in located_requests(paths, bad, format=format, progress=progress):
        yield request


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
