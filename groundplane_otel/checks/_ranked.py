"""Shared by the ranking-reading checks (superlative, ranking_prefix).

Build-time argument validation and the phrases their failure reasons are made of. Everything
here reads a Ranking in O(1) per name except the failure-path hints, which scan once.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from typing import Any

from groundplane_otel._arithmetic import as_fraction, is_number, matches
from groundplane_otel.checks._base import require_name
from groundplane_otel.checks._numbers.sums import offset_text
from groundplane_otel.facts import Ranking

__all__ = [
    "extreme",
    "near_miss",
    "offset",
    "place",
    "quote_names",
    "require_bool",
    "require_name",
    "score_owner",
    "standing",
]

_LIST_LIMIT = 10


def require_bool(builder: str, param: str, value: object) -> None:
    """A flag must be a real bool: 0, 1 and "yes" are refused rather than coerced."""
    if not isinstance(value, bool):
        raise TypeError(f"{builder}: {param} must be True or False, got {value!r}")


def quote_names(names: Sequence[Any], limit: int = _LIST_LIMIT) -> str:
    """``'a', 'b', 'c'``; past ``limit`` names, ``…, (+N more)``."""
    shown = ", ".join(repr(name) for name in names[:limit])
    if len(names) > limit:
        shown += f", … (+{len(names) - limit} more)"
    return shown


def extreme(ranking: Ranking) -> str:
    """``argmax`` or ``argmin``: what "best" means for this ranking."""
    return "argmax" if ranking.higher_is_better else "argmin"


def standing(ranking: Ranking, name: Hashable) -> str:
    """``'north' ranked #2 at 0.0412`` (``, tied with …`` when it shares its score)."""
    return f"{name!r} ranked {place(ranking, name)}"


def place(ranking: Ranking, name: Hashable) -> str:
    """``#2 at 0.0412``, plus ``, tied with 'x', 'y'`` when ``name`` shares its score."""
    position = ranking.position_of(name)
    if position is None:
        return "nowhere (never ranked)"
    score = ranking.scores[position]
    start, end = ranking.block_of(position)
    text = f"#{start + 1} at {score!r}"  # the competition rank: where its tie block starts
    if end - start > 1:
        others = [ranking.names[i] for i in range(start, end) if i != position]
        text += f", tied with {quote_names(others)}"
    return text


def near_miss(ranking: Ranking, claimed: Any) -> str:
    """A hint when an unranked claim loosely equals a ranked name (``"101"`` vs ``101``).

    Names compare type-strictly and case-sensitively; saying which ranked name the claim was
    probably meant to be tells the reader the data is fine and the spelling is not.
    """
    for name in ranking.names:
        if type(name) is type(claimed):
            if isinstance(name, str) and _case_drift(name, claimed):
                return f"; {name!r} is ranked, and names compare case-sensitively"
            continue
        try:
            loose = bool(name == claimed) or str(name) == str(claimed)
        except Exception:  # an exotic __eq__/__str__ must not mask the real failure
            loose = False
        if loose:
            return f"; {name!r} ({type(name).__name__}) is ranked, and names compare type-strictly"
    return ""


def _case_drift(name: str, claimed: object) -> bool:
    return isinstance(claimed, str) and name != claimed and name.casefold() == claimed.casefold()


def offset(claimed: int | float, computed: int | float) -> str:
    """The signed difference, claimed minus computed: ``+490``, ``-0.0043000000000000035``.

    Exact (the difference of the two rationals, then the nearest float), like every other
    "off by" in the library; the two values themselves appear in the same message.
    """
    return offset_text(claimed, as_fraction(computed))


def score_owner(ranking: Ranking, claimed: Any, exclude: Hashable) -> str:
    """``; 0.0412 is the score of 'north' (ranked #2)`` when the claim is another name's score."""
    if not is_number(claimed):
        return ""
    skip = ranking.position_of(exclude)
    for position, (name, score) in enumerate(zip(ranking.names, ranking.scores, strict=True)):
        if position != skip and matches(claimed, score):
            rank = ranking.competition_rank(name)
            return f"; {claimed!r} is the score of {name!r} (ranked #{rank})"
    return ""
