"""The claim types every other core module raises or carries: ``FactBoundaryError``,
``UnsupportedClaim`` and ``MISSING`` (public in ``groundplane_otel.errors``).

The bottom of the core: it imports only ``Provenance``, so ``report`` (which holds claims) and
``errors`` (whose ``ClaimsUnsupported`` holds a report) import it without a circle.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from groundplane_otel._provenance import Provenance

__all__ = ["MISSING", "FactBoundaryError", "UnsupportedClaim"]


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


class UnsupportedClaim(FactBoundaryError):
    """The model's output claims something the registered facts do not support.

    ``code`` is a low-cardinality reason code (``wrong_winner``, ``tie_flattened`` …) used in
    telemetry; it never carries content.
    """

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
        self.reason = reason
        self.code = code
        super().__init__(self._message())

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


for _public in (_Missing, FactBoundaryError, UnsupportedClaim):
    _public.__module__ = "groundplane_otel.errors"  # their public home (tracebacks, pickles)
