"""Coverage: what the live guard expected to see, and says so when it did not.

A boundary reads facts; a request (the work under one local root span) that recorded one of them
is expected to hold a span the boundary matches. As each request that holds facts ends, every
boundary reading one of them counts it in ``groundplane.coverage`` (``matched``/``unmatched``).
A boundary that has matched nothing since the guard started, in ``coverage_after`` requests that
recorded its facts, gets one WARNING naming what *was* seen (agent and span names, with a "did
you mean"); so does a declared fact that was never recorded while ``coverage_after`` calls to
tools no fact reads were seen, and a declared tool whose span carried no result the first time
that left its facts unrecorded (content capture off). Each cause warns once, and again at most
once an hour while it lasts. Under ``strict`` an unmatched boundary is *tripped*: from then on,
an answer in a request that recorded its facts and matched no boundary is counted ``error``
(``boundary_unmatched``) for it and refused in enforce mode.

Attribute values are boundary names from the configuration and two fixed outcomes only; names
seen on spans are kept bounded (``SEEN_KEPT`` each) and only go to the log.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from typing import Final

from groundplane_otel._echo import capped, echo
from groundplane_otel.otel._engine.store import RequestKey
from groundplane_otel.otel._rules import close_to
from groundplane_otel.otel.config import BoundarySpec, GuardConfig, MatchSpec
from groundplane_otel.otel.environment import (
    GROUNDPLANE_CAPTURE_CONTENT,
    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
)

__all__ = ["REWARN_SECONDS", "SEEN_KEPT", "Coverage"]

logger = logging.getLogger("groundplane_otel")

SEEN_KEPT: Final = 16  # distinct agent/span/tool names kept for the warnings
REWARN_SECONDS: Final = 3600.0  # a cause still there warns again at most this often
_NAME_LIMIT: Final = 80  # characters of one seen name kept
_REQUESTS_KEPT: Final = 4096  # requests whose matched boundaries are remembered


def _add(seen: dict[str, None], name: object) -> None:
    if isinstance(name, str) and name and name not in seen and len(seen) < SEEN_KEPT:
        seen[capped(name, _NAME_LIMIT)] = None


def _listed(seen: Iterable[str]) -> str:
    names = sorted(seen)
    return ", ".join(names) if names else "none"


def wanted(match: MatchSpec) -> str:
    """What a boundary's match rules ask for, as the warning shows it."""
    parts = [
        f"{key}={echo(value)}"
        for key, value in (
            ("agent_name", match.agent_name),
            ("operation_name", match.operation_name),
            ("span_name", match.span_name),
        )
        if value is not None
    ]
    parts += [f"attributes[{echo(k)}]={echo(v)}" for k, v in match.attributes.items()]
    return ", ".join(parts) if parts else "only spans that name it in groundplane.boundary"


@dataclass(slots=True)
class _Boundary:
    spec: BoundarySpec
    facts: frozenset[str]
    unmatched: int = 0  # requests that recorded its facts, while it never matched
    ever: bool = False  # matched at least once since the guard started
    warned: float | None = None
    tripped: bool = False


@dataclass(slots=True)
class _Fact:
    tool: str
    recorded: bool = False
    warned: float | None = None
    resultless: int = 0  # requests where its tool ran with no result and it was not recorded
    resultless_warned: float | None = None


@dataclass(slots=True)
class _Seen:
    agents: dict[str, None] = field(default_factory=dict)
    spans: dict[str, None] = field(default_factory=dict)
    tools: dict[str, None] = field(default_factory=dict)
    unknown_tool_calls: int = 0
    llm_spans: int = 0  # unmatched LLM/agent spans seen while a boundary never matched


class Coverage:
    """The coverage of one live guard: ``matched``/``unmatched_span``/``tool_seen``/
    ``resultless`` as the engine sees spans, ``request_ended`` as a request holding facts ends.
    Thread-safe; every structure bounded."""

    def __init__(
        self,
        config: GuardConfig,
        count: Callable[[str, str], None] | None = None,
        *,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.after = config.coverage_after
        self.strict = config.strict
        self._count = count or _uncounted  # (boundary, outcome) -> groundplane.coverage
        self._clock = clock
        self._lock = threading.Lock()
        self._boundaries = {
            spec.name: _Boundary(spec, frozenset(spec.facts)) for spec in config.boundaries
        }
        self._facts = {spec.name: _Fact(spec.tool) for spec in config.facts}
        self._matched: dict[RequestKey, set[str]] = {}
        self._resultless: dict[RequestKey, set[str]] = {}
        self._seen = _Seen()
        self.pending = bool(self._boundaries)  # a boundary has not matched yet: names are kept
        self.tripped: tuple[BoundarySpec, ...] = ()

    # -- what the engine sees ---------------------------------------------------------------

    def matched(self, request: RequestKey, boundary: str) -> None:
        """A span of ``request`` matched ``boundary``."""
        state = self._boundaries.get(boundary)
        if state is None:
            return
        if not state.ever:
            with self._lock:
                state.ever = True
                self.pending = any(not b.ever for b in self._boundaries.values())
        # Lock-free on the hot path: each step one atomic dict or set operation under the GIL.
        seen = self._matched.get(request)
        if seen is None:
            if len(self._matched) >= _REQUESTS_KEPT:  # requests that never ended
                try:  # noqa: SIM105 - contextlib.suppress costs more than this work
                    self._matched.pop(next(iter(self._matched)), None)
                except (RuntimeError, StopIteration):  # changed meanwhile
                    pass
            seen = self._matched.setdefault(request, set())
        seen.add(boundary)

    def unmatched_span(self, name: str, agents: Iterable[object]) -> None:
        """An LLM or agent span matched no boundary (called only while ``pending``)."""
        with self._lock:
            seen = self._seen
            seen.llm_spans += 1
            _add(seen.spans, name)
            for agent in agents:
                _add(seen.agents, agent)

    def tool_seen(self, tool: str) -> None:
        """A tool call whose tool no FactSpec reads."""
        with self._lock:
            seen = self._seen
            seen.unknown_tool_calls += 1
            _add(seen.tools, tool)
            calls = seen.unknown_tool_calls
        if calls % self.after == 0:  # every ``after`` calls, not on each (rate-limited too)
            self._warn_unrecorded_facts(calls)

    def resultless(self, request: RequestKey, tool: str) -> None:
        """A declared tool's span ended with no result on it."""
        with self._lock:
            tools = self._resultless.get(request)
            if tools is None:
                if len(self._resultless) >= _REQUESTS_KEPT:
                    self._resultless.pop(next(iter(self._resultless)))
                tools = self._resultless[request] = set()
            tools.add(tool)

    def request_ended(self, request: RequestKey, facts: Collection[str]) -> None:
        """A request that held facts (recorded, or that could not be) ended."""
        matched = self._matched.pop(request, ())
        resultless = self._resultless.pop(request, ())
        for name in facts:
            fact = self._facts.get(name)
            if fact is not None and not fact.recorded:
                fact.recorded = True
        for tool in resultless:
            self._resultless_tool(tool, facts)
        if not facts:
            return
        warn: list[_Boundary] = []
        for state in self._boundaries.values():
            if state.facts.isdisjoint(facts):
                continue
            outcome = "matched" if state.spec.name in matched else "unmatched"
            self._count(state.spec.name, outcome)
            if outcome == "matched" or state.ever:
                continue
            with self._lock:
                state.unmatched += 1
                due = state.unmatched >= self.after and self._due(state.warned)
                if due:
                    state.warned = self._clock()
                if state.unmatched >= self.after and self.strict and not state.tripped:
                    state.tripped = True
                    self.tripped = (*self.tripped, state.spec)
            if due:
                warn.append(state)
        for state in warn:
            self._warn_unmatched(state)

    def tripped_for(self, facts: Collection[str]) -> BoundarySpec | None:
        """Under ``strict``: the first tripped boundary reading one of ``facts`` that still
        never matched."""
        for spec in self.tripped:
            state = self._boundaries[spec.name]
            if not state.ever and not state.facts.isdisjoint(facts):
                return spec
        return None

    # -- counting and warning ---------------------------------------------------------------

    def _due(self, warned: float | None) -> bool:
        return warned is None or self._clock() - warned >= REWARN_SECONDS

    def _warn_unmatched(self, state: _Boundary) -> None:
        spec, seen = state.spec, self._seen
        with self._lock:
            agents, spans, llm = list(seen.agents), list(seen.spans), seen.llm_spans
        match = spec.match
        facts = ", ".join(sorted(spec.facts))
        parts = [
            f"groundplane: boundary {spec.name!r} matched no LLM span in {state.unmatched} "
            f"traces that recorded its facts ({facts}); its match wants {wanted(match)}"
        ]
        if not llm:
            parts.append(
                "no unmatched LLM or agent span was seen at all (is the model call "
                "instrumented, and does its span end inside the request?)"
            )
        else:
            if match.agent_name is not None:
                seen_agents = _hint(_listed(agents), match.agent_name, agents)
                parts.append(f"agent names seen: {seen_agents}")
            if match.span_name is not None or match.agent_name is None:
                seen_spans = _hint(_listed(spans), match.span_name, spans)
                parts.append(f"span names seen: {seen_spans}")
        outcome = "its answers are NOT checked"
        if self.strict:
            outcome += (
                "; strict: from now on an answer in a trace that recorded its facts is counted "
                "error (boundary_unmatched) and refused in enforce mode"
            )
        parts.append(
            f"{outcome}. Fix the match (or set groundplane.boundary={spec.name!r} on the "
            "answer's span); DEBUG logging on groundplane_otel shows each span's match decision"
        )
        logger.warning("; ".join(parts))

    def _warn_unrecorded_facts(self, calls: int) -> None:
        with self._lock:
            tools = list(self._seen.tools)
            due = []
            for name, fact in self._facts.items():
                if not fact.recorded and self._due(fact.warned):
                    fact.warned = self._clock()
                    due.append((name, fact))
        for name, fact in due:
            logger.warning(
                "groundplane: fact %r (tool %r) was never recorded, while %d calls to tools no "
                "fact reads were seen; tool names seen: %s. Declare the tool by the name its "
                "spans carry (gen_ai.tool.name / tool.name)",
                name,
                fact.tool,
                calls,
                _hint(_listed(tools), fact.tool, tools),
            )

    def _resultless_tool(self, tool: str, facts: Collection[str]) -> None:
        for name, fact in self._facts.items():
            if fact.tool != tool or name in facts:
                continue
            with self._lock:
                fact.resultless += 1
                due = self._due(fact.resultless_warned)
                if due:
                    fact.resultless_warned = self._clock()
            if due:
                logger.warning(
                    "groundplane: fact %r was not recorded: a span of its tool %r ended with no "
                    "result on it (%d such traces so far), so every check reading it fails "
                    "closed (fact_missing). The instrumentation did not capture content: set "
                    "%s=SPAN_ONLY (util-genai; the older instrumentations take true), or "
                    "OTEL_INSTRUMENTATION_GENAI_COMPLETION_HOOK=groundplane to hand the guard "
                    "the tool results with content capture off, or record it in code with "
                    "@tool(%r) (%s only decides what the guard's own events carry)",
                    name,
                    tool,
                    fact.resultless,
                    OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT,
                    tool,
                    GROUNDPLANE_CAPTURE_CONTENT,
                )


def _uncounted(boundary: str, outcome: str) -> None:
    """No metric (a Coverage built without a counter)."""


def _hint(listed: str, wanted_name: str | None, seen: Collection[str]) -> str:
    """``listed``, with "did you mean" when a seen name is close to (not equal to) the one
    the configuration wants."""
    close = close_to(wanted_name, list(seen)) if wanted_name is not None else None
    if close is None or close == wanted_name:
        return listed
    return f"{listed} (did you mean {close!r}?)"
