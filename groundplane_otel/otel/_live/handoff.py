"""Where a guard hands an enforce-mode exception to the ``enforce()`` scopes that wait for it.

Each guard's processor owns one ``Handoff``: a scope is entered with the handoffs of the guards
it waits for (``scope.enforce``), so a replay, the verifier or another guard in the same process
neither delivers its refusals to a live guard's scopes nor sees them (``awaited``, ``entered``).

A scope is found through the context it was entered in (same thread or task) or through the
traces started or active in it (spans ended on another thread), so frameworks that swallow
exceptions or end spans elsewhere still deliver the violation to the application exactly once.

Bounded for a scope that lives as long as a worker loop: a trace's entries are released once
its last local root span ended (``release``; the ``RELEASE_DELAY`` most recently ended traces
are kept, so the violation of a root span, delivered right after it ended, still finds its
scope), and a scope keeps its first pending exception (the one it raises) plus the
``PENDING - 1`` most recent ones.
"""

from __future__ import annotations

import threading
from collections import deque
from contextvars import ContextVar, Token

__all__ = ["PENDING", "RELEASE_DELAY", "Handoff", "ScopeState", "in_flight"]

PENDING = 16
RELEASE_DELAY = 64


class ScopeState:
    """One entered ``enforce()`` scope, as one guard's handoff knows it: the exceptions recorded
    for it, and whether the span-end path should leave the raising to the scope (``defer``)."""

    __slots__ = ("defer", "pending", "trace_ids")

    def __init__(self, defer: bool) -> None:
        self.defer = defer
        self.trace_ids: set[int] = set()
        self.pending: list[BaseException] = []


class Handoff:
    """One guard's ``enforce()`` scopes: by context (same thread or task) and by trace."""

    def __init__(self) -> None:
        self._current: ContextVar[tuple[ScopeState, ...]] = ContextVar(
            "groundplane_enforce", default=()
        )
        self._lock = threading.Lock()
        self._by_trace: dict[int, list[ScopeState]] = {}
        self.awaited = self._by_trace.keys()  # a live view: does a scope wait for it? (hot path)
        self.entered: list[bool] = []  # non-empty once a scope was entered (hot path)
        self._released: deque[int] = deque()  # ended traces, released after a delay
        self.current_scopes = self._current.get  # the scopes of this context (hot path)

    def enter(self, state: ScopeState, trace_id: int | None) -> Token[tuple[ScopeState, ...]]:
        """Register ``state`` (for ``trace_id`` too, when the scope opens inside a span)."""
        if not self.entered:  # until now no context held a scope: the hooks skipped the lookup
            self.entered.append(True)
        if trace_id is not None:
            self._register(state, trace_id)
        return self._current.set((*self._current.get(), state))

    def _register(self, state: ScopeState, trace_id: int) -> None:
        with self._lock:
            state.trace_ids.add(trace_id)
            waiting = self._by_trace.setdefault(trace_id, [])
            if state not in waiting:
                waiting.append(state)

    def bind(self, trace_id: int) -> None:
        """A local root span starts: the scopes of this context also wait for its trace."""
        for state in self._current.get():
            if trace_id not in state.trace_ids:
                self._register(state, trace_id)

    def release(self, trace_id: int) -> None:
        """The trace's last local root span ended: no scope waits for it any more (a
        dictionary miss when none did)."""
        if trace_id not in self._by_trace:
            return
        with self._lock:
            self._released.append(trace_id)
            while len(self._released) > RELEASE_DELAY:
                ended = self._released.popleft()
                for state in self._by_trace.pop(ended, ()):
                    state.trace_ids.discard(ended)

    def leave(self, state: ScopeState, token: Token[tuple[ScopeState, ...]]) -> None:
        self._current.reset(token)
        with self._lock:
            for trace_id in state.trace_ids:
                waiting = self._by_trace.get(trace_id, [])
                if state in waiting:
                    waiting.remove(state)
                if not waiting:
                    self._by_trace.pop(trace_id, None)

    def _scopes(self, trace_ids: set[int]) -> list[ScopeState]:
        with self._lock:
            scopes = [state for tid in trace_ids for state in self._by_trace.get(tid, ())]
        for state in self._current.get():
            if state not in scopes:
                scopes.append(state)
        return scopes

    def deliver(self, trace_id: int, error: BaseException) -> bool:
        """Record ``error`` in every scope waiting for this trace or this context; True when
        one of them defers, i.e. the span-end path must not raise it itself."""
        scopes = self._scopes({trace_id})
        for state in scopes:
            state.pending.append(error)
            if len(state.pending) > PENDING:  # keep the first (raised at exit) and the latest
                del state.pending[1]
        return any(state.defer for state in scopes)

    def settle(self, state: ScopeState, error: BaseException) -> None:
        """``error`` reached the application through ``state``: no other scope raises it."""
        for other in [state, *self._scopes(state.trace_ids)]:
            other.pending[:] = [pending for pending in other.pending if pending is not error]


def in_flight(error: BaseException, exc: BaseException | None) -> bool:
    """Is ``error`` the exception ``exc`` being handled, or in its cause/context chain?"""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        if exc is error:
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False
