"""Report: the outcome of running every check of a boundary on one output, check by check."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from groundplane_otel._claims import UnsupportedClaim

__all__ = ["CheckResult", "Report", "Verdict"]

Verdict = Literal["supported", "unsupported", "error"]
"""What one check said about one output (``groundplane.verdict`` in telemetry)."""


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check's verdict on one output.

    ``claim`` is the UnsupportedClaim it raised (``unsupported``), or why it could not run
    (``error`` before running: a fact it needs cannot be read); ``error`` is the exception it
    raised (``error``, when the runner records errors instead of raising them).
    """

    check: Callable[..., Any]
    name: str
    verdict: Verdict
    claim: UnsupportedClaim | None = None
    error: Exception | None = None


@dataclass(frozen=True, slots=True)
class Report:
    """Which checks passed, which failed, and the unsupported claims (one per failed check).

    ``results`` has one CheckResult per check run, in order (empty for a Report built by hand).
    """

    violations: tuple[UnsupportedClaim, ...] = ()
    passed: tuple[str, ...] = ()
    failed: tuple[str, ...] = field(default=())
    results: tuple[CheckResult, ...] = field(default=(), compare=False, repr=False)

    @property
    def ok(self) -> bool:
        """True when every check passed. A Report itself is always truthy (as groundplane's
        is): test ``report.ok``, never ``if report:``."""
        return not self.violations and all(r.verdict != "error" for r in self.results)

    def to_dict(self) -> dict[str, Any]:
        """Strict-JSON-safe summary: ``{"ok", "passed", "failed", "violations"}``."""
        return {
            "ok": self.ok,
            "passed": list(self.passed),
            "failed": list(self.failed),
            "violations": [claim.to_dict() for claim in self.violations],
        }

    def to_text(self) -> str:
        """One line per violation (its full ``diagnosis``); the empty string when ok."""
        return "\n".join(claim.diagnosis for claim in self.violations)

    @classmethod
    def of(cls, results: tuple[CheckResult, ...]) -> Report:
        """The Report of these results: violations and failed from the unsupported ones."""
        unsupported = [r for r in results if r.verdict == "unsupported"]
        return cls(
            tuple(r.claim for r in unsupported if r.claim is not None),
            tuple(r.name for r in results if r.verdict == "supported"),
            tuple(r.name for r in unsupported),
            results,
        )
