"""Where the guard hands an enforce-mode exception to the ``enforce()`` scopes that wait for it.

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

__all__ = [
    "ScopeState",
    "bind",
    "current_scopes",
    "deliver",
    "enter",
    "entered",
    "in_flight",
    "leave",
    "release",
    "settle",
]

PENDING = 16
RELEASE_DELAY = 64


class ScopeState:
    """One entered ``enforce()`` scope: the exceptions recorded for it, and whether the span-end
    path should leave the raising to the scope (``defer``)."""

    __slots__ = ("defer", "pending", "trace_ids")

    def __init__(self, defer: bool) -> None:
        self.defer = defer
        self.trace_ids: set[int] = set()
        self.pending: list[BaseException] = []


_current: ContextVar[tuple[ScopeState, ...]] = ContextVar("groundplane_enforce", default=())
_lock = threading.Lock()
_by_trace: dict[int, list[ScopeState]] = {}
awaited = _by_trace.keys()  # a live view: is a scope waiting for this trace? (hot path)
entered: list[bool] = []  # non-empty once a scope was entered in this process (hot path)
_released: deque[int] = deque()  # ended traces whose entries are released after a delay


def enter(state: ScopeState, trace_id: int | None) -> Token[tuple[ScopeState, ...]]:
    """Register ``state`` (for ``trace_id`` too, when the scope opens inside a span)."""
    if not entered:  # until now no context could hold a scope: the hooks skipped the lookup
        entered.append(True)
    if trace_id is not None:
        _register(state, trace_id)
    return _current.set((*_current.get(), state))


def _register(state: ScopeState, trace_id: int) -> None:
    with _lock:
        state.trace_ids.add(trace_id)
        waiting = _by_trace.setdefault(trace_id, [])
        if state not in waiting:
            waiting.append(state)


current_scopes = _current.get  # the enforce() scopes entered in this context (hot path)


def bind(trace_id: int) -> None:
    """A local root span starts: the scopes of this context also wait for its trace."""
    for state in _current.get():
        if trace_id not in state.trace_ids:
            _register(state, trace_id)


def release(trace_id: int) -> None:
    """The trace's last local root span ended: no scope waits for it any more (a dictionary
    miss when none did)."""
    if trace_id not in _by_trace:
        return
    with _lock:
        _released.append(trace_id)
        while len(_released) > RELEASE_DELAY:
            ended = _released.popleft()
            for state in _by_trace.pop(ended, ()):
                state.trace_ids.discard(ended)


def leave(state: ScopeState, token: Token[tuple[ScopeState, ...]]) -> None:
    _current.reset(token)
    with _lock:
        for trace_id in state.trace_ids:
            waiting = _by_trace.get(trace_id, [])
            if state in waiting:
                waiting.remove(state)
            if not waiting:
                _by_trace.pop(trace_id, None)


def _scopes(trace_ids: set[int]) -> list[ScopeState]:
    with _lock:
        scopes = [state for trace_id in trace_ids for state in _by_trace.get(trace_id, ())]
    for state in _current.get():
        if state not in scopes:
            scopes.append(state)
    return scopes


def deliver(trace_id: int, error: BaseException) -> bool:
    """Record ``error`` in every scope waiting for this trace or this context; True when one
    of them defers, i.e. the span-end path must not raise it itself."""
    scopes = _scopes({trace_id})
    for state in scopes:
        state.pending.append(error)
        if len(state.pending) > PENDING:  # keep the first (raised at exit) and the latest
            del state.pending[1]
    return any(state.defer for state in scopes)


def settle(state: ScopeState, error: BaseException) -> None:
    """``error`` reached the application through ``state``: no other scope raises it again."""
    for other in [state, *_scopes(state.trace_ids)]:
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
