"""Quoted passages in prose, for ``quotes_anchored``: which marks open a quotation, which are
apostrophes, and which citation marker (if any) follows it.

- Double quotes, ``"…"`` and ``“…”``: always quotation marks.
- Typographic single quotes (U+2018 … U+2019): U+2018 opens (after a non-word character);
  U+2019 closes where no letter or digit follows it — inside a word (a typeset "it's") it
  is an apostrophe and stays in the passage.
- ASCII single quotes, ``'…'``: ``'`` opens after a non-word character and before a non-space,
  and closes after a non-space where no word character follows; an apostrophe between two word
  characters (``don't``) stays in the passage. A trailing possessive (``customers' orders``)
  cannot be told from a closing quote: such a passage is read up to it (and, with no marker
  right after it, is not an anchor). ASCII single quotes count only when a citation marker
  follows them — unmarked, ``'…'`` is as often a scare quote or a pair of apostrophes.

A single-quoted passage inside a double-quoted one is part of it, not a quotation of its own.
An *unmarked* quotation (no marker right after it) is returned with no ids; ``words`` counts
its words, so a caller can skip short ones (scare quotes, a button label, a term).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Final

__all__ = ["Quotation", "quotations"]

_DOUBLE: Final = re.compile(r'"([^"\n]{1,4000})"|“([^”]{1,4000})”')
_CURLY: Final = re.compile(r"(?<!\w)\u2018((?:[^\u2018\u2019\n]|\u2019(?=\w)){1,4000})\u2019(?!\w)")
_ASCII: Final = re.compile(r"(?<![\w'])'(?=\S)((?:[^'\n]|(?<=\w)'(?=\w)){1,4000}?)(?<=\S)'(?!\w)")


@dataclass(frozen=True, slots=True)
class Quotation:
    """A quoted passage, where it sits, and the ids its marker cites (empty: unmarked)."""

    passage: str
    start: int
    end: int
    ids: tuple[str, ...]
    single: bool

    @property
    def words(self) -> int:
        return len(self.passage.split())


def quotations(
    text: str, cited: Callable[[str, int], tuple[str, ...]], *, single: bool = True
) -> Iterator[Quotation]:
    """Every quotation of ``text`` in order; ``cited(text, position)`` reads the ids of a marker
    right after a closing mark (spaces and tabs skipped; empty: no marker). ``single=False``
    reads double quotes only."""
    found: list[Quotation] = []
    double: list[tuple[int, int]] = []
    for match in _DOUBLE.finditer(text):
        passage = match.group(1) if match.group(1) is not None else match.group(2)
        ids = cited(text, match.end())
        found.append(Quotation(passage, match.start(), match.end(), ids, False))
        double.append(match.span())
    if single:
        for pattern, marked_only in ((_CURLY, False), (_ASCII, True)):
            for match in pattern.finditer(text):
                if any(start <= match.start() < end for start, end in double):
                    continue
                ids = cited(text, match.end())
                if ids or not marked_only:
                    found.append(Quotation(match.group(1), match.start(), match.end(), ids, True))
    yield from sorted(found, key=lambda quotation: quotation.start)
