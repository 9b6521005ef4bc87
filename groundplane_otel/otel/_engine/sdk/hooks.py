"""The guard's per-span hooks, one implementation: ``span_hooks`` builds the ``on_start``/
``on_end`` closures once per guard, over the engine's door (``Door``: the structural view of
``Engine`` they read; this package imports nothing of the engine) and the driver's steps
(``Driven``). ``attach`` binds them on the guard's processor, ``detach`` stops them when it
shuts down.

On a known SDK (``sdk.sdk_layout()``) they read the fields listed in ``sdk.FIELDS`` inline
(``_parent``, ``_context``, ``_name``, ``_attributes._dict``, ``_span_processors``): no call
per span. On any other SDK the same closures run on a ``PublicSpan``, the span read through
the public API into those fields: the reads are the only thing that differs. Riding on the
provider's dispatch (``sdk.dispatch.ride``, known SDKs only), the closures *are* the
provider's ``on_start``/``on_end``: they hand the span to every registered processor, then do
the guard's part, so a span pays no call of its own for the guard.
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

__all__ = [
    "NAMES_REMEMBERED",
    "NO_PROCESSORS",
    "Driven",
    "PublicSpan",
    "attach",
    "detach",
    "span_hooks",
]


class Door(Protocol):
    """What the hooks read of the engine (``Engine``, through the driver): the requests and
    roots of the store (read inline: a span that starts no request pays no call), the traces
    with lineage, the names and keys that make a span worth a call, and its entry points."""

    # Read-only to the hooks (properties: the engine's own fields, of any narrower type, fit).
    @property
    def requests(self) -> Container[Any]: ...
    @property
    def roots(self) -> dict[int, Any]: ...
    @property
    def roots_limit(self) -> int: ...
    @property
    def shared(self) -> Container[int]: ...
    @property
    def traces(self) -> dict[int, None]: ...
    @property
    def boundaries(self) -> Mapping[str, Any]: ...
    @property
    def by_tool(self) -> Mapping[str, Any]: ...
    @property
    def llm_names(self) -> frozenset[str]: ...
    @property
    def chain_attr(self) -> str: ...
    @property
    def llm_keys(self) -> frozenset[str]: ...
    @property
    def llm_prefixes(self) -> tuple[str, ...]: ...
    @property
    def tool_keys(self) -> frozenset[str]: ...

    def root_started(self, trace_id: int, span_id: int) -> None: ...
    def joined(self, span_id: int, parent_id: int) -> None: ...
    def parent_lineage(self, parent_context: Context | None) -> tuple[Any, ...] | None: ...
    def request_of_span(self, trace_id: int, span_id: int) -> Any: ...
    def tool_ended(
        self, name: str, attributes: Mapping[str, Any], trace_id: int, span_id: int, request: Any
    ) -> None: ...


class Driven(Protocol):
    """The driver the hooks belong to (the live ``GroundplaneSpanProcessor``): its engine's
    door, its ``enforce()`` hand-over and swallow watch, and the steps it takes itself."""

    @property
    def engine(self) -> Door: ...
    @property
    def handoff(self) -> Any: ...
    @property
    def swallow(self) -> Any: ...
    @property
    def known_layout(self) -> bool: ...

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


class PublicSpan:
    """A span of an SDK whose layout the hooks do not know (``sdk_layout()`` is False), read
    through the public span API into the fields the hooks read on an SDK span (``_parent``,
    ``_context``, ``_name``, ``_attributes``, of the same shapes): the hooks are one code on
    either. ``span`` is the span itself, what the guard's steps get. Its attributes are a plain
    dict (read as it is), a copy when the span's own are another mapping."""

    __slots__ = ("_attributes", "_context", "_name", "_parent", "span")
    _parent: tuple[int, int, bool] | None
    _context: tuple[int, int]

    def __init__(self, span: Any) -> None:
        self.span = span
        parent = span.parent
        self._parent = None
        if parent is not None:
            self._parent = (parent.trace_id, parent.span_id, parent.is_remote)
        context = span.get_span_context()
        self._context = (context.trace_id, context.span_id)
        self._name = span.name
        attributes = span_attributes(span)
        self._attributes = attributes if type(attributes) is dict else dict(attributes)


def span_hooks(processor: Driven, *, public: bool = False) -> tuple[Hook, Hook, Callable[[], None]]:
    """``on_start``/``on_end`` as closures over what they read: the guard's per-span
    decisions, written once. They read the span's fields inline (``sdk.FIELDS``, as
    ``sdk_layout()`` found them: no call per span) and hand the span to the driver's steps.
    ``public``: the hooks of an SDK whose layout is unknown, the same closures on a
    ``PublicSpan`` of each span (what differs is only how the fields are read).

    The hooks take their owner first, as methods do: an SDK ``SynchronousMultiSpanProcessor``,
    whose processors each first gets the span, inline (the provider's dispatch, on which
    ``dispatch.ride`` makes them the class's methods; ``NO_PROCESSORS`` otherwise). The third
    closure stops the guard's part (the hand-over goes on).

    A span that starts no request, in a trace without lineage, pays no call into the engine:
    the store's roots and requests are read inline. While a trace with two requests is live
    (``Door.shared``), each span's request is looked up (``Door.joined`` at its start,
    ``Door.request_of_span`` at its end)."""
    engine = processor.engine
    lineage, chain_attr = engine.traces, engine.chain_attr
    roots, requests, shared = engine.roots, engine.requests, engine.shared
    roots_limit, root_started = engine.roots_limit, engine.root_started
    joined, parent_lineage, tool_ended = engine.joined, engine.parent_lineage, engine.tool_ended
    request_of_span = engine.request_of_span
    handoff = processor.handoff  # this guard's enforce() scopes
    entered = handoff.entered  # empty until an enforce() scope was entered for this guard
    awaited = handoff.awaited  # traces an enforce() scope waits for
    llm_disjoint, tool_disjoint = engine.llm_keys.isdisjoint, engine.tool_keys.isdisjoint
    guarded, by_tool = bool(engine.boundaries), bool(engine.by_tool)
    swallow = processor.swallow
    pending = swallow.pending  # blocks waiting for their run (mutated in place)
    plain: set[str] = set()  # span names known not to be LLM-like (bounded)
    prefixes, llm_names = engine.llm_prefixes, engine.llm_names
    # The driver's steps, given the span itself (on a ``PublicSpan``: the span it reads).
    started, mark, swallowed = processor._started, setattr, swallow.ended
    if public:
        started, mark, swallowed = _of_span(started), _of_span(mark), _of_span(swallowed)
    guarding = True

    # ``on_start``'s rare steps are closures of their own: every name a hook reads is copied
    # into its frame at each call (~11 instructions a name), so it names only what an
    # unmatched span reads.

    def rooted(trace_id: int, span_id: int) -> None:
        """A local root that is a trace's second, or past ``roots_limit``, or started while an
        enforce() scope was entered: the store decides (``root_started`` again is a no-op for
        the trace's only root), the scopes of this context wait for its trace."""
        root_started(trace_id, span_id)
        if entered and handoff.current_scopes():
            handoff.bind(trace_id)

    def related(span: Any, parent: tuple[int, int, bool], parent_context: Any) -> Any:
        """A child span while a trace with two requests or with lineage is live: whose request
        it joins, the lineage it inherits (None: none)."""
        trace_id = parent[0]
        if shared and trace_id in shared:  # two requests in one trace: whose span?
            joined(span._context[1], parent[1])
        if lineage and trace_id in lineage:  # a guardable span started in this trace
            return parent_lineage(parent_context)
        return None

    def llm_start(span: Any, name: str, attributes: Any, inherited: Any) -> None:
        """A span whose name is not known plain, with an LLM key, or in a trace with lineage:
        the driver's step when LLM-like, else the lineage it inherits is marked on it."""
        if (name in plain or plain_name(name)) and llm_disjoint(attributes):
            if inherited:
                mark(span, chain_attr, inherited)
            return
        started(span, name, attributes, span._context[0], inherited)

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
                    rooted(trace_id, span_id)  # a second root, or prune: the store decides
                elif entered:  # an enforce() scope was entered: does this context hold one?
                    rooted(trace_id, span_id)
            elif shared or lineage:
                inherited = related(span, parent, parent_context)
            if not guarded:
                return
            name, attributes = span._name, span._attributes
            if type(attributes) is not BoundedAttributes:  # a plain dict is read as it is
                if type(attributes) is not dict:  # replaced by another processor
                    attributes = span_attributes(span)
            else:
                attributes = attributes._dict
            # ``llm_start``'s first test, inline for the common case: a known plain name, no
            # LLM key, no lineage to mark.
            if name in plain and not inherited and llm_disjoint(attributes):
                return
            llm_start(span, name, attributes, inherited)
        except Exception:
            processor._internal_error("on_start")

    def on_end(owner: Any, span: Any) -> None:
        try:
            for registered in owner._span_processors:
                registered.on_end(span)
        except BaseException:  # another processor raised: the guard's part still runs
            on_end(NO_PROCESSORS, span)
            raise
        if not guarding:
            return
        try:
            if shared:  # a trace with two requests is live: each span's request is looked up
                context = span._context
                request = request_of_span(context[0], context[1])
            else:
                request = None  # its trace's
            if by_tool:
                attributes = span._attributes
                if type(attributes) is not BoundedAttributes:  # a plain dict is read as it is
                    if type(attributes) is not dict:  # replaced by another processor
                        attributes = span_attributes(span)
                else:
                    attributes = attributes._dict
                if not tool_disjoint(attributes):
                    context = span._context
                    trace_id = context[0]
                    held = trace_id if request is None else request
                    tool_ended(span._name, attributes, trace_id, context[1], held)
            if pending:  # a refusal raised in this process waits for its run
                swallowed(span)
            parent = span._parent
            if parent is None or parent[2]:  # a local root: TraceStore.root_ended
                context = span._context
                trace_id = context[0]
                if request is None:
                    # its only live root, no facts held: nothing to lock (an empty store or
                    # handoff is not hashed into)
                    if roots.get(trace_id) == context[1] and (
                        not requests or trace_id not in requests
                    ):
                        del roots[trace_id]
                        if lineage:
                            lineage.pop(trace_id, None)
                        if awaited and trace_id in awaited:
                            handoff.release(trace_id)
                        return
                    request = trace_id
                processor._root_ended(trace_id, context[1], request)
        except Exception:
            processor._internal_error("on_end")

    def stop() -> None:
        nonlocal guarding
        guarding = False

    if not public:
        return on_start, on_end, stop

    def public_start(owner: Any, span: Any, parent_context: Context | None = None) -> None:
        try:
            view = PublicSpan(span)
        except Exception:  # the guard's own bug: never into the application
            processor._internal_error("on_start")
            return
        on_start(NO_PROCESSORS, view, parent_context)  # hands the span to no one

    def public_end(owner: Any, span: Any) -> None:
        try:
            view = PublicSpan(span)
        except Exception:
            processor._internal_error("on_end")
            return
        on_end(NO_PROCESSORS, view)

    return public_start, public_end, stop


def _of_span(step: Callable[..., None]) -> Callable[..., None]:
    """``step`` given the span a ``PublicSpan`` reads (its first argument)."""

    def given_span(view: PublicSpan, *args: Any) -> None:
        step(view.span, *args)

    return given_span


def attach(processor: Driven) -> Callable[[], None]:
    """The hooks become ``processor``'s own ``on_start``/``on_end`` (per-instance methods of
    an owner with no processors: what a provider the guard does not ride calls), reading the
    SDK span's fields on a known SDK, else through the public span API; returns the closure
    that stops them."""
    on_start, on_end, stop = span_hooks(processor, public=not processor.known_layout)
    processor.on_start = MethodType(on_start, NO_PROCESSORS)  # type: ignore[method-assign]
    processor.on_end = MethodType(on_end, NO_PROCESSORS)  # type: ignore[method-assign]
    return stop


def detach(processor: Driven, stop: Callable[[], None]) -> None:
    """``processor`` was shut down: its hooks stop, and it has its class's hooks again (which
    do nothing)."""
    stop()
    vars(processor).pop("on_start", None)
    vars(processor).pop("on_end", None)
