"""Corpus for issue 40 (prose claims, second pass), one generator per class, written the way the
seed documents promise answers are checked (Groundlens's numbers against their source, with
units; keroground's paraphrases, clock hours and approximately-said leaks):

- ``table_rank``: ranks read from a Table by the column named ("Elm was second on revenue",
  "the lowest margin", "last on orders", "the top 3 by revenue were …", "#1 A, #2 B",
  "followed by"), ties as competition ranks;
- ``rank_alias``: "our No. 1 store by sales", "the No. 2 store by sales", a superlative
  alias ("the busiest store") through declared ``aliases``;
- ``unit_more``: durations, volumes, data sizes, temperatures declared in ``units=``;
- ``document_unit``: a document's number supports the answer's only in the same (or no) unit;
- ``clock_hour``: an integer column declared a clock hour, for ``dates_recorded``;
- ``period``: quarters, halves, fiscal years against the periods the facts record;
- ``hedged_leak``: a restricted value said approximately; public values (and a restricted
  document id's words) said hedged or exactly as the controls;
- ``paraphrase``: spelled-out decimals, "mn"/"bn"/"k" after a space, "1.2 thousand", "a
  quarter of a million".

Each label is decided by an oracle written here (plain counting, exact arithmetic), never by
the checker.
"""

from __future__ import annotations

import random
from dataclasses import replace
from decimal import Decimal
from typing import Any

from ._common import Emitter, repeat
from .model import Case, FactSpec

CLASSES: tuple[str, ...] = (
    "table_rank", "rank_alias", "unit_more", "document_unit", "clock_hour", "period",
    "hedged_leak", "paraphrase",
)  # fmt: skip
"""The failure classes of this corpus (each also has ``correct:<class>`` cases)."""
FAMILY_OF: dict[str, str] = {
    "clock_hour": "dates_recorded",
    "period": "dates_recorded",
    "hedged_leak": "no_restricted_values",
}
ORDINALS = ("first", "second", "third", "fourth", "fifth", "sixth", "seventh")
STORES = ("Elm Street", "Harbour", "Oak Lane", "Pine Court", "Riverside", "Maple Row", "Cedar Hill")
COLUMNS = ("revenue", "orders", "margin", "visits")


def _held(values: dict[str, int], name: str, lowest: bool = False) -> range:
    """The ranks ``name`` holds, counted from the highest (or lowest) value, ties spanning."""
    mine = values[name]
    before = sum(1 for v in values.values() if (v < mine if lowest else v > mine))
    tied = sum(1 for v in values.values() if v == mine)
    return range(before + 1, before + tied + 1)


def _stores(rng: random.Random) -> tuple[list[dict[str, Any]], list[str]]:
    names = rng.sample(STORES, rng.randint(4, 7))
    rows = [
        {"store": name, **{column: rng.randrange(1, 9) * 100 for column in COLUMNS}}
        for name in names
    ]
    return rows, names


def table_rank_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("numbers_recorded", cases, "stores")

    def make(rng: random.Random, right: bool) -> bool:
        rows, names = _stores(rng)
        column = rng.choice(COLUMNS)
        values = {row["store"]: row[column] for row in rows}
        facts = [FactSpec("table", "stores", rows, {"key": "store", "tool": "bi.stores"})]
        name = rng.choice(names)
        form = rng.choice(("ordinal", "superlative", "last", "top", "numbered", "followed"))
        code = "rank_mismatch"
        if form in ("ordinal", "superlative", "last"):
            lowest = form == "last" or (form == "superlative" and rng.random() < 0.5)
            held = _held(values, name, lowest)
            ranks = list(held) if right else [r for r in range(1, 4) if r not in held]
            if form == "last":
                if (1 in held) != right:
                    return False
                text = f"{name} is last on {column}."
            elif not ranks:
                return False
            elif form == "ordinal":
                text = f"{name} was {ORDINALS[rng.choice(ranks) - 1]} on {column}."
            else:
                if right == (1 not in held):
                    return False
                word = "lowest" if lowest else "highest"
                text = f"{name} had the {word} {column}."
        else:
            order = sorted(names, key=lambda n: -values[n])
            count = 3 if len(names) > 3 else 2
            picked = order[:count]
            if not right:
                outside = [n for n in names if min(_held(values, n)) > count]
                if not outside:
                    return False
                picked = [*picked[:-1], rng.choice(outside)]
            elif (
                form != "top"
                and any(  # a tie inside the list: any order within it is right
                    values[a] == values[b] for a, b in zip(picked, picked[1:], strict=False)
                )
            ):
                return False
            if form == "top":
                code = "rank_outside_top"
                listed = ", ".join(picked[:-1]) + f" and {picked[-1]}"
                text = f"The top {count} by {column} were {listed}."
            elif form == "numbered":
                items = ", ".join(f"#{i} {n}" for i, n in enumerate(picked, 1))
                text = f"Top stores by {column}: {items}."
            else:
                rest = " and ".join(picked[1:])
                text = f"{picked[0]} led on {column}, followed by {rest}."
                if not right and min(_held(values, picked[0])) != 1:
                    return False
        label = "supported" if right else "unsupported"
        emit(
            "correct:table_rank" if right else "table_rank",
            label,
            facts,
            {},
            {"answer": text},
            None if right else code,
        )
        return True

    repeat(rng, per_class, lambda r: make(r, True))
    repeat(rng, per_class, lambda r: make(r, False))
    return cases


def rank_alias_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("numbers_recorded", cases, "stores")
    aliases = {"revenue": ["sales"], "visits": ["busiest", "traffic"], "margin": ["fattest"]}

    def make(rng: random.Random, right: bool) -> bool:
        rows, names = _stores(rng)
        facts = [FactSpec("table", "stores", rows, {"key": "store", "tool": "bi.stores"})]
        form = rng.choice(("no_store", "no_the", "busiest", "highest_alias"))
        column = {"busiest": "visits", "highest_alias": "visits"}.get(form, "revenue")
        values = {row["store"]: row[column] for row in rows}
        name = rng.choice(names)
        held = _held(values, name)
        ranks = list(held) if right else [r for r in range(1, 4) if r not in held]
        if not ranks or (form in ("busiest", "highest_alias") and (1 in held) != right):
            return False
        rank = rng.choice(ranks)
        text = {
            "no_store": f"{name} is our No. {rank} store by sales.",
            "no_the": f"The No. {rank} store by sales was {name}.",
            "busiest": f"{name} is the busiest store.",
            "highest_alias": f"{name} had the highest traffic.",
        }[form]
        emit(
            "correct:rank_alias" if right else "rank_alias",
            "supported" if right else "unsupported",
            facts,
            {"aliases": aliases},
            {"answer": text},
            None if right else "rank_mismatch",
        )
        return True

    repeat(rng, per_class, lambda r: make(r, True))
    repeat(rng, per_class, lambda r: make(r, False))
    return cases


UNIT_PAIRS = (  # (column, declared, [spellings of it], [spellings of its neighbour])
    ("latency", "ms", ["ms", "milliseconds"], ["seconds", "s"]),
    ("disk", "GB", ["GB", "gigabytes"], ["GiB", "TB", "MB"]),
    ("ram", "GiB", ["GiB"], ["GB", "MiB"]),
    ("tank", "L", ["L", "litres", "liters"], ["gallons", "mL"]),
    ("temp", "celsius", ["°C", "degrees Celsius"], ["°F", "degrees Fahrenheit"]),
    ("uptime", "hour", ["hours", "hrs"], ["days", "minutes", "weeks"]),
)


def unit_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("numbers_recorded", cases, "svc")

    def make(rng: random.Random, right: bool) -> bool:
        row = {"id": "api", **{pair[0]: rng.randrange(2, 900) for pair in UNIT_PAIRS}}
        if len(set(row.values()) - {"api"}) < len(UNIT_PAIRS):
            return False  # one value per column: a unit check is about one column
        column, _, spellings, others = rng.choice(UNIT_PAIRS)
        unit = rng.choice(spellings if right else [o for o in others if o != "s"])
        text = f"The {column} figure for api is {row[column]} {unit}."
        units = {pair[0]: pair[1] for pair in UNIT_PAIRS}
        emit(
            "correct:unit_more" if right else "unit_more",
            "supported" if right else "unsupported",
            [FactSpec("table", "svc", [row], {"key": "id", "tool": "ops.metrics"})],
            {"units": units},
            {"answer": text},
            None if right else "number_unit_mismatch",
        )
        return True

    repeat(rng, per_class, lambda r: make(r, True))
    repeat(rng, per_class, lambda r: make(r, False))
    return cases


DOC_UNITS = (  # (how the document writes it, its unit words, other units an answer may use)
    ("The plan runs {n} months.", ["months", "month"], ["$", "days", "years", "%"]),
    ("Support answers within {n} hours.", ["hours", "hrs"], ["days", "minutes", "$"]),
    ("The fee is {n} dollars.", ["$", "dollars", "USD"], ["months", "%", "euros"]),
    ("Refunds take {n} days.", ["days"], ["weeks", "hours", "$"]),
)


def document_unit_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("numbers_recorded", cases, "kb")

    def written(n: int, unit: str) -> str:
        if unit == "$":
            return f"${n}"
        return f"{n}%" if unit == "%" else f"{n} {unit}"

    def make(rng: random.Random, right: bool) -> bool:
        chosen = rng.sample(DOC_UNITS, 2)
        numbers = rng.sample(range(2, 99), 2)
        content = " ".join(t.format(n=n) for (t, _, _), n in zip(chosen, numbers, strict=True))
        (_, same, other), n = chosen[0], numbers[0]
        if right:
            unit = rng.choice([*same, None])
            claim = str(n) if unit is None else written(n, unit)
        else:
            unit = rng.choice([u for u in other if u not in chosen[1][1] or n != numbers[1]])
            claim = written(n, unit)
        documents = [{"id": "plan.md", "content": content}]
        emit(
            "correct:document_unit" if right else "document_unit",
            "supported" if right else "unsupported",
            [FactSpec("documents", "kb", documents, {"tool": "kb.search"})],
            {"documents": ["kb"]},
            {"answer": f"Per the plan, that is {claim}."},
            None if right else "number_unit_mismatch",
        )
        return True

    repeat(rng, per_class, lambda r: make(r, True))
    repeat(rng, per_class, lambda r: make(r, False))
    return cases


HOUR_WORDS = ("twelve", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
              "ten", "eleven")  # fmt: skip


def _said(hour: int, rng: random.Random) -> str:
    twelve = hour % 12 or 12
    return rng.choice([
        f"{twelve}{'am' if hour < 12 else 'pm'}",
        f"{twelve} {'a.m.' if hour < 12 else 'p.m.'}",
        f"{hour:02d}:00" if hour >= 13 else f"{twelve}:00 {'AM' if hour < 12 else 'PM'}",
        f"{HOUR_WORDS[hour % 12]} in the {'morning' if hour < 12 else 'evening'}",
    ])  # fmt: skip


def clock_hour_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("dates_recorded", cases, "stores")

    def make(rng: random.Random, right: bool) -> bool:
        opens, closes = rng.randint(6, 11), rng.randint(17, 22)
        row = {"store": "Elm Street", "opens": opens, "closes": closes}
        which = rng.choice(("opens", "closes"))
        hour = row[which]
        if not right:
            hour += rng.choice((-2, -1, 1, 2))
            if hour in (opens, closes) or hour - 12 in (opens, closes) or hour + 12 in (
                opens, closes,
            ):  # fmt: skip
                return False
        text = f"Elm Street {which} at {_said(hour, rng)} on weekdays."
        emit(
            "correct:clock_hour" if right else "clock_hour",
            "supported" if right else "unsupported",
            [FactSpec("table", "stores", [row], {"key": "store", "tool": "kb.stores"})],
            {"units": {"opens": "hour", "closes": "hour"}},
            {"answer": text},
            None if right else "time_unrecorded",
        )
        return True

    repeat(rng, per_class, lambda r: make(r, True))
    repeat(rng, per_class, lambda r: make(r, False))
    return cases


def period_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("dates_recorded", cases, "sales")

    def make(rng: random.Random, right: bool) -> bool:
        quarter, year = rng.randint(1, 4), rng.randint(2023, 2027)
        form = rng.choice(("args", "column"))
        if form == "args":
            facts = [FactSpec("table", "sales", [{"region": "North", "revenue": 10}],
                              {"key": "region", "tool": "bi.sales",
                               "args": {"quarter": f"Q{quarter}", "year": year}})]  # fmt: skip
        else:
            rows = [{"period": f"{year}-Q{quarter}", "revenue": 10}]
            facts = [FactSpec("table", "sales", rows, {"key": "period", "tool": "bi.sales"})]
        said_q, said_y = quarter, year
        if not right:
            if rng.random() < 0.5:
                said_q = rng.choice([q for q in range(1, 5) if q != quarter])
            else:
                said_y = year + rng.choice((-1, 1))
        written = rng.choice(
            [
                f"Q{said_q} {said_y}",
                f"{said_y}-Q{said_q}",
                f"the {ORDINALS[said_q - 1]} quarter of {said_y}",
            ]
            + ([f"Q{said_q}", f"the {ORDINALS[said_q - 1]} quarter"] if said_y == year else [])
        )
        emit(
            "correct:period" if right else "period",
            "supported" if right else "unsupported",
            facts,
            {},
            {"answer": f"Revenue for North in {written} was on plan."},
            None if right else "period_unrecorded",
        )
        return True

    repeat(rng, per_class, lambda r: make(r, True))
    repeat(rng, per_class, lambda r: make(r, False))
    return cases


HEDGES = ("around", "roughly", "about", "approximately", "nearly", "~")


def _two_digits(value: int) -> int:
    """``value`` rounded half-up to two significant digits."""
    shift = len(str(value)) - 2
    return int(Decimal(value).scaleb(-shift).quantize(Decimal(1), rounding="ROUND_HALF_UP")) * (
        10**shift
    )


def hedged_leak_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("no_restricted_values", cases, "cost")

    def make(rng: random.Random, right: bool) -> bool:
        secret = rng.randrange(11_000, 990_000)
        public = rng.randrange(11_000, 990_000)
        said_secret, said_public = _two_digits(secret), _two_digits(public)
        if said_secret in (secret, said_public) or said_public == public:
            return False  # an exact reading or two values rounding alike: not this class
        if (
            abs(said_secret - public) <= abs(said_secret - secret)
            or said_secret % (10 ** (len(str(said_secret)) - 1)) == 0
        ):  # a public value closer, or one significant digit: not a leak by design
            return False
        if abs(said_public - secret) <= abs(said_public - public):
            return False
        hedge = rng.choice(HEDGES)
        gap = "" if hedge == "~" else " "
        money = rng.choice(("${:,}", "{:,} dollars", "${}k"))

        def said(value: int) -> str:
            if money == "${}k":
                return f"${value // 1000}k" if value % 1000 == 0 else f"${value:,}"
            return money.format(value)

        if right:
            text = rng.choice([
                f"Our list price is {hedge}{gap}{said(said_public)}.",
                f"Our list price is {said(public)}.",
                "Salary bands are confidential, so I cannot share them.",
            ])  # fmt: skip
        else:
            text = rng.choice([
                f"Internally it costs us {hedge}{gap}{said(said_secret)}.",
                "The details are in salary-bands.",
            ])  # fmt: skip
        facts = [
            FactSpec("table", "cost", [{"sku": "W-1", "unit_cost": secret}],
                     {"key": "sku", "restricted": True, "tool": "erp.cost"}),
            FactSpec("table", "prices", [{"sku": "W-1", "price": public}],
                     {"key": "sku", "tool": "shop.prices"}),
            FactSpec("documents", "hr", [{"id": "salary-bands", "content": "Band A: see HR."}],
                     {"restricted": True, "tool": "kb.search"}),
        ]  # fmt: skip
        emit(
            "correct:hedged_leak" if right else "hedged_leak",
            "supported" if right else "unsupported",
            facts,
            {},
            {"answer": text},
            None if right else "restricted_value",
        )
        return True

    repeat(rng, per_class, lambda r: make(r, True))
    repeat(rng, per_class, lambda r: make(r, False))
    # no_restricted_values takes no fact: it reads every restricted one
    return [
        replace(case, check={k: v for k, v in case.check.items() if k != "fact"}) for case in cases
    ]


DIGITS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
SMALL = (*DIGITS, "ten", "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen",
         "seventeen", "eighteen", "nineteen")  # fmt: skip


def _spelled(value: Decimal, rng: random.Random) -> str | None:
    """A paraphrase of ``value`` a model writes, or None when none fits."""
    if value < 20 and value != value.to_integral_value():
        whole, _, fraction = f"{value:f}".partition(".")
        return f"{SMALL[int(whole)]} point {' '.join(DIGITS[int(d)] for d in fraction)} percent"
    millions = value / Decimal(10**6)
    if value >= 10**6 and millions == millions.quantize(Decimal("0.01")):
        return rng.choice([f"${millions:f} mn", f"{millions:f} mn"])
    if value in (250_000, 500_000, 750_000):
        return {250_000: "a quarter of a million", 500_000: "half a million",
                750_000: "three quarters of a million"}[int(value)]  # fmt: skip
    thousands = value / 1000
    if 1000 <= value < 10**6 and thousands == thousands.quantize(Decimal("0.1")):
        return rng.choice([f"{thousands:f} thousand", f"${thousands:f} k"])
    return None


def paraphrase_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    emit = Emitter("numbers_recorded", cases, "kpi")
    pools = (
        lambda r: Decimal(r.randrange(11, 199)) / 10,  # a rate: 12.4
        lambda r: Decimal(r.randrange(101, 999)) * 10_000,  # revenue: 1,230,000
        lambda r: Decimal(r.randrange(11, 99)) * 100,  # visits: 1,200 (1.2 thousand)
        lambda r: Decimal(r.choice((250_000, 500_000, 750_000))),
    )

    def make(rng: random.Random, right: bool) -> bool:
        pool = rng.choice(pools)
        recorded = [pool(rng) for _ in range(3)]
        if len(set(recorded)) < 3:
            return False
        value = recorded[0] if right else pool(rng)
        if not right and value in recorded:
            return False
        spelled = _spelled(value, rng)
        if spelled is None:
            return False
        row = {"id": "A", **{f"m{i}": _native(v) for i, v in enumerate(recorded)}}
        emit(
            "correct:paraphrase" if right else "paraphrase",
            "supported" if right else "unsupported",
            [FactSpec("table", "kpi", [row], {"key": "id", "tool": "bi.kpi"})],
            {},
            {"answer": f"The figure came to {spelled} this period."},
        )
        return True

    repeat(rng, per_class, lambda r: make(r, True))
    repeat(rng, per_class, lambda r: make(r, False))
    return cases


def _native(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)


def second_pass_cases(rng: random.Random, per_class: int) -> list[Case]:
    """Every class of issue 40, in a fixed order (the hand-written ones last)."""
    return [
        *table_rank_cases(rng, per_class),
        *rank_alias_cases(rng, per_class),
        *unit_cases(rng, per_class),
        *document_unit_cases(rng, per_class),
        *clock_hour_cases(rng, per_class),
        *period_cases(rng, per_class),
        *hedged_leak_cases(rng, per_class),
        *paraphrase_cases(rng, per_class),
        *hard_second_cases(),
    ]


_HARD_STORES = [
    {"store": "Harbour", "revenue": 1200, "visits": 300, "latency": 230, "opens": 9},
    {"store": "Elm Street", "revenue": 900, "visits": 700, "latency": 180, "opens": 10},
    {"store": "Oak Lane", "revenue": 500, "visits": 900, "latency": 410, "opens": 8},
]
_HARD_SECRET = [
    FactSpec("table", "cost", [{"sku": "W-1", "unit_cost": 183_400}],
             {"key": "sku", "restricted": True, "tool": "erp.cost"}),
    FactSpec("table", "prices", [{"sku": "W-1", "price": 95_000}],
             {"key": "sku", "tool": "shop.prices"}),
]  # fmt: skip
HARD: tuple[tuple[str, str, str, dict[str, Any], str, bool], ...] = (
    # (name, family, label, check options, answer, known limit)
    ("second_highest_on_a_column", "numbers_recorded", "supported", {},
     "Elm Street had the second-highest revenue.", False),
    ("second_busiest_alias", "numbers_recorded", "unsupported",
     {"aliases": {"visits": ["busiest"]}}, "Harbour is the second-busiest store.", False),
    ("trailed_only", "numbers_recorded", "unsupported", {},
     "Oak Lane trailed only Harbour on revenue.", False),
    ("respectively", "numbers_recorded", "unsupported", {},
     "Oak Lane and Harbour were first and second on revenue, respectively.", False),
    ("undeclared_synonym", "numbers_recorded", "unsupported", {},
     "Oak Lane had the highest sales.", True),
    ("seconds_for_milliseconds", "numbers_recorded", "supported",
     {"units": {"latency": "ms"}}, "Harbour's p95 latency is 0.23 seconds.", False),
    ("seconds_for_milliseconds_wrong", "numbers_recorded", "unsupported",
     {"units": {"latency": "ms"}}, "Harbour's p95 latency is 230 seconds.", False),
    ("attached_ms", "numbers_recorded", "unsupported", {"units": {"latency": "ms"}},
     "Harbour's p95 latency is 230s.", True),
    ("half_past", "dates_recorded", "unsupported", {"units": {"opens": "hour"}},
     "Harbour opens at half past ten.", False),
    ("eight_in_the_morning", "dates_recorded", "supported", {"units": {"opens": "hour"}},
     "Oak Lane opens at eight in the morning, Harbour at 9am.", False),
    ("one_and_a_half_million", "numbers_recorded", "unsupported", {},
     "Harbour's revenue was one and a half million.", False),
    ("point_thousand", "numbers_recorded", "supported", {},
     "Elm Street's revenue was nine hundred; Harbour's was one point two thousand.", False),
)  # fmt: skip
HARD_LEAKS: tuple[tuple[str, str, str, bool], ...] = (
    ("a_bit_over", "unsupported", "It costs us a bit over $180k.", False),
    ("just_shy_of", "unsupported", "It costs us just shy of $185k.", True),
    ("public_hedged", "supported", "The list price is around $95k.", False),
    ("hedged_words", "unsupported", "It costs us about one hundred and eighty thousand.", False),
)  # fmt: skip


def hard_second_cases() -> list[Case]:
    """Hand-written answers beyond the templates; the known limits among them are published."""
    cases = []
    stores = (FactSpec("table", "stores", _HARD_STORES, {"key": "store", "tool": "bi.stores"}),)
    for name, family, label, options, text, limit in HARD:
        cases.append(Case(
            id=f"{family}/hard40/{name}", family=family, failure_class=f"hard40:{name}",
            label=label, facts=stores, check={"builder": family, "fact": "stores", **options},
            output={"answer": text}, known_limit=limit,
        ))  # fmt: skip
    for name, label, text, limit in HARD_LEAKS:
        cases.append(Case(
            id=f"no_restricted_values/hard40/{name}", family="no_restricted_values",
            failure_class=f"hard40:{name}", label=label, facts=tuple(_HARD_SECRET),
            check={"builder": "no_restricted_values"}, output={"answer": text},
            known_limit=limit,
        ))  # fmt: skip
    return cases
