"""Rank claims in prose, checked against the Ranking facts numbers_recorded reads.

A rank claim is a rank phrase tied to an entity the ranking names. Read (on the text folded
by ``_text.normalize``: case-folded, hyphens as spaces):

- an ordinal or a rank number after a rank verb: "North was third", "came in first", "ranked
  2nd", "ranked #2", "ranked 2", "is No. 1", "finished last", "was the runner-up", "took the
  top spot",
  "came a close second", "North led with 4.2M", "our top performer was North", "performed
  best", "is the clear winner", "won this week", "came out on top" (1st);
- "followed by": "North led, followed by South and East" (the next ranks, in order);
- a numbered ranking after a rank header ("Ranking by revenue: 1. North 2. South", a
  ``| 1 | North |`` table): item N claims rank N;
- a superlative, with or without an ordinal: "the second-highest", "the lowest", "the best",
  "third-largest", "the worst", after a verb ("North had the second-highest revenue"), in
  apposition ("North, the third-largest market,"; "North (#2)") or before the entity ("the
  second-highest was North", "Second place: North", "the top spot went to North");
- a set: "North is in the top 3", "the top 3 regions were North, South and East" (each
  entity listed must rank within the top 3; the order of the list is not read).

Meaning: an ordinal alone, "best", "top", "runner-up" (2nd) count in the ranking's own order
(best first, so "first" of a lower-is-better ranking is its lowest); "highest", "largest",
"biggest", "greatest" count down from the highest score, "lowest", "smallest" up from the
lowest; "worst", "bottom", "last" count from the end. Ties: an entity tied with others holds
every rank its tie block spans ("third" and "fourth" are both right for a 3rd-4th tie).

Not rank claims: an ordinal no rank verb or rank word ties to an entity ("the third quarter",
"First, ...", "for the second time", "2nd shift", "the first region to report"), an ordinal
followed by a noun ("the first region"), an entity no Ranking fact in scope names, a
superlative followed by a noun naming another measure ("the highest margin" on a ranking keyed
``revenue``: see ``rank_words.GENERIC`` for the nouns that name no measure), and a claim
qualified by another measure or period ("first in headcount", "second in Q3").

A Table is ranked by the column a claim names ("second on revenue", "the lowest margin", "top 3
by orders"; a declared alias counts): see ``rank_scope``. Ordered lists are read in order: "#1
A, #2 B", and "followed by" (also after "top N"); "No. 1 store by sales" reads "store" as the
entity noun and "sales" as the measure.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator, Mapping, Sequence
from itertools import chain
from typing import Any, Final

from groundplane_otel.checks._numbers.prose_words import ORDINAL_WORDS, WORD_VALUES
from groundplane_otel.checks._numbers.rank_judge import Claim, judge
from groundplane_otel.checks._numbers.rank_receipt import Direction, RankReceipt
from groundplane_otel.checks._numbers.rank_scope import RankScope
from groundplane_otel.checks._numbers.rank_words import FUNCTION_WORDS, GENERIC, MODIFIERS
from groundplane_otel.checks._text import Folded, normalize

__all__ = ["RankReceipt", "RankScope", "rank_receipts"]


_ENTITY, _TAIL = "\ue000", "\ue001"
_ORDINAL_VALUES: Final = {word: position for position, word in enumerate(ORDINAL_WORDS[:19], 1)}
_ORDINAL_VALUES.update(
    {word: 20 + 10 * i for i, word in enumerate(ORDINAL_WORDS[19:27])} | {"hundredth": 100}
)
_SMALL: Final = {word: value for word, value in WORD_VALUES.items() if 1 <= value <= 20}
_ORDINAL = "|".join(sorted(_ORDINAL_VALUES, key=len, reverse=True))
_TENS = "twenty|thirty|forty|fifty|sixty|seventy|eighty|ninety"
_COUNT = r"\d{1,4}|" + "|".join(sorted(_SMALL, key=len, reverse=True))
_ORD = rf"(?:(?:{_TENS})\s)?(?:{_ORDINAL})|\d{{1,4}}(?:st|nd|rd|th)"
_SUPERLATIVE: Final[dict[str, Direction]] = {
    "highest": "high",
    "largest": "high",
    "biggest": "high",
    "greatest": "high",
    "lowest": "low",
    "smallest": "low",
    "best": "best",
    "strongest": "best",
    "worst": "worst",
    "weakest": "worst",
}


@functools.lru_cache(maxsize=64)
def _phrase(extra: tuple[str, ...] = ()) -> re.Pattern[str]:
    """Every rank phrase; ``extra``: superlatives declared as aliases ("busiest")."""
    sups = "|".join(sorted((*_SUPERLATIVE, *extra), key=len, reverse=True))
    first = "".join(sorted({word[0] for word in extra} - set("0123456789#fstenhlbgwrco")))
    return re.compile(
        rf"(?=[0-9#fstenhlbgwrco{first}])(?:"
        rf"\b(?:(?P<sord>{_ORD})\s)?(?P<sup>{sups})"
        r"(?:\s(?:ranked|performing|grossing|rated|scoring|selling|earning|placed))?\b"
        r"|\b(?P<set>top|bottom)\s(?P<n>" + _COUNT + r")\b"
        r"|\b(?P<topspot>top|bottom)\s(?:spot|position|place|slot|ranked|performer|performing|"
        r"seller|selling|earner|grossing|scorer|scoring)\b"
        r"|\b(?P<led>led|leads|topped|tops)(?=\s(?:with|all|every|on|in|the\s(?:pack|field|ranking|"
        r"rankings|list|table|leaderboard|chart|way|group))\b|\s?[,.;]|$)"
        r"|\b(?P<runner>runner\s?up)\b"
        r"|\b(?P<trail>(?:trailed|trails|trailing|behind)\sonly|only\sbehind)(?=\s\ue000)"
        r"|\b(?P<won>winner|came\sout\son\stop|on\stop(?!\sof)|(?:won|wins)(?=\s(?:with|this|last|"
        r"overall|outright|the\s(?:week|month|quarter|year|period|ranking|race|round))\b|\s?[,.;]|$))\b"
        rf"|\b(?P<ord>{_ORD}|last)\b(?P<place>\s(?:place|position|spot|ranked|overall))?"
        rf"|(?P<num>(?:#|\bno\.?\s?|\bnumber\s)(?:{_COUNT})|(?:(?<=\branked\s)|(?<=\branks\s))\d{{1,4}})\b"
        r"(?:\s(?:place|position|spot|overall))?"
        r")"
    )


_ENTITY_RUN = rf"{_ENTITY}{_TAIL}*(?:'s|\u2019s)?"
_VERBS = (
    "is|was|were|are|be|been|being|ranked|ranks|rank|ranking|placed|places|placing|finished|"
    "finishes|finishing|came|comes|coming|landed|lands|sits|sat|stood|stands|ended|ends|took|"
    "takes|taking|tied|ties|holds|held|holding|remains|remained|stayed|stays|slipped|slips|moved|moves|"
    "climbed|rose|dropped|fell|had|has|have|posted|posts|recorded|records|saw|sees|delivered|"
    "delivers|reported|reports|generated|earned|achieved|claimed|claims|secured|secures|made|"
    "makes|cracked|shows|showed|led|leads|topped|tops|with|as|remain|stay|sit|finish|place|"
    "performed|performs|did|does|fared|fares|scored|scores|converted|converts"
)
_PARTICLES = (
    r"(?:\s(?:up|in|out|at|as|into|on|back|down|among|within|inside|of|to|ahead|for|still|now|"
    r"currently|again|solidly|firmly|clearly|narrowly|overall))*"
)
_ADJECTIVE = r"(?:\s(?:close|distant|strong|solid|clear|comfortable|narrow|respectable|joint))?"
_DETERMINER = r"(?:the|a|an|our|its|their|your)"
_BEFORE = re.compile(rf"(?:^|\s)(?:{_VERBS}){_PARTICLES}(?:\s{_DETERMINER})?{_ADJECTIVE}\s?$")
_LED_BY = re.compile(rf"{_ENTITY_RUN}(?:\s[a-z]+){{0,2}}\s$")  # "North (clearly) led with"
_APPOSITION = re.compile(rf"{_ENTITY_RUN}\s?(?:,|\(|:|-|\sin|\sat)\s?(?:{_DETERMINER}\s)?$")
_MARKER = r"(?:\d{1,2}[.)]\s)?"
_AFTER = re.compile(
    rf"(?:\s[a-z]+){{0,5}}?\s?(?:,\s)?(?:(?:was|is|were|are|went\sto|goes\sto|belongs\sto|"
    rf"belonged\sto|came\sfrom|comes\sfrom|:|-|include|included|includes|being|remains)\s?)"
    rf"(?:the\s)?{_MARKER}(?=({_ENTITY}))"
)
_OPENER = re.compile(
    r"\s*(?:coming\sin|finishing|placing|ranking|ranked|sitting|landing|ending\sup|in)\s"
    r"(?:at\s|the\s)?"
)
_OPENED = re.compile(rf"(?:\s(?:place|position|spot|overall))?,\s(?:the\s)?(?=({_ENTITY}))")
_NAMED_AFTER = re.compile(rf"(?:\s[a-z]+){{0,3}},\s(?:the\s)?(?=({_ENTITY}))")  # "…revenue, LATAM"
_LIST_ITEM = re.compile(
    rf"{_ENTITY}{_TAIL}*(?:'s|\u2019s)?(?:\s?(?:,\sand|,|and|&|or|;)\s?)?\s?{_MARKER}"
)
_CLAUSE = re.compile(r"[.;!?\n]\s|[.;!?\n]$|\s(?:but|while|whereas|although)\s")
# What an ordinal alone must be followed by to be a rank (not "the third quarter").
_RANK_END = re.compile(
    r"\s?(?:[,.;:!?()\]\u2013\u2014]|$)|\s(?:with|at|on|in|among|of|overall|behind|after|ahead|by|for|and|"
    r"but|while|out|across|this|again|globally|nationally|place|position|spot|followed|"
    r"once|too|both|only)\b|\sto\s(?:the\s)?\ue000"  # "second to North", not "first to report"
)
_DISCOURSE_AFTER = re.compile(r"\s(?:year|quarter|month|week|time|half|day|round|shift)\b")
_OBJECT_BEFORE = re.compile(
    r"(?:behind|ahead\sof|after|than|over|trailing|trailed|trails|beating|beat|beats|below|"
    r"above|outpacing|outpaced|past|overtook|overtaking|versus|vs\.?|from|with)\s?$"
)
_QUALIFIER = re.compile(r"\s(?:in|by|for|on)\s(?:the\s|terms\sof\s)?([a-z]+)")
_NOUN = re.compile(r"\s([a-z]+)")
_TRIGGER = re.compile(
    rf"(?i:\b(?:{_ORDINAL}|\d{{1,4}}(?:st|nd|rd|th)|{'|'.join(_SUPERLATIVE)}|top|bottom|runner|"
    r"last|led|leads|topped|tops|no|number|ranked|ranks|rank|ranking|rankings|leaderboard|"
    r"standings|winner|won|wins|trailed|trails|trailing|behind)\b|#\d)"
)
"""A text without any of these words holds no rank claim (checked before any folding)."""
_SENTENCE = re.compile(r"[.;!?](?:\s|$)")
_FOLLOWED = re.compile(r"\bfollowed\s(?:closely\s)?by(?=\s(?:the\s)?(\ue000))")
_FOLLOWER = re.compile(
    rf"{_ENTITY}{_TAIL}*(?:'s|\u2019s)?(?:\s\([^)]*\))?(?:\s(?:at|with)\s[^,;.]*?)?"
    r"(?:,\sand\s|,\s(?:then\s)?|\sand\s(?:then\s)?|\sthen\s)(?:the\s)?"
)
_LIST_RANK = re.compile(rf"(?<![\w.,])(\d{{1,2}})(?:[.):]|\s\|)\s(?:\*\*)?(?={_ENTITY})")
_RANK_HEADER = re.compile(r"\b(?:rank|ranks|ranking|rankings|ranked|top|leaderboard|standings)\b")
_REVERSED = re.compile(r"\b(?:lowest|smallest|bottom|worst|least|fewest|ascending|reverse)\b")
_OPENING = re.compile(r"\s*(?:in|at)?\s*")  # "Second: North", "In second place, North"
_ITEM = re.compile(rf"\s?[:\-]?\s?(?={_ENTITY})")  # "#2 Oak", "No. 2: Oak"
_SENTENCE_MEASURE = re.compile(r"\b(?:by|on)\s(?:the\s|terms\sof\s)?([a-z]+)")
_EVALUATIVE: Final = frozenset({"best", "strongest", "worst", "weakest"})
_CUES: Final = frozenset({"was", "were", "is", "are", "belonged", "went", "came", "in", "by",
                          "for", "on", "among", "of", "and", "but"})  # fmt: skip
"""Words after a superlative's noun that start the rest of the clause, not a second noun."""


def _count(text: str) -> int:
    digits = re.search(r"\d+", text)
    if digits:
        return int(digits.group())
    word = text.rsplit(maxsplit=1)[-1]
    return _SMALL.get(word) or _ORDINAL_VALUES.get(word, 0)


def _ordinal(text: str) -> int:
    words = text.split()
    if words[0][0].isdigit():
        return int(re.match(r"\d+", words[0]).group())  # type: ignore[union-attr]
    if len(words) == 2:
        return WORD_VALUES[words[0]] + _ORDINAL_VALUES[words[1]]
    return _ORDINAL_VALUES[words[0]]


def _meaning(
    match: re.Match[str], aliased: Mapping[str, Direction]
) -> tuple[int, Direction, bool, bool] | None:
    """(rank, direction, within, self-evident) of a rank phrase; self-evident phrases need no
    rank verb ("the second-highest", "third place", "top 3"). ``aliased``: the superlatives
    declared as aliases ("busiest")."""
    if sup := match.group("sup"):
        rank = _ordinal(match.group("sord")) if match.group("sord") else 1
        return rank, _SUPERLATIVE.get(sup) or aliased[sup], False, True
    if match.group("set"):
        direction: Direction = "best" if match.group("set") == "top" else "worst"
        count = _count(match.group("n"))
        return (count, direction, True, True) if count else None
    if match.group("led") or match.group("won"):
        return 1, "best", False, True
    if match.group("topspot"):
        return 1, "best" if match.group("topspot") == "top" else "worst", False, True
    if match.group("runner") or match.group("trail"):
        return 2, "best", False, True
    if match.group("ord"):
        word = match.group("ord")
        if word == "last":
            return 1, "worst", False, bool(match.group("place"))
        return _ordinal(word), "best", False, bool(match.group("place"))
    count = _count(match.group("num"))
    return (count, "best", False, False) if count else None


def _marked(folded: str, spans: Sequence[tuple[int, int]]) -> str:
    """``folded`` with each entity span written as one placeholder run of the same length."""
    parts, last = [], 0
    for start, end in spans:
        parts += [folded[last:start], _ENTITY + _TAIL * (end - start - 1)]
        last = end
    parts.append(folded[last:])
    return "".join(parts)


def _entity_spans(
    folded: Folded, text: str, scope: RankScope
) -> dict[tuple[int, int], list[tuple[int, Any]]]:
    """Folded span → (ranking index, name) of every entity found, overlaps resolved longest
    first. Names match case-insensitively, except a short all-capitals name ("US", "EU"),
    which must be written as recorded ("us" is a pronoun)."""
    found: dict[tuple[int, int], list[tuple[int, Any]]] = {}
    for source in scope.sources:
        for hit in source.names.find(folded.text):
            name = hit.payload
            if isinstance(name, str) and len(name) <= 4 and name.isupper():
                start, end = folded.span(hit.start, hit.end)
                if text[start:end] != name:
                    continue
            found.setdefault((hit.start, hit.end), []).extend(
                (position, name) for position in source.orders
            )
    kept: dict[tuple[int, int], list[tuple[int, Any]]] = {}
    taken_until = -1
    for span in sorted(found, key=lambda s: (s[0], -s[1])):
        if span[0] >= taken_until:
            kept[span] = found[span]
            taken_until = span[1]
    return kept


def _clause_start(breaks: Sequence[int], at: int) -> int:
    """Where the clause holding ``at`` starts (``breaks``: the end of every clause break)."""
    position = bisect.bisect_right(breaks, at) - 1
    return breaks[position] if position >= 0 else 0


def _subject(marked: str, begin: int, end: int) -> int | None:
    """The nearest entity in ``marked[begin:end]`` that is not the object of a comparison."""
    best = None
    for found in re.finditer(rf"{_ENTITY}{_TAIL}*", marked[begin:end]):
        at = begin + found.start()
        if not _OBJECT_BEFORE.search(marked, begin, at):
            best = at
    return best


_JOIN = r"(?:,\sand\s|,\s|\sand\s)"
_RESPECTIVELY = re.compile(
    rf"(?P<names>{_ENTITY}{_TAIL}*(?:{_JOIN}{_ENTITY}{_TAIL}*)+)\s(?:were|are|ranked|placed|"
    rf"finished|came(?:\sin)?)\s(?P<ranks>(?:{_ORD})(?:{_JOIN}(?:{_ORD}))+)\b"
)


def _respectively(marked: str, scope_spans: set[int]) -> Iterator[Claim]:
    """ "A and B were first and second (on revenue)(, respectively)": each entity claims the
    rank in the same place of the second list (lists of unequal length are not read)."""
    for found in _RESPECTIVELY.finditer(marked):
        names = [hit.start() for hit in re.finditer(rf"{_ENTITY}{_TAIL}*", found.group("names"))]
        ranks = re.findall(_ORD, found.group("ranks"))
        if len(names) != len(ranks):
            continue
        measure = _measure(marked, found.end("ranks"), False)
        start, end = found.span("ranks")
        for offset, rank in zip(names, ranks, strict=True):
            at = found.start("names") + offset
            if at in scope_spans:
                yield Claim(start, end, _ordinal(rank), "best", False,
                             ((at, at + _run(marked, at)),), measure)  # fmt: skip


def _claims(
    marked: str, scope_spans: set[int], aliased: Mapping[str, Direction]
) -> Iterator[Claim]:
    breaks = [found.end() for found in _CLAUSE.finditer(marked)]
    taken = [found.span("ranks") for found in _RESPECTIVELY.finditer(marked)]
    for match in _phrase(tuple(aliased)).finditer(marked):
        if any(low <= match.start() < high for low, high in taken):
            continue  # an ordinal of a "respectively" list: read by _respectively
        meaning = _meaning(match, aliased)
        if meaning is None:
            continue
        rank, direction, within, evident = meaning
        start, end = match.span()
        begin = _clause_start(breaks, start)
        before = marked[begin:start]
        lead = re.search(rf"{_DETERMINER}\s$", before)
        bare = not match.group("sup") and not within and not evident
        numbered = match.group("num") is not None and match.group("num")[:1] in "#n"
        if numbered and (item := _ITEM.match(marked, end)) and item.end() in scope_spans:
            at = item.end()  # "#2 Oak", "No. 2: Oak": an item of an ordered list
            measure = _sentence_measure(marked, start)
            yield Claim(start, end, rank, direction, False, ((at, at + _run(marked, at)),),
                         measure)  # fmt: skip
            continue
        generic = numbered and (noun := _NOUN.match(marked, end)) and noun.group(1) in GENERIC
        if (
            bare
            and not generic
            and (_DISCOURSE_AFTER.match(marked, end) or not _RANK_END.match(marked, end))
        ):
            continue
        sup = match.group("sup")
        if match.group("trail"):  # "A trailed only B (and C) on revenue": one rank per entity
            ahead, at = 1, end + 1
            while (item := _LIST_ITEM.match(marked, at)) and item.end() < len(marked):
                if marked[item.end()] != _ENTITY:
                    break
                ahead, at = ahead + 1, item.end()
            rank = ahead + 1
            measure = _measure(marked, at + _run(marked, at), False)
        else:
            measure = _measure(marked, end, bool(sup))
        if sup in aliased:
            measure = (sup, *measure)  # "the busiest store": the alias names its column
        names: list[int] = []
        if (
            match.group("led")
            or match.group("trail")
            or (match.group("won") and not match.group("won").startswith("winner"))
        ):
            if led := _LED_BY.search(before):
                names.append(begin + led.start())
        elif _BEFORE.search(before) and (subject := _subject(marked, begin, start)) is not None:
            names.append(subject)
        elif found := _APPOSITION.search(before):
            names.append(begin + found.start())
        elif _OPENER.fullmatch(before) and (after := _OPENED.match(marked, end)):
            names.append(after.start(1))  # "Coming in second, EMEA …", "Ranked third, APAC …"
        elif (evident or lead or _OPENING.fullmatch(before)) and (
            after := _AFTER.match(marked, end) or (lead and _NAMED_AFTER.match(marked, end))
        ):
            names.append(after.start(1))
            if within:
                at = after.start(1)
                while item := _LIST_ITEM.match(marked, at):
                    at = item.end()
                    if at < len(marked) and marked[at] == _ENTITY:
                        names.append(at)
        if not names:
            continue
        spans = tuple((at, at + _run(marked, at)) for at in names if at in scope_spans)
        if not spans:
            continue
        evaluative = sup in _EVALUATIVE
        yield Claim(start, end, rank, direction, within, spans, measure, evaluative)
        if len(spans) == 1 and not within:
            yield from _followers(marked, end, rank, direction, measure, scope_spans, evaluative)
        elif len(spans) == 1 and _followed(marked, spans[0][1]):
            # "the top 3 were Elm, followed by Oak and Pine": read in order
            yield Claim(start, end, 1, direction, False, spans, measure)
            yield from _followers(marked, end, 1, direction, measure, scope_spans, False)


def _followed(marked: str, at: int) -> bool:
    """Whether "followed by" comes right after the entity ending at ``at``."""
    return re.match(r"(?:\s\([^)]*\))?,?\s(?:closely\s)?followed\sby\b", marked[at:]) is not None


def _sentence_measure(marked: str, at: int) -> tuple[str, ...]:
    """The measure an ordered list names before its items ("Top stores by revenue: #1 …")."""
    stop = max(marked.rfind(". ", 0, at), marked.rfind("\n", 0, at), 0)
    named = [found.group(1) for found in _SENTENCE_MEASURE.finditer(marked, stop, at)]
    return tuple(named[-1:])


def _followers(
    marked: str,
    end: int,
    rank: int,
    direction: Direction,
    measure: tuple[str, ...],
    scope_spans: set[int],
    evaluative: bool,
) -> Iterator[Claim]:
    """ "North led, followed by South and East": the entities listed after "followed by" in
    the same sentence claim the next ranks, in order."""
    stop = _SENTENCE.search(marked, end)
    found = _FOLLOWED.search(marked, end, stop.start() if stop else len(marked))
    if found is None:
        return
    at, offset = found.start(1), 1
    while at < len(marked) and marked[at] == _ENTITY and at in scope_spans:
        length = _run(marked, at)
        yield Claim(found.start(), found.end(), rank + offset, direction, False,
                     ((at, at + length),), measure, evaluative)  # fmt: skip
        item = _FOLLOWER.match(marked, at)
        if item is None:
            return
        at, offset = item.end(), offset + 1


def _list_claims(marked: str, scope_spans: set[int]) -> Iterator[Claim]:
    """A numbered ranking ("Ranking by revenue: 1. North, 2. South", "| 1 | North |") after a
    rank header: item N claims rank N. Numbers must run 1, 2, 3 … from the first item."""
    items = [item for item in _LIST_RANK.finditer(marked) if item.end() in scope_spans]
    if len(items) < 2 or int(items[0].group(1)) != 1:
        return
    header = _RANK_HEADER.search(marked, 0, items[0].start())
    if header is None or _REVERSED.search(marked, header.start(), items[0].start()):
        return
    named = _SENTENCE_MEASURE.search(marked, header.start(), items[0].start())
    measure = (named.group(1),) if named else ()  # "Ranking by revenue:"
    for expected, item in enumerate(items, 1):
        if int(item.group(1)) != expected:
            return
        at = item.end()
        yield Claim(item.start(1), item.end(1), expected, "best", False,
                     ((at, at + _run(marked, at)),), measure)  # fmt: skip


def _measure(marked: str, end: int, superlative: bool) -> tuple[str, ...]:
    """The words after a rank phrase that may name another measure or period: the noun after
    a superlative (modifiers skipped: "highest total revenue" → revenue), and the word after
    "in/by/for/on" ("first in Q3", "second by headcount", "top 3 stores by revenue")."""
    found: list[str] = []
    at = end
    if superlative:
        while (noun := _NOUN.match(marked, at)) and noun.group(1) in MODIFIERS:
            at = noun.end()
        if noun and noun.group(1) not in FUNCTION_WORDS:
            found.append(noun.group(1))
            at = noun.end()
            after = _NOUN.match(marked, at)  # "the highest revenue GROWTH": growth is measured
            if after and after.group(1) not in FUNCTION_WORDS and after.group(1) not in _CUES:
                found.append(after.group(1))
                at = after.end()
    elif (noun := _NOUN.match(marked, at)) and noun.group(1) in GENERIC:
        at = noun.end()  # "No. 2 region by sales"
    if qualifier := _QUALIFIER.match(marked, at):
        found.append(qualifier.group(1))
    return tuple(found)


def _run(marked: str, at: int) -> int:
    length = 1
    while at + length < len(marked) and marked[at + length] == _TAIL:
        length += 1
    return length


def rank_receipts(
    scope: RankScope, text: str, where: str
) -> tuple[list[RankReceipt], list[tuple[int, int]]]:
    """A receipt for every rank claim in ``text`` that no ranking in scope supports, and the
    span of every rank claim read (its digits are a rank, not a number to look up)."""
    aliased: dict[str, Direction] = dict(scope.superlatives)
    if not _TRIGGER.search(text) and not (
        aliased and any(word in text.lower() for word in aliased)
    ):  # no word a rank claim is made of: nothing to fold or find
        return [], []
    folded: Folded = normalize(text)
    entities = _entity_spans(folded, text, scope)
    if not entities:
        return [], []
    marked = _marked(folded.text, list(entities))
    starts = {span[0]: span for span in entities}
    receipts: list[RankReceipt] = []
    read: list[tuple[int, int]] = []
    spans = set(starts)
    for claim in chain(
        _claims(marked, spans, aliased),
        _list_claims(marked, spans),
        _respectively(marked, spans),
    ):
        read.append(folded.span(claim.start, claim.end))
        for span in claim.names:
            receipt = judge(scope, claim, entities[starts[span[0]]], folded.span, text, where)
            if receipt is not None:
                receipts.append(receipt)
    return receipts, read
