"""What the guard decided about one output: the values telemetry and the exception are made of."""

from __future__ import annotations

from dataclasses import dataclass, field

from groundplane_otel.errors import MISSING, UnsupportedClaim
from groundplane_otel.facts import Provenance
from groundplane_otel.otel.config import Mode
from groundplane_otel.otel.semconv import Outcome, Verdict

__all__ = ["Evaluation", "Finding", "OutputUnchecked"]


class OutputUnchecked(UnsupportedClaim):
    """A guarded output that could not be checked (unreadable output, a fact missing,
    conflicting or truncated, a check that crashed). Raised in enforce mode: unchecked is not
    supported. ``code`` is the reason code (``fact_conflict`` ...). ``check_error``: the
    exception a crashing check raised (``check_error``), also its ``__cause__`` unless the
    exception was redacted (its message may name values)."""

    def __init__(self, boundary: str, code: str, detail: str, *, fact: str | None = None) -> None:
        self.check_error: BaseException | None = None
        super().__init__(
            "<output>",
            MISSING,
            None,
            fact=fact,
            reason=f"boundary {boundary!r} could not check the output ({code}): {detail}",
            code=code,
        )

    def _message(self) -> str:
        """The reason itself: there is no claimed or supported value to quote."""
        message = self.reason or ""
        return message if self.fact is None else f"{message} | fact={self.fact!r}"


@dataclass(frozen=True, slots=True)
class Finding:
    """One unsupported claim, or one reason the output (or one check) could not be checked."""

    result: str  # "unsupported" | "error"
    reason: str  # low-cardinality code
    claim: UnsupportedClaim
    check: str | None = None  # the check's name: the guardrail rule id
    family: str | None = None
    fact: str | None = None
    provenance: Provenance | None = None


@dataclass(frozen=True, slots=True)
class Evaluation:
    """The outcome of guarding one output, with everything telemetry writes."""

    boundary: str
    mode: Mode
    outcome: Outcome
    skip_reason: str | None = None
    verdicts: tuple[tuple[str, Verdict], ...] = ()  # (check family, verdict) per check run
    findings: tuple[Finding, ...] = ()
    facts: tuple[str, ...] = ()
    links: tuple[tuple[str, Provenance], ...] = ()
    duration: float = 0.0
    error: BaseException | None = field(default=None, compare=False)  # raised in enforce

    @property
    def violations(self) -> int:
        return sum(1 for finding in self.findings if finding.result == "unsupported")
