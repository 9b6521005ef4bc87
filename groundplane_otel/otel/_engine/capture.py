"""Span -> fact: read a tool call from a finished tool span and record the facts it feeds.

Three conventions are read: GenAI ``execute_tool`` spans, OpenInference TOOL spans and legacy
Traceloop entities. A fact declaration (FactSpec) says which tool, and optionally which
arguments, feed which fact name and how the result becomes a Ranking, Table, Domain or value.

Retrieval spans are read as tool calls too (``kind: documents`` facts): GenAI ``retrieval``
spans (the tool is ``gen_ai.data_source.id``, the result ``gen_ai.retrieval.documents``, the
arguments the query text and top_k) and OpenInference RETRIEVER spans (the tool is the span
name, the result the ``retrieval.documents.{i}.document.id|content|score`` attributes, the
argument ``input.value`` as the query).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from itertools import chain
from typing import Any

from groundplane_otel._copy import copy_in
from groundplane_otel._frozen import draft_class, finish
from groundplane_otel._keys import strict_equal
from groundplane_otel._provenance import new_provenance
from groundplane_otel.checks._base import walk_path
from groundplane_otel.documents import documents_from
from groundplane_otel.facts import Domain, Provenance, Table
from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine.payload import (
    Decoded,
    Parsed,
    as_parsed,
    decode_payload,
    parse_payload,
)
from groundplane_otel.otel._engine.sizing import text_bound
from groundplane_otel.otel._engine.store import RequestKey, TraceStore, call_of, fact_kind
from groundplane_otel.otel.config import FactSpec, Limits
from groundplane_otel.ranking import ranking_from_columns

__all__ = [
    "FactCapture",
    "ToolCall",
    "build_fact",
    "parse_tool_result",
    "read_arguments",
    "read_tool_call",
]


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A tool call as a span describes it; ``arguments``/``result`` are raw attribute values
    (None when the instrumentation did not capture content)."""

    source: str
    tool: str
    call_id: str | None
    arguments: Any
    result: Any
    retrieval: bool = False


_ToolCallDraft = draft_class(ToolCall)


def _tool_call(
    source: str,
    tool: str,
    call_id: str | None,
    arguments: Any,
    result: Any,
    retrieval: bool = False,
) -> ToolCall:
    """``ToolCall(...)``, built cheaply (``_frozen``)."""
    draft = _ToolCallDraft()
    draft.source = source
    draft.tool = tool
    draft.call_id = call_id
    draft.arguments = arguments
    draft.result = result
    draft.retrieval = retrieval
    return finish(draft, ToolCall)


def _str(value: object) -> str | None:
    return value if isinstance(value, str) and value else None


OI_REDACTED = "__REDACTED__"  # OpenInference TraceConfig(hide_inputs/hide_outputs=True)


def _shown(value: Any) -> Any:
    """An OpenInference value, None when its TraceConfig hid it (no content, not a result)."""
    return None if value == OI_REDACTED else value


# The keys that make a span a tool call besides its operation (execute_tool, retrieval).
_TOOL_MARKERS = frozenset(
    {sc.GEN_AI_TOOL_NAME, sc.OI_SPAN_KIND, sc.TRACELOOP_ENTITY_OUTPUT, sc.TRACELOOP_SPAN_KIND}
)
_TOOL_OPERATIONS = (sc.OP_EXECUTE_TOOL, sc.OP_RETRIEVAL)  # a tuple: a value may be unhashable


def read_tool_call(attributes: Mapping[str, Any], span_name: str) -> ToolCall | None:
    """The tool call a span records, or None when it is not a tool span."""
    operation = attributes.get(sc.GEN_AI_OPERATION_NAME)  # read once (most spans: not a tool)
    if operation not in _TOOL_OPERATIONS and _TOOL_MARKERS.isdisjoint(attributes):
        return None  # the usual other span (an agent's, a model call's): one test, no reads
    tool = attributes.get(sc.GEN_AI_TOOL_NAME)
    if (isinstance(tool, str) and tool) or operation == sc.OP_EXECUTE_TOOL:
        if not isinstance(tool, str) or not tool:
            tool = span_name.partition(" ")[2] or span_name
        call_id = attributes.get(sc.GEN_AI_TOOL_CALL_ID)  # ``_str`` inlined (every tool span)
        return _tool_call(
            "genai",
            tool,
            call_id if isinstance(call_id, str) and call_id else None,
            attributes.get(sc.GEN_AI_TOOL_CALL_ARGUMENTS),
            attributes.get(sc.GEN_AI_TOOL_CALL_RESULT),
        )
    kind = attributes.get(sc.OI_SPAN_KIND)
    if kind == sc.OI_KIND_TOOL:
        return _tool_call(
            "openinference",
            _str(attributes.get(sc.OI_TOOL_NAME)) or span_name,
            _str(attributes.get(sc.OI_TOOL_ID)),
            _shown(attributes.get(sc.OI_INPUT_VALUE)),
            _shown(attributes.get(sc.OI_OUTPUT_VALUE)),
        )
    if sc.TRACELOOP_ENTITY_OUTPUT in attributes or attributes.get(sc.TRACELOOP_SPAN_KIND) == "tool":
        return _tool_call(
            "traceloop",
            _str(attributes.get(sc.TRACELOOP_ENTITY_NAME)) or span_name,
            None,
            attributes.get(sc.TRACELOOP_ENTITY_INPUT),
            attributes.get(sc.TRACELOOP_ENTITY_OUTPUT),
        )
    if operation != sc.OP_RETRIEVAL and kind != sc.OI_KIND_RETRIEVER:
        return None  # the usual other span (an agent's, a model call's): no call made
    return _read_retrieval(attributes, span_name, operation, kind)


def _read_retrieval(
    attributes: Mapping[str, Any], span_name: str, operation: Any, kind: Any
) -> ToolCall | None:
    """A GenAI ``retrieval`` span or an OpenInference RETRIEVER span, as a tool call
    (``operation``, ``kind``: its ``gen_ai.operation.name`` and ``openinference.span.kind``,
    read by the caller)."""
    if operation == sc.OP_RETRIEVAL:
        arguments: dict[str, Any] = {}
        if isinstance(attributes.get(sc.GEN_AI_RETRIEVAL_QUERY_TEXT), str):
            arguments["query"] = attributes[sc.GEN_AI_RETRIEVAL_QUERY_TEXT]
        if sc.GEN_AI_RETRIEVAL_TOP_K in attributes:
            arguments["top_k"] = attributes[sc.GEN_AI_RETRIEVAL_TOP_K]
        tool = _str(attributes.get(sc.GEN_AI_DATA_SOURCE_ID))
        return _tool_call(
            "genai",
            tool or span_name.partition(" ")[2] or span_name,
            None,
            arguments,
            attributes.get(sc.GEN_AI_RETRIEVAL_DOCUMENTS),
            retrieval=True,
        )
    if kind == sc.OI_KIND_RETRIEVER:
        query = attributes.get(sc.OI_INPUT_VALUE)
        return _tool_call(
            "openinference",
            span_name,
            None,
            {"query": query} if isinstance(query, str) else {},
            _openinference_documents(attributes),
            retrieval=True,
        )
    return None


def _openinference_documents(attributes: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """``retrieval.documents.{i}.document.id|content|score`` as ``[{id, content, score}]``
    (None when the span carries no document attributes)."""
    prefix = sc.OI_RETRIEVAL_DOCUMENTS_PREFIX
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix):
            continue
        index, _, rest = key[len(prefix) :].partition(".document.")
        if index.isdigit() and rest in ("id", "content", "score"):
            found.setdefault(int(index), {})[rest] = value
    if not found:
        return None
    return [found.get(index, {}) for index in range(max(found) + 1)]


def _rows(data: Any, name: str) -> tuple[list[Mapping[str, Any]], bool]:
    """The rows of a result, and whether every row is a plain dict (tested at C speed)."""
    if isinstance(data, list):
        if set(map(type, data)) <= _DICT:
            return data, True
        if all(isinstance(row, Mapping) for row in data):
            return data, False
    raise ValueError(f"fact {name!r}: expected a list of objects (rows)")


_DICT = frozenset({dict})


def _cell(row: Mapping[str, Any], column: str, name: str) -> Any:
    if column not in row:
        raise ValueError(f"fact {name!r}: a row has no column {column!r}")
    return row[column]


def _cells(
    data: Any, columns: tuple[str, ...], name: str, from_text: bool = False
) -> list[list[Any]]:
    """Each of ``columns`` of the rows ``data`` holds, as a list: one pass a column for plain
    dict rows (a comprehension: its specialized dict subscript beats ``map(itemgetter)``); a
    row lacking a column is a ValueError naming the first such cell, in row order.
    ``from_text``: ``data`` was parsed from text, so its values are builtin (JSON or Python
    literal) types, of which only a dict reads a str column (any other raises TypeError): a
    read that succeeds is the plain-dict read, without the type pass."""
    if from_text and type(data) is list:
        try:
            return [[row[column] for row in data] for column in columns]
        except (KeyError, TypeError):
            pass  # not every row is a dict with every column: located below
    rows, plain = _rows(data, name)
    if plain:
        try:
            return [[row[column] for row in rows] for column in columns]
        except KeyError:
            pass  # a row lacks a column: name it below
    located = [[_cell(row, column, name) for column in columns] for row in rows]
    return [[cells[at] for cells in located] for at in range(len(columns))]


def _pair(
    data: Any, key: str, score: str, name: str, from_text: bool
) -> tuple[list[Any], list[Any]]:
    """``_cells`` of two columns (a ranking's names and scores): its text fast path spelled
    out for them (two comprehensions, not one over the columns: each is a call of its own)."""
    if from_text and type(data) is list:
        try:
            return [row[key] for row in data], [row[score] for row in data]
        except (KeyError, TypeError):
            pass  # not every row is a dict with both columns: located by ``_cells``
    names, scores = _cells(data, (key, score), name)
    return names, scores


def build_fact(spec: FactSpec, payload: Any, *, from_text: bool = False) -> Any:
    """The typed value ``spec`` makes of a parsed tool result (which it may keep: the caller
    hands it over); ValueError/TypeError when the result does not have the declared shape.
    ``from_text``: the payload was parsed from text (``_cells``). A value already of the
    declared kind (a ``Ranking`` recorded in code for a ranking fact, ...) is kept as it is."""
    if spec.path is None and spec.kind != "value" and fact_kind(payload) == spec.kind:
        return payload
    paths = spec.path if isinstance(spec.path, tuple) else (spec.path,)
    for path in paths:  # a tuple: the first path the result has
        if type(payload) is dict and type(path) is str and path in payload and "." not in path:
            data = payload[path]  # a one-key path (``walk_path`` inlined: the usual case)
            break
        found, data = walk_path(payload, path)
        if found:
            break
    else:
        if len(paths) == 1:
            raise ValueError(f"fact {spec.name!r}: path {spec.path!r} not found in the result")
        raise ValueError(f"fact {spec.name!r}: none of the paths {list(paths)} is in the result")
    if spec.kind == "value":
        return data
    if spec.kind == "documents":
        return documents_from(data, fact=spec.name, source=spec.tool)
    if spec.kind == "ranking":
        if spec.key and spec.score:
            names, scores = _pair(data, spec.key, spec.score, spec.name, from_text)
        elif isinstance(data, Mapping):
            names, scores = list(data), list(data.values())
        else:
            raise ValueError(f"fact {spec.name!r}: expected rows or a {{name: score}} object")
        return ranking_from_columns(
            spec.score or "score", names, scores, spec.higher_is_better, fact=spec.name
        )
    if spec.kind == "table":
        assert spec.key is not None
        rows, plain = _rows(data, spec.name)
        # The payload is the guard's own (parsed, or copied in): plain dict rows are used as
        # they are (a Table never mutates them), other mappings become dicts.
        table_rows: list[Any] = rows if plain else [dict(row) for row in rows]
        return Table(spec.key, tuple(table_rows), _columns(table_rows), spec.exhaustive)
    names = _cells(data, (spec.key,), spec.name, from_text)[0] if spec.key else data
    if isinstance(names, (str, Mapping)) or not isinstance(names, list):
        raise ValueError(f"fact {spec.name!r}: expected a list of names")
    return Domain(frozenset(names), spec.label)


def _columns(rows: list[Any]) -> tuple[str, ...]:
    """Every column of the rows, in order of first appearance (when no row has a key the first
    lacks — the usual case, tested at C speed — the first row's keys)."""
    if rows and len(set().union(*rows)) == len(rows[0]):
        return tuple(rows[0])
    return tuple(dict.fromkeys(chain.from_iterable(rows)))


def read_arguments(raw: Any, limits: Limits) -> dict[str, Any]:
    """A tool call's arguments as a dict: JSON text or a mapping (Traceloop's
    ``{"args": [...], "kwargs": {...}}`` unwrapped); anything else is no arguments."""
    if raw is None:
        return {}
    parsed = parse_payload(raw, max_bytes=limits.max_payload_bytes, max_depth=limits.max_depth)
    value = parsed.value if parsed.ok else None
    if isinstance(value, Mapping) and isinstance(value.get("kwargs"), Mapping) and "args" in value:
        value = value["kwargs"]  # Traceloop writes {"args": [...], "kwargs": {...}}
    return dict(value) if isinstance(value, Mapping) else {}


def parse_tool_result(
    result: Any,
    limits: Limits,
    *,
    length_limit: int | None = None,
    max_retained: int | None = None,
) -> tuple[Parsed, str | None]:
    """A tool span's result parsed as the engine records it — a serialized LangChain
    ``ToolMessage`` (OpenInference) unwrapped to its content — and that message's tool call id
    (None when there is none); shared by capture and ``suggest``."""
    decoded, call_id = _decode_tool_result(result, limits, length_limit, max_retained)
    return as_parsed(decoded), call_id


def _decode_tool_result(
    result: Any, limits: Limits, length_limit: int | None, max_retained: int | None
) -> tuple[Decoded | Parsed, str | None]:
    """``parse_tool_result`` as ``decode_payload`` answers: ``(value, size)`` when it is ok,
    else the ``Parsed`` saying why (capture reads the outcome once: no ok ``Parsed`` built)."""
    decoded = decode_payload(
        result, limits.max_payload_bytes, limits.max_depth, length_limit, max_retained
    )
    if isinstance(decoded, Parsed):
        return decoded, None
    value = decoded[0]
    # A ToolMessage is a dict with "type": tested here, one call less for any other result.
    message = _tool_message(value) if isinstance(value, dict) and "type" in value else None
    if message is None:
        return decoded, None
    content = decode_payload(message[0], limits.max_payload_bytes, limits.max_depth)
    return content, message[1]


def _tool_message(value: Any) -> tuple[Any, str | None] | None:
    """(content, tool call id) of a serialized LangChain ``ToolMessage`` — what OpenInference's
    LangChain instrumentation writes as a tool span's ``output.value`` — else None. ``value``
    is parsed (``parse_payload``): its objects are plain dicts."""
    if not isinstance(value, dict) or value.get("type") != "tool":
        return None
    data = value.get("data")
    if not isinstance(data, dict) or data.get("type") != "tool" or "content" not in data:
        return None
    return data["content"], _str(data.get("tool_call_id"))


def _uncut(documents: list[Any], length_limit: int) -> list[Any]:
    """A document content cut at the attribute length limit is not the document's content:
    it becomes "not captured" (None), so an anchor is never judged on half a text."""
    return [
        {**doc, "content": None}
        if isinstance(doc, dict)
        and isinstance(doc.get("content"), str)
        and len(doc["content"]) == length_limit
        else doc
        for doc in documents
    ]


def arguments_match(spec: FactSpec, arguments: Mapping[str, Any]) -> bool:
    return all(
        key in arguments and strict_equal(arguments[key], expected)
        for key, expected in spec.arguments.items()
    )


class FactCapture:
    """Records the facts a finished tool span feeds into its trace's registry."""

    def __init__(
        self, specs: tuple[FactSpec, ...], store: TraceStore, length_limit: int | None
    ) -> None:
        by_tool: dict[str, list[FactSpec]] = {}
        for spec in specs:
            by_tool.setdefault(spec.tool, []).append(spec)
        self.by_tool = {tool: tuple(group) for tool, group in by_tool.items()}
        # The tools some of whose specs filter by arguments (the others feed all their specs).
        self._filtering = frozenset(spec.tool for spec in specs if spec.arguments)
        self.store = store
        self.length_limit = length_limit
        # What one parsed result may retain at most (bigger is rejected before parsing).
        self._max_retained = min(store.limits.max_trace_bytes, store.limits.max_total_bytes)

    def specs_for(
        self, tool: str, arguments: Mapping[str, Any] | None = None
    ) -> tuple[FactSpec, ...]:
        """The FactSpecs ``tool`` feeds (with ``arguments``: those whose arguments match)."""
        specs = self.by_tool.get(tool, ())
        if arguments is None or tool not in self._filtering:
            return specs
        return tuple(spec for spec in specs if arguments_match(spec, arguments))

    def restricts(self, tool: str) -> bool:
        """Does ``tool`` feed a restricted fact? (Its result then never goes on a span the
        guard writes, whatever ``capture_content`` says.)"""
        return any(spec.restricted for spec in self.by_tool.get(tool, ()))

    def capture(self, call: ToolCall, request: RequestKey, trace_id: int, span_id: int) -> None:
        """Parse the result once and record every fact whose declaration matches the call,
        into ``request`` (the tool span's ``trace_id``/``span_id`` are the provenance)."""
        specs = self.by_tool.get(call.tool)
        if not specs or call.result is None:
            return
        limits = self.store.limits
        tool = call.tool
        arguments = {} if call.arguments is None else read_arguments(call.arguments, limits)
        if tool in self._filtering:
            specs = self.specs_for(tool, arguments)
            if not specs:
                return
        result = call.result
        length_limit = self.length_limit
        if call.retrieval and isinstance(result, list) and length_limit is not None:
            result = _uncut(result, length_limit)
        decoded, message_call_id = _decode_tool_result(
            result, limits, length_limit, self._max_retained
        )
        # ``%`` formats an int as hex in half the time a format spec takes (once per call).
        trace_hex, span_hex = "%032x" % trace_id, "%016x" % span_id  # noqa: UP031
        call_id = message_call_id or call.call_id
        provenance = new_provenance(tool, arguments, trace_hex, span_hex, call_id)
        if isinstance(decoded, Parsed):  # truncated, unparseable or rejected: counted
            self.record_parsed(
                specs, decoded, request=request, provenance=provenance, source=call.source
            )
            return
        value, size = decoded
        for spec in specs:
            self.record(
                spec,
                payload=value,
                request=request,
                provenance=provenance,
                source=call.source,
                text_bytes=size,
            )

    def record_given(
        self,
        request: RequestKey,
        fact: str | None,
        result: Any,
        *,
        provenance: Provenance,
        source: str,
    ) -> None:
        """Record a tool result handed over in code (``Guard.record_fact``): as each fact the
        tool's FactSpecs declare for its arguments (only ``fact`` when given), else as a value
        under ``fact`` (or the tool's name). A result that cannot be a fact is counted, and
        the checks that need it fail closed."""
        tool = provenance.tool or ""
        specs = [
            spec
            for spec in self.specs_for(tool, provenance.args)
            if fact is None or spec.name == fact
        ]
        name = fact or tool
        try:
            payload = copy_in(result, fact=name)
        except ValueError:  # NaN/inf or nesting too deep
            call = call_of(provenance)
            for spec_name, kind in [(s.name, s.kind) for s in specs] or [(name, "value")]:
                self.store.problem(
                    request, spec_name, "unparseable", kind=kind, source=source, call=call
                )
            return
        for spec in specs:
            self.record(
                spec, payload=payload, request=request, provenance=provenance, source=source
            )
        if not specs:
            self.store.record(request, name, payload, source=source, provenance=provenance)

    def record_parsed(
        self,
        specs: tuple[FactSpec, ...],
        parsed: Parsed,
        *,
        request: RequestKey,
        provenance: Provenance,
        source: str,
    ) -> None:
        """Record a parsed tool result as each fact of ``specs`` (those matching the call), or
        count it as what it is (truncated, unparseable, rejected) for each."""
        for spec in specs:
            if not parsed.ok:
                self.store.problem(
                    request,
                    spec.name,
                    parsed.status,
                    kind=spec.kind,
                    source=source,
                    call=call_of(provenance),
                )
                continue
            self.record(
                spec,
                payload=parsed.value,
                request=request,
                provenance=provenance,
                source=source,
                text_bytes=parsed.size,
            )

    def record(
        self,
        spec: FactSpec,
        *,
        payload: Any,
        request: RequestKey,
        provenance: Provenance,
        source: str,
        text_bytes: int = 0,
    ) -> str:
        """Build the typed value of ``spec`` and store it, accounted at the memory it retains
        (``text_bytes``: the size of the JSON text it was parsed from, whose ``text_bound`` is
        charged until a limit binds; else measured now); a mis-shaped result is
        unparseable."""
        if spec.restricted:  # before the value becomes readable: never visible unrestricted
            self.store.registry(request).restrict(spec.name)
        try:
            value = build_fact(spec, payload, from_text=text_bytes > 0)  # structured: size 0
        except (ValueError, TypeError):
            self.store.problem(
                request,
                spec.name,
                "unparseable",
                kind=spec.kind,
                source=source,
                call=call_of(provenance),
            )
            return "unparseable"
        return self.store.record(
            request,
            spec.name,
            value,
            source=source,
            provenance=provenance,
            bound=text_bound(text_bytes) if text_bytes else None,
            # parsed from text: a value of the declared kind (``build_fact``)
            kind=spec.kind if text_bytes else None,
        )
