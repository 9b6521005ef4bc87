"""Content-free exception events on the spans a guard exception passes through.

An ``UnsupportedClaim`` names the claimed and the supported values in its message (the app
needs them). When it propagates through enclosing ``with tracer.start_as_current_span(...)``
blocks, the SDK's ``Span.record_exception`` writes ``str(exc)`` as ``exception.message`` and the
formatted traceback (message included) as ``exception.stacktrace`` on every one of them, and
``Span.__exit__`` / ``use_span`` put ``"{type}: {exc}"`` in their status description — content,
even with content capture off.

So the guard *marks* each exception it raises while content capture is off: the attribute
``groundplane_summary`` holds a content-free summary (field, boundary, check family, reason
code). ``acquire()`` (called by ``install``) wraps the SDK's ``Span.record_exception`` once, at
class level; for a marked exception the wrapper passes ``exception.message`` = the summary and
a stacktrace whose message lines are replaced by the summaries, and the status description the
SDK sets right after (``"{type}: {exc}"``) is rewritten the same way on that span instance.
Unmarked exceptions, and everything else, go through untouched: no per-span cost. ``release()``
(``Guard.uninstall``) restores the SDK method when the last guard is gone. The application still
gets the full message from ``str(exc)``.
"""

from __future__ import annotations

import contextlib
import threading
import traceback
from collections.abc import Iterable
from typing import Any

from opentelemetry.sdk.trace import Span as SdkSpan
from opentelemetry.trace import Status

__all__ = ["SUMMARY_ATTR", "acquire", "claim_summary", "installed", "mark", "release", "summary"]

SUMMARY_ATTR = "groundplane_summary"
_EXCEPTION_MESSAGE = "exception.message"
_EXCEPTION_STACKTRACE = "exception.stacktrace"
_WRAPPED_FLAG = "__groundplane_redacting__"


class _Patch:
    """Who uses the class-level wrapper, and the SDK method it replaced."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.users = 0
        self.original: Any = None


_patch = _Patch()


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


def mark(error: BaseException, text: str) -> None:
    """Mark ``error`` as raised by a guard with content capture off."""
    with contextlib.suppress(AttributeError):  # exception classes with __slots__
        setattr(error, SUMMARY_ATTR, text)


def _summary_of(error: BaseException) -> str | None:
    text = getattr(error, SUMMARY_ATTR, None)
    return text if isinstance(text, str) else None


def _stacktrace(error: BaseException) -> str:
    """The SDK's stacktrace text, every marked exception's message replaced by its summary."""
    text = "".join(traceback.format_exception(error))
    seen: set[int] = set()
    pending: list[BaseException | None] = [error]
    while pending:
        current = pending.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        marked = _summary_of(current)
        if marked is not None:
            message = str(current)
            if message:
                text = text.replace(message, marked)
        pending += [current.__cause__, current.__context__]
    return text


def _redact_next_status(span: Any, full: str, redacted: str) -> None:
    """The SDK sets ``Status(ERROR, f"{type}: {exc}")`` right after recording the exception:
    rewrite that one description on this span instance (a one-shot instance attribute)."""
    try:
        slots = vars(span)
    except TypeError:  # pragma: no cover - span classes with __slots__
        return

    def set_status(status: Any, description: str | None = None) -> None:
        if slots.get("set_status") is set_status:
            del slots["set_status"]
        if isinstance(status, Status) and status.description == full:
            status = Status(status.status_code, redacted)
        elif description == full:
            description = redacted
        type(span).set_status(span, status, description)

    slots["set_status"] = set_status


def _wrap(original: Any) -> Any:
    def record_exception(
        self: Any,
        exception: BaseException,
        attributes: Any = None,
        timestamp: int | None = None,
        escaped: bool = False,
    ) -> None:
        text = _summary_of(exception)
        if text is None:
            original(self, exception, attributes, timestamp, escaped)
            return
        redacted = dict(attributes or {})
        redacted[_EXCEPTION_MESSAGE] = text
        redacted[_EXCEPTION_STACKTRACE] = _stacktrace(exception)
        original(self, exception, redacted, timestamp, escaped)
        name = type(exception).__name__
        _redact_next_status(self, f"{name}: {exception}", f"{name}: {text}")

    setattr(record_exception, _WRAPPED_FLAG, True)
    record_exception.__doc__ = original.__doc__
    return record_exception


def installed() -> bool:
    """Is the SDK's ``Span.record_exception`` currently wrapped?"""
    return getattr(SdkSpan.__dict__.get("record_exception"), _WRAPPED_FLAG, False) is True


def acquire() -> None:
    """One more installed guard: wrap ``Span.record_exception`` if nobody did yet."""
    with _patch.lock:
        _patch.users += 1
        if _patch.original is None:
            _patch.original = SdkSpan.__dict__["record_exception"]
            SdkSpan.record_exception = _wrap(_patch.original)  # type: ignore[method-assign]


def release() -> None:
    """One guard fewer: when it was the last, put the SDK's method back (unless someone else
    replaced it since, in which case the wrapper stays in their chain, harmless)."""
    with _patch.lock:
        _patch.users = max(0, _patch.users - 1)
        if _patch.users or _patch.original is None:
            return
        if getattr(SdkSpan.__dict__.get("record_exception"), _WRAPPED_FLAG, False):
            SdkSpan.record_exception = _patch.original  # type: ignore[method-assign]
        _patch.original = None
