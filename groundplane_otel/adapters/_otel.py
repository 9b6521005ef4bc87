"""How the adapters report through the OpenTelemetry guard when one is installed.

Only the guard's public API is used (``Guard.record_fact``, ``Guard.record_evaluation``): facts
recorded in code also land in the current trace's registry (so span-end boundaries can read
them), and a guarded node's checks become the guard's telemetry: one ``groundplane.claims`` per
check, one ``groundplane.outputs``, the duration, and a ``gen_ai.guardrail.result`` event per
finding on the node's span. Nothing here ever raises into the application (except under the
guard's ``raise_internal_errors``, as for the guard itself).
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from groundplane_otel._runner import CheckFn
from groundplane_otel.checks._base import check_name
from groundplane_otel.registry import FactRegistry

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from groundplane_otel.otel.install import Guard

__all__ = ["NodeChecks", "active_guard", "content_json", "current_span", "mirror_fact", "node_span"]


def active_guard() -> Guard | None:
    """The installed guard, or None (importing the otel layer only when asked)."""
    from groundplane_otel.otel.install import active_guard as find

    return find()


def content_json(value: Any) -> str:
    """A JSON attribute value for captured content (the guard's ``tool`` decorator format)."""
    return json.dumps(value, default=repr)


def mirror_fact(
    guard: Guard | None,
    span: Span | None,
    *,
    tool: str,
    fact: str,
    value: Any,
    arguments: Mapping[str, Any],
    source: str,
    tool_call_id: str | None = None,
) -> None:
    """Record ``value`` in the registry of ``span``'s trace too (typed by the guard's FactSpec
    for ``tool`` when there is one). A no-op without a guard or a valid span."""
    if guard is None:
        return
    guard.record_fact(
        span,
        tool=tool,
        fact=fact,
        value=value,
        arguments=arguments,
        source=source,
        tool_call_id=tool_call_id,
    )


def current_span() -> Span | None:
    from opentelemetry import trace

    span = trace.get_current_span()
    return span if span.get_span_context().is_valid else None


@contextmanager
def node_span(guard: Guard | None, node: str) -> Iterator[Span | None]:
    """A ``guarded_node {node}`` span around the node call when a guard is installed."""
    if guard is None:
        yield None
        return
    from opentelemetry.trace import SpanKind

    with guard.tracer.start_as_current_span(f"guarded_node {node}", kind=SpanKind.INTERNAL) as span:
        yield span


@dataclass
class NodeChecks:
    """The checks of one guarded-node call, wrapped to see the output the boundary checks (the
    boundary's own semantics are untouched: every exception is re-raised)."""

    checks: Sequence[CheckFn]
    output: Mapping[str, Any] | None = None
    started: float = field(default_factory=time.perf_counter)

    def wrapped(self) -> list[CheckFn]:
        return [self._wrap(check) for check in self.checks]

    def _wrap(self, check: CheckFn) -> CheckFn:
        def seen(registry: FactRegistry, output: Mapping[str, Any]) -> None:
            self.output = output
            check(registry, output)

        seen.__name__ = check_name(check)  # the boundary names checks (Report) by __name__
        return seen

    def report(
        self,
        guard: Guard | None,
        span: Span | None,
        *,
        boundary: str,
        registry: FactRegistry,
        facts: Sequence[str],
        failure: BaseException | None,
    ) -> None:
        """Write the guard's telemetry for this call on ``span`` (no-op without a guard): one
        verdict per check, even when the boundary stopped at the first failing one."""
        if guard is None:
            return
        guard.record_evaluation(
            span,
            boundary=boundary,
            checks=self.checks,
            output=self.output,
            report_or_error=failure,
            duration_s=time.perf_counter() - self.started,
            registry=registry,
            facts=facts,
        )
