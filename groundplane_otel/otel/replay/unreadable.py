"""What could not be read: one located problem (``BadInput``) and the bounded tally of them
(``Unreadable``). Both readers (``otlp_files``) and the replayer tell unreadable input here."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

__all__ = ["BadInput", "BadSink", "Unreadable"]


@dataclass(frozen=True, slots=True)
class BadInput:
    """One unreadable line or message: where, and what was wrong (short, content capped)."""

    location: str
    problem: str

    def __str__(self) -> str:
        return f"{self.location}: {self.problem}"


class BadSink(Protocol):
    """Where unreadable input is told: a list, or ``Unreadable``."""

    def append(self, item: BadInput, /) -> None: ...


class Unreadable:
    """Every unreadable input counted (``count``), only the first ``keep`` located (``kept``):
    memory stays bounded however bad the input."""

    __slots__ = ("count", "keep", "kept")

    def __init__(self, keep: int = 100) -> None:
        self.keep = keep
        self.count = 0
        self.kept: list[BadInput] = []

    def append(self, item: BadInput, /) -> None:
        self.count += 1
        if len(self.kept) < self.keep:
            self.kept.append(item)

    @property
    def left_out(self) -> int:
        """Counted but not located (past ``keep``)."""
        return self.count - len(self.kept)
