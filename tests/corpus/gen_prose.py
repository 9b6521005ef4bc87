"""Corpus cases for numbers_recorded: prose answers from templates with many phrasings.

Each answer is written from a freshly generated table (ints, signed two-place floats, small
counts, four-place ratios, millions) in a format picked at random (plain, grouped, currency,
words, magnitude, percent, trailing zeros, Unicode minus, German/French separators), wrapped in
distractors the rules must skip (dates, times, ordinals, identifiers, list markers). A wrong
answer changes one number by a known failure; the oracle below (independent of the checker)
asserts each label and derives the reason code a rejection must carry.
"""

from __future__ import annotations

import random
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from typing import Any

from ._common import Emitter, names, repeat
from .model import Case, FactSpec

FACT = "sales"
ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
    "twenty",
]
TEMPLATES = (
    "{e} reported {n} this quarter.",
    "For {e}, the figure was {n}.",
    "{e} came in at {n}, ahead of plan.",
    "The latest number for {e} is {n}.",
    "We recorded {n} for {e} in the period.",
    "According to the report, {e} reached {n}.",
    "{e}: {n}.",
    "In total {e} stood at {n} at close.",
    "Looking at {e}, the value is {n} (see the table).",
    "{e} posted {n}; the team expected less.",
    "Our analysis shows {n} for {e}.",
    "It was {e} that delivered {n}.",
    "The dashboard lists {e} with {n}.",
    "{e} ended the window on {n}.",
    "Per the warehouse query, {e} shows {n}.",
    "Notably, {e} hit {n} this time.",
)
DISTRACTORS = (
    "Report of 2026-11-30 at 10:45.",
    "Prepared Nov 30, 2026 by the Q3 team (v2.1).",
    "Ticket SKU-1234 and #12 refer to the 2nd review.",
    "See [3] and the third appendix, built with gpt-4o.",
    "Filed on 30/11/2026 at 9am, host 10.0.0.1.",
)
COLUMNS = ("revenue", "margin", "units", "share", "volume")


# -- the oracle (independent of groundplane_otel) --------------------------------------------


def exact(value: int | float) -> Decimal:
    return Decimal(value) if isinstance(value, int) else Decimal(repr(value))


def recorded(rows: list[dict[str, Any]], args: dict[str, Any]) -> set[Decimal]:
    found = {exact(v) for row in rows for v in row.values() if type(v) in (int, float)}
    return found | {exact(v) for v in args.values() if type(v) in (int, float)}


def shape(value: Decimal) -> tuple[int, tuple[int, ...]]:
    sign, digits, _ = value.normalize().as_tuple()
    return sign, digits


def power_apart(a: Decimal, b: Decimal) -> int:
    return abs(int(a.normalize().as_tuple().exponent) - int(b.normalize().as_tuple().exponent))


def rounds(pool: set[Decimal], value: Decimal, quantum: Decimal, modes: tuple[str, ...]) -> bool:
    table = {"half_even": ROUND_HALF_EVEN, "half_up": ROUND_HALF_UP}
    return any(r.quantize(quantum, rounding=table[m]) == value for r in pool for m in modes)


def code_of(pool: set[Decimal], value: Decimal, quantum: Decimal, percent: bool, echo: bool) -> str:
    """The reason code of an unrecorded number, restating the documented priority."""
    if echo:
        return "number_echo_only"
    if value and -value in pool:
        return "number_sign_flipped"
    if percent and value.scaleb(-2) in pool:
        return "number_ratio_undeclared"
    if rounds(pool, value, quantum, ("half_even", "half_up")):
        return "number_rounding_undeclared"
    if value and any(
        shape(r) == shape(value) and 0 < power_apart(r, value) <= 15 for r in pool if r
    ):
        return "number_scale_mismatch"
    return "number_unrecorded"


# -- writing numbers ------------------------------------------------------------------------


def plain(value: Decimal) -> str:
    return format(value, "f")


def grouped(value: Decimal, group: str = ",", mark: str = ".") -> str:
    whole, _, fraction = plain(abs(value)).partition(".")
    parts = []
    while len(whole) > 3:
        parts.insert(0, whole[-3:])
        whole = whole[:-3]
    parts.insert(0, whole)
    return ("-" if value < 0 else "") + group.join(parts) + (mark + fraction if fraction else "")


def write(rng: random.Random, value: Decimal, column: str) -> tuple[str, str]:
    """(text, format name) of a value in a format valid for it (English locale)."""
    styles = ["plain", "grouped", "zeros"]
    if value >= 0 and column in ("revenue", "volume"):
        styles.append("currency")
    if value < 0:
        styles.append("minus")
    if column == "units" and 0 <= value <= 20:
        styles += ["words", "words"]
    if column == "volume":
        styles += ["magnitude", "magnitude_word"]
    if column == "margin":
        styles.append("percent")
    style = rng.choice(styles)
    if style == "plain":
        return plain(value), style
    if style == "grouped":
        return grouped(value), style
    if style == "zeros":
        return grouped(value) + ("0" if "." in plain(value) else ".00"), style
    if style == "currency":
        return "$" + grouped(value), style
    if style == "minus":
        return grouped(value).replace("-", "\u2212"), style
    if style == "words":
        return ONES[int(value)], style
    if style == "percent":
        return grouped(value) + rng.choice(["%", " percent"]), style
    millions = plain(value.scaleb(-6).normalize())
    return (millions + "M", style) if style == "magnitude" else (f"{millions} million", style)


def table(rng: random.Random, count: int) -> list[dict[str, Any]]:
    rows = []
    for entity in names(rng, count):
        rows.append(
            {
                "entity": entity,
                "revenue": rng.randrange(1000, 10_000_000),
                "margin": round(rng.uniform(-40, 40), 2),
                "units": rng.randrange(0, 21),
                "share": round(rng.uniform(0.001, 0.2), 4),
                "volume": rng.randrange(1, 9999) * 10 ** rng.choice((4, 5)),
            }
        )
    return rows


def sentence(rng: random.Random, entity: str, number: str) -> str:
    return rng.choice(TEMPLATES).format(e=entity.capitalize(), n=number)


def answer(rng: random.Random, parts: list[str]) -> str:
    """The sentences, with distractors mixed in and sometimes as a numbered list."""
    lines = parts + rng.sample(DISTRACTORS, rng.randint(0, 2))
    rng.shuffle(lines)
    if rng.random() < 0.3:
        return "\n".join(f"{i}. {line}" for i, line in enumerate(lines, 1))
    return " ".join(lines)


def prose_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("numbers_recorded", cases, FACT)

    def setup(rng: random.Random) -> tuple[list[dict[str, Any]], dict[str, Any], list[FactSpec]]:
        rows = table(rng, rng.randint(2, 12))
        args = {"year": 2026, "limit": len(rows)}
        spec = FactSpec("table", FACT, rows, {"key": "entity", "args": args})
        return rows, args, [spec]

    def right(rng: random.Random, rows: list[dict[str, Any]], k: int) -> list[str]:
        parts = []
        for row in rng.sample(rows, min(k, len(rows))):
            column = rng.choice(COLUMNS[:3] + ("volume",))
            parts.append(sentence(rng, row["entity"], write(rng, exact(row[column]), column)[0]))
        return parts

    def correct(rng: random.Random) -> bool:
        rows, _, facts = setup(rng)
        text = answer(rng, right(rng, rows, rng.randint(1, 4)))
        emit("correct:formats", "supported", facts, {"field": "summary"}, {"summary": text})
        return True

    def correct_options(rng: random.Random) -> bool:
        rows, _, facts = setup(rng)
        row = rng.choice(rows)
        kind = rng.choice(["ratio", "rounded", "range", "locale", "echo"])
        check: dict[str, Any] = {"field": "summary"}
        if kind == "ratio":
            number, check["percent_as_ratio"] = plain(exact(row["share"]).scaleb(2)) + "%", True
        elif kind == "rounded":
            quantum = Decimal(rng.choice(["1", "0.1", "1E+3", "1E+5"]))
            value = exact(row["revenue"]).quantize(quantum, rounding=ROUND_HALF_EVEN)
            number = plain(value) if quantum < 1000 else plain(value.scaleb(-6).normalize()) + "M"
            if quantum == 1000:
                number = plain(value.scaleb(-3).normalize()) + "k"
            check["rounding"] = "half_even"
        elif kind == "range":
            low, high = sorted([exact(r["units"]) for r in rng.sample(rows, 2)])
            dash = rng.choice(["-", "\u2013", " to "])
            number = f"{plain(low)}{dash}{plain(high)}"
        elif kind == "locale":
            number, check["locale"] = grouped(exact(row["margin"]), ".", ","), "de"
        else:
            number = grouped(exact(row["revenue"]))
            facts = [*facts, FactSpec("value", "question", f"Is it {number} for {row['entity']}?")]
            check["question_fact"] = "question"
        others = [] if kind == "locale" else right(rng, rows, 1)  # English-written sentences
        text = answer(rng, [sentence(rng, row["entity"], number), *others])
        emit(f"correct:{kind}", "supported", facts, check, {"summary": text})
        return True

    def wrong(kind: str) -> Any:
        def make(rng: random.Random) -> bool:
            rows, args, facts = setup(rng)
            pool = recorded(rows, args)
            row = rng.choice(rows)
            check: dict[str, Any] = {"field": "summary"}
            percent, echo = False, False
            quantum = Decimal(1)
            if kind == "scale_slip":
                value = exact(row["revenue"]).scaleb(rng.choice((-1, 1, 2)))
                number = grouped(value)
            elif kind == "digit_typo":
                text = plain(exact(row[rng.choice(("revenue", "margin"))]))
                spots = [i for i, c in enumerate(text) if c.isdigit()]
                spot = rng.choice(spots)
                digit = rng.choice([d for d in "0123456789" if d != text[spot]])
                number = text[:spot] + digit + text[spot + 1 :]
                value = Decimal(number)
            elif kind == "sign_dropped":
                value = -exact(row["margin"])
                if not value:
                    return False
                number = grouped(value)
            elif kind == "echo_only":
                value = exact(rng.randrange(1000, 10_000_000))
                number = grouped(value)
                question = f"Did {row['entity']} make {number}?"
                facts = [*facts, FactSpec("value", "question", question)]
                check["question_fact"], echo = "question", True
            elif kind == "rounding_undeclared":
                value = exact(row["revenue"]).quantize(Decimal("1E+5"), rounding=ROUND_HALF_EVEN)
                number = plain(value.scaleb(-6).normalize()) + "M"
            elif kind == "ratio_undeclared":
                value, percent = exact(row["share"]).scaleb(2), True
                number = plain(value) + "%"
            elif kind == "pp_difference":
                first, second = rng.sample(rows, 2)
                value, percent = exact(first["margin"]) - exact(second["margin"]), True
                number = plain(value) + "%"
            elif kind == "invented":
                value = Decimal(rng.randrange(1000, 10_000_000))
                number = rng.choice([grouped(value), "$" + grouped(value), plain(value)])
            elif kind == "words_mismatch":
                value = Decimal(rng.randrange(0, 21))
                number = ONES[int(value)]
            else:  # range_end: one end of a range is not recorded
                low = exact(row["units"])
                value = low + rng.randint(21, 40)
                number = f"{plain(low)}\u2013{plain(value)}"
            if kind in ("rounding_undeclared",):
                quantum = Decimal("1E+5")
            elif "." in plain(value):
                quantum = Decimal(1).scaleb(plain(value).index(".") - len(plain(value)) + 1)
            if value in pool:
                return False
            if kind == "words_mismatch" and value == 1:
                return False  # "one" alone is the pronoun rule, never a number
            code = code_of(pool, value, quantum, percent, echo)
            parts = [sentence(rng, row["entity"], number), *right(rng, rows, rng.randint(0, 2))]
            text = answer(rng, parts)
            emit(kind, "unsupported", facts, check, {"summary": text}, code)
            return True

        make.__name__ = kind
        return make

    repeat(rng, per_class * 3, correct)
    repeat(rng, per_class, correct_options)
    for kind in FAILURES:
        repeat(rng, per_class, wrong(kind))
    return cases


FAILURES = (
    "scale_slip",
    "digit_typo",
    "sign_dropped",
    "echo_only",
    "rounding_undeclared",
    "ratio_undeclared",
    "pp_difference",
    "invented",
    "words_mismatch",
    "range_end",
)
