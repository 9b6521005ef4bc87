"""The receipt of a rank claim the ranking contradicts (a NumberReceipt: it rides in
numbers_recorded's ``UnrecordedNumbers`` claim with the field's numbers)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from groundplane_otel.checks._numbers.receipts import NumberReceipt, cap

__all__ = ["Direction", "RankReceipt"]

Direction = Literal["best", "worst", "high", "low"]
"""How ranks are counted: the ranking's order, from its end, from the highest score, from the
lowest."""


@dataclass(frozen=True, slots=True)
class RankReceipt(NumberReceipt):
    """A rank claim the ranking contradicts: ``value`` the rank claimed, ``nearest`` the rank
    recorded (the first of its tie block in the claimed direction), ``row`` the entity,
    ``fact``/``column`` the Ranking fact and its key; ``low``..``high`` the ranks it holds."""

    low: int = 0
    high: int = 0
    direction: Direction = "best"
    within: bool = False  # a "top N" claim: any rank up to N

    def to_dict(self) -> dict[str, Any]:
        found = NumberReceipt.to_dict(self)
        found.update(
            claimed_rank=int(self.value),
            recorded_rank=[self.low, self.high],
            direction=self.direction,
        )
        return found

    def describe(self) -> str:
        """``'third' at 6..11: 'north' ranks #2 (the ranking's order) on 'revenue' in fact
        'regions', not #3``."""
        line = f"{cap(self.text)!r} at {self.start}..{self.end}"
        if self.field != "*":
            line += f" of {cap(self.field)!r}"
        held = f"#{self.low}" if self.low == self.high else f"#{self.low}-#{self.high} (tied)"
        order = {
            "best": "the ranking's order",
            "worst": "counted from the last",
            "high": "counted from the highest",
            "low": "counted from the lowest",
        }[self.direction]
        claimed = f"within the top {self.value}" if self.within else f"#{self.value}"
        return (
            f"{line}: {cap(repr(self.row))} ranks {held} ({order}) on "
            f"{cap(str(self.column))!r} in fact {self.fact!r}, not {claimed}"
        )
