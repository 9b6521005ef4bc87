"""Direction words in prose: which number a rise or a fall is said of, and which recorded values
are changes (so that a direction can be false).

A direction word binds to the number right after it, across at most three filler words
(``fell 3.2%``, ``rose by about 4%``, ``down 3.2%``, ``a decline of 3.2%``, ``lost $1.2M``), or
to the number right before a direction noun (``a 3.2% drop``, ``a 3.2-point decline``, ``a 12%
year-over-year increase``, ``4% higher``); the second end of a dash range, or the next item of
a list, takes the previous number's binding when both are percents or neither is (``fell
10-12%``, ``fell 3.2% and 4.1%``, ``rose 2%, 3% and 5%``). Nothing else binds: ``to``,
``from``, ``than``, ``past`` are not fillers, so ``dropped to 40`` (a level), ``down from 12 to
9`` and ``up to 5 days`` (a bound) bind nothing; a number written with its own sign (``-3.2%``,
or an en dash or U+2212 minus) is never bound.

A recorded value is a *change* when its column (a Table column, a Ranking key, a path in a plain
value, or the path's last key) is declared in ``changes``, or its name (any key of a path) says
so (a word ``change``, ``chg``, ``delta``, ``diff``, ``difference``, ``growth``, ``yoy``,
``qoq``, ``mom``, ``wow``, ``vs`` or ``variance``, split on ``_``, ``-``, ``.``, spaces and
camelCase), or a Table column that records a negative number anywhere, or the value itself is
negative.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from groundplane_otel.checks._numbers.prose_pattern import SIGNS
from groundplane_otel.checks._numbers.prose_scan import Numeral
from groundplane_otel.checks._numbers.recorded import Recorded, RecordedNumbers

__all__ = ["Bound", "ChangeColumns", "DOWN_WORDS", "UP_WORDS", "bind"]


def _split(words: str) -> tuple[str, ...]:
    return tuple(words.split())


UP_WORDS: Final = _split(
    "rose rise rises rising risen increased increase increases increasing grew grow grows "
    "growing grown growth climbed climb climbs climbing gained gain gains gaining jumped jump "
    "jumps jumping surged surge surges surging soared soar soars soaring rallied advanced "
    "spiked expanded widened widen widens widening up"
)
DOWN_WORDS: Final = _split(
    "fell fall falls falling fallen declined decline declines declining dropped drop drops "
    "dropping decreased decrease decreases decreasing lost lose loses losing loss slipped slip "
    "slips slid slide slides sliding sank sink sinks shrank shrink shrinks shrunk contracted "
    "contraction plunged plunge plummeted tumbled dipped dip dips reduced reduction retreated "
    "narrowed narrow narrows narrowing down"
)
_AFTER_UP: Final = _split("increase rise gain jump climb uptick growth higher surge spike")
_AFTER_DOWN: Final = _split(
    "drop decline decrease fall dip loss slide reduction contraction lower plunge slump downturn"
)
_FILLERS: Final = _split(
    "by of about around roughly approximately nearly almost just some only another further "
    "additional a an sharply slightly modestly marginally significantly steadily was were is"
)
_ADJECTIVES: Final = _split(
    "year-over-year year-on-year quarter-over-quarter quarter-on-quarter month-over-month "
    "week-over-week yoy qoq mom y/y annual quarterly sequential monthly weekly sharp steep "
    "modest slight"
)
_UNIT_WORDS: Final = r"percentage[ -]points?|points?|pp|p\.p\.|pts|basis[ -]points?|bps|bp|percent"


def _words(words: Iterable[str]) -> str:
    return "|".join(re.escape(word) for word in sorted(words, key=len, reverse=True))


_UP: Final = frozenset(UP_WORDS)
_DOWN: Final = frozenset(DOWN_WORDS)
_FILL: Final = frozenset(_FILLERS)
_OPENING: Final = "([{\"'\u201c\u2018\u2014\u2013-"
_WINDOW: Final = 80  # characters looked at before a number: three fillers and the word fit
_AFTER: Final = re.compile(
    rf"(?:[ \t\u00a0-]?(?:{_UNIT_WORDS}))?(?:[ \t\u00a0-]+(?:{_words(_ADJECTIVES)}))?"
    rf"[ \t\u00a0-]+(?:(?P<up>{_words(_AFTER_UP)})|(?P<down>{_words(_AFTER_DOWN)}))\b",
    re.IGNORECASE,
)
_JOINED: Final = re.compile(r"\s*[-\u2013\u2014]\s*|\s*,\s*(?:and\s+)?|\s+and\s+")
"""A dash range or a list (``fell 10-12%``, ``fell 3.2% and 4.1%``, ``rose 2%, 3% and 5%``)."""
_SIGNED: Final = frozenset(SIGNS)


@dataclass(frozen=True, slots=True)
class Bound:
    """A direction said of a number: ``sign`` +1 (a rise) or -1 (a fall), the word that says
    it as written."""

    sign: int
    word: str


def _before(text: str, start: int) -> Bound | None:
    """The direction word before the number at ``start``: the words before it, separated by
    spaces only, read backwards across at most three fillers (an opening bracket, quote or
    dash before a word is ignored)."""
    if not start or text[start - 1] not in " \t\u00a0":
        return None
    low = max(0, start - _WINDOW)
    tokens = text[low:start].replace("\t", " ").replace("\u00a0", " ").split(" ")
    if low:
        tokens = tokens[1:]  # the first may be cut by the window
    skipped = 0
    for token in reversed(tokens):
        if not token:
            continue
        word = token.lstrip(_OPENING).lower()  # "(down 3.2%", "—up 4%"
        if word in _UP or word in _DOWN:
            return Bound(1 if word in _UP else -1, token.lstrip(_OPENING))
        if skipped == 3 or word not in _FILL:
            return None
        skipped += 1
    return None


def bind(text: str, numerals: Sequence[Numeral]) -> dict[int, Bound]:
    """The direction bound to each numeral (by its position in ``numerals``), per the module
    docstring; numerals without one are absent. A few words read around each numeral."""
    found: dict[int, Bound] = {}
    previous: Numeral | None = None
    for position, numeral in enumerate(numerals):
        bound: Bound | None = None
        if text[numeral.start] not in _SIGNED:
            bound = _before(text, numeral.start)
            if bound is None and (after := _AFTER.match(text, numeral.end)):
                word = after.group("up") or after.group("down")
                bound = Bound(1 if after.group("up") else -1, word)
            if (
                bound is None
                and previous is not None
                and position - 1 in found
                and previous.percent == numeral.percent
                and _JOINED.fullmatch(text[previous.end : numeral.start])
            ):
                bound = found[position - 1]
        if bound is not None:
            found[position] = bound
        previous = numeral
    return found


_CHANGE_NAME: Final = re.compile(
    r"(?:^|_)(?:change|changes|chg|delta|diff|difference|growth|yoy|qoq|mom|wow|vs|variance)"
    r"(?:$|_)"
)
_CAMEL: Final = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_SPLIT: Final = re.compile(r"[\s.\-/]+")


def _change_name(name: str) -> bool:
    return bool(_CHANGE_NAME.search(_SPLIT.sub("_", _CAMEL.sub("_", name)).lower()))


class ChangeColumns:
    """Which recorded values are changes (see the module docstring), for one check call."""

    def __init__(self, declared: frozenset[str], index: RecordedNumbers) -> None:
        self._declared = declared
        self._index = index
        self._negative: frozenset[tuple[str, str]] | None = None

    def holds(self, record: Recorded) -> bool:
        """Whether ``record`` is a change: its sign is what a direction word is judged by."""
        if record.exact < 0:
            return True
        column = record.column
        if column is None:
            return False
        last = column.rsplit(".", 1)[-1]
        if column in self._declared or last in self._declared or _change_name(column):
            return True
        if self._negative is None:
            self._negative = self._index.negative_columns()
        return record.row is not None and (record.fact, column) in self._negative
