"""The claim types every other core module raises or carries: ``FactBoundaryError``,
``UnsupportedClaim`` and ``MISSING`` (public in ``groundplane_otel.errors``).

The bottom of the core: it imports only ``Provenance``, so ``report`` (which holds claims) and
``errors`` (whose ``ClaimsUnsupported`` holds a report) import it without a circle.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from groundplane_otel._provenance import Provenance

__all__ = ["MISSING", "FactBoundaryError", "UnsupportedClaim", "deferred_reason"]


class _Missing:
    """Marks a declared output field the model did not emit at all (distinct from ``None``)."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<missing>"

    def __reduce__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


def _restore(cls: type[FactBoundaryError], args: tuple[Any, ...]) -> FactBoundaryError:
    """Unpickle without calling ``__init__`` (the attributes come back from the state)."""
    error = cls.__new__(cls)
    error.args = args
    return error


class FactBoundaryError(Exception):
    """Base class of every groundplane failure.

    ``diagnosis`` is always the full message. ``str()``, ``repr()`` and ``args`` give the same
    text, except for an exception the OpenTelemetry guard redacted (content capture off): then
    they give a content-free summary (field, boundary, check family, reason code), so no log
    line, exception chain or exception group that formats it can leak the claimed or supported
    values. Every attribute is kept either way.
    """

    _summary: str | None = None

    @property
    def diagnosis(self) -> str:
        """The full message (claimed and supported values included), even when redacted."""
        return self._message()

    @property
    def redacted(self) -> bool:
        """Was this exception redacted (``str()`` is the content-free summary)?"""
        return self._summary is not None

    def _message(self) -> str:
        return super().__str__()

    def redact(self, summary: str) -> None:
        """Make ``str()``/``repr()``/``args`` the content-free ``summary`` (``diagnosis`` keeps
        the full message). Used by the guard when content capture is off."""
        self._summary = summary
        self.args = (summary,)

    def __str__(self) -> str:
        return self._summary if self._summary is not None else self._message()

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore, (type(self), self.args), dict(vars(self)))


def _json_safe(value: Any) -> Any:
    """Return ``value`` if strict JSON can encode it, else its ``repr``."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)
    return value


_ARGS = BaseException.__dict__["args"]  # the base class's own ``args`` (a C slot)


class UnsupportedClaim(FactBoundaryError):
    """The model's output claims something the registered facts do not support.

    ``code`` is a low-cardinality reason code (``wrong_winner``, ``tie_flattened`` …) used in
    telemetry; it never carries content.

    Its message (``args``, ``repr()``) and its ``reason``, when a check defers it
    (``deferred_reason``), are formatted when first read, from fields that never change: a
    claim the guard only counts (content capture off) is never formatted. The text is the same.
    """

    _unformatted = False  # ``args`` not made yet (a claim unpickled or redacted has them)
    _explain: Callable[[], str] | None = None  # makes ``reason`` when first read

    def __init__(
        self,
        field: str,
        claimed: Any,
        supported: Any,
        *,
        fact: str | None = None,
        provenance: Provenance | None = None,
        reason: str | None = None,
        code: str = "unsupported",
    ) -> None:
        self.field = field
        self.claimed = claimed
        self.supported = supported
        self.fact = fact
        self.provenance = provenance
        self._reason = reason
        self.code = code
        self._unformatted = True  # ``args`` are made when first read (``_message``)

    @property
    def args(self) -> tuple[Any, ...]:
        """``(message,)``, the message made when first read."""
        if self._unformatted:
            self._unformatted = False
            _ARGS.__set__(self, (self._message(),))
        args: tuple[Any, ...] = _ARGS.__get__(self)
        return args

    @args.setter
    def args(self, value: tuple[Any, ...]) -> None:
        self._unformatted = False
        _ARGS.__set__(self, value)

    @property
    def reason(self) -> str | None:
        """Why the claim is unsupported (made when first read, if a check deferred it)."""
        explain = self._explain
        if explain is not None:
            self._explain = None
            self._reason = explain()
        return self._reason

    @reason.setter
    def reason(self, value: str | None) -> None:
        self._explain = None
        self._reason = value

    def __repr__(self) -> str:
        self.args  # noqa: B018 - made first: the base class formats them
        return super().__repr__()

    def __reduce__(self) -> tuple[Any, ...]:
        self.reason  # noqa: B018 - made first: the state carries the text, not its maker
        return super().__reduce__()

    def _message(self) -> str:
        if self.claimed is MISSING:  # no value to quote: say so ("a value" is no support)
            head = f"unsupported claim in field {self.field!r}: the output has no such field"
            if self.supported not in (None, "a value"):
                head += f"; registered facts support {self.supported!r}"
        else:
            head = (
                f"unsupported claim in field {self.field!r}: model said {self.claimed!r}, "
                f"registered facts support {self.supported!r}"
            )
        parts = [head]
        if self.fact is not None:
            parts.append(f"fact={self.fact!r}")
        if self.provenance is not None:
            parts.append(f"provenance={self.provenance}")
        if self.reason:
            parts.append(self.reason)
        return " | ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        """The six public fields, with anything strict JSON cannot encode replaced by its repr.

        A field the output lacks is ``"claimed": None``; the provenance is its
        ``tool(arg=...)`` string (the object stays on ``.provenance``).
        """
        provenance = None if self.provenance is None else str(self.provenance)
        return {
            "field": _json_safe(self.field),
            "claimed": None if self.claimed is MISSING else _json_safe(self.claimed),
            "supported": _json_safe(self.supported),
            "fact": self.fact,
            "provenance": provenance,
            "reason": self.reason,
        }


def deferred_reason(claim: UnsupportedClaim, explain: Callable[[], str]) -> UnsupportedClaim:
    """``claim`` (built with no ``reason``), its reason made by ``explain`` when first read: a
    check's failure text spelled out only if someone reads it. ``explain`` reads only values
    that never change, so the text is the one it would have made now."""
    claim._explain = explain
    return claim


for _public in (_Missing, FactBoundaryError, UnsupportedClaim):
    _public.__module__ = "groundplane_otel.errors"  # their public home (tracebacks, pickles)
