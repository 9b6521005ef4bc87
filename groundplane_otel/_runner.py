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
from typing import TYPE_CHECKING, Any, Literal

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
    names: Sequence[str],
    *,
    mode: ReportMode = "all",
    on_error: OnError = "raise",
    blocked: Callable[[int], UnsupportedClaim | None] | None = None,
) -> tuple[CheckResult, ...]:
    """Run ``checks`` (named ``names``) in order on ``output``: one CheckResult each.

    ``mode`` "first" raises the first UnsupportedClaim (the rest are not run). ``on_error``
    "raise" lets any other exception propagate; "record" makes it an ``error`` result carrying
    it. ``blocked(index)`` returning a claim makes that check an ``error`` result carrying the
    claim, without running it.
    """
    results: list[CheckResult] = []
    for index, check in enumerate(checks):
        name = names[index]
        if blocked is not None:
            reason = blocked(index)
            if reason is not None:
                results.append(CheckResult(check, name, "error", reason))
                continue
        try:
            check(registry, output)
        except UnsupportedClaim as claim:
            if mode == "first":
                raise
            results.append(CheckResult(check, name, "unsupported", claim))
        except Exception as exc:
            if on_error == "raise":
                raise
            results.append(CheckResult(check, name, "error", error=exc))
        else:
            results.append(CheckResult(check, name, "supported"))
    return tuple(results)


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
    names = [check_name(check) for check in checks]
    return Report.of(check_each(registry, output, checks, names, mode=mode, on_error=on_error))
