"""Recorded traces -> runs: what each agent run called (tool results) and answered.

Spans arrive in any order over any number of requests; they are grouped by trace in replay's
own bounded buffer (``replay.assemble``: a trace is turned into a run once ``decision_wait``
more spans have been read since its last one, when the buffer is full, or at the end of the
input; spans with unusable ids are told to ``unreadable`` with their location and left out).
Two different spans with one id make the trace ambiguous: it is told and not used. What a
span *means* is read by the engine's own readers: tool calls and their results
(``capture.read_tool_call``, ``read_arguments``, ``capture.parse_tool_result``), answers
(``output.read_output``, of the spans the guard's own rule says are model calls:
``spans.is_llm``, but for a LangGraph node's span, ``spans.is_graph_node``, which holds the
graph's state), agent names (``spans.agent_names``, ``spans.langchain_agent``; the LangGraph
graph of an answer known only by its span name: ``spans.graph_name``). A tool span whose result
the app recorded in code (the ``tool`` decorator, ``call_and_record``) is read like any other: the
readers leave its ``groundplane.fact.source`` mark out (``records.replayable_attributes``), so
its result is the fact when content capture put it on the span, as in replay.

This module is the one place suggest reads recorded spans (``_span_view`` adapts an OTLP span):
switching to a faster reader changes only it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine import (
    OutputRead,
    agent_names,
    graph_name,
    is_graph_node,
    is_llm,
    langchain_agent,
    parse_tool_result,
    read_arguments,
    read_output,
    read_tool_call,
)
from groundplane_otel.otel.config import Limits
from groundplane_otel.otel.replay.assemble import Assembler, PendingTrace
from groundplane_otel.otel.replay.records import RecordedSpan
from groundplane_otel.otel.replay.unreadable import BadInput, BadSink

__all__ = ["Answer", "RecordedTrace", "RunReader", "ToolResult"]

MAX_ANSWERS_PER_RUN = 16  # outputs of one boundary kept from one run (the rest counted)
MAX_ANCESTORS = 256  # how far up an answer's agent name is looked for
MAX_NAMED_PER_RUN = 16  # distinct (agent, boundary name) pairs kept from one run


@dataclass(frozen=True, slots=True)
class ToolResult:
    """One tool call of a run: the tool, its arguments, the parsed result (None: not
    captured or unparseable) and whether it is a retrieval."""

    tool: str
    arguments: dict[str, Any]
    payload: Any
    retrieval: bool


@dataclass(frozen=True, slots=True)
class Answer:
    """One output of a run: who answered (``by``: ("agent_name" | "span_name", name)), the
    read, and, for an answer known only by its span name, the LangGraph graph it ran in
    (OpenInference LangChain: ``graph``, which no boundary can match on)."""

    by: tuple[str, str]
    read: OutputRead
    graph: str | None = None


@dataclass(slots=True)
class RecordedTrace:
    """One trace: its id (hex), its tool results and its answers, in time order, and the
    boundaries its spans name (``groundplane.boundary``, with the agent of the naming span): a
    guard that was on when it was recorded wrote them — on the answer's span, or on the agent's
    or guardrail's span when an adapter ran the checks — and replay matches them by name."""

    trace_id: str
    tools: list[ToolResult] = field(default_factory=list)
    answers: list[Answer] = field(default_factory=list)
    named: list[tuple[tuple[str, str], str]] = field(default_factory=list)
    without_content: bool = False  # a tool result or an answer was not captured


@dataclass(slots=True)
class ReadCounts:
    """What reading found, for the report and the "nothing to infer" messages."""

    requests: int = 0
    spans: int = 0
    bad_spans: int = 0
    traces: int = 0
    ambiguous_traces: int = 0
    dropped_spans: int = 0
    tool_spans: int = 0
    tool_results: int = 0  # tool spans whose result was captured and parsed
    llm_outputs: int = 0  # LLM spans with an answer
    outputs_without_content: int = 0  # LLM spans that answered but carry no content
    answers_dropped: int = 0


@dataclass(slots=True)
class _SpanView:
    name: str
    attributes: dict[str, Any]
    parent: bytes
    end: int


def _span_view(span: RecordedSpan) -> _SpanView:
    """A recorded span's name, attributes (without what a recording guard wrote, as the
    readers leave them: ``replayable_attributes``), parent id and end time."""
    return _SpanView(span.name, span.attributes, span.parent_span_id, span.end_time)


class RunReader:
    """Feed requests (``feed``), then ``finish``; each complete trace goes to ``emit`` as a Run.
    Traces are assembled by replay's own buffer (``replay.assemble``), counted in ``counts``."""

    def __init__(
        self,
        emit: Callable[[RecordedTrace], None],
        unreadable: BadSink,
        *,
        limits: Limits | None = None,
        decision_wait: int = 10_000,
        max_traces: int = 10_000,
        max_spans_per_trace: int = 10_000,
    ) -> None:
        self.emit = emit
        self.unreadable = unreadable
        self.limits = limits or Limits()
        self.counts = ReadCounts()
        self.assembler = Assembler(
            self._decide,
            self.counts,
            unreadable,
            decision_wait=decision_wait,
            max_traces=max_traces,
            max_spans_per_trace=max_spans_per_trace,
        )

    def feed(
        self,
        request: ExportTraceServiceRequest | Sequence[RecordedSpan],
        location: str = "request",
    ) -> None:
        """One request's spans, as ``Replayer.feed`` takes them (a protobuf request or the
        ``RecordedSpan``s a reader made of it)."""
        self.assembler.feed(request, location)

    def finish(self) -> None:
        """End of input: every buffered trace becomes a run."""
        self.assembler.finish()

    def _decide(self, trace_id: bytes, trace: PendingTrace, early: bool) -> None:
        self.counts.traces += 1
        spans, _, conflicts = trace.distinct()
        if conflicts:
            self.counts.ambiguous_traces += 1
            problem = f"span id {conflicts[0].hex()} used by different spans: trace not used"
            self.unreadable.append(BadInput(f"trace {trace_id.hex()}", problem))
            return
        views = {span_id: _span_view(span) for span_id, span in spans.items()}
        self.emit(self.run_of(trace_id.hex(), views))

    def run_of(self, trace_id: str, views: dict[bytes, _SpanView]) -> RecordedTrace:
        """The run a trace's spans record: tool results and answers, in end-time order."""
        run = RecordedTrace(trace_id)
        counts, limits = self.counts, self.limits
        answers: list[tuple[int, Answer]] = []
        for view in sorted(views.values(), key=lambda item: item.end):
            call = read_tool_call(view.attributes, view.name)
            if call is not None:
                counts.tool_spans += 1
                run.without_content = run.without_content or call.result is None
                payload = _payload(call.result, limits)
                counts.tool_results += payload is not None
                arguments = read_arguments(call.arguments, limits)
                run.tools.append(ToolResult(call.tool, arguments, payload, call.retrieval))
                continue
            named = view.attributes.get(sc.BOUNDARY)
            if isinstance(named, str) and named:
                pair = (_answered_by(view, views)[0], named)
                if pair not in run.named and len(run.named) < MAX_NAMED_PER_RUN:
                    run.named.append(pair)
            if not is_llm(view.name, view.attributes) or is_graph_node(view.attributes):
                continue  # a LangGraph node's span (kind AGENT) holds the state, no answer
            read = read_output(view.attributes, limits)
            if read.missing_content:
                counts.outputs_without_content += 1
                run.without_content = True
                continue
            if read.status == "output" or read.as_text().status == "output":
                counts.llm_outputs += 1
                by, graph = _answered_by(view, views)
                answers.append((view.end, Answer(by, read, graph)))
        kept: dict[tuple[str, str], int] = {}
        for _, answer in answers:
            if kept.get(answer.by, 0) >= MAX_ANSWERS_PER_RUN:
                counts.answers_dropped += 1
                continue
            kept[answer.by] = kept.get(answer.by, 0) + 1
            run.answers.append(answer)
        return run


def _payload(raw: Any, limits: Limits) -> Any:
    """A tool result parsed as the engine parses it (a serialized LangChain ToolMessage
    unwrapped), or None when it was not captured or cannot be read."""
    if raw is None:
        return None
    parsed, _ = parse_tool_result(raw, limits)
    return parsed.value if parsed.ok else None


def _ancestors(view: _SpanView, views: Mapping[bytes, _SpanView]) -> Iterator[_SpanView]:
    seen: set[bytes] = set()
    parent = view.parent
    while parent and parent not in seen and len(seen) < MAX_ANCESTORS:
        seen.add(parent)
        above = views.get(parent)
        if above is None:
            return
        yield above
        parent = above.parent


def _answered_by(
    view: _SpanView, views: Mapping[bytes, _SpanView]
) -> tuple[tuple[str, str], str | None]:
    """The agent whose answer this is, named on the span or an ancestor (``gen_ai.agent.name``,
    OpenInference's ``agent.name``, LangChain's ``lc_agent_name`` metadata), else the span's
    name with the LangGraph graph it ran in (the graph's span, OpenInference LangChain)."""
    graph: str | None = None
    for candidate in (view, *_ancestors(view, views)):
        for name in agent_names(candidate.attributes):
            if isinstance(name, str) and name:
                return ("agent_name", name), None
        named = langchain_agent(candidate.attributes)
        if named is not None:
            return ("agent_name", named), None
        if graph is None:
            graph = graph_name(candidate.name, candidate.attributes)
    return ("span_name", view.name), graph
