"""How the adapters report through the OpenTelemetry guard when one is installed.

Facts recorded in code also land in the current trace's registry (so span-end boundaries can
read them), and a guarded node's checks become the guard's telemetry: one ``groundplane.claims``
per check, one ``groundplane.outputs``, the duration, and a ``gen_ai.guardrail.result`` event per
finding on the node's span. Nothing here ever raises into the application (except under the
guard's ``raise_internal_errors``, as for the guard itself).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from groundplane_otel.checks._base import check_name
from groundplane_otel.errors import ClaimsUnsupported, UnregisteredFact, UnsupportedClaim
from groundplane_otel.registry import FactRegistry

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from groundplane_otel.otel.install import Guard
    from groundplane_otel.otel.semconv import Outcome, Verdict

__all__ = ["NodeChecks", "active_guard", "content_json", "current_span", "mirror_fact", "node_span"]

CheckFn = Callable[[FactRegistry, Mapping[str, Any]], None]


def active_guard() -> Guard | None:
    """The installed guard, or None (importing the otel layer only when asked)."""
    from groundplane_otel.otel.install import active_guard as find

    return find()


def content_json(value: Any) -> str:
    """A JSON attribute value for captured content (the guard's ``tool`` decorator format)."""
    return json.dumps(value, default=repr)


def _internal_error(guard: Guard, where: str) -> None:
    guard.processor._internal_error(where)


def mirror_fact(
    guard: Guard | None,
    span: Span | None,
    *,
    tool: str,
    fact: str,
    value: Any,
    arguments: Mapping[str, Any],
    source: str,
) -> None:
    """Record ``value`` in the registry of ``span``'s trace too (typed by the guard's FactSpec
    for ``tool`` when there is one). A no-op without a guard or a valid span."""
    if guard is None or span is None or not span.get_span_context().is_valid:
        return
    from groundplane_otel.otel.tools import record_tool_result

    try:
        record_tool_result(
            guard, span, tool, fact, result=value, arguments=arguments, source=source
        )
    except Exception:
        _internal_error(guard, f"{source} adapter")


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
class _Verdict:
    name: str
    family: str
    verdict: Verdict
    claim: UnsupportedClaim | None = None
    error: BaseException | None = None


@dataclass
class NodeChecks:
    """The checks of one guarded-node call, wrapped to record each verdict as the boundary runs
    them (the boundary's own semantics are untouched: every exception is re-raised)."""

    checks: Sequence[CheckFn]
    verdicts: list[_Verdict] = field(default_factory=list)
    started: float = field(default_factory=time.perf_counter)

    def wrapped(self) -> list[CheckFn]:
        return [self._wrap(check) for check in self.checks]

    def _wrap(self, check: CheckFn) -> CheckFn:
        name = check_name(check)
        family = str(getattr(check, "family", "custom"))

        def recorded(registry: FactRegistry, output: Mapping[str, Any]) -> None:
            try:
                check(registry, output)
            except UnsupportedClaim as claim:
                self.verdicts.append(_Verdict(name, family, "unsupported", claim=claim))
                raise
            except Exception as exc:
                self.verdicts.append(_Verdict(name, family, "error", error=exc))
                raise
            self.verdicts.append(_Verdict(name, family, "supported"))

        recorded.__name__ = name  # the boundary names checks (Report) by __name__
        return recorded

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
        """Write the guard's telemetry for this call on ``span`` (no-op without a guard)."""
        if guard is None or span is None:
            return
        try:
            evaluation = self._evaluation(boundary, registry, facts, failure)
            guard.processor.telemetry.annotate(span, evaluation)
            guard.processor.telemetry.record(span, evaluation)
        except Exception:
            _internal_error(guard, "langgraph adapter")

    def _evaluation(
        self,
        boundary: str,
        registry: FactRegistry,
        facts: Sequence[str],
        failure: BaseException | None,
    ) -> Any:
        from groundplane_otel.otel import semconv as sc
        from groundplane_otel.otel.result import Evaluation, Finding, OutputUnchecked

        findings: list[Finding] = []
        for verdict in self.verdicts:
            if verdict.claim is not None:
                claim = verdict.claim
                provenance = claim.provenance
                if provenance is None and claim.fact is not None and claim.fact in registry:
                    provenance = registry.peek(claim.fact).provenance
                findings.append(
                    Finding(
                        sc.RESULT_UNSUPPORTED,
                        claim.code,
                        claim,
                        verdict.name,
                        verdict.family,
                        claim.fact,
                        provenance,
                    )
                )
            elif verdict.error is not None:
                unchecked = OutputUnchecked(
                    boundary,
                    sc.REASON_CHECK_ERROR,
                    f"check {verdict.name} raised {type(verdict.error).__name__}",
                )
                findings.append(
                    Finding(
                        sc.RESULT_ERROR,
                        sc.REASON_CHECK_ERROR,
                        unchecked,
                        verdict.name,
                        verdict.family,
                    )
                )
        known = isinstance(failure, (UnsupportedClaim, ClaimsUnsupported))
        if failure is not None and not known and not findings:  # failed before any check ran
            code = (
                sc.REASON_FACT_MISSING
                if isinstance(failure, UnregisteredFact)
                else sc.REASON_OUTPUT_UNREADABLE
            )
            fact = failure.name if isinstance(failure, UnregisteredFact) else None
            unchecked = OutputUnchecked(boundary, code, type(failure).__name__, fact=fact)
            findings.append(Finding(sc.RESULT_ERROR, code, unchecked, fact=fact))
        unsupported = any(f.result == sc.RESULT_UNSUPPORTED for f in findings)
        outcome: Outcome = "blocked" if unsupported else ("error" if findings else "passed")
        links = tuple((name, registry.peek(name).provenance) for name in facts if name in registry)
        return Evaluation(
            boundary,
            "enforce",
            outcome,
            verdicts=tuple((v.family, v.verdict) for v in self.verdicts),
            findings=tuple(findings),
            facts=tuple(facts),
            links=links,
            duration=time.perf_counter() - self.started,
        )
