"""Progress told a few times a second rather than after every request: finding where the
reading is costs a system call per file (``tell``), and a worker's progress is a write to the
shared board (together ~7% of a worker's replay over one-span lines, measured)."""

from __future__ import annotations

import time

__all__ = ["TELL_EVERY_S", "Pacer"]

TELL_EVERY_S = 0.1  # the progress bar redraws twice a second; a worker's board is read as often


class Pacer:
    """``due()`` is True at most once every ``TELL_EVERY_S`` seconds (the first time: at once)."""

    __slots__ = ("_next",)

    def __init__(self) -> None:
        self._next = 0.0

    def due(self) -> bool:
        now = time.monotonic()
        if now < self._next:
            return False
        self._next = now + TELL_EVERY_S
        return True
