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


class Units:
    """Feed text deltas; get completed units back (their concatenation is the text fed)."""

    __slots__ = ("_candidate", "_hard", "_quote", "_safe", "_scan", "_space", "bound", "pending")

    def __init__(self, bound: int = DEFAULT_BOUND) -> None:
        if isinstance(bound, bool) or not isinstance(bound, int) or bound < 16:
            raise ValueError(f"bound must be an int >= 16 (characters), got {bound!r}")
        self.bound = bound
        self._hard = HARD_FACTOR * bound
        self.pending = ""  # text fed and not yet in a unit
        self._scan = 0  # pending[:_scan] was scanned
        self._quote = False  # inside a quoted passage
        self._candidate = -1  # a sentence end waiting for the next word (index after it)
        self._space = -1  # a whitespace after a plain word, waiting for the next word
        self._safe = -1  # the last safe whitespace (a cut there keeps words whole)

    def feed(self, text: str) -> list[str]:
        """The units ``text`` completes (in order)."""
        if not text:
            return []
        self.pending += text
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
        self._scan, self._candidate, self._space, self._safe = 0, -1, -1, -1
        return rest

    def _restart(self, cut: int) -> None:
        self.pending = self.pending[cut:]
        self._scan = 0
        self._candidate = self._space = self._safe = -1
        # The scan resumes at the unit's start (its leading whitespace, at most a few chars).

    def _next_cut(self) -> int:
        """Scan on from ``_scan``; the index a unit ends at, or -1 (need more text)."""
        text = self.pending
        index = self._scan
        size = len(text)
        while index < size:
            char = text[index]
            if self._candidate >= 0:
                if char in _CLOSERS and index == self._candidate:
                    self._toggle(char)
                    self._candidate = index + 1
                    index += 1
                    continue
                if char.isspace():
                    if char == "\n" and not self._quote:
                        self._scan = index + 1
                        return index + 1
                    index += 1
                    continue
                candidate, self._candidate = self._candidate, -1
                spaced = index > candidate  # whitespace between: "3.9" is no sentence end
                if (
                    spaced
                    and not self._quote
                    and (char.isupper() or char.isdigit() or char in _STARTS)
                ):
                    self._scan = candidate
                    return candidate  # the whitespace starts the next unit
            if char == "\n" and not self._quote:
                self._scan = index + 1
                return index + 1
            if char in _ENDS:
                if self._sentence_end(text, index):
                    self._candidate = index + 1
            elif char == '"' or char in _OPEN_QUOTES or char in _CLOSE_QUOTES:
                self._toggle(char)
            elif char.isspace():
                if self._space < 0 and not self._quote and _plain(_word_before(text, index)):
                    self._space = index
            elif self._space >= 0:
                if not self._quote and char.isalpha() and char.islower():
                    word = _word_at(text, index)
                    if word is None:  # the word is not complete yet: decide when it is
                        self._scan = index
                        return self._bounded(size)
                    if _plain(word):
                        self._safe = self._space
                self._space = -1
            index += 1
        self._scan = index
        return self._bounded(size)

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
        if self._safe > 0:
            return self._safe
        if size <= self._hard:
            return -1
        text = self.pending
        last = max(text.rfind(" ", 0, self._hard), text.rfind("\t", 0, self._hard))
        return last if last > 0 else self._hard

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


def _word_at(text: str, index: int) -> str | None:
    """The word starting at ``index``, or None when the text ends before it does."""
    end = index
    size = len(text)
    while end < size and text[end].isalpha():
        end += 1
    if end == size:
        return None
    return text[index:end]
