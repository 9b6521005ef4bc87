"""Report: the outcome of running every check of a boundary on one output."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from groundplane_otel._claims import UnsupportedClaim

__all__ = ["Report"]


@dataclass(frozen=True, slots=True)
class Report:
    """Which checks passed, which failed, and the unsupported claims (one per failed check)."""

    violations: tuple[UnsupportedClaim, ...] = ()
    passed: tuple[str, ...] = ()
    failed: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        """True when every check passed. A Report itself is always truthy (as groundplane's
        is): test ``report.ok``, never ``if report:``."""
        return not self.violations

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
