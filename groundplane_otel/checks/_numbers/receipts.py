"""Receipts for numbers in prose that no fact records, and the claim that carries them.

A receipt is what a reviewer needs to check the call in seconds: the number as written, its
character span in the text, the nearest recorded value and where it lives (fact, row, column),
the reason code, and whether the question held it too (an echo is not support).
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, ClassVar, Final, Protocol

from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.facts import Provenance

__all__ = ["CODES", "NumberReceipt", "Receipt", "ReceiptsClaim", "UnrecordedNumbers", "cap"]

_CAP: Final = 200
LISTED: Final = 20
"""Receipts spelled out in a claim's message and ``claimed``/``supported`` (all are in
``receipts``); more are counted as ``… (+N more)``."""

CODES: Final[dict[str, str]] = {
    "number_unrecorded": "no fact records it",
    "number_echo_only": "only the question holds it (the question is not a source)",
    "number_sign_flipped": "its negation is recorded (a sign dropped or added)",
    "number_ratio_undeclared": (
        "the ratio it spells as a percent is recorded (declare percent_as_ratio=True)"
    ),
    "number_rounding_undeclared": (
        "it is a rounding of a recorded value (declare rounding= to accept it)"
    ),
    "number_scale_mismatch": "the same digits are recorded at another power of ten",
    "number_direction_false": "its direction word contradicts the sign of the recorded change",
    "number_unit_mismatch": "it names a unit other than the one its column or document gives",
}
"""Reason code of an unrecorded number → what it means (low cardinality: telemetry's reason)."""


def cap(text: str) -> str:
    """A value echoed in a message, capped at 200 characters (plus an ellipsis)."""
    return text if len(text) <= _CAP else text[:_CAP] + "…"


@dataclass(frozen=True, slots=True)
class NumberReceipt:
    """One number in the text that no fact records, with the evidence nearest to it."""

    text: str
    start: int
    end: int
    value: Decimal
    code: str
    field: str
    nearest: int | float | None = None
    fact: str | None = None
    row: Hashable | None = None
    column: str | None = None
    echo: bool = False
    expected: str | None = None  # what the words around it contradict (direction, unit)
    document: str | None = None  # the retrieved document whose text holds ``nearest``

    @property
    def span(self) -> tuple[int, int]:
        return self.start, self.end

    def to_dict(self) -> dict[str, Any]:
        """Strict-JSON-safe: the value as its decimal string, an odd row key as its repr (and
        ``document`` only when a retrieved document holds the nearest value)."""
        row = self.row if isinstance(self.row, (str, int, float, type(None))) else repr(self.row)
        extra = {} if self.expected is None else {"expected": cap(self.expected)}
        found = {} if self.document is None else {"document": cap(self.document)}
        return {
            "text": cap(self.text),
            "span": [self.start, self.end],
            "field": self.field,
            "value": cap(f"{self.value:f}"),
            "code": self.code,
            "nearest": self.nearest,
            "fact": self.fact,
            "row": row,
            "column": self.column,
            "echo": self.echo,
            **extra,
            **found,
        }

    def describe(self) -> str:
        """``'1,000' at 21..26: the same digits are recorded at another power of ten;
        nearest recorded 10000 (fact 'invoice', row 'A', column 'total')``."""
        line = f"{cap(self.text)!r} at {self.start}..{self.end}"
        if self.field != "*":
            line += f" of {cap(self.field)!r}"
        line += f": {CODES[self.code]}"
        if self.nearest is None:
            line += "; no number is recorded at all"
        else:
            where = [f"fact {self.fact!r}"]
            if self.document is not None:
                where.append(f"document {cap(self.document)!r}")
            if self.row is not None:
                where.append(f"row {cap(repr(self.row))}")
            if self.column is not None:
                where.append(f"column {cap(self.column)!r}")
            line += f"; nearest recorded {self.nearest!r} ({', '.join(where)})"
        if self.expected is not None:
            line += f": {cap(self.expected)}"
        if self.echo and self.code != "number_echo_only":
            line += " [also in the question]"
        return line


class Receipt(Protocol):
    """What a receipts claim needs of each receipt."""

    @property
    def code(self) -> str: ...

    @property
    def nearest(self) -> Any: ...

    def describe(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


class ReceiptsClaim(UnsupportedClaim):
    """A prose field's unrecorded values, one receipt each, in text order: ``claimed`` the first
    ``LISTED`` receipts as dicts, ``supported`` the nearest recorded value of each, ``code`` the
    first receipt's; ``receipts`` holds all. ``what`` names one value, ``what_plural`` several
    (the message reads "3 numbers are not recorded")."""

    what: ClassVar[str] = "value is"
    what_plural: ClassVar[str] = "values are"

    def __init__(
        self,
        field: str,
        receipts: Sequence[Receipt],
        *,
        fact: str | None,
        provenance: Provenance | None,
    ) -> None:
        self.receipts = tuple(receipts)
        listed = self.receipts[:LISTED]
        reason = "; ".join(receipt.describe() for receipt in listed)
        if len(self.receipts) > LISTED:
            reason += f"; … (+{len(self.receipts) - LISTED} more)"
        super().__init__(
            field,
            [receipt.to_dict() for receipt in listed],
            [receipt.nearest for receipt in listed],
            fact=fact,
            provenance=provenance,
            reason=reason,
            code=self.receipts[0].code,
        )

    def _message(self) -> str:
        count = len(self.receipts)
        what = self.what if count == 1 else self.what_plural
        parts = [f"unsupported claim in field {cap(self.field)!r}: {count} {what} not recorded"]
        if self.reason:
            parts.append(self.reason)
        if self.provenance is not None:
            parts.append(f"provenance={self.provenance}")
        return " | ".join(parts)


class UnrecordedNumbers(ReceiptsClaim):
    """Numbers in a prose field that no fact records: one receipt each, in text order.

    ``claimed`` is the list of receipts (as dicts), ``supported`` the nearest recorded value of
    each (the first 20 of them; ``receipts`` holds all); ``code`` is the first receipt's.
    Telemetry writes both only with content capture on.
    """

    receipts: tuple[NumberReceipt, ...]
    what = "number is"
    what_plural = "numbers are"
