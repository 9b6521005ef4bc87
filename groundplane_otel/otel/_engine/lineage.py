"""The lineage of guarded spans, kept on the span instances themselves.

A span that is an agent or may carry an output (a *guardable* span), and every span below one,
holds the tuple of its enclosing guardable spans (``CHAIN_ATTR``). It is read to match an agent
name on an ancestor, to find the other instrumentations' spans of the same model call, and to
check each answer once (``COVERED_ATTR``, ``HANDED_ATTR``). Spans outside any agent or LLM span
carry nothing; nothing is locked or cleaned up. They are read and written as attributes, never
through ``vars()``/``__dict__``: that would turn the instance's inline attribute values into a
dict for good, and every attribute the SDK reads on that span afterwards would cost more.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from opentelemetry import trace
from opentelemetry.context import Context
from opentelemetry.sdk.trace import Span

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine.spans import (
    is_agent,
    langchain_agent,
    operation,
    span_attributes,
)
from groundplane_otel.otel.config import BoundarySpec, GuardConfig
from groundplane_otel.otel.environment import GUARD_LOGGER

logger = logging.getLogger(GUARD_LOGGER)

OUTPUT_ATTR = "_groundplane_output"  # an output the app submitted for this span instance
WATCHERS_ATTR = "_groundplane_watchers"  # ids of the guards whose end() wrapper is installed
CHAIN_ATTR = "_groundplane_chain"  # enclosing guardable spans (itself first: ``chain_of``)
COVERED_ATTR = "_groundplane_covered"  # [(guard id, boundary, answer)] checked below this span
HANDED_ATTR = "_groundplane_handed"  # {guard id: exception} raised by a nested LLM span
STREAM_ATTR = "_groundplane_stream"  # {guard id: stream gate} deciding this span's answer
NO_DICT: dict[str, Any] = {}
_UNSET = object()


def attached(span: Any, name: str, make: Callable[[], Any]) -> Any:
    """The value ``span`` holds under ``name``, created by ``make`` when it holds none."""
    value = getattr(span, name, None)
    if value is None:
        value = make()
        setattr(span, name, value)
    return value


def taken(span: Any, name: str, default: Any) -> Any:
    """The value ``span`` holds under ``name`` (removed from it), else ``default``."""
    value = getattr(span, name, _UNSET)
    if value is _UNSET:
        return default
    delattr(span, name)
    return value


def same_answer(left: Any, right: Any) -> bool:
    """Is ``right`` the answer ``left`` (checked below) again? Equal JSON values are; a value
    that cannot even be compared (a cycle) is only itself."""
    if left is right:
        return True
    try:
        return bool(left == right)
    except (RecursionError, TypeError, ValueError):
        return False


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


class Lineage:
    """The lineage reads of one guard: the boundary a span matches (through its ancestors'
    agent names), the enclosing LLM spans of the same model call, and the hand-up of a refusal
    to them. ``guard``: the guard's identity on span instances (its processor's ``id``)."""

    def __init__(self, config: GuardConfig, guard: int) -> None:
        self.config = config
        self.boundaries: dict[str, BoundarySpec] = {spec.name: spec for spec in config.boundaries}
        self.guard = guard
        # The boundaries that match by rules (an empty match only matches by name), in order.
        self._rules = tuple(
            _Rule.of(spec) for spec in config.boundaries if not spec.match.is_empty()
        )
        self._unknown_warned: set[str] = set()  # unknown boundary names warned about (bounded)

    def guarded_above(self, span: Span, chain: tuple[Any, ...], spec: BoundarySpec) -> bool:
        """Does an enclosing LLM span of the same call match ``spec`` too? Then an output
        absent here (content capture off in one instrumentation) is read there, and fails
        closed there if it is absent everywhere."""
        for ancestor in same_call(span, chain):
            above = span_attributes(ancestor)
            if self.match(ancestor, above, chain_of(ancestor)) is spec:
                return True
        return False

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
        name = span.name
        found: set[Any] | None = None  # the agent names on the span and its ancestors
        for rule in self._rules:
            if rule.span_name is not None and name != rule.span_name:
                continue
            if (
                rule.operation_name is not None
                and operation(name, attributes) != rule.operation_name
            ):
                continue
            if rule.attributes and any(attributes.get(k) != v for k, v in rule.attributes):
                continue
            if rule.agent_name is None:
                return rule.spec
            if found is None:
                found = agents_of(span, attributes, chain)
            if rule.agent_name in found:
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
    """The agent names on ``span`` (its ``attributes``) and on its enclosing spans (each
    span's values of the agent-name keys, read at C speed, and the LangChain agent its
    OpenInference metadata names, ``langchain_agent``: ``None`` stands for a name not set, and
    no rule names the agent None)."""
    found = set(map(attributes.get, sc.AGENT_NAME_KEYS))
    found.add(langchain_agent(attributes))
    for ancestor in chain:
        if ancestor is not span:
            above = span_attributes(ancestor)
            found.update(map(above.get, sc.AGENT_NAME_KEYS))
            found.add(langchain_agent(above))
    return found
