"""Check one output against one boundary: verdict per check, findings, outcome, exception.

Pure with respect to telemetry: the guard writes what this returns. A check that needs a fact
that is missing, conflicting, truncated or unparseable is not run: it is an error finding, and
in enforce mode the output fails closed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from typing import Any

from groundplane_otel.boundary import run_checks
from groundplane_otel.checks._base import check_name
from groundplane_otel.errors import ClaimsUnsupported, UnsupportedClaim
from groundplane_otel.facts import Provenance
from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel.config import BoundarySpec, Mode
from groundplane_otel.otel.output import OutputRead
from groundplane_otel.otel.result import Evaluation, Finding, OutputUnchecked
from groundplane_otel.otel.semconv import Outcome, Verdict
from groundplane_otel.otel.store import FactsView
from groundplane_otel.report import Report

__all__ = ["evaluate", "skipped"]

logger = logging.getLogger(__name__)


def skipped(boundary: BoundarySpec, mode: Mode, reason: str) -> Evaluation:
    return Evaluation(boundary.name, mode, "skipped", skip_reason=reason, facts=boundary.facts)


def _blocker(needs: tuple[str, ...], view: FactsView) -> tuple[str, str] | None:
    """(fact, reason code) of the first needed fact the check cannot read."""
    for fact in needs:
        if fact in view.problems:
            return fact, sc.PROBLEM_REASONS.get(view.problems[fact], sc.REASON_FACT_REJECTED)
        if fact not in view.registry:
            return fact, sc.REASON_FACT_MISSING
    return None


def _provenance(view: FactsView, fact: str | None) -> Provenance | None:
    if fact is None or fact not in view.registry:
        return None
    return view.registry.peek(fact).provenance


def _run(
    boundary: BoundarySpec, output: Mapping[str, Any], view: FactsView
) -> tuple[list[tuple[str, Verdict]], list[Finding], list[str]]:
    verdicts: list[tuple[str, Verdict]] = []
    findings: list[Finding] = []
    passed: list[str] = []
    for check in boundary.checks:
        name, family = check_name(check), str(getattr(check, "family", "custom"))
        needs = tuple(getattr(check, "facts", ())) or boundary.facts
        blocked = _blocker(needs, view)
        if blocked is not None:
            fact, reason = blocked
            claim = OutputUnchecked(
                boundary.name, reason, f"check {name} needs fact {fact!r}", fact=fact
            )
            findings.append(Finding("error", reason, claim, name, family, fact))
            verdicts.append((family, "error"))
            continue
        try:
            report = run_checks(view.registry, output, [check], "all")
        except Exception as exc:  # a developer/data error inside the check: fail closed
            logger.warning("groundplane: check %s raised %s", name, type(exc).__name__)
            claim = OutputUnchecked(
                boundary.name, sc.REASON_CHECK_ERROR, f"check {name} raised {type(exc).__name__}"
            )
            claim.__cause__ = exc
            findings.append(Finding("error", sc.REASON_CHECK_ERROR, claim, name, family))
            verdicts.append((family, "error"))
            continue
        if report.ok:
            verdicts.append((family, "supported"))
            passed.append(name)
            continue
        violation = report.violations[0]
        claimed_fact = violation.fact or (needs[0] if len(needs) == 1 else None)
        provenance = violation.provenance or _provenance(view, claimed_fact)
        findings.append(
            Finding(
                "unsupported", violation.code, violation, name, family, claimed_fact, provenance
            )
        )
        verdicts.append((family, "unsupported"))
        if boundary.report_mode == "first":
            break
    return verdicts, findings, passed


def evaluate(
    boundary: BoundarySpec,
    mode: Mode,
    read: OutputRead,
    view: FactsView,
    *,
    span_failed: bool,
) -> Evaluation:
    """Decide the outcome of one matched output (``read.status`` is not ``not_output``)."""
    started = time.perf_counter()
    if read.status == "refusal":
        return skipped(boundary, mode, "refusal")
    if read.status != "output" or read.value is None:
        if span_failed:  # the model call itself failed: the app already gets that error
            return skipped(boundary, mode, "span_error")
        claim = OutputUnchecked(
            boundary.name, sc.REASON_OUTPUT_UNREADABLE, read.problem or read.status
        )
        findings: list[Finding] = [Finding("error", sc.REASON_OUTPUT_UNREADABLE, claim)]
        verdicts: list[tuple[str, Verdict]] = []
        passed: list[str] = []
    else:
        verdicts, findings, passed = _run(boundary, read.value, view)
    violations = [finding for finding in findings if finding.result == "unsupported"]
    outcome: Outcome
    if violations:
        outcome = "blocked" if mode == "enforce" else "flagged"
    elif findings:
        outcome = "error"
    else:
        outcome = "passed"
    error: BaseException | None = None
    if mode == "enforce" and findings:
        claims: tuple[UnsupportedClaim, ...] = tuple(
            f.claim for f in violations + [f for f in findings if f.result == "error"]
        )
        if boundary.report_mode == "first":
            error = claims[0]
        else:
            failed = tuple(f.check or "<output>" for f in findings)
            error = ClaimsUnsupported(Report(claims, tuple(passed), failed))
    links = tuple(
        (fact, view.registry.peek(fact).provenance)
        for fact in boundary.facts
        if fact in view.registry
    )
    return Evaluation(
        boundary.name,
        mode,
        outcome,
        verdicts=tuple(verdicts),
        findings=tuple(findings),
        facts=boundary.facts,
        links=links,
        duration=time.perf_counter() - started,
        error=error,
    )
