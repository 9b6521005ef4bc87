"""Content-free exceptions: what the guard raises with content capture off names no value.

An ``UnsupportedClaim`` names the claimed and the supported values in its message (the app
needs them). Whatever formats the exception — the SDK's ``Span.record_exception`` on every
enclosing span (``exception.message``, ``exception.stacktrace``, the status description), a
``raise ... from`` chain, an implicit ``__context__``, an ``ExceptionGroup`` from
``asyncio.TaskGroup``, a framework logging ``repr(exc)`` — reads ``str()``, ``repr()`` or
``args``. So with content capture off the guard *redacts* each exception it raises
(``FactBoundaryError.redact``): those three give a content-free summary (field, boundary, check
family, reason code), while ``diagnosis`` and every attribute (``claimed``, ``supported``,
``report`` …) keep the full detail for the application. No SDK method is patched.
"""

from __future__ import annotations

from collections.abc import Iterable

from groundplane_otel.errors import ClaimsUnsupported, FactBoundaryError, UnsupportedClaim

__all__ = ["claim_summary", "mark", "redact", "summary"]


def claim_summary(
    field: object, boundary: str, check: str | None, reason: str, *, result: str
) -> str:
    """One finding, without content: ``unsupported claim in field 'winner' (boundary
    'campaign_report', check superlative, reason wrong_winner)``."""
    what = "unsupported claim" if result == "unsupported" else "unchecked output"
    where = f"boundary {boundary!r}" + (f", check {check}" if check else "")
    return f"{what} in field {str(field)!r} ({where}, reason {reason})"


def summary(lines: Iterable[str]) -> str:
    """The summary of an exception carrying several findings: one line each, like its message."""
    return "\n".join(lines)


def mark(error: FactBoundaryError, text: str) -> None:
    """Redact ``error`` (raised by a guard with content capture off) to the summary ``text``.

    A check's own exception chained as ``__cause__`` may name values in its message: it is
    unchained (``__suppress_context__`` too) and stays reachable as ``error.check_error``.
    """
    error.redact(text)
    if error.__cause__ is not None and getattr(error, "check_error", None) is error.__cause__:
        error.__cause__ = None
        error.__suppress_context__ = True


def redact(
    error: BaseException,
    boundary: str,
    claims: Iterable[tuple[UnsupportedClaim, str | None, str, str]],
) -> None:
    """Redact a refusal (content capture off): each of its ``claims`` — (claim, check family,
    reason code, result) — to its content-free line (``claim_summary``), and an exception
    carrying several (``ClaimsUnsupported``) to their ``summary``."""
    lines = []
    for claim, check, reason, result in claims:
        line = claim_summary(claim.field, boundary, check, reason, result=result)
        mark(claim, line)
        lines.append(line)
    if isinstance(error, ClaimsUnsupported):
        mark(error, summary(lines))
