"""The one check runner: the core's ``run_checks`` (``boundary``) and the OpenTelemetry engine
(``otel/_engine/evaluate.run_all``) both run checks here.

What differs between them is explicit: ``mode`` ("first" raises the first UnsupportedClaim, "all"
runs every check), ``on_error`` (an exception other than a claim is a developer mistake the core
lets propagate, "raise", and the engine records as an ``error`` result so the output fails
closed, "record") and ``blocked`` (the engine's checks that cannot run because a fact they need
cannot be read).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, cast

from groundplane_otel._claims import UnsupportedClaim
from groundplane_otel.checks._base import check_name
from groundplane_otel.report import CheckResult, Report

if TYPE_CHECKING:
    from groundplane_otel.registry import FactRegistry

__all__ = ["CheckFn", "OnError", "ReportMode", "check_each", "run_checks"]

CheckFn = Callable[["FactRegistry", Any], None]
"""A check: ``check(registry, output)`` raises UnsupportedClaim or returns None (``output`` is
the JSON answer's fields, or the answer text for a boundary whose answer is text)."""

ReportMode = Literal["first", "all"]
"""Which exception a failing output raises: the first UnsupportedClaim, or ClaimsUnsupported
with all of them."""

OnError = Literal["raise", "record"]
"""What an exception other than a claim does: propagate, or become an ``error`` result."""

REPORT_MODES: tuple[ReportMode, ...] = ("first", "all")


def check_each(
    registry: FactRegistry,
    output: Any,
    checks: Sequence[CheckFn],
    *,
    mode: ReportMode = "all",
    on_error: OnError = "raise",
    blocked: Callable[[int], UnsupportedClaim | None] | None = None,
) -> dict[int, BaseException]:
    """Run ``checks`` in order on ``output``; return the ones that did not pass, by index.

    A failed check maps to the UnsupportedClaim it raised; ``mode`` "first" raises the first
    one instead (the rest are not run). An exception other than a claim propagates
    (``on_error`` "raise") or is kept as that check's failure ("record"). A check for which
    ``blocked(index)`` gives a claim is not run: the claim is its failure. A check missing
    from the result passed (nothing is allocated for it: the engine runs this per output).
    A kept claim has no traceback (it is a value here; raised, it gets a new one).
    """
    failures: dict[int, BaseException] = {}
    for index, check in enumerate(checks):
        if blocked is not None:
            reason = blocked(index)
            if reason is not None:
                failures[index] = reason
                continue
        try:
            check(registry, output)
        except UnsupportedClaim as claim:
            if mode == "first":
                raise
            # Kept as a value, without its traceback: the check's frames would hold
            # ``failures`` (and the caller's frames) in a reference cycle, per output.
            failures[index] = claim.with_traceback(None)
        except Exception as exc:
            if on_error == "raise":
                raise
            failures[index] = exc
    return failures


def _result(check: CheckFn, name: str, failure: BaseException | None) -> CheckResult:
    if failure is None:
        return CheckResult(check, name, "supported")
    if isinstance(failure, UnsupportedClaim):
        return CheckResult(check, name, "unsupported", failure)
    return CheckResult(check, name, "error", error=cast(Exception, failure))


def run_checks(
    registry: FactRegistry,
    output: Any,
    checks: Sequence[CheckFn],
    mode: ReportMode,
    *,
    on_error: OnError = "raise",
) -> Report:
    """Run ``checks`` in order. "first" raises the first UnsupportedClaim; "all" collects them.

    Any other exception (a misconfigured check, a bad recorded cell) propagates (``on_error``
    "raise": it is a developer mistake, not a model mistake), or is an ``error`` result in the
    Report (``on_error`` "record"; the Report is then not ``ok``).
    """
    failures = check_each(registry, output, checks, mode=mode, on_error=on_error)
    return Report.of(
        tuple(
            _result(check, check_name(check), failures.get(index))
            for index, check in enumerate(checks)
        )
    )
