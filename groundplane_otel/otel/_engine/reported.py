"""Evaluations reported by code that ran a boundary itself (``Guard.record_evaluation``).

Adapters (LangGraph, MCP, user code) run groundplane's ``boundary(...)`` and report what
happened: a ``Report`` (every check ran), the exception that stopped it, or nothing (passed).
The core runner's results in that report become the guard's ``Evaluation`` through the same
``evaluate.run_of`` as the span path — one verdict per check, whatever the report mode — so
their telemetry is the guard's own. A report whose results do not cover every check (report mode
"first" stopped at the first claim, an exception interrupted the checks, a Report built by
hand) is completed by running the checks here (``evaluate.run_all``), on the same output and
facts, for telemetry only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from groundplane_otel.errors import ClaimsUnsupported, UnregisteredFact, UnsupportedClaim
from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine import redaction, withheld
from groundplane_otel.otel._engine.evaluate import (
    CheckPlan,
    CheckResults,
    Plan,
    decide,
    run_all,
    run_of,
)
from groundplane_otel.otel._engine.store import FactsView
from groundplane_otel.otel.config import Mode
from groundplane_otel.otel.result import Evaluation, Finding, OutputUnchecked
from groundplane_otel.registry import FactRegistry
from groundplane_otel.report import Report

__all__ = ["ReportOrError", "reported_evaluation"]

ReportOrError = Report | BaseException | None


def _view(registry: FactRegistry, facts: Sequence[str]) -> FactsView:
    if not facts:
        return FactsView(registry, {})
    return FactsView(registry.view([fact for fact in facts if fact in registry]), {})


def _from_report(
    boundary: str, plan: Plan, report: ReportOrError, view: FactsView
) -> CheckResults | None:
    """The run a report describes, when its results cover every check of ``plan`` exactly
    once, by name (None: every check passed); None otherwise."""
    if report is None:
        return run_of(boundary, plan, {}, (), view)
    if not isinstance(report, Report):
        return None
    by_name = {result.name: result for result in report.results}
    names = [step.name for step in plan]
    if len(set(names)) != len(names) or len(report.results) != len(names):
        return None
    if by_name.keys() != set(names):
        return None
    failures: dict[int, BaseException] = {}
    blocked: set[int] = set()
    for index, name in enumerate(names):
        result = by_name[name]
        failure = result.claim if result.claim is not None else result.error
        if result.verdict == "supported" or failure is None:
            continue
        failures[index] = failure
        if result.verdict == "error" and result.claim is not None:
            blocked.add(index)
    return run_of(boundary, plan, failures, blocked, view)


def _before_checks(boundary: str, error: BaseException) -> CheckResults:
    """No output to check: the boundary failed before any check ran."""
    if isinstance(error, UnregisteredFact):
        code, fact = sc.REASON_FACT_MISSING, error.name
    else:
        code, fact = sc.REASON_OUTPUT_UNREADABLE, None
    claim = OutputUnchecked(boundary, code, type(error).__name__, fact=fact)
    return [], [Finding("error", code, claim, fact=fact)], []


def _claims(error: BaseException) -> tuple[UnsupportedClaim, ...]:
    if isinstance(error, ClaimsUnsupported):
        return error.report.violations
    if isinstance(error, UnsupportedClaim):
        return (error,)
    return ()


def mark_reported(error: BaseException, boundary: str, findings: Sequence[Finding]) -> None:
    """Mark the application's own exception (content capture off) with a content-free summary;
    check families come from the findings of the same claims, in order."""
    claims = _claims(error)
    if not claims:
        return
    unsupported = [finding for finding in findings if finding.result == "unsupported"]
    redaction.redact(
        error,
        boundary,
        [
            (
                claim,
                unsupported[index].family if index < len(unsupported) else None,
                claim.code,
                "error" if isinstance(claim, OutputUnchecked) else "unsupported",
            )
            for index, claim in enumerate(claims)
        ],
    )


def reported_evaluation(
    boundary: str,
    plan: Sequence[CheckPlan],
    *,
    output: Mapping[str, Any] | None,
    report_or_error: ReportOrError,
    registry: FactRegistry,
    facts: tuple[str, ...],
    duration: float,
    mode: Mode,
    capture_content: bool,
) -> Evaluation:
    """The guard's evaluation of an output some other code checked (see the module docstring)."""
    view = _view(registry, facts)
    plan = plan if isinstance(plan, Plan) else Plan(plan)
    described = report_or_error
    if isinstance(described, ClaimsUnsupported):  # mode "all": its report has every check
        described = described.report
    run = _from_report(boundary, plan, described, view)
    if run is None and isinstance(output, Mapping):
        run = run_all(boundary, plan, output, view)
    if run is None:
        error = report_or_error if isinstance(report_or_error, BaseException) else None
        run = _before_checks(boundary, error or ValueError("no output"))
    evaluation = decide(
        boundary,
        mode,
        "all",
        run,
        facts=facts,
        view=view,
        duration=duration,
        capture_content=True,  # the exception built here is never raised: nothing to mark
    )
    restricted = any(withheld.is_withheld(finding.claim) for finding in evaluation.findings)
    if isinstance(report_or_error, BaseException) and (not capture_content or restricted):
        mark_reported(report_or_error, boundary, evaluation.findings)
    return evaluation
