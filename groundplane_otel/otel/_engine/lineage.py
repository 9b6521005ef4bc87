"""The lineage of guarded spans, kept on the span instances themselves.

A span that is an agent or may carry an output (a *guardable* span), and every span below one,
holds the tuple of its enclosing guardable spans (``CHAIN_ATTR``). It is read to match an agent
name on an ancestor, to find the other instrumentations' spans of the same model call, and to
check each answer once (``COVERED_ATTR``, ``HANDED_ATTR``, ``HELD_ATTR``). Spans outside any agent
or LLM span carry nothing; nothing is locked or cleaned up. They are read and written as
attributes, never through ``vars()``/``__dict__``: that would turn the instance's inline
attribute values into a dict for good, and every attribute the SDK reads on that span
afterwards would cost more.

A guarded span's end is settled in one visit (``Lineage.settle``): everything the decision
needs is read from the handles once into a ``Reading`` (the chain's spans through one
``spans.read_chain``, the boundary matched, the model call, the entries covered, the answers
held), accounting decides over that plain record, and what it decided is written back once.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import Span

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine.spans import (
    SpanView,
    is_agent,
    langchain_agent,
    operation,
    read_chain,
    span_attributes,
)
from groundplane_otel.otel.config import BoundarySpec, GuardConfig
from groundplane_otel.otel.environment import GUARD_LOGGER
from groundplane_otel.otel.result import Evaluation

logger = logging.getLogger(GUARD_LOGGER)

OUTPUT_ATTR = "_groundplane_output"  # an output the app submitted for this span instance
WATCHERS_ATTR = "_groundplane_watchers"  # ids of the guards whose end() wrapper is installed
CHAIN_ATTR = "_groundplane_chain"  # enclosing guardable spans (itself first: ``chain_of``)
COVERED_ATTR = "_groundplane_covered"  # [(guard id, boundary, answer)] checked below this span
HANDED_ATTR = "_groundplane_handed"  # {guard id: exception} raised by a nested LLM span
STREAM_ATTR = "_groundplane_stream"  # {guard id: stream gate} deciding this span's answer
HELD_ATTR = "_groundplane_held"  # {guard id: [held answer]} on an agent span not yet named
MAX_HELD = 8  # answers held per agent span and guard; more fail closed
NO_DICT: dict[str, Any] = {}


def attached(span: Any, name: str, make: Callable[[], Any]) -> Any:
    """The value ``span`` holds under ``name``, created by ``make`` when it holds none."""
    value = getattr(span, name, None)
    if value is None:
        value = make()
        setattr(span, name, value)
    return value


def same_call(span: Any, chain: tuple[Any, ...]) -> list[Any]:
    """The LLM spans enclosing ``span`` up to the first agent span: other instrumentations'
    spans of the same model call (an LLM span does not contain another model call)."""
    found = []
    for ancestor in chain:
        if ancestor is span:
            continue
        if is_agent(ancestor.name, span_attributes(ancestor)):
            break
        found.append(ancestor)
    return found


class Ancestors(tuple[Any, ...]):
    """The chain of a guardable span that does not hold the span itself: one that ended (a span
    holding itself is a reference cycle: it would wait for a garbage collection to be freed),
    or an agent span no check watches. ``chain_of`` puts the span first again."""

    __slots__ = ()


def chain_of(span: Any) -> tuple[Any, ...]:
    """The enclosing guardable spans of ``span``, itself first if it is one (``CHAIN_ATTR``)."""
    chain: tuple[Any, ...] = getattr(span, CHAIN_ATTR, ())
    return (span, *chain) if type(chain) is Ancestors else chain


def released(span: Any) -> None:
    """``span`` ended and the guard has read it: its chain no longer holds it (no cycle)."""
    chain = getattr(span, CHAIN_ATTR, None)
    if chain and chain[0] is span:
        setattr(span, CHAIN_ATTR, Ancestors(chain[1:]))


def inherited(parent_context: Context | None) -> tuple[Any, ...] | None:
    """The lineage the parent span (current in ``parent_context``) holds, if any."""
    return chain_of(trace.get_current_span(parent_context)) or None


class Entry(Protocol):
    """An answer checked under a span (accounting's ``Covered``), as lineage reads it."""

    @property
    def guard(self) -> int: ...
    @property
    def boundary(self) -> str: ...
    @property
    def unanswered(self) -> bool: ...


Cover = tuple[Entry, tuple[Any, ...]]  # an entry, and the spans it is written on


class Reading:
    """One guarded span's end, read from the span handles once (``Lineage.settle``): what
    accounting decides over, and what it decided, written back once.

    ``chain``: the span's lineage (``chain_of``); ``spec``: the boundary it matches;
    ``call``: the model call it belongs to (the span id of its outermost enclosing LLM span of
    the same call, else its own; LLM spans only); ``above()``: (``guarded_above``: an enclosing
    LLM span of the same call matches ``spec`` too, ``agent_above``: an enclosing agent span
    matches ``spec``), matched on the views read once, only when accounting asks (an answer
    checked here never does); ``covered``: the entries checked under this span for ``spec``
    (accounting adds those it checks on the span itself); ``unanswered_above``: the first run
    above that ended unanswered; ``held``: the answers held on this agent span (taken from it);
    ``unnamed``: the enclosing agent spans with no name yet (an unmatched LLM span's answer may
    be held on them); ``agents``: the agent names on the lineage (an unmatched span's).

    A plain class with no ``__init__``: ``Lineage._read`` sets the fields it reads, the others
    keep the class's defaults (no slots, no Python ``__init__`` to run: one is built per
    guarded span end)."""

    span: Any
    name: str
    attributes: Mapping[str, Any]
    chain: tuple[Any, ...]
    agent: bool
    spec: BoundarySpec | None
    submitted: Any = None
    call: int = 0
    # (guarded_above, agent_above): no boundary matched (or matched above) until ``_read``
    # leaves ``Lineage.above`` its views to match on (``_views``, ``_members``, ``_first``).
    _above: tuple[bool, bool] | None = (False, False)
    _lineage: Lineage
    _views: list[SpanView]
    _members: tuple[Any, ...]
    _first: int = 1
    covered: list[Any] | tuple[()] = ()
    unanswered_above: Any = None
    held: Sequence[Any] = ()
    unnamed: Sequence[Any] = ()
    agents: Collection[Any] = ()
    # What the decision wrote: a refusal the span raises again as it ends, an answer held on
    # ``unnamed`` (and its fail-closed overflow); ``evaluations`` and ``covers`` (the entries to
    # cover spans with) are set as it is built.
    handed: BaseException | None = None
    hold: tuple[Any, Any] | None = None
    evaluations: list[Evaluation]
    covers: list[Cover]

    def above(self) -> tuple[bool, bool]:
        """(``guarded_above``, ``agent_above``): matched on the lineage's views once, when first
        asked (``Lineage.above``)."""
        found = self._above
        if found is None:
            found = self._above = self._lineage.above(self)
        return found


# ``Reading()`` with no ``__init__`` to run (``_read`` sets its fields): one per guarded span end.
_new_reading: Callable[[type[Reading]], Reading] = object.__new__


class Lineage:
    """The lineage of one guard: the reading and writing of its span handles around a
    guarded span's end (``settle``), the boundary a span matches (through its ancestors' agent
    names), and the hand-up of a refusal to the enclosing LLM spans of the same model call.
    ``guard``: the guard's identity on span instances."""

    def __init__(self, config: GuardConfig, guard: int) -> None:
        self.config = config
        self.boundaries: dict[str, BoundarySpec] = {spec.name: spec for spec in config.boundaries}
        self.guard = guard
        # The boundaries that match by rules (an empty match only matches by name), in order.
        self._rules = tuple(
            _Rule.of(spec) for spec in config.boundaries if not spec.match.is_empty()
        )
        self._by_agent_name = any(spec.match.agent_name for spec in config.boundaries)
        self._unknown_warned: set[str] = set()  # unknown boundary names warned about (bounded)

    # -- a guarded span's end ---------------------------------------------------------------

    def settle(self, span: Any, decide: Callable[[Reading], None]) -> list[Evaluation]:
        """A guarded span ends: a stream gate deciding its answer decides it; else the handles
        are read once (``Reading``), ``decide`` (accounting) fills in what it decided, and
        that is written back once. Every outcome the end counts."""
        gates = getattr(span, STREAM_ATTR, None)
        if gates is not None and self.guard in gates:  # a stream gate decides its answer
            gate = gates[self.guard]()  # a weak reference: None once the gate is gone
            return [] if gate is None else list(gate.span_ended(span))
        reading = self._read(span)
        try:
            decide(reading)
        finally:  # what it decided before a bug re-raised (the debugging switch) stays written
            if reading.covers or reading.handed is not None or reading.hold is not None:
                self._write(reading)  # (most agent spans' ends write nothing: no call)
        return reading.evaluations

    def _read(self, span: Any) -> Reading:
        """What the handles of ``span`` and of its chain hold for its decision (a boundary's
        own entries and held answers only once the span matched one). The hottest step of a
        decision: the model call and the answers above are read inline, and the
        record is built without a Python ``__init__`` (a call less each)."""
        chain = chain_of(span)
        holds = bool(chain) and chain[0] is span
        members = chain if holds else (span, *chain)
        views = read_chain(members)
        own = views[0]
        # The live mapping, not a copy: nothing writes to the span while it is decided (a
        # reader that iterates it takes its own snapshot: ``output.read_output``).
        attributes = own.attributes
        spec = self._select(own.name, attributes, own.operation, views)
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("groundplane: %s", self.explain(span, attributes, chain, spec))
        agent = own.agent
        reading: Reading = _new_reading(Reading)
        reading.span, reading.name, reading.attributes = span, own.name, attributes
        reading.chain, reading.agent, reading.spec = chain, agent, spec
        reading.evaluations, reading.covers = [], []
        reading.submitted = getattr(span, OUTPUT_ATTR, None)
        if not agent:
            # The model call: the span id of the outermost enclosing LLM span of the same call
            # (two instrumentations nest two spans for one call), else its own. An id, not the
            # span: an entry on an agent span holding its LLM span would be a reference cycle.
            outer = span
            for view in views[1:]:
                if view.agent:
                    break
                outer = view.span
            reading.call = int(outer.get_span_context()[1])  # a SpanContext's span id
        guard = self.guard
        if spec is None:
            reading.agents = set().union(*[view.agents for view in views])
            if not agent and self._by_agent_name:
                reading.unnamed = [
                    view.span
                    for view in views[1:]
                    if view.agent
                    and not any(key in view.attributes for key in sc.AGENT_NAME_KEYS)
                    and view.span.is_recording()
                ]
            return reading
        boundary = spec.name
        entries: list[Entry] | None = getattr(span, COVERED_ATTR, None)
        if entries:
            covered = []  # a loop, not a comprehension: no function built for an entry or two
            for entry in entries:
                if entry.guard == guard and entry.boundary == boundary:
                    covered.append(entry)
            reading.covered = covered
        if agent:
            held: dict[int, Any] | None = getattr(span, HELD_ATTR, None)  # ``taken``, inline
            if held is not None:
                delattr(span, HELD_ATTR)
                reading.held = held.get(guard, ())
            reading._first = 1 if holds else 2  # ``chain[1:]``
        else:
            reading._first = 1  # every ancestor
            # The first entry above of a run that ended unanswered (counted ``no_output``) for
            # this guard and boundary, if any.
            for ancestor in chain:
                if ancestor is span:
                    continue
                for entry in getattr(ancestor, COVERED_ATTR, None) or ():
                    if entry.guard == guard and entry.boundary == boundary and entry.unanswered:
                        reading.unanswered_above = entry
                        break
                else:
                    continue
                break
        if len(views) > 1:  # what ``above`` matches on, if accounting asks
            reading._above = None
            reading._lineage, reading._views, reading._members = self, views, members
        return reading

    def above(self, reading: Reading) -> tuple[bool, bool]:
        """``Reading.above`` of a matched span with ancestors: (an enclosing LLM span of the
        same call matches its boundary too, an enclosing agent span does)."""
        spec, views, members, first = reading.spec, reading._views, reading._members, reading._first
        guarded = False
        in_call = True  # the LLM spans up to the first agent span: the same model call
        for index in range(1, len(views)):
            view = views[index]
            if view.agent:
                in_call = False
                if index >= first and self._match_at(views, index, members) is spec:
                    return guarded, True
            elif in_call and self._match_at(views, index, members) is spec:
                guarded = True
                in_call = False
        return guarded, False

    def _match_at(
        self, views: list[SpanView], index: int, members: tuple[Any, ...]
    ) -> BoundarySpec | None:
        """The boundary the ancestor ``views[index]`` matches, through its own lineage (the
        rest of ``views``, unless a bounded chain cut it: then read again)."""
        view = views[index]
        own: tuple[Any, ...] = getattr(view.span, CHAIN_ATTR, ())  # ``chain_of``, inline
        if len(own) + (type(own) is Ancestors) != len(members) - index:
            return self.match(view.span, view.attributes, chain_of(view.span))
        return self._select(view.name, view.attributes, view.operation, views[index:])

    def _write(self, reading: Reading) -> None:
        """What the decision wrote, onto the span handles."""
        for entry, spans in reading.covers:
            for above in spans:
                attached(above, COVERED_ATTR, list).append(entry)
        guard = self.guard
        if reading.handed is not None:
            attached(reading.span, HANDED_ATTR, dict).setdefault(guard, reading.handed)
        if reading.hold is not None:
            held, overflow = reading.hold
            for ancestor in reading.unnamed:
                answers: list[Any] = attached(ancestor, HELD_ATTR, dict).setdefault(guard, [])
                if len(answers) < MAX_HELD:
                    answers.append(held)
                elif len(answers) == MAX_HELD:  # fail closed, once
                    answers.append(overflow)

    def cover(self, cover: Cover) -> None:
        """An answer checked outside a span's end (an adapter's, a stream gate's): the spans
        above are covered for it."""
        entry, spans = cover
        for above in spans:
            attached(above, COVERED_ATTR, list).append(entry)

    def covered(self, spans: Sequence[Any], boundary: str) -> list[Any]:
        """The entries this guard checked under ``spans`` for ``boundary``, in order."""
        guard = self.guard
        return [
            c
            for span in spans
            for c in getattr(span, COVERED_ATTR, None) or ()
            if c.guard == guard and c.boundary == boundary
        ]

    # -- matching -------------------------------------------------------------------------

    def hand_up(self, span: Span, error: BaseException) -> None:
        """Two instrumentations wrapping one model call nest two LLM spans, and some (e.g.
        OpenInference) swallow what ``end()`` raises: the enclosing LLM spans of the same call
        (up to the first agent span) raise ``error`` again when they end, unless it is already
        propagating through them (never twice, never at an agent span the app may have
        caught it under)."""
        for ancestor in same_call(span, chain_of(span)):
            attached(ancestor, HANDED_ATTR, dict).setdefault(self.guard, error)

    def match(
        self, span: Span, attributes: Mapping[str, Any], chain: tuple[Any, ...]
    ) -> BoundarySpec | None:
        """The boundary ``span`` matches: the one it names, else the first whose match holds."""
        views = read_chain([span, *[ancestor for ancestor in chain if ancestor is not span]])
        return self._select(span.name, attributes, operation(span.name, attributes), views)

    def _select(
        self, name: str, attributes: Mapping[str, Any], op: Any, views: Sequence[SpanView]
    ) -> BoundarySpec | None:
        """``match`` over a lineage read once: ``views[0]`` is the span (``attributes`` its
        attributes, ``op`` its operation), the agent names those of every view."""
        named = attributes.get(sc.BOUNDARY)
        if isinstance(named, str):
            spec = self.boundaries.get(named)
            if (
                spec is None
                and named not in self._unknown_warned
                and len(self._unknown_warned) < 64
            ):
                self._unknown_warned.add(named)
                logger.warning("groundplane: span names unknown boundary %r; not guarded", named)
            return spec
        for rule in self._rules:
            if rule.span_name is not None and name != rule.span_name:
                continue
            if rule.operation_name is not None and op != rule.operation_name:
                continue
            if rule.attributes and any(attributes.get(k) != v for k, v in rule.attributes):
                continue
            agent_name = rule.agent_name
            if agent_name is None:
                return rule.spec
            for view in views:  # the agent names on the span and its ancestors
                if agent_name in view.agents:
                    return rule.spec
        return None

    def explain(
        self,
        span: Span,
        attributes: Mapping[str, Any],
        chain: tuple[Any, ...],
        spec: BoundarySpec | None,
    ) -> str:
        """Why ``span`` matched ``spec`` (or no boundary): the DEBUG line of each decision."""
        name = span.name
        named = attributes.get(sc.BOUNDARY)
        if isinstance(named, str):
            if spec is None:
                return f"span {name!r} names unknown boundary {named!r}: not guarded"
            return f"span {name!r} matched boundary {spec.name!r}: it names it ({sc.BOUNDARY})"
        if spec is not None:
            return f"span {name!r} matched boundary {spec.name!r} by its match rules"
        reasons = [self._miss(rule, span, attributes, chain) for rule in self._rules]
        agents = sorted(str(a) for a in agents_of(span, attributes, chain) if a is not None)
        return (
            f"span {name!r} (operation {operation(name, attributes)!r}, agent names "
            f"{agents or 'none'}) matched no boundary: " + ("; ".join(reasons) or "no rules")
        )

    @staticmethod
    def _miss(
        rule: _Rule, span: Span, attributes: Mapping[str, Any], chain: tuple[Any, ...]
    ) -> str:
        """The first criterion of ``rule`` that ``span`` fails."""
        label = f"{rule.spec.name!r} wants"
        if rule.span_name is not None and span.name != rule.span_name:
            return f"{label} span_name={rule.span_name!r}"
        if (
            rule.operation_name is not None
            and operation(span.name, attributes) != rule.operation_name
        ):
            return f"{label} operation_name={rule.operation_name!r}"
        for key, value in rule.attributes:
            if attributes.get(key) != value:
                return f"{label} attributes[{key!r}]={value!r}, got {attributes.get(key)!r}"
        return f"{label} agent_name={rule.agent_name!r} on the span or an enclosing one"


@dataclass(frozen=True, slots=True)
class _Rule:
    """One boundary's match rules, read once from the configuration (``matches``' order)."""

    spec: BoundarySpec
    span_name: str | None
    operation_name: str | None
    attributes: tuple[tuple[str, Any], ...]
    agent_name: str | None

    @classmethod
    def of(cls, spec: BoundarySpec) -> _Rule:
        match = spec.match
        rules = tuple(match.attributes.items())
        return cls(spec, match.span_name, match.operation_name, rules, match.agent_name)


def agents_of(span: Any, attributes: Mapping[str, Any], chain: tuple[Any, ...]) -> set[Any]:
    """The agent names on ``span`` and on its enclosing spans (``SpanView.agents``: ``None``
    stands for a name not set, and no rule names the agent None)."""
    views = read_chain([ancestor for ancestor in chain if ancestor is not span])
    found = set(map(attributes.get, sc.AGENT_NAME_KEYS))
    found.add(langchain_agent(attributes))
    return found.union(*[view.agents for view in views])
