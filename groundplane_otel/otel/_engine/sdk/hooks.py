"""The guard's per-span hooks on a known SDK: ``on_start``/``on_end`` closures built once per
guard (when ``sdk.sdk_layout()`` holds), bound on the guard's processor (``attach``), and the
hooks of a guard that was shut down (``detach``).

Riding on the provider's dispatch (``sdk.dispatch.ride``), the closures *are* the provider's
``on_start``/``on_end``: they hand the span to every registered processor, then do the guard's
work, so a span pays no call of its own for the guard. They read the SDK fields listed in
``sdk.FIELDS`` inline (``_parent``, ``_context``, ``_name``, ``_attributes._dict``,
``_span_processors``): no call per span.
"""

from __future__ import annotations

from collections.abc import Callable, Container, Mapping
from types import MethodType
from typing import TYPE_CHECKING, Any, Protocol

from opentelemetry.attributes import BoundedAttributes
from opentelemetry.context import Context
from opentelemetry.sdk.trace import SynchronousMultiSpanProcessor

from groundplane_otel.otel._engine.sdk import span_attributes

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import ReadableSpan, Span

__all__ = ["NAMES_REMEMBERED", "NO_PROCESSORS", "Driven", "attach", "detach", "fast_hooks"]


class Door(Protocol):
    """What the hooks read of the engine (``Engine``, through the driver): the requests and
    roots of the store (read inline: a span that starts no request pays no call), the traces
    with lineage, the names and keys that make a span worth a call, and its entry points."""

    requests: Container[int]
    roots: dict[int, Any]
    roots_limit: int
    shared: Container[int]
    traces: dict[int, None]
    boundaries: Mapping[str, Any]
    by_tool: Mapping[str, Any]
    llm_names: frozenset[str]
    chain_attr: str
    llm_keys: frozenset[str]
    llm_prefixes: tuple[str, ...]
    tool_keys: frozenset[str]

    def root_started(self, trace_id: int, span_id: int) -> None: ...
    def joined(self, span_id: int, parent_id: int) -> None: ...
    def parent_lineage(self, parent_context: Context | None) -> tuple[Any, ...] | None: ...
    def tool_ended(
        self, name: str, attributes: Mapping[str, Any], trace_id: int, span_id: int, request: Any
    ) -> None: ...


class Driven(Protocol):
    """The driver the hooks belong to (the live ``GroundplaneSpanProcessor``): its engine's
    door, its ``enforce()`` hand-over and swallow watch, and the steps it takes itself."""

    engine: Door
    handoff: Any
    swallow: Any
    known_layout: bool

    def on_start(self, span: Span, parent_context: Context | None = None) -> None: ...
    def on_end(self, span: ReadableSpan) -> None: ...
    def shutdown(self) -> None: ...
    def _internal_error(self, where: str, *, reraise: bool = True) -> None: ...
    def _root_ended(self, trace_id: int, span_id: int, request: Any) -> None: ...
    def _started(
        self,
        span: Span,
        name: str,
        attributes: Mapping[str, Any],
        trace_id: int,
        inherited: tuple[Any, ...] | None,
    ) -> None: ...


NAMES_REMEMBERED = 1024  # span names known not to be LLM-like (past that: computed)
# The owner of hooks that hand spans to no one (an empty dispatcher: its processors are none).
NO_PROCESSORS = SynchronousMultiSpanProcessor()  # type: ignore[no-untyped-call]

Hook = Callable[..., None]


def fast_hooks(processor: Driven) -> tuple[Hook, Hook, Callable[[], None]]:
    """``on_start``/``on_end`` as closures over what they read, on the SDK span's own
    fields (``sdk.FIELDS``, as ``sdk_layout()`` found them): the same decisions as the generic
    hooks, at a fraction of the cost for the spans the guard ignores (no attribute lookups on
    ``processor``, no property calls). A plain dict in ``_attributes`` (
    OpenInference's pydantic-ai processor puts one on SDK spans) is read as it is, any other
    replacement through the public API.

    The hooks take their owner first, as methods do: an SDK ``SynchronousMultiSpanProcessor``,
    whose processors each first gets the span, inline (the provider's dispatch, on which
    ``dispatch.ride`` makes them the class's methods; ``NO_PROCESSORS`` otherwise). The third
    closure stops the guard's part (the hand-over goes on).

    While a trace with two requests is live (``store.shared``), a span's end takes the generic
    hook (each span maps to its request there); the generic start needs nothing of it here."""
    engine = processor.engine
    lineage, chain_attr = engine.traces, engine.chain_attr
    roots, requests, shared = engine.roots, engine.requests, engine.shared
    roots_limit, root_started = engine.roots_limit, engine.root_started
    joined, parent_lineage, tool_ended = engine.joined, engine.parent_lineage, engine.tool_ended
    handoff = processor.handoff  # this guard's enforce() scopes
    entered = handoff.entered  # empty until an enforce() scope was entered for this guard
    awaited = handoff.awaited  # traces an enforce() scope waits for
    llm_disjoint, tool_disjoint = engine.llm_keys.isdisjoint, engine.tool_keys.isdisjoint
    guarded, by_tool = bool(engine.boundaries), bool(engine.by_tool)
    bounded = BoundedAttributes
    pending = processor.swallow.pending  # blocks waiting for their run (mutated in place)
    generic_end = type(processor).on_end
    plain: set[str] = set()  # span names known not to be LLM-like (bounded)
    prefixes, llm_names = engine.llm_prefixes, engine.llm_names
    guarding = True

    def plain_name(name: str) -> bool:
        """Is ``name`` not an LLM-like span name? Remembered when so (``NAMES_REMEMBERED``)."""
        if name.startswith(prefixes) or name in llm_names:
            return False
        if len(plain) < NAMES_REMEMBERED:
            plain.add(name)
        return True

    def on_start(owner: Any, span: Any, parent_context: Context | None = None) -> None:
        for registered in owner._span_processors:
            registered.on_start(span, parent_context=parent_context)
        if not guarding:
            return
        try:
            parent = span._parent
            inherited = None
            if parent is None or parent[2]:  # a local root: TraceStore.root_started, inlined
                context = span._context
                trace_id, span_id = context[0], context[1]
                if roots.setdefault(trace_id, span_id) != span_id or len(roots) > roots_limit:
                    root_started(trace_id, span_id)  # a second root, or prune: the store decides
                if entered and handoff.current_scopes():
                    handoff.bind(trace_id)
            elif shared or lineage:
                trace_id = parent[0]
                if shared and trace_id in shared:  # two requests in one trace: whose span?
                    joined(span._context[1], parent[1])
                if lineage and trace_id in lineage:  # a guardable span started in this trace
                    inherited = parent_lineage(parent_context)
            if not guarded:
                return
            name, attributes = span._name, span._attributes
            if type(attributes) is not bounded:  # a plain dict is read as it is
                if type(attributes) is not dict:  # replaced by another processor
                    attributes = span_attributes(span)
            else:
                attributes = attributes._dict
            if (name in plain or plain_name(name)) and llm_disjoint(attributes):
                if inherited:
                    setattr(span, chain_attr, inherited)
                return
            processor._started(span, name, attributes, span._context[0], inherited)
        except Exception:
            processor._internal_error("on_start")

    def on_end(owner: Any, span: Any) -> None:
        try:
            for registered in owner._span_processors:
                registered.on_end(span)
        except BaseException:  # another processor raised: the guard's part still runs
            generic_end(processor, span)
            raise
        if not guarding:
            return
        if shared:  # a trace with two requests is live: each span's request is looked up
            generic_end(processor, span)
            return
        try:
            if by_tool:
                attributes = span._attributes
                if type(attributes) is not bounded:  # a plain dict is read as it is
                    if type(attributes) is not dict:  # replaced by another processor
                        attributes = span_attributes(span)
                else:
                    attributes = attributes._dict
                if not tool_disjoint(attributes):
                    context = span._context
                    trace_id = context[0]
                    tool_ended(span._name, attributes, trace_id, context[1], trace_id)
            if pending:  # a refusal raised in this process waits for its run
                processor.swallow.ended(span)
            parent = span._parent
            if parent is None or parent[2]:  # a local root: TraceStore.root_ended
                context = span._context
                trace_id = context[0]
                if roots.get(trace_id) == context[1] and trace_id not in requests:
                    del roots[trace_id]  # its only live root, no facts held: nothing to lock
                    if lineage:
                        lineage.pop(trace_id, None)
                    if trace_id in awaited:
                        handoff.release(trace_id)
                    return
                processor._root_ended(trace_id, context[1], trace_id)
        except Exception:
            processor._internal_error("on_end")

    def stop() -> None:
        nonlocal guarding
        guarding = False

    return on_start, on_end, stop


def attach(processor: Driven) -> Callable[[], None]:
    """The fast hooks become ``processor``'s own ``on_start``/``on_end`` (per-instance methods
    of an owner with no processors: a provider the guard does not ride calls them); returns the
    closure that stops them."""
    on_start, on_end, stop = fast_hooks(processor)
    processor.on_start = MethodType(on_start, NO_PROCESSORS)  # type: ignore[method-assign]
    processor.on_end = MethodType(on_end, NO_PROCESSORS)  # type: ignore[method-assign]
    return stop


def detach(processor: Driven, stop: Callable[[], None]) -> None:
    """``processor`` was shut down: its fast hooks stop, and its hooks do nothing."""
    stop()
    processor.on_start, processor.on_end = ignore_start, ignore_end  # type: ignore[method-assign]


def ignore_start(span: Any, parent_context: Context | None = None) -> None:
    """The hook of a guard that was shut down."""


def ignore_end(span: Any) -> None:
    """The hook of a guard that was shut down."""
