"""Check one output against one boundary: verdict per check, findings, outcome, exception.

Pure with respect to telemetry: the guard writes what this returns. Every check of the boundary
is evaluated, whatever the report mode (so ``groundplane.claims`` counts the same checks for good
and bad outputs); the report mode only decides which exception enforce raises. A check that
needs a fact that is missing, conflicting, truncated or unparseable is not run: it is an error
finding, and in enforce mode the output fails closed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Container, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from groundplane_otel._frozen import draft_class, finish
from groundplane_otel._runner import CheckFn, ReportMode, check_each
from groundplane_otel.checks._base import NamedCheck, check_name, prepared
from groundplane_otel.errors import ClaimsUnsupported, UnsupportedClaim
from groundplane_otel.facts import Provenance
from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine import redaction, withheld
from groundplane_otel.otel._engine.output import OutputRead
from groundplane_otel.otel._engine.store import FactsView
from groundplane_otel.otel.config import BoundarySpec, Mode
from groundplane_otel.otel.result import Evaluation, Finding, OutputUnchecked
from groundplane_otel.otel.semconv import Outcome, Verdict
from groundplane_otel.registry import FactRegistry
from groundplane_otel.report import Report

__all__ = [
    "CheckPlan",
    "Plan",
    "UnitRunner",
    "decide",
    "evaluate",
    "failed_run",
    "no_output",
    "plan_checks",
    "run_all",
    "run_of",
    "skipped",
    "unmatched",
    "unreadable",
]

logger = logging.getLogger(__name__)


_FindingDraft = draft_class(Finding)
_EvaluationDraft = draft_class(Evaluation)


def _finding(
    result: str,
    reason: str,
    claim: UnsupportedClaim,
    check: str,
    family: str,
    fact: str | None = None,
    provenance: Provenance | None = None,
) -> Finding:
    """``Finding(...)`` of a check, built cheaply (``_frozen``)."""
    draft = _FindingDraft()
    draft.result = result
    draft.reason = reason
    draft.claim = claim
    draft.check = check
    draft.family = family
    draft.fact = fact
    draft.provenance = provenance
    return finish(draft, Finding)


def _evaluation(
    boundary: str,
    mode: Mode,
    outcome: Outcome,
    verdicts: tuple[tuple[str, Verdict], ...],
    findings: tuple[Finding, ...],
    facts: tuple[str, ...],
    links: tuple[tuple[str, Provenance], ...],
    duration: float,
    error: BaseException | None,
) -> Evaluation:
    """``Evaluation(...)`` of a checked output (no skip reason), built cheaply (``_frozen``)."""
    draft = _EvaluationDraft()
    draft.boundary = boundary
    draft.mode = mode
    draft.outcome = outcome
    draft.skip_reason = None
    draft.verdicts = verdicts
    draft.findings = findings
    draft.facts = facts
    draft.links = links
    draft.duration = duration
    draft.error = error
    return finish(draft, Evaluation)


def skipped(boundary: BoundarySpec, mode: Mode, reason: str) -> Evaluation:
    return Evaluation(boundary.name, mode, "skipped", skip_reason=reason, facts=boundary.facts)


def _provenance(view: FactsView, fact: str | None) -> Provenance | None:
    if fact is None or fact not in view.registry:
        return None
    return view.registry.peek(fact).provenance


@dataclass(frozen=True, slots=True)
class CheckPlan:
    """One check with what telemetry needs about it, computed once per configuration."""

    check: CheckFn
    name: str
    family: str
    needs: tuple[str, ...]


class Plan(tuple[CheckPlan, ...]):
    """The checks of one boundary, in order, with what every run of them reads precomputed
    (once per configuration: the engine runs them on every guarded output): the callables
    (a NamedCheck's own function), the verdicts and names of a run where all pass, and the
    indices of the checks that need each distinct set of facts."""

    checks: tuple[CheckFn, ...]
    all_supported: tuple[tuple[str, Verdict], ...]
    names: tuple[str, ...]
    needs: tuple[tuple[tuple[str, ...], tuple[int, ...]], ...]

    def __new__(cls, steps: Iterable[CheckPlan]) -> Plan:
        plan = super().__new__(cls, steps)
        plan.checks = tuple(_direct(step.check) for step in plan)
        plan.all_supported = tuple((step.family, "supported") for step in plan)
        plan.names = tuple(step.name for step in plan)
        groups: dict[tuple[str, ...], list[int]] = {}
        for index, step in enumerate(plan):
            if step.needs:
                groups.setdefault(step.needs, []).append(index)
        plan.needs = tuple((needs, tuple(indices)) for needs, indices in groups.items())
        return plan


def _direct(check: CheckFn) -> CheckFn:
    """What calling ``check`` runs: a NamedCheck's own function (one call less per output)."""
    return check.fn if type(check) is NamedCheck else check


def plan_checks(checks: Sequence[CheckFn], facts: Sequence[str]) -> Plan:
    """Name, family and needed facts of each check (its own ``facts``, else the boundary's)."""
    return Plan(
        CheckPlan(
            check,
            check_name(check),
            str(getattr(check, "family", "custom")),
            tuple(getattr(check, "facts", ())) or tuple(facts),
        )
        for check in checks
    )


Hint = str | Callable[[], str]
"""What explains a missing fact (where facts come from): its text, or what words it when a
fact is missing (none usually is: the span's place is read only then)."""

CheckResults = tuple[Sequence[tuple[str, Verdict]], Sequence[Finding], Sequence[str]]
"""(verdict per check, findings, names of the checks that passed): a run where every check
passed is the plan's own precomputed tuples (nothing is copied for it)."""


def run_all(
    boundary: str,
    plan: Sequence[CheckPlan],
    output: Mapping[str, Any] | str,
    view: FactsView,
    *,
    hint: Hint = "",
) -> CheckResults:
    """Every check of the boundary, always (telemetry counts each one, whatever the report
    mode), through the core's runner with errors recorded (a check that raises, or needs a fact
    it cannot read, is an error finding: fail closed). ``hint`` explains a missing fact (where
    facts come from)."""
    steps = plan if isinstance(plan, Plan) else Plan(plan)
    reasons = _blocked(boundary, steps, view, hint)
    blocked = reasons.get if reasons else None
    failures = check_each(view.registry, output, steps.checks, on_error="record", blocked=blocked)
    return run_of(boundary, steps, failures, reasons, view)


def _blocked(
    boundary: str, steps: Plan, view: FactsView, hint: Hint
) -> dict[int, UnsupportedClaim]:
    """Check index -> why it cannot run (a fact it needs cannot be read)."""
    reasons: dict[int, UnsupportedClaim] = {}
    problems, stored = view.problems, view.registry._facts  # in place: no call per fact
    for needs, indices in steps.needs:
        for fact in needs:  # the first needed fact the checks cannot read, and why
            if fact in problems:
                reason = sc.PROBLEM_REASONS.get(problems[fact], sc.REASON_FACT_REJECTED)
                break
            if fact not in stored:
                reason = sc.REASON_FACT_MISSING
                break
        else:  # every one readable
            continue
        for index in indices:
            detail = f"check {steps[index].name} needs fact {fact!r}"
            if hint and reason == sc.REASON_FACT_MISSING:
                detail = f"{detail}; {hint if isinstance(hint, str) else hint()}"
            reasons[index] = OutputUnchecked(boundary, reason, detail, fact=fact)
    return reasons


class UnitRunner:
    """``run_all`` for many outputs against one facts view (the release units of a streamed
    answer): which checks cannot run is decided once (the view is a snapshot), and each
    check is prepared for the view's registry once (``prepared``). Same runs as ``run_all``."""

    __slots__ = ("_blocked", "_checks", "_reasons", "boundary", "steps", "view")

    def __init__(self, boundary: str, plan: Plan, view: FactsView, *, hint: Hint = "") -> None:
        self.boundary, self.steps, self.view = boundary, plan, view
        self._reasons = _blocked(boundary, plan, view, hint)
        self._blocked = self._reasons.get if self._reasons else None
        registry = view.registry
        self._checks = tuple(
            check if index in self._reasons else prepared(check, registry)
            for index, check in enumerate(plan.checks)
        )

    def __call__(self, output: Mapping[str, Any] | str) -> CheckResults:
        failures = check_each(
            self.view.registry, output, self._checks, on_error="record", blocked=self._blocked
        )
        return run_of(self.boundary, self.steps, failures, self._reasons, self.view)


def run_of(
    boundary: str,
    plan: Plan,
    failures: Mapping[int, BaseException],
    blocked: Container[int],
    view: FactsView,
) -> CheckResults:
    """The engine's run of what the core's runner returned for ``plan`` (the failures by check
    index; ``blocked``: the indices that were not run, their failure saying why): (verdict
    per check, findings, names of the checks that passed)."""
    if not failures:
        return plan.all_supported, (), plan.names
    verdicts: list[tuple[str, Verdict]] = []
    findings: list[Finding] = []
    passed: list[str] = []
    for index, step in enumerate(plan):
        name, family = step.name, step.family
        failure = failures.get(index)
        if failure is None:
            verdicts.append((family, "supported"))
            passed.append(name)
        elif index in blocked and isinstance(failure, UnsupportedClaim):
            verdicts.append((family, "error"))  # a fact it needs cannot be read
            findings.append(_finding("error", failure.code, failure, name, family, failure.fact))
        elif isinstance(failure, UnsupportedClaim):
            verdicts.append((family, "unsupported"))
            needs = step.needs
            fact = failure.fact or (needs[0] if len(needs) == 1 else None)
            provenance = failure.provenance or _provenance(view, fact)
            findings.append(
                _finding("unsupported", failure.code, failure, name, family, fact, provenance)
            )
        else:  # a developer/data error inside the check: fail closed
            logger.warning("groundplane: check %s raised %s", name, type(failure).__name__)
            claim = OutputUnchecked(
                boundary, sc.REASON_CHECK_ERROR, f"check {name} raised {type(failure).__name__}"
            )
            claim.check_error = claim.__cause__ = failure
            findings.append(_finding("error", sc.REASON_CHECK_ERROR, claim, name, family))
            verdicts.append((family, "error"))
    return verdicts, findings, passed


def decide(
    boundary: str,
    mode: Mode,
    report_mode: ReportMode,
    run: CheckResults,
    *,
    facts: tuple[str, ...],
    view: FactsView,
    duration: float,
    capture_content: bool,
) -> Evaluation:
    """The outcome, the exception (enforce) and the links of one checked output.

    In enforce mode the exception is the first unsupported claim (report mode ``first``; an
    unchecked-output error when no claim is unsupported) or ``ClaimsUnsupported`` with all of
    them (``all``). With content capture off, it is marked for redaction (``redaction``).
    """
    verdicts, findings, passed = run
    outcome: Outcome = "passed"
    error: BaseException | None = None
    registry = view.registry
    if findings:
        violations = []  # a loop, not a comprehension: no function built for one finding
        for finding in findings:
            if finding.result == "unsupported":
                violations.append(finding)
        outcome = ("blocked" if mode == "enforce" else "flagged") if violations else "error"
        if mode == "enforce":
            error = _refusal(boundary, report_mode, findings, violations, passed, capture_content)
        withheld.withhold_restricted(boundary, findings, error, registry)  # any mode, capture
    stored = registry._facts  # read in place, as ``peek`` does (two calls less per fact)
    found = []  # a loop, not a comprehension: no function built for a fact or two
    for fact in facts:
        if fact in stored:
            found.append((fact, stored[fact].provenance))
    links = tuple(found)
    return _evaluation(
        boundary, mode, outcome, tuple(verdicts), tuple(findings), facts, links, duration, error
    )


def _refusal(
    boundary: str,
    report_mode: ReportMode,
    findings: Sequence[Finding],
    violations: list[Finding],
    passed: Sequence[str],
    capture_content: bool,
) -> BaseException:
    """The exception enforce raises for an output with ``findings`` (see ``decide``)."""
    ordered = violations + [f for f in findings if f.result == "error"]
    claims: tuple[UnsupportedClaim, ...] = tuple(f.claim for f in ordered)
    error: BaseException
    if report_mode == "first":
        error = claims[0]
    else:
        failed = tuple(f.check or "<output>" for f in ordered)
        error = ClaimsUnsupported(Report(claims, tuple(passed), failed))
    if not capture_content:
        claims_of = [(f.claim, f.family, f.reason, f.result) for f in ordered]
        redaction.redact(error, boundary, claims_of)
    return error


def failed_run(boundary: str, code: str, detail: str) -> CheckResults:
    """The run of an output no check could be evaluated on: one error finding."""
    claim = OutputUnchecked(boundary, code, detail)
    return [], [Finding("error", code, claim)], []


def unreadable(boundary: str, problem: str) -> CheckResults:
    """The run of an output that could not be read: one error finding, no check evaluated."""
    return failed_run(boundary, sc.REASON_OUTPUT_UNREADABLE, problem)


_NOTHING = FactsView(FactRegistry().view(()), {})


def no_output(boundary: BoundarySpec, mode: Mode, *, span_failed: bool) -> Evaluation:
    """A matched run (agent span) that ended with no answer checked below it: an error
    (fail closed), or skipped when the run itself failed (the app already gets that error)."""
    if span_failed:
        return skipped(boundary, mode, "span_error")
    detail = (
        "the run ended with no answer the guard could check (no span below it carried one, "
        "and none was submitted)"
    )
    return _unchecked(boundary, mode, sc.REASON_NO_OUTPUT, detail)


def unmatched(boundary: BoundarySpec, mode: Mode, after: int) -> Evaluation:
    """Strict: an answer in a request that recorded ``boundary``'s facts while the boundary,
    tripped, matched no span in ``after`` such requests: an error (fail closed)."""
    detail = (
        f"strict: the boundary matched no span in {after} traces that recorded its facts, and "
        "this answer matched no boundary; fix the boundary's match (see the coverage warning)"
    )
    return _unchecked(boundary, mode, sc.REASON_BOUNDARY_UNMATCHED, detail)


def _unchecked(boundary: BoundarySpec, mode: Mode, reason: str, detail: str) -> Evaluation:
    """A run of ``boundary`` counted ``error`` for ``reason`` without any check run."""
    run = failed_run(boundary.name, reason, detail)
    return decide(
        boundary.name,
        mode,
        boundary.report_mode,
        run,
        facts=boundary.facts,
        view=_NOTHING,
        duration=0.0,
        capture_content=False,
    )


def evaluate(
    boundary: BoundarySpec,
    mode: Mode,
    read: OutputRead,
    span_failed: bool,
    plan: Sequence[CheckPlan] | None,
    capture_content: bool,
    hint: Hint,
    view: FactsView,
) -> Evaluation:
    """Decide the outcome of one matched output (``read.status`` is not ``not_output``) against
    ``view``. Positional: the accounting binds all but ``view`` (the store passes it)."""
    started = time.perf_counter()
    status, answer = read.status, read.answer
    if status == "refusal":
        return skipped(boundary, mode, "refusal")
    if status != "output" or answer is None:
        if span_failed:  # the model call itself failed: the app already gets that error
            return skipped(boundary, mode, "span_error")
        run = unreadable(boundary.name, read.problem or status)
    else:
        if plan is None:
            plan = plan_checks(boundary.checks, boundary.facts)
        run = run_all(boundary.name, plan, answer, view, hint=hint)
    return decide(
        boundary.name,
        mode,
        boundary.report_mode,
        run,
        facts=boundary.facts,
        view=view,
        duration=time.perf_counter() - started,
        capture_content=capture_content,
    )
