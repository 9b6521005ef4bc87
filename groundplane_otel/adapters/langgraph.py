"""LangGraph adapter: a node whose state update must cross a boundary, and facts from the state.

``guarded_node`` wraps a plain (sync or async) node function, so it needs nothing from
LangGraph; only ``goto_on_violation`` builds a LangGraph object (``Command``) and imports
LangGraph, lazily. Verified against langgraph 1.2.24.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar, cast

from groundplane_otel.adapters._extras import require
from groundplane_otel.adapters._otel import (
    NodeChecks,
    active_guard,
    current_span,
    mirror_fact,
    node_span,
)
from groundplane_otel.boundary import CheckFn, ReportMode, boundary
from groundplane_otel.errors import ClaimsUnsupported, UnsupportedClaim
from groundplane_otel.facts import Fact
from groundplane_otel.registry import FactRegistry

__all__ = ["ViolationHandler", "goto_on_violation", "guarded_node", "record_state"]

F = TypeVar("F", bound=Callable[..., Any])
Violation = UnsupportedClaim | ClaimsUnsupported
ViolationHandler = Callable[[Violation, Any], Any]
"""``on_violation(exc, state)``: what the node returns instead of its update."""


def _state_of(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> Any:
    """The state LangGraph passes a node: its first positional argument."""
    if args:
        return args[0]
    return kwargs.get("state")


def _output_of(update: Any, output_key: str | None, node: str) -> Any:
    """The structured output inside a node's update (pydantic models become dicts)."""
    output = update
    if output_key is not None:
        if not isinstance(update, Mapping):
            raise TypeError(
                f"guarded node {node!r}: output_key={output_key!r} needs the node to return a "
                f"mapping (a state update), got {type(update).__name__}"
            )
        if output_key not in update:
            raise KeyError(
                f"guarded node {node!r}: the update has no {output_key!r} key "
                f"(keys: {sorted(map(str, update))}); an output that is never checked is an "
                "error — fix output_key or make the node return it"
            )
        output = update[output_key]
    dump = getattr(output, "model_dump", None)
    if not isinstance(output, Mapping) and callable(dump):
        output = dump()
    return output


def guarded_node(
    fn: F,
    *,
    registry: FactRegistry,
    facts: Sequence[str] = (),
    checks: Sequence[CheckFn] = (),
    output_key: str | None = None,
    on_violation: ViolationHandler | None = None,
    mode: ReportMode = "first",
    name: str | None = None,
) -> F:
    """Wrap a LangGraph node (sync or async) so its state update crosses a boundary.

    Every call enters a fresh ``boundary(registry, facts=, checks=)`` and submits
    ``update[output_key]`` (the whole update when ``output_key`` is None). On an unsupported
    claim the node returns ``on_violation(exc, state)`` — a state update the graph can route to
    a reask node — or, without ``on_violation``, raises. ``mode="all"`` collects every claim
    (``ClaimsUnsupported``) so a reask sees all problems at once. Anything else (a misconfigured
    check, an unregistered fact, a missing ``output_key``) propagates: a developer bug is not
    something to reask the model about.

    With the OpenTelemetry guard installed, each call runs in a ``guarded_node {node}`` span
    that gets the guard's telemetry for its checks (``groundplane.boundary`` = ``name``, default
    the node's name); exceptions are raised after that span ended, like the guard's own.
    """
    if not callable(fn):
        raise TypeError(f"guarded_node needs a callable node, got {fn!r}")
    if on_violation is not None and not callable(on_violation):
        raise TypeError(f"on_violation must be callable(exc, state), got {on_violation!r}")
    boundary(registry, facts=facts, checks=checks, mode=mode, name=name)  # validate now
    node = getattr(fn, "__name__", None) or repr(fn)
    label = name or node

    def cross(update: Any, state: Any, guard: Any, span: Any) -> tuple[Any, BaseException | None]:
        """(what the node returns, what it raises once its span has ended)."""
        recorder = NodeChecks(checks)
        try:
            output = _output_of(update, output_key, node)
            with boundary(
                registry, facts=facts, checks=recorder.wrapped(), mode=mode, name=label
            ) as entered:
                entered.submit(output)
        except (UnsupportedClaim, ClaimsUnsupported) as exc:
            recorder.report(
                guard, span, boundary=label, registry=registry, facts=facts, failure=exc
            )
            if on_violation is None:
                return None, exc
            return on_violation(exc, state), None
        except Exception as exc:
            recorder.report(
                guard, span, boundary=label, registry=registry, facts=facts, failure=exc
            )
            return None, exc
        recorder.report(guard, span, boundary=label, registry=registry, facts=facts, failure=None)
        return update, None

    def settle(outcome: tuple[Any, BaseException | None]) -> Any:
        value, error = outcome
        if error is not None:
            raise error
        return value

    if inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - async callable objects
    ):
        async_fn = cast(Callable[..., Awaitable[Any]], fn)

        @functools.wraps(fn)
        async def async_node(*args: Any, **kwargs: Any) -> Any:
            guard = active_guard()
            with node_span(guard, node) as span:
                update = await async_fn(*args, **kwargs)
                outcome = cross(update, _state_of(args, kwargs), guard, span)
            return settle(outcome)

        return cast(F, async_node)

    @functools.wraps(fn)
    def sync_node(*args: Any, **kwargs: Any) -> Any:
        guard = active_guard()
        with node_span(guard, node) as span:
            update = fn(*args, **kwargs)
            outcome = cross(update, _state_of(args, kwargs), guard, span)
        return settle(outcome)

    return cast(F, sync_node)


def goto_on_violation(node: str, *, key: str = "violation") -> ViolationHandler:
    """An ``on_violation`` that routes to ``node`` with ``Command(goto=node, update={key: ...})``.

    The update holds the claim's JSON-safe ``to_dict()`` (``{"ok", "violations", ...}`` from a
    Report in mode "all"). Imports LangGraph now, so a missing install fails at graph build time.
    """
    command = require("langgraph.types", extra="langgraph").Command

    def on_violation(exc: Violation, state: Any) -> Any:
        detail = exc.report.to_dict() if isinstance(exc, ClaimsUnsupported) else exc.to_dict()
        return command(goto=node, update={key: detail})

    return on_violation


def record_state(
    registry: FactRegistry,
    state: Mapping[str, Any],
    keys: Mapping[str, str],
    tool: str | None = None,
    args: Mapping[str, Any] | None = None,
) -> dict[str, Fact]:
    """Adopt values an upstream node already put in the state: ``keys={state_key: fact_name}``.

    Each value is recorded (deep-copied, write-once) with ``tool``/``args`` as provenance.
    A key missing from the state is a KeyError naming it, raised before anything is recorded.
    With the guard installed and a span current, the facts also land in that trace's registry
    (source ``langgraph``), where span-end boundaries read them. Returns the facts by name.
    """
    if not isinstance(state, Mapping):
        raise TypeError(f"state must be a mapping, got {type(state).__name__}")
    if isinstance(keys, str) or not isinstance(keys, Mapping):
        raise TypeError(f"keys must map state keys to fact names, got {keys!r}")
    missing = [state_key for state_key in keys if state_key not in state]
    if missing:
        raise KeyError(
            f"record_state: state has no {missing[0]!r} key (keys: {sorted(map(str, state))})"
        )
    recorded = {
        fact: registry.record(fact, state[state_key], tool=tool, args=args)
        for state_key, fact in keys.items()
    }
    guard = active_guard()
    if guard is not None:
        span = current_span()
        for fact, stored in recorded.items():
            mirror_fact(
                guard,
                span,
                tool=tool or "langgraph.state",
                fact=fact,
                value=stored.value,
                arguments=dict(args or {}),
                source="langgraph",
            )
    return recorded
