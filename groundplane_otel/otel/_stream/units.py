"""Release units of a streamed answer text, found incrementally (each character scanned once).

A unit ends at the first of: a line break (kept in the unit: a line, a list item); a sentence
end (``.``, ``!`` or ``?``, closing quotes or brackets after it, then whitespace and a capital
letter, digit, quote or bullet), unless the word before it is an abbreviation, an initial or a
list marker; or, for a run with neither, a safe whitespace once the run exceeds ``bound``
characters. A safe whitespace lies outside a quoted passage, between two words written in
lower case letters only: never inside a number, a date, a name or a quotation. A run with no
safe whitespace is cut at its last whitespace once it exceeds ``HARD_FACTOR * bound`` (else at
that length): the text held at any moment stays bounded.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

__all__ = ["DEFAULT_BOUND", "HARD_FACTOR", "Units"]

DEFAULT_BOUND = 400  # characters a run with no sentence or line end may reach before a cut
HARD_FACTOR = 4  # a run with no safe whitespace is cut at HARD_FACTOR * bound

_ENDS = frozenset(".!?")
_CLOSERS = frozenset("\"'\u201d\u2019)]»")
_STARTS = frozenset("\"“'*-•([")  # a new sentence may start with these (after whitespace)
_OPEN_QUOTES = frozenset("“«")
_CLOSE_QUOTES = frozenset("”»")
_WRAPPERS = "\"'\u201c\u201d\u2018\u2019()[]«»*_"  # around a word, not part of it
_ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "vs", "etc", "e.g", "i.e", "inc", "ltd"}
    | {"co", "no", "nos", "fig", "approx", "cf", "al", "mt", "ft", "gen", "col", "lt", "sgt"}
    | {"jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"}
)
_MONTHS = frozenset(
    {"january", "february", "march", "april", "may", "june", "july", "august"}
    | {"september", "october", "november", "december"}
)


def _plain(word: str) -> bool:
    """A word a cut may touch: lower-case letters only, and no month name."""
    return word.isalpha() and word.islower() and word not in _MONTHS


_EVENT = re.compile(r"[.!?\n\"\u201c\u201d\u00ab\u00bb]")  # what the scan stops at
_GAP = re.compile(r"\s*")
_SAFE = re.compile(r"(?<![^\W\d_])([a-z]+)([ \t]+)(?=([a-z]+)[^\w])")  # word, space, word


class Units:
    """Feed text deltas; get completed units back (their concatenation is the text fed).

    The scan jumps from one character that may end a unit or open/close a quotation to the
    next (a regular expression): no per-character Python work. Safe whitespace is looked
    for only in a run that passed the bound."""

    __slots__ = (
        "_candidate",
        "_hard",
        "_last_safe",
        "_quote",
        "_safe_scan",
        "_scan",
        "bound",
        "pending",
    )

    def __init__(self, bound: int = DEFAULT_BOUND) -> None:
        if isinstance(bound, bool) or not isinstance(bound, int) or bound < 16:
            raise ValueError(f"bound must be an int >= 16 (characters), got {bound!r}")
        self.bound = bound
        self._hard = HARD_FACTOR * bound
        self.pending = ""  # text fed and not yet in a unit
        self._scan = 0  # pending[:_scan] was scanned
        self._quote = False  # inside a quoted passage (at _scan)
        self._candidate = -1  # a sentence end waiting for the next word (index after it)
        self._safe_scan = 0  # pending[:_safe_scan] was searched for a safe whitespace
        self._last_safe = -1  # the last safe whitespace found there

    def feed(self, text: str) -> Sequence[str]:
        """The units ``text`` completes (in order)."""
        if not text:
            return ()
        self.pending += text
        if (
            self._candidate < 0 and len(self.pending) <= self.bound and _EVENT.search(text) is None
        ):  # nothing in it can end a unit
            self._scan = len(self.pending)
            return ()
        units: list[str] = []
        while True:
            cut = self._next_cut()
            if cut < 0:
                return units
            units.append(self.pending[:cut])
            self._restart(cut)

    def end(self) -> str:
        """The text left when the answer ends (the last unit; may be empty)."""
        rest, self.pending = self.pending, ""
        self._scan, self._candidate, self._safe_scan, self._last_safe = 0, -1, 0, -1
        return rest

    def _restart(self, cut: int) -> None:
        """A unit ended at ``cut`` (at or before the scan): the scan resumes there."""
        self.pending = self.pending[cut:]
        self._scan = max(0, self._scan - cut)
        self._candidate = -1
        self._safe_scan, self._last_safe = 0, -1

    def _next_cut(self) -> int:
        """Scan on from ``_scan``; the index a unit ends at, or -1 (need more text)."""
        text = self.pending
        size = len(text)
        index = self._scan
        while True:
            if self._candidate >= 0:
                after = self._candidate
                while after < size and text[after] in _CLOSERS:
                    self._toggle(text[after])
                    after += 1
                gap = _GAP.match(text, after).end()  # type: ignore[union-attr]
                if gap == size:  # the next word has not arrived yet
                    self._candidate, self._scan = after, size
                    return self._bounded(size)
                self._candidate = -1
                line = text.find("\n", after, gap)
                if line >= 0 and not self._quote:
                    self._scan = line + 1
                    return line + 1
                char = text[gap]
                starts = char.isupper() or char.isdigit() or char in _STARTS
                if gap > after and starts and not self._quote:
                    self._scan = after
                    return after  # the whitespace starts the next unit
                index = gap
            found = _EVENT.search(text, index)
            if found is None:
                self._scan = size
                return self._bounded(size)
            index = found.start()
            char = text[index]
            if char == "\n":
                if not self._quote:
                    self._scan = index + 1
                    return index + 1
            elif char in _ENDS:
                if self._sentence_end(text, index):
                    self._candidate = index + 1
            else:
                self._toggle(char)
            index += 1

    def _toggle(self, char: str) -> None:
        if char in _OPEN_QUOTES:
            self._quote = True
        elif char in _CLOSE_QUOTES:
            self._quote = False
        elif char == '"':
            self._quote = not self._quote

    def _bounded(self, size: int) -> int:
        """A cut for a run past the bound: the last safe whitespace, else (past the hard
        bound) the last whitespace, else the hard bound itself."""
        if size <= self.bound:
            return -1
        safe = self._safe()
        if safe > 0:
            return safe
        if size <= self._hard:
            return -1
        text = self.pending
        last = max(text.rfind(" ", 0, self._hard), text.rfind("\t", 0, self._hard))
        return last if last > 0 else self._hard

    def _safe(self) -> int:
        """The last safe whitespace of the run (between two plain words, outside a
        quotation), searching on from where the last search stopped; -1 when none."""
        text = self.pending
        last = -1
        for found in _SAFE.finditer(text, self._safe_scan):
            space = found.start(2)
            if _plain(found.group(1)) and _plain(found.group(3)) and not _quoted(text, space):
                last = space
        if last > 0:
            self._last_safe = last
        # Search on from near the end (a word there may still be arriving).
        self._safe_scan = max(len(text) - 64, self._safe_scan, self._last_safe + 1, 0)
        return self._last_safe

    def _sentence_end(self, text: str, index: int) -> bool:
        """Is the terminator at ``index`` a sentence end (not an abbreviation, an initial, a
        decimal point or a list marker)?"""
        if text[index] != ".":
            return True
        word = _word_before(text, index).lower().rstrip(".")
        if not word:
            return True
        if len(word) == 1 and word.isalpha():
            return False  # an initial: "J. Smith"
        if word in _ABBREVIATIONS:
            return False
        return not (word.isdigit() and not text[: index - len(word)].strip())  # "1." item


def _word_before(text: str, index: int) -> str:
    """The run of non-space characters ending at ``index`` (bounded look-back)."""
    start = index
    limit = max(0, index - 64)
    while start > limit and not text[start - 1].isspace():
        start -= 1
    return text[start:index].strip(_WRAPPERS)


def _quoted(text: str, index: int) -> bool:
    """Is ``index`` inside a quotation opened earlier in ``text`` (the pending run)?"""
    straight = text.count('"', 0, index) % 2 == 1
    opened = max(text.rfind(q, 0, index) for q in _OPEN_QUOTES)
    closed = max(text.rfind(q, 0, index) for q in _CLOSE_QUOTES)
    return straight or opened > closed
