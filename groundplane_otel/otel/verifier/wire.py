"""How many spans an OTLP ``ExportTraceServiceRequest`` holds, read from its protobuf wire
format without decoding it: for a request refused for its size, whose spans are counted
without building them in memory.

Only the three enclosing levels are walked (request → ``resource_spans`` → ``scope_spans`` →
``spans``); every span's bytes are stepped over by their length. The walk stops, answering
None (the count is unknown), on bytes that are not such a request or past ``max_fields`` fields
(the time the count may take is bounded too).
"""

from __future__ import annotations

__all__ = ["MAX_FIELDS", "span_count"]

MAX_FIELDS = 200_000  # fields walked at most (a fraction of a second); past them: unknown
_RESOURCE_SPANS = 1  # ExportTraceServiceRequest.resource_spans
_SCOPE_SPANS = 2  # ResourceSpans.scope_spans
_SPANS = 2  # ScopeSpans.spans
_LEN = 2


class _Malformed(Exception):
    pass


def span_count(data: bytes, max_fields: int = MAX_FIELDS) -> int | None:
    """The spans in the serialized request ``data``, or None when that cannot be told: the
    bytes are no such request, or it has more than ``max_fields`` fields on the levels
    walked."""
    budget = [max_fields]
    try:
        spans = 0
        for _, start, end in _fields(data, 0, len(data), _RESOURCE_SPANS, budget):
            for _, inner, stop in _fields(data, start, end, _SCOPE_SPANS, budget):
                spans += len(_fields(data, inner, stop, _SPANS, budget))
    except _Malformed:
        return None
    return spans


def _fields(
    data: bytes, at: int, end: int, wanted: int, budget: list[int]
) -> list[tuple[int, int, int]]:
    """The length-delimited fields numbered ``wanted`` in ``data[at:end]``: (number, start,
    end) of each one's bytes; every other field is stepped over."""
    found: list[tuple[int, int, int]] = []
    while at < end:
        budget[0] -= 1
        if budget[0] < 0:
            raise _Malformed("too many fields")
        key, at = _varint(data, at, end)
        number, kind = key >> 3, key & 7
        if kind == _LEN:
            size, at = _varint(data, at, end)
            if at + size > end:
                raise _Malformed("truncated")
            if number == wanted:
                found.append((number, at, at + size))
            at += size
        elif kind == 0:
            _, at = _varint(data, at, end)
        elif kind == 1:
            at += 8
        elif kind == 5:
            at += 4
        else:  # groups (deprecated) or no wire type at all
            raise _Malformed(f"wire type {kind}")
    if at != end:
        raise _Malformed("truncated")
    return found


def _varint(data: bytes, at: int, end: int) -> tuple[int, int]:
    value, shift = 0, 0
    while at < end:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
        if shift > 63:
            break
    raise _Malformed("bad varint")
