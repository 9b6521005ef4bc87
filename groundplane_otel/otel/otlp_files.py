"""Recorded traces in the OpenTelemetry Collector's ``file`` exporter formats, both ways.

- ``json`` (the default): one ``ExportTraceServiceRequest`` per line in OTLP/JSON — protobuf's
  JSON mapping, except that trace and span ids are hex strings, not base64.
- ``proto``: a stream of ``ExportTraceServiceRequest`` messages, each prefixed by its length as a
  4-byte big-endian unsigned integer.

Parsing uses ``opentelemetry-proto``. A line or message that cannot be read is reported with
its location (file, line or byte offset) and skipped, never a crash; every echoed value is capped.
``OtlpFileExporter`` writes the ``json`` format from the SDK (the demo records itself with it).
"""

from __future__ import annotations

import base64
import json
import struct
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from google.protobuf import json_format  # type: ignore[import-untyped]
from google.protobuf.message import DecodeError  # type: ignore[import-untyped]
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export import SpanExporter, SpanExportResult

__all__ = ["BadInput", "OtlpFileExporter", "ReadProgress", "read_requests", "request_to_json"]

_ID_KEYS = frozenset({"traceId", "spanId", "parentSpanId"})
_MAX_MESSAGE = 64 * 1024 * 1024  # a length prefix above this is a corrupt or foreign file
_ECHO = 80


@dataclass(frozen=True, slots=True)
class BadInput:
    """One unreadable line or message: where, and what was wrong (short, content capped)."""

    location: str
    problem: str

    def __str__(self) -> str:
        return f"{self.location}: {self.problem}"


def _cap(text: str) -> str:
    return text if len(text) <= _ECHO else text[:_ECHO] + "…"


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


def _json_requests(path: Path, stream: IO[bytes], bad: list[BadInput]) -> Iterator[Any]:
    for number, raw in enumerate(stream, start=1):
        line = raw.strip()
        if not line:
            continue
        try:
            yield _parse_json_line(line.decode("utf-8"))
        except (ValueError, json_format.ParseError, UnicodeDecodeError) as exc:
            detail = _cap(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            bad.append(BadInput(f"{path}:{number}", f"not an OTLP/JSON trace request ({detail})"))


def _proto_requests(path: Path, stream: IO[bytes], bad: list[BadInput]) -> Iterator[Any]:
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
        request = ExportTraceServiceRequest()
        try:
            request.ParseFromString(body)
        except DecodeError as exc:
            bad.append(BadInput(f"{path}@{offset}", f"not a trace request ({_cap(str(exc))})"))
        else:
            yield request
        offset += 4 + size


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


def read_requests(
    paths: Sequence[str | Path],
    bad: list[BadInput],
    *,
    format: str = "auto",
    progress: ReadProgress | None = None,
) -> Iterator[ExportTraceServiceRequest]:
    """Every trace request in ``paths``, in order, streaming (one line or message in memory at
    a time). ``format``: ``json``, ``proto`` or ``auto`` (by the first byte: ``{`` is JSON).
    Unreadable input is appended to ``bad`` and skipped; a missing file is a ValueError.
    ``progress`` follows the bytes read."""
    for name in paths:
        path = Path(name)
        if not path.is_file():
            raise ValueError(f"{path}: no such file")
        with path.open("rb") as stream:
            if progress is not None:
                progress._stream = stream
            kind = format
            if kind == "auto":
                first = stream.read(1)
                stream.seek(0)
                kind = "json" if first in (b"{", b" ", b"\n", b"\r", b"\t", b"") else "proto"
            if kind == "json":
                yield from _json_requests(path, stream, bad)
            elif kind == "proto":
                yield from _proto_requests(path, stream, bad)
            else:
                raise ValueError(f"format must be json, proto or auto, got {format!r}")
            if progress is not None:
                progress._before += path.stat().st_size
                progress._stream = None


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
