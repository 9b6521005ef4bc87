"""The failures groundplane_otel raises, and the one warning it emits."""

from __future__ import annotations

from collections.abc import Iterable

from groundplane_otel._claims import MISSING, FactBoundaryError, UnsupportedClaim
from groundplane_otel.report import Report

__all__ = [
    "MISSING",
    "ClaimsUnsupported",
    "FactBoundaryError",
    "SparseColumnWarning",
    "UnknownColumn",
    "UnregisteredFact",
    "UnsupportedClaim",
]


class SparseColumnWarning(UserWarning):
    """A Table column is missing in some rows and ``on_missing="skip"`` dropped them."""


class UnregisteredFact(FactBoundaryError, KeyError):
    """A fact name was read that the registry does not hold."""

    def __init__(self, name: str, known: Iterable[str] | None = ()) -> None:
        self.name = name
        self.known = sorted(known or ())
        super().__init__(name)

    def _message(self) -> str:
        if self.known:
            return f"fact {self.name!r} is not registered; registered facts: {self.known}"
        return f"fact {self.name!r} is not registered; registry is empty"


class UnknownColumn(KeyError, ValueError):
    """A check or ``to_ranking`` names a column the table does not have (a developer mistake).

    Both a ``KeyError`` (what a lookup by column name raises) and a ``ValueError`` (what every
    other misconfigured check raises), so ``except`` clauses written for either keep working;
    ``str()`` is the message itself, not its repr.
    """

    def __init__(self, message: str, column: str | None = None) -> None:
        self.message = message
        self.column = column
        super().__init__(message)

    def __str__(self) -> str:
        return self.message


class ClaimsUnsupported(UnsupportedClaim):
    """Raised by ``mode="all"`` (``report_mode: all``): every unsupported claim at once, in
    ``.report``.

    An ``UnsupportedClaim`` itself, so ``except UnsupportedClaim`` catches a refusal whatever
    the report mode. Its ``field``, ``claimed``, ``supported``, ``fact``, ``provenance``,
    ``reason``, ``code`` and ``to_dict()`` are those of the first claim; ``.claims`` (and
    ``.report.violations``) are all of them; ``str()`` is ``report.to_text()``, one line each.
    """

    def __init__(self, report: Report) -> None:
        self.report = report
        first = report.violations[0] if report.violations else None
        if first is None:  # a report built by hand with no violation
            super().__init__("<output>", MISSING, None, reason="no claim was reported")
            return
        super().__init__(
            first.field,
            first.claimed,
            first.supported,
            fact=first.fact,
            provenance=first.provenance,
            reason=first.reason,
            code=first.code,
        )

    @property
    def claims(self) -> tuple[UnsupportedClaim, ...]:
        """Every unsupported claim of the report, in check order."""
        return self.report.violations

    def _message(self) -> str:
        return self.report.to_text()
