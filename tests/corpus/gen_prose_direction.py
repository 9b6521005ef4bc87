"""Corpus cases for what the words around a number say (issue 22, prose-direction).

Answers written the way assistants phrase analytics, support, finance and logistics summaries:
direction words (``fell 3.2%``, ``a 3.2% drop``, ``a decline of``, ``down``), percents followed
by a scaled amount (``grew 12.4% to $1.23M``), number words before ``percent``, percent vs
percentage points vs basis points, units and currencies. Each answer is built from a fresh
random table; a wrong one breaks exactly one claim, and its label and reason code are derived by
the small oracle below (independent of the checker): ``pool`` is every recorded number, the
direction of a change column is its sign, a declared unit is the column's.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from decimal import Decimal
from typing import Any

from ._common import Emitter, repeat
from .gen_prose import ONES, code_of, exact, grouped, plain, rounds
from .model import Case, FactSpec, Label

REGIONS = ("North", "South", "EMEA", "APAC", "West", "Central", "Nordics", "Benelux", "LATAM")
UP = ("rose", "increased", "grew", "climbed", "gained", "jumped", "was up", "edged up")
DOWN = ("fell", "declined", "dropped", "decreased", "slipped", "slid", "was down", "dipped")
UP_NOUN = ("increase", "rise", "gain", "jump")
DOWN_NOUN = ("drop", "decline", "decrease", "dip")
CHANGE_COLUMNS = ("change_pct", "qoq_change", "yoy_growth", "delta_pct", "pctChange")
_TENS = ("", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")

MOVE = (
    "{e} revenue {v} {x}% quarter over quarter.",
    "Quarter over quarter, {e} {v} {x}%, according to the dashboard.",
    "Compared with Q2, revenue in {e} {v} by {x}%.",
    "{e} {v} {x}% versus the prior period.",
    "Revenue for the {e} region {v} roughly {x}% on the quarter.",
    "Looking at {e}, sales {v} {x}% QoQ.",
)
NOUN_AFTER = (
    "{e} posted a {x}% {n} in revenue.",
    "That is a {x}% {n} for {e} compared with last quarter.",
    "{e} recorded a {x}% quarter-over-quarter {n}.",
)
NOUN_BEFORE = (
    "{e} saw {a} {n} of {x}% in revenue.",
    "Revenue in {e} showed {a} {n} of {x}% QoQ.",
)
LEVELS = (
    "Revenue in {e} came to ${rev}.",
    "Ticket volume dropped to {tickets} for {e}.",
    "{e} lost {lost} accounts over the period.",
    "Refunds for {e} take up to {sla} days.",
    "Onboarding in {e} runs on a {sla}-day schedule.",
)


def words(number: int) -> str:
    """An English number word for 0..100 (``thirty-eight``, ``one hundred``)."""
    if number == 100:
        return "one hundred"
    if number < 20:
        return ONES[number]
    tens, ones = divmod(number, 10)
    return _TENS[tens] + ("" if ones == 0 else "-" + ONES[ones])


def signed_pct(rng: random.Random) -> float:
    value = round(rng.uniform(0.5, 25.0), 1)
    return value if rng.random() < 0.5 else -value


def level_pool(rows: list[dict[str, Any]], changes: str) -> set[Decimal]:
    return {
        exact(v) for row in rows for k, v in row.items() if k != changes and type(v) in (int, float)
    }


def every(rows: list[dict[str, Any]]) -> set[Decimal]:
    return {exact(v) for row in rows for v in row.values() if type(v) in (int, float)}


def sales(rng: random.Random, change: str) -> list[dict[str, Any]]:
    rows = []
    for region in rng.sample(REGIONS, rng.randint(3, 6)):
        rows.append(
            {
                "region": region,
                "revenue": rng.randrange(12, 900) * 10_000,
                change: signed_pct(rng),
                "tickets": rng.randrange(10, 90) * 100,
                "accounts_lost": rng.randrange(31, 99),
                "sla_days": rng.choice((5, 7, 10, 14, 30, 45, 60)),
            }
        )
    return rows


def phrase(rng: random.Random, e: str, x: Decimal, sign: int) -> str:
    """A sentence saying that ``e`` moved by ``x`` (a magnitude) in direction ``sign``."""
    form = rng.random()
    text = plain(x)
    if form < 0.55:
        verb = rng.choice(UP if sign > 0 else DOWN)
        return rng.choice(MOVE).format(e=e, v=verb, x=text)
    noun = rng.choice(UP_NOUN if sign > 0 else DOWN_NOUN)
    if form < 0.8:
        return rng.choice(NOUN_AFTER).format(e=e, x=text, n=noun)
    article = "an" if noun[0] in "aeiou" else "a"
    return rng.choice(NOUN_BEFORE).format(e=e, x=text, n=noun, a=article)


def level(rng: random.Random, row: dict[str, Any]) -> str:
    return rng.choice(LEVELS).format(
        e=row["region"],
        rev=grouped(exact(row["revenue"])),
        tickets=grouped(exact(row["tickets"])),
        lost=row["accounts_lost"],
        sla=row["sla_days"],
    )


def direction_cases(rng: random.Random, per_class: int) -> list[Case]:
    """Direction words against a change column (named, or declared in ``changes``)."""
    cases: list[Case] = []
    emit = Emitter("numbers_recorded", cases, "sales")

    def setup(rng: random.Random) -> tuple[list[dict[str, Any]], str, dict[str, Any]]:
        declared = rng.random() < 0.25
        change = "trend" if declared else rng.choice(CHANGE_COLUMNS)
        rows = sales(rng, change)
        check: dict[str, Any] = {"field": "summary"}
        if declared:
            check["changes"] = [change]
        return rows, change, check

    def facts(rows: list[dict[str, Any]]) -> list[FactSpec]:
        return [FactSpec("table", "sales", rows, {"key": "region"})]

    def context(rng: random.Random, rows: list[dict[str, Any]], skip: dict[str, Any]) -> list[str]:
        others = [row for row in rows if row is not skip]
        return [level(rng, row) for row in rng.sample(others, min(len(others), rng.randint(0, 2)))]

    def correct(rng: random.Random) -> bool:
        rows, change, check = setup(rng)
        row = rng.choice(rows)
        value = exact(row[change])
        if abs(value) in level_pool(rows, change) or -value in every(rows):
            return False
        parts = [phrase(rng, row["region"], abs(value), 1 if value > 0 else -1)]
        parts += context(rng, rows, row)
        rng.shuffle(parts)
        emit("correct:direction", "supported", facts(rows), check, {"summary": " ".join(parts)})
        return True

    def correct_levels(rng: random.Random) -> bool:
        rows, change, check = setup(rng)
        low, high = sorted(rng.sample(rows, 2), key=lambda row: row["tickets"])
        if low["tickets"] == high["tickets"]:
            return False
        parts = [level(rng, row) for row in rng.sample(rows, 2)]
        parts.append(
            f"Ticket volume was down from {grouped(exact(high['tickets']))} in {high['region']} "
            f"to {grouped(exact(low['tickets']))} in {low['region']}."
        )
        emit("correct:levels", "supported", facts(rows), check, {"summary": " ".join(parts)})
        return True

    def correct_dash(rng: random.Random) -> bool:
        rows, change, check = setup(rng)
        row = rng.choice([row for row in rows if row[change] < 0] or [None])  # type: ignore[list-item]
        if row is None:
            return False
        dash = rng.choice(("\u2013", "\u2212"))
        text = rng.choice(
            (
                "{e} revenue: {d}{x}% QoQ.",
                "{e} came in at {d}{x}% on the quarter, the weakest region.",
                "Change vs. Q2 for {e}: {d}{x}%.",
            )
        ).format(e=row["region"], d=dash, x=plain(abs(exact(row[change]))))
        emit("correct:en_dash_minus", "supported", facts(rows), check, {"summary": text})
        return True

    def correct_then_scale(rng: random.Random) -> bool:
        rows, change, check = setup(rng)
        row = rng.choice(rows)
        value = exact(row[change])
        if abs(value) in level_pool(rows, change) or -value in every(rows):
            return False
        verb = rng.choice(UP if value > 0 else DOWN)
        if rng.random() < 0.5:
            amount = "$" + plain(exact(row["revenue"]).scaleb(-6).normalize()) + "M"
            what = "revenue"
        else:
            amount = plain(exact(row["tickets"]).scaleb(-3).normalize()) + "K"
            what = "ticket volume"
        x = plain(abs(value))
        text = rng.choice(
            (
                f"In {row['region']}, {what} {verb} {x}% to {amount}.",
                f"{row['region']} {what} {verb} {x}% \u2013 {amount} in total.",
                f"{row['region']}: {what} {verb} {x}% - {amount} for the quarter.",
            )
        )
        emit("correct:percent_then_scale", "supported", facts(rows), check, {"summary": text})
        return True

    def wrong_direction(rng: random.Random) -> bool:
        rows, change, check = setup(rng)
        row = rng.choice(rows)
        value = exact(row[change])
        if value in level_pool(rows, change) or -value in every(rows):
            return False
        parts = [phrase(rng, row["region"], abs(value), -1 if value > 0 else 1)]
        parts += context(rng, rows, row)
        rng.shuffle(parts)
        emit("direction_false", "unsupported", facts(rows), check, {"summary": " ".join(parts)},
             "number_direction_false")  # fmt: skip
        return True

    def wrong_scale_leak(rng: random.Random) -> bool:
        rows, change, check = setup(rng)
        row, other = rng.sample(rows, 2)
        said = rng.randrange(2, 30)
        other["tickets"] = said * 1000  # today "said% to 8K" read said% as said*1000: recorded
        pool = every(rows)
        value = Decimal(said)
        if value in pool or -value in pool or value.scaleb(-2) in pool:
            return False
        if rounds(pool, value, Decimal(1), ("half_even", "half_up")):
            return False
        code = code_of(pool, value, Decimal(1), True, False)
        amount = plain(exact(row["tickets"]).scaleb(-3).normalize()) + "K"
        text = f"Ticket volume in {row['region']} grew {said}% to {amount} this quarter. " + level(
            rng, other
        )
        emit("scale_leak", "unsupported", facts(rows), check, {"summary": text}, code)
        return True

    n = per_class // 3 + 1
    repeat(rng, 2 * n, correct)
    repeat(rng, n, correct_levels)
    repeat(rng, n // 2 + 1, correct_dash)
    repeat(rng, n, correct_then_scale)
    repeat(rng, n, wrong_direction)
    repeat(rng, n, wrong_scale_leak)
    return cases


def survey_cases(rng: random.Random, per_class: int) -> list[Case]:
    """Number words before ``percent`` (support and survey summaries), read as percents."""
    cases: list[Case] = []
    emit = Emitter("numbers_recorded", cases, "survey")
    say = (
        "{W} percent of {e} respondents rated support as excellent.",
        "In {e}, {w} percent of tickets were solved on first contact.",
        "About {w} percent of {e} customers renewed early.",
        "{e}: {w} per cent of users enabled the new workflow.",
    )

    def rows(rng: random.Random) -> list[dict[str, Any]]:
        return [
            {
                "segment": e,
                "share": rng.randrange(2, 101) / 100,
                "respondents": rng.randrange(120, 999),
            }
            for e in rng.sample(REGIONS, rng.randint(2, 5))
        ]

    def make(label: str) -> Callable[[random.Random], bool]:
        def build(rng: random.Random) -> bool:
            table = rows(rng)
            row = rng.choice(table)
            said = int(exact(row["share"]).scaleb(2))
            if label == "unsupported":
                said += rng.choice((-7, -4, -2, 3, 5, 9))
            pool = every(table)
            value = Decimal(said)
            if not 2 <= said <= 100:
                return False
            if label == "unsupported" and (value in pool or value.scaleb(-2) in pool):
                return False
            template = rng.choice(say)
            text = template.format(W=words(said).capitalize(), w=words(said), e=row["segment"])
            text += f" The survey had {row['respondents']} responses there."
            check = {"field": "summary", "percent_as_ratio": True}
            facts = [FactSpec("table", "survey", table, {"key": "segment"})]
            if label == "supported":
                emit("correct:word_percent", label, facts, check, {"summary": text})
                return True
            code = code_of(pool, value, Decimal(1), False, False)  # the ratio is declared
            emit("word_percent_wrong", label, facts, check, {"summary": text}, code)
            return True

        return build

    n = per_class // 3 + 1
    repeat(rng, n, make("supported"))
    repeat(rng, n, make("unsupported"))
    return cases


def unit_cases(rng: random.Random, per_class: int) -> list[Case]:
    """Declared units: percent vs pp vs bps, lengths, weights, durations, currencies."""
    cases: list[Case] = []
    retention = Emitter("numbers_recorded", cases, "retention")
    freight = Emitter("numbers_recorded", cases, "freight")

    def teams(rng: random.Random) -> list[dict[str, Any]]:
        out = []
        for team in rng.sample(REGIONS, rng.randint(2, 5)):
            move = round(rng.uniform(0.1, 1.5), 1) * rng.choice((1, -1))
            out.append(
                {
                    "team": team,
                    "churn_rate": round(rng.uniform(2.0, 9.9), 1),
                    "churn_change": move,
                    "margin_change": rng.randrange(5, 95) * rng.choice((1, -1)),
                }
            )
        return out

    units_pp = {"churn_rate": "percent", "churn_change": "pp", "margin_change": "bps"}

    def churn_sentence(rng: random.Random, row: dict[str, Any], wrong: bool) -> tuple[str, str]:
        move = exact(row["churn_change"])
        margin = exact(row["margin_change"])
        verb = rng.choice(UP if move > 0 else DOWN)
        mverb = rng.choice(UP if margin > 0 else DOWN)
        rate = plain(exact(row["churn_rate"]))
        e = row["team"]
        if wrong:
            kind = rng.randrange(3)
            if kind == 0:
                return f"Churn for {e} {verb} {plain(abs(move))}% to {rate}%.", "pp"
            if kind == 1:
                return f"{e} gross margin {mverb} {plain(abs(margin))}% on the quarter.", "bps"
            return f"{e} churn now sits at {rate} points.", "percent"
        kind = rng.randrange(5)
        if kind == 0:
            return f"Churn for {e} {verb} {plain(abs(move))} pp to {rate}%.", ""
        if kind == 1:
            return (
                f"{e} churn is {rate}%, {'up' if move > 0 else 'down'} "
                f"{plain(abs(move))} percentage points on the quarter.",
                "",
            )
        if kind == 2:
            return f"{e} churn {verb} {plain(abs(move).scaleb(2).normalize())} bps.", ""
        if kind == 3:
            return f"Gross margin in {e} {mverb} {plain(abs(margin))} basis points.", ""
        return f"{e} margin {mverb} {plain(abs(margin).scaleb(-2))} pp year over year.", ""

    def churn(label: str) -> Callable[[random.Random], bool]:
        def build(rng: random.Random) -> bool:
            table = teams(rng)
            row, *others = rng.sample(table, len(table))
            pool = every(table)
            text, _ = churn_sentence(rng, row, label == "unsupported")
            if len(pool) != 3 * len(table):  # a value recorded twice: keep the oracle simple
                return False
            extra = [churn_sentence(rng, other, False)[0] for other in others[:1]]
            check = {"field": "summary", "units": units_pp}
            facts = [FactSpec("table", "retention", table, {"key": "team"})]
            output = {"summary": " ".join([text, *extra])}
            if label == "supported":
                retention("correct:units_pp", label, facts, check, output)
            else:
                retention("pct_vs_pp", label, facts, check, output, "number_unit_mismatch")
            return True

        return build

    def lanes(rng: random.Random) -> list[dict[str, Any]]:
        cities = ["Rotterdam", "Hamburg", "Lyon", "Milan", "Gdansk", "Porto", "Leeds", "Basel"]
        out = []
        for origin, target in zip(*[iter(rng.sample(cities, 6))] * 2, strict=False):
            out.append(
                {
                    "lane": f"{origin} to {target}",
                    "distance_km": rng.randrange(120, 1900),
                    "weight_kg": rng.randrange(210, 9000),
                    "transit_days": rng.randrange(2, 13),
                    "cost": rng.randrange(400, 20000),
                }
            )
        return out

    def measure(rng: random.Random, row: dict[str, Any], wrong: str) -> str:
        d, w, t, c = (row[k] for k in ("distance_km", "weight_kg", "transit_days", "cost"))
        dist = {
            "": rng.choice((f"{d:,} km", f"{d:,} kilometres", f"{d:,}km")),
            "dist": rng.choice((f"{d:,} miles", f"{d:,} mi")),
        }
        weight = {"": rng.choice((f"{w:,} kg", f"{w:,} kilograms")), "weight": f"{w:,} lb"}
        time = {
            "": rng.choice((f"took {t} days in transit", f"ran on a {t}-day transit")),
            "time": rng.choice((f"took {t} weeks in transit", f"took {t} hours in transit")),
        }
        money = {
            "": rng.choice((f"${c:,}", f"USD {c:,}", f"{c:,} dollars", f"US${c:,}")),
            "money": rng.choice((f"\u20ac{c:,}", f"{c:,} EUR", f"\u00a3{c:,}", f"{c:,} euros")),
        }
        pick = {"dist": dist, "weight": weight, "time": time, "money": money}
        said = {
            key: table.get(wrong if wrong == key else "", table[""]) for key, table in pick.items()
        }
        transit = said["time"]
        return rng.choice(
            (
                f"The {row['lane']} lane covers {said['dist']}, carried {said['weight']} and "
                f"{transit}; freight came to {said['money']}.",
                f"For {row['lane']}: {said['dist']} and {said['weight']}, billed at "
                f"{said['money']}; the shipment {transit}.",
            )
        )

    units_freight = {"distance_km": "km", "weight_kg": "kg", "transit_days": "day", "cost": "USD"}

    def cargo(label: str, failure: str, wrong: str) -> Callable[[random.Random], bool]:
        def build(rng: random.Random) -> bool:
            table = lanes(rng)
            pool = every(table)
            if len(pool) != 4 * len(table):
                return False
            row = rng.choice(table)
            check = {"field": "summary", "units": units_freight}
            facts = [FactSpec("table", "freight", table, {"key": "lane"})]
            output = {"summary": measure(rng, row, wrong)}
            freight(failure, label, facts, check, output,
                    None if label == "supported" else "number_unit_mismatch")  # fmt: skip
            return True

        return build

    n = per_class // 3 + 1
    repeat(rng, n, churn("supported"))
    repeat(rng, n, churn("unsupported"))
    repeat(rng, n, cargo("supported", "correct:units_measure", ""))
    repeat(rng, n, cargo("supported", "correct:currency", ""))
    for failure in ("dist", "weight", "time"):
        repeat(rng, n // 3 + 1, cargo("unsupported", "unit_mismatch", failure))
    repeat(rng, n, cargo("unsupported", "currency_mismatch", "money"))
    return cases


def restricted_cases(rng: random.Random, per_class: int) -> list[Case]:
    """A restricted ratio said as a percent before a scaled amount, or in words."""
    cases: list[Case] = []

    def emit(failure: str, label: Label, facts: list[FactSpec], output: dict[str, Any]) -> None:
        number = sum(1 for case in cases if case.failure_class == failure)
        code = None if label == "supported" else "restricted_value"
        cases.append(Case(f"no_restricted_values/{failure}/{number:03d}", "no_restricted_values",
                          failure, label, tuple(facts), {"builder": "no_restricted_values"},
                          output, code))  # fmt: skip

    def build(failure: str) -> Callable[[random.Random], bool]:
        def make(rng: random.Random) -> bool:
            margin = rng.randrange(3, 60)
            region = rng.choice(REGIONS)
            revenue = Decimal(rng.randrange(11, 99)).scaleb(-1)
            public = [{"region": region, "revenue": int(revenue.scaleb(9))}]
            secret: dict[str, Any] = {"m_internal": margin / 100}
            if failure == "ratio_percent_before_scale":
                text = f"{region} grew {margin}% to ${plain(revenue)} billion, mostly on pricing."
            elif failure == "ratio_in_words":
                text = f"Internally, {region} keeps {words(margin)} percent of each sale."
            elif failure == "correct:percent_then_scale":
                said = margin + rng.choice((1, 2, 4))
                if revenue == said:
                    return False
                secret = {"m_internal": int(Decimal(said).scaleb(9))}  # today's misreading of said%
                text = f"{region} grew {said}% to ${plain(revenue)} billion, mostly on pricing."
            else:
                said = margin + rng.choice((1, 2, 4))
                text = f"About {words(said)} percent of {region} revenue is recurring."
            facts = [
                FactSpec("table", "public", public, {"key": "region"}),
                FactSpec("value", "internal", secret, {"restricted": True}),
            ]
            label: Label = "supported" if failure.startswith("correct:") else "unsupported"
            emit(failure, label, facts, {"answer": text})
            return True

        return make

    n = per_class // 3 + 1
    for failure in ("ratio_percent_before_scale", "ratio_in_words", "correct:percent_then_scale",
                    "correct:words_public"):  # fmt: skip
        repeat(rng, n, build(failure))
    return cases


HAND_ROWS = [
    {"region": "North", "revenue": 1230000, "qoq_change": -3.2, "churn_pp": 0.5,
     "margin_bps": 35, "sla_days": 45, "tickets": 8400},
    {"region": "South", "revenue": 2100000000, "qoq_change": 8.0, "churn_pp": -0.2,
     "margin_bps": -15, "sla_days": 30, "tickets": 3000},
]  # fmt: skip
HAND_UNITS = {"churn_pp": "pp", "margin_bps": "bps", "revenue": "USD", "sla_days": "day"}
# (class, text, declared units?, expected code): written the way assistants phrase them
HAND: tuple[tuple[str, str, bool, str | None], ...] = (
    ("correct:hand", "North revenue fell 3.2% quarter over quarter to $1.23M, while South grew "
     "8% to $2.1 billion.", False, None),
    ("correct:hand", "North: revenue $1.23M (\u20133.2% QoQ).", False, None),
    ("correct:hand", "South posted an 8% increase in revenue, to $2.1 billion.", False, None),
    ("correct:hand", "Churn in North rose 0.5 percentage points, while South churn fell 20 "
     "basis points.", True, None),
    ("correct:hand", "Gross margin widened 35 bps in North and narrowed 15 bps in South.", True,
     None),
    ("correct:hand", "Refunds are processed within 45 days; South tickets get a 30-day SLA.",
     True, None),
    ("correct:hand", "Ticket volume dropped to 3,000 in South, down from 8,400 in North.", False,
     None),
    ("correct:hand", "Support backlog in North was down 3.2% on the quarter.", False, None),
    ("correct:hand", "For South, the increase was 8% and revenue reached US$2.1B.", True, None),
    ("correct:hand", "North's margin improved 0.35 pp; its revenue is 1.23 million dollars.",
     True, None),
    ("direction_false", "North revenue grew 3.2% quarter over quarter.", False,
     "number_direction_false"),
    ("direction_false", "South fell 8% on the quarter, to $2.1 billion.", False,
     "number_direction_false"),
    ("direction_false", "Gross margin in South widened 15 bps.", True, "number_direction_false"),
    ("scale_leak", "South revenue rose 8.5% to $2.1 billion.", False, "number_unrecorded"),
    ("pct_vs_pp", "North churn rose 0.5% this quarter.", True, "number_unit_mismatch"),
    ("pct_vs_pp", "South gross margin fell 15% versus Q2.", True, "number_unit_mismatch"),
    ("currency_mismatch", "North revenue came to \u20ac1.23M.", True, "number_unit_mismatch"),
    ("unit_mismatch", "Refunds in North take up to 45 weeks.", True, "number_unit_mismatch"),
)  # fmt: skip


def hand_cases() -> list[Case]:
    """Hand-written answers over one table (the corpus's fixed, seed-independent part)."""
    cases: list[Case] = []
    emit = Emitter("numbers_recorded", cases, "sales")
    facts = [FactSpec("table", "sales", HAND_ROWS, {"key": "region"})]
    for failure, text, declared, code in HAND:
        check: dict[str, Any] = {"units": HAND_UNITS} if declared else {}
        label: Label = "supported" if code is None else "unsupported"
        emit(failure, label, facts, check, {"answer": text}, code)
    return cases


def direction_corpus(rng: random.Random, per_class: int) -> list[Case]:
    """Every case of this lane, in a fixed order."""
    return [
        *hand_cases(),
        *direction_cases(rng, per_class),
        *survey_cases(rng, per_class),
        *unit_cases(rng, per_class),
        *restricted_cases(rng, per_class),
    ]


FAILURES = (
    "scale_leak",
    "direction_false",
    "word_percent_wrong",
    "pct_vs_pp",
    "unit_mismatch",
    "currency_mismatch",
)
RESTRICTED_FAILURES = ("ratio_percent_before_scale", "ratio_in_words")
