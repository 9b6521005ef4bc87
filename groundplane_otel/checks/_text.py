"""Finding known phrases in free text: case-folded, word-bounded, whitespace-normalised.

``normalize`` folds a text for matching and keeps, for every character of the folded text, the
offset of the original character it came from (so a finding can give its character span in
the text the model wrote). Folding, in order: Unicode NFKC (full-width letters and digits,
ligatures), ``str.casefold``, zero-width characters and the soft hyphen deleted, hyphens,
dashes and underscores read as spaces ("Project-Falcon", "project_falcon"), every run of
whitespace (line breaks included) becomes one space. ``join_breaks="hyphen"`` deletes every
line break that follows a hyphen, with the hyphen and the spaces around it ("Fal-\\ncon");
``join_breaks="all"`` deletes every line break and the spaces around it ("Fal\\ncon"): the
two ways a word is split across lines.

``PhraseIndex`` holds phrases (each with a payload) keyed by their first word, so scanning a
text costs one dictionary lookup per word of the text plus one comparison per candidate,
whatever the number of phrases. A phrase matches when its folded form occurs in the folded
text with a word boundary on each side that is a word character (``\\w``): "acme" does not
match inside "acmecorp", "$4.20" matches in "cost $4.20." Phrases without any word character
are never matched (they would match punctuation anywhere).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

__all__ = ["Folded", "Hit", "PhraseIndex", "fold_phrase", "normalize", "squeeze"]

P = TypeVar("P")

_WORD = re.compile(r"\w+")
_SPACE = re.compile(r"\s+")
_ZERO_WIDTH = frozenset("\u200b\u200c\u200d\u2060\ufeff\u00ad")
_JOINERS = frozenset("-_\u2010\u2011\u2012\u2013\u2014\u2212")
_ASCII_GAPS = re.compile(r"[\s\-_]+")  # what an ASCII text's folding turns into one space
_BREAKS = {
    "hyphen": re.compile(r"-[ \t]*(?:\r\n|\r|\n)\s*"),
    "all": re.compile(r"[ \t]*-?[ \t]*(?:\r\n|\r|\n)\s*"),
}


@dataclass(frozen=True, slots=True)
class Folded:
    """A folded text and, per folded character, the offset of its original character."""

    text: str
    origin: Sequence[int]
    length: int  # of the original text

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original ``[start, end)`` of the folded ``[start, end)``."""
        first = self.origin[start] if start < len(self.origin) else self.length
        last = self.origin[end - 1] + 1 if end > start else first
        return first, last


def _fold_char(char: str) -> str:
    if char.isascii():
        return char.lower()
    if char in _ZERO_WIDTH:
        return ""
    return unicodedata.normalize("NFKC", char).casefold()


def normalize(text: str, *, join_breaks: Literal["hyphen", "all"] | None = None) -> Folded:
    """``text`` folded for matching (see the module docstring), with its offset map."""
    if join_breaks is None and text.isascii():
        return _normalize_ascii(text)
    out: list[str] = []
    origin: list[int] = []
    pending_space = -1
    pattern = _BREAKS[join_breaks] if join_breaks else None
    breaks = {m.start(): m.end() for m in pattern.finditer(text)} if pattern else {}
    position, length = 0, len(text)
    while position < length:
        if position in breaks:
            position = breaks[position]
            continue
        char = text[position]
        if char.isspace() or char in _JOINERS:
            if pending_space < 0:
                pending_space = position
            position += 1
            continue
        folded = _fold_char(char)
        if folded:
            if pending_space >= 0 and out:
                out.append(" ")
                origin.append(pending_space)
            pending_space = -1
            for piece in folded:
                out.append(" " if piece.isspace() else piece)  # NFKC may yield a space
                origin.append(position)
        position += 1
    return Folded("".join(out), origin, length)


def _normalize_ascii(text: str) -> Folded:
    """``normalize`` for ASCII text (no NFKC or zero-width work): the same result, in C-speed
    passes — the gaps are found by one regex, the kept runs copied as slices."""
    lower = text.lower()
    out: list[str] = []
    origin: list[int] = []
    kept = 0
    for gap in _ASCII_GAPS.finditer(text):
        start, end = gap.span()
        if start > kept:
            if out:
                out.append(" ")
                origin.append(kept - 1)
            out.append(lower[kept:start])
            origin.extend(range(kept, start))
        kept = end
    if kept < len(text):
        if out:
            out.append(" ")
            origin.append(kept - 1)
        out.append(lower[kept:])
        origin.extend(range(kept, len(text)))
    return Folded("".join(out), origin, len(text))


def fold_phrase(phrase: str) -> str:
    """A phrase folded the way texts are, stripped."""
    if phrase.isascii():
        return _ASCII_GAPS.sub(" ", phrase.lower()).strip()
    return normalize(phrase).text.strip()


def squeeze(text: str) -> str:
    """Whitespace runs to one space, stripped — and nothing else (exact otherwise)."""
    return _SPACE.sub(" ", text).strip()


@dataclass(frozen=True, slots=True)
class Hit(Generic[P]):
    """A phrase found in a folded text: folded ``[start, end)`` and the phrase's payload."""

    start: int
    end: int
    payload: P


class PhraseIndex(Generic[P]):
    """Phrases keyed by their first word; see the module docstring for the matching rule."""

    __slots__ = ("_by_word", "count")

    def __init__(self, phrases: Iterable[tuple[str, P]]) -> None:
        by_word: dict[str, list[tuple[str, int, P]]] = {}
        count = 0
        for phrase, payload in phrases:
            folded = fold_phrase(phrase)
            first = _WORD.search(folded)
            if first is None:
                continue
            entry = (folded, first.start(), payload)
            by_word.setdefault(first.group(), []).append(entry)
            count += 1
        for entries in by_word.values():  # the longest phrase first: "acme co" before "acme"
            entries.sort(key=lambda entry: -len(entry[0]))
        self._by_word = by_word
        self.count = count

    def __bool__(self) -> bool:
        return self.count > 0

    def find(self, folded: str) -> Iterator[Hit[P]]:
        """Every occurrence of every phrase in ``folded`` (a ``normalize``d text)."""
        by_word = self._by_word
        for word in _WORD.finditer(folded):
            entries = by_word.get(word.group())
            if entries is None:
                continue
            at = word.start()
            for phrase, prefix, payload in entries:
                start = at - prefix
                if start < 0 or not folded.startswith(phrase, start):
                    continue
                end = start + len(phrase)
                if _bounded(folded, start, end, phrase):
                    yield Hit(start, end, payload)


def _bounded(text: str, start: int, end: int, phrase: str) -> bool:
    """Word boundaries on the sides of ``phrase`` that are word characters."""
    if _is_word(phrase[0]) and start > 0 and _is_word(text[start - 1]):
        return False
    return not (_is_word(phrase[-1]) and end < len(text) and _is_word(text[end]))


def _is_word(char: str) -> bool:
    return char.isalnum() or char == "_"
