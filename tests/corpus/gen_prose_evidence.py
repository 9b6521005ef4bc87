"""Corpus cases for issue 22's evidence rules: retrieved documents as evidence for numbers,
leaks by rounding and from restricted documents, single-quoted and unmarked quotes.

Answers are written the way assistants answer support, finance, analytics and RAG questions
(markdown emphasis, bullets, a citation marker, a friendly opener), from retrieved passages
whose every number is a slot this generator fills — so the numbers a document spells are known
by construction (``spelled``), and the labels come from an oracle that restates each rule
independently of the checker (``_leaks``, ``code_of``). About half the answers are right.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal
from typing import Any

from ._common import repeat
from .gen_prose import code_of, grouped, plain
from .model import Case, FactSpec, Label

# (template, slots): each slot is (name, kind); kinds: int (days, months), money, pct, big.
PASSAGES: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    ("Standard shipping takes {a} business days; express shipping costs ${b} and arrives "
     "within {c} business days.", (("a", "days"), ("b", "money"), ("c", "small"))),
    ("Refunds are issued to the original payment method within {a} days of receiving the "
     "return. A restocking fee of {b}% applies to opened items.", (("a", "days"), ("b", "pct"))),
    ("The annual plan costs ${a} per seat, billed yearly; the monthly plan is ${b} per seat.",
     (("a", "money"), ("b", "money"))),
    ("Late payments incur a fee of {a}% per month on the outstanding balance, capped at ${b}.",
     (("a", "pct"), ("b", "money"))),
    ("Revenue for the quarter was ${a} million, with an operating margin of {b}% and {c} "
     "active customers.", (("a", "millions"), ("b", "pct"), ("c", "big"))),
    ("The warranty covers parts and labour for {a} months from the date of purchase.",
     (("a", "months"),)),
    ("Premium members get {a}% off and free returns on orders over ${b}.",
     (("a", "pct"), ("b", "money"))),
    ("The average handling time last month was {a} minutes across {b} tickets.",
     (("a", "decimal"), ("b", "big"))),
)  # fmt: skip
PREFIXES = ("kb", "policy", "faq", "help", "doc")
OPENERS = ("", "Good question! ", "Sure — ", "Here's what I found: ", "Happy to help. ",
           "Short answer: ", "According to our documentation, ")  # fmt: skip
WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 10: "ten",
         12: "twelve", 14: "fourteen", 30: "thirty"}  # fmt: skip


def _slot(rng: random.Random, kind: str) -> Decimal:
    if kind == "days":
        return Decimal(rng.choice((2, 3, 4, 5, 7, 10, 14, 30)))
    if kind == "small":
        return Decimal(rng.choice((2, 3, 4, 5)))
    if kind == "months":
        return Decimal(rng.choice((6, 12, 18, 24, 36)))
    if kind == "money":
        return Decimal(rng.randrange(500, 99900)) / 100
    if kind == "pct":
        return Decimal(rng.randrange(5, 250)) / 10
    if kind == "millions":
        return Decimal(rng.randrange(12, 990)) / 10
    if kind == "decimal":
        return Decimal(rng.randrange(30, 400)) / 10
    return Decimal(rng.randrange(1200, 98000))  # big


def _doc_text(value: Decimal, kind: str) -> str:
    if kind == "money":
        return f"{value:.2f}"
    if kind == "big":
        return grouped(value)
    return plain(value)


def _passage(rng: random.Random) -> tuple[str, dict[str, tuple[Decimal, str]]]:
    template, slots = rng.choice(PASSAGES)
    values = {name: (_slot(rng, kind), kind) for name, kind in slots}
    text = template.format(**{n: _doc_text(v, k) for n, (v, k) in values.items()})
    return text, values


def _retrieval(rng: random.Random) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """2-4 retrieved documents (with scores) and, per document, its slot values."""
    ids = rng.sample([f"{p}-{n}" for p in PREFIXES for n in range(1, 60)], rng.randint(2, 4))
    docs, slots = [], []
    for doc_id in ids:
        text, values = _passage(rng)
        docs.append({"id": doc_id, "score": round(rng.uniform(0.3, 0.99), 2), "content": text})
        slots.append(values)
    return docs, slots


def spelled(slots: list[dict[str, tuple[Decimal, str]]]) -> set[Decimal]:
    """The numbers the documents spell (every number in a passage is a slot)."""
    return {value for values in slots for value, _ in values.values()}


def _say(rng: random.Random, value: Decimal, kind: str) -> str:
    """The number as an assistant writes it (a format valid for the value)."""
    if kind in ("days", "small", "months") and int(value) in WORDS and rng.random() < 0.4:
        return WORDS[int(value)]
    if kind == "money":
        return rng.choice([f"${value:.2f}", f"${value:,.2f}", f"{value:.2f} dollars"])
    if kind == "pct":
        return rng.choice([f"{plain(value)}%", f"{plain(value)} percent"])
    if kind == "millions":
        return rng.choice([f"${plain(value)} million", f"${plain(value)}M"])
    if kind == "big":
        return rng.choice([grouped(value), plain(value)])
    return plain(value)


ABOUT = {
    "days": ("It takes {n} business days", "Expect about {n} days", "You'll have {n} days"),
    "small": ("Express arrives within {n} business days", "It usually takes {n} days"),
    "months": ("The warranty lasts {n} months", "You're covered for {n} months"),
    "money": ("The price is {n}", "That comes to {n}", "It's {n}", "The fee is capped at {n}"),
    "pct": ("The rate is {n}", "That's {n}", "You'll get {n} off", "A fee of {n} applies"),
    "millions": ("Revenue came in at {n}", "The quarter closed at {n} in revenue"),
    "big": ("That covers {n} customers", "There were {n} tickets", "We count {n} accounts"),
    "decimal": ("Handling time averaged {n} minutes", "The average was {n} minutes"),
}


def _claim(rng: random.Random, number: str, kind: str, doc_id: str | None) -> str:
    sentence = rng.choice(ABOUT[kind]).format(n=number)
    if rng.random() < 0.4:
        sentence = sentence.replace(number, f"**{number}**", 1)
    return sentence + (f" [{doc_id}]." if doc_id else ".")


def _answer(rng: random.Random, claims: list[str]) -> str:
    if len(claims) > 1 and rng.random() < 0.4:
        return rng.choice(OPENERS) + "\n" + "\n".join(f"- {c}" for c in claims)
    closer = rng.choice(("", " Let me know if you need anything else!", " Hope that helps."))
    return rng.choice(OPENERS) + " ".join(claims) + closer


def _case(cases: list[Case], family: str, failure: str, label: Label,
          facts: list[FactSpec], check: dict[str, Any], text: str,
          code: str | None) -> None:  # fmt: skip
    number = sum(1 for c in cases if c.failure_class == failure)
    cases.append(Case(f"{family}/{failure}/ev-{number:03d}", family, failure, label,
                      tuple(facts), {"builder": family, **check}, {"answer": text},
                      code))  # fmt: skip


# -- numbers_recorded: retrieved documents as evidence ---------------------------------------


INTERNAL = ("Internal only: our carrier contract rate is ${a} per parcel and the escalation "
            "budget is ${b} a month.")  # fmt: skip


def number_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    family = "numbers_recorded"
    check = {"fact": "kb", "field": "answer", "documents": ["kb"]}

    def picks(
        rng: random.Random, docs: list[dict[str, Any]], slots: list[Any], k: int
    ) -> list[str]:
        chosen = rng.sample(range(len(docs)), min(k, len(docs)))
        claims = []
        for i in chosen:
            name = rng.choice(list(slots[i]))
            value, kind = slots[i][name]
            claims.append(_claim(rng, _say(rng, value, kind), kind, docs[i]["id"]))
        return claims

    def correct(rng: random.Random) -> bool:
        docs, slots = _retrieval(rng)
        facts = [FactSpec("documents", "kb", docs, {"tool": "kb.search"})]
        text = _answer(rng, picks(rng, docs, slots, rng.randint(1, 3)))
        _case(cases, family, "correct:document_number", "supported", facts, check, text, None)
        return True

    def correct_with_table(rng: random.Random) -> bool:
        docs, slots = _retrieval(rng)
        tickets = rng.randrange(20, 900)
        facts = [FactSpec("documents", "kb", docs, {"tool": "kb.search"}),
                 FactSpec("table", "tickets", [{"queue": "billing", "open": tickets}],
                          {"key": "queue"})]  # fmt: skip
        claims = [f"There are {tickets} open billing tickets right now.",
                  *picks(rng, docs, slots, 1)]  # fmt: skip
        rng.shuffle(claims)
        options = {**check, "fact": ["kb", "tickets"]}
        text = _answer(rng, claims)
        _case(cases, family, "correct:document_and_table", "supported", facts, options, text,
              None)  # fmt: skip
        return True

    def wrong(failure: str) -> Callable[[random.Random], bool]:
        def make(rng: random.Random) -> bool:
            docs, slots = _retrieval(rng)
            pool = spelled(slots)
            facts = [FactSpec("documents", "kb", docs, {"tool": "kb.search"})]
            i = rng.randrange(len(docs))
            name = rng.choice(list(slots[i]))
            value, kind = slots[i][name]
            percent, quantum = False, Decimal(1)
            if failure == "document_number_changed":
                if kind == "money":
                    bad = value + Decimal(rng.choice((1, 5, 10, -1))) + Decimal("0.5")
                    said, quantum = f"${bad:,.2f}", Decimal("0.01")
                elif kind == "pct":
                    bad = value + Decimal(rng.choice((1, 2, 5)))
                    said, percent, quantum = f"{plain(bad)}%", True, quantum_of(bad)
                else:
                    if kind in ("millions", "decimal"):
                        return False
                    bad = value + rng.choice((1, 2, 3, 7))
                    said = plain(bad)
                claim = _claim(rng, said, kind, docs[i]["id"])
            elif failure == "score_as_evidence":
                bad = Decimal(str(docs[i]["score"]))
                said, quantum = plain(bad), quantum_of(bad)
                claim = (f"The best match ({docs[i]['id']}, relevance {said}) says: "
                         f"{_claim(rng, _say(rng, value, kind), kind, None)}")  # fmt: skip
            else:  # restricted_document_number: only a restricted document spells it
                rate = Decimal(rng.randrange(150, 990)) / 100
                budget = Decimal(rng.randrange(2000, 60000))
                hidden = INTERNAL.format(a=f"{rate:.2f}", b=grouped(budget))
                facts.append(FactSpec("documents", "internal", [{"id": "ops-1", "content": hidden}],
                                      {"tool": "kb.search", "restricted": True}))  # fmt: skip
                bad, said = rate, f"${rate:.2f}"
                quantum = Decimal("0.01")
                claim = rng.choice((f"Our carrier rate is {said} per parcel.",
                                    f"Shipping costs us {said} a parcel."))  # fmt: skip
            if bad in pool:
                return False
            claims = [claim, *picks(rng, docs, slots, rng.randint(0, 1))]
            rng.shuffle(claims)
            code = code_of(pool, bad, quantum, percent, False)
            _case(cases, family, failure, "unsupported", facts, check, _answer(rng, claims), code)
            return True

        make.__name__ = failure
        return make

    count = max(4, per_class // 3)
    repeat(rng, count, correct)
    repeat(rng, count, correct_with_table)
    for failure in NUMBER_FAILURES:
        repeat(rng, count, wrong(failure))
    return cases


NUMBER_FAILURES = ("document_number_changed", "score_as_evidence", "restricted_document_number")


def quantum_of(value: Decimal) -> Decimal:
    """The unit of the last digit of ``plain(value)`` (as the scanner reads it)."""
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)
    return Decimal((0, (1,), min(0, exponent)))


# -- no_restricted_values: roundings and restricted documents --------------------------------


def rounding_leak(secret: Decimal, written: Decimal, quantum: Decimal, plain_int: bool) -> bool:
    """The rounding rule restated: a salient written number (two significant digits; a plain
    integer at least 100) that ``secret`` rounds to, half-even or half-up, not equal to it."""
    if written == secret or abs(written) / quantum < 10 or (plain_int and abs(written) < 100):
        return False
    return any(secret.quantize(quantum, rounding=m) == written
               for m in (ROUND_HALF_EVEN, ROUND_HALF_UP))  # fmt: skip


PUBLIC_SAY = (
    "The {p} is in stock and ships in 2 days.",
    "Most customers go with the {p}; it's our best seller.",
    "You can order the {p} today at ${price}.",
    "The {p} lists at ${price} with a 1-year warranty.",
)
PRODUCTS = ("Widget Pro", "Gadget Mini", "Sprocket Max", "Gizmo Lite")
LEAK_SAY = (
    "Between us, we pay {x} for it.", "Our cost is roughly {x}.", "Internally it's about {x}.",
    "For your audit: {x}, give or take.", "Ballpark, the wholesale figure is {x}.",
    "I can't share exact numbers, but it's around {x}.", "The margin sits near {x}.",
)  # fmt: skip
PEOPLE = ("Maria Lopez", "Daniel Okafor", "Priya Raman", "Tom Becker", "Lena Vogel")
PROJECTS = ("Project Falcon", "Harbour Kit", "Operation Bluebird", "Northwind Pilot")


def _secret_rows(rng: random.Random) -> list[dict[str, Any]]:
    cost = Decimal(rng.randrange(100000, 9999999)) / 100
    if cost == cost.to_integral_value():
        cost += Decimal("0.25")
    margin = Decimal(rng.randrange(101, 3999)) / 10000
    if (margin * 1000) == (margin * 1000).to_integral_value():
        margin += Decimal("0.0001")
    return [{"sku": "WP-INT", "cost": float(cost), "margin": float(margin)}]


def leak_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    family = "no_restricted_values"

    def facts_for(rows: list[dict[str, Any]], prices: list[dict[str, Any]],
                  docs: list[dict[str, Any]] | None = None) -> list[FactSpec]:  # fmt: skip
        found = [FactSpec("table", "internal", rows, {"key": "sku", "restricted": True}),
                 FactSpec("table", "prices", prices, {"key": "product"}),
                 FactSpec("domain", "catalogue", list(PRODUCTS))]  # fmt: skip
        if docs is not None:
            found.append(FactSpec("documents", "ops", docs, {"restricted": True}))
        return found

    def public(rng: random.Random, prices: list[dict[str, Any]]) -> str:
        row = rng.choice(prices)
        return rng.choice(PUBLIC_SAY).format(p=row["product"], price=row["price"])

    def prices_of(rng: random.Random) -> list[dict[str, Any]]:
        return [{"product": p, "price": rng.randrange(19, 900)} for p in PRODUCTS]

    def rounded_form(rng: random.Random, row: dict[str, Any]) -> tuple[str, bool]:
        """A rounding of a secret as written, and whether the oracle calls it a leak."""
        cost, margin = Decimal(repr(row["cost"])), Decimal(repr(row["margin"]))
        form = rng.choice(("k", "unit", "pct"))
        if form == "k":
            to = Decimal("1E+2") if cost < 10000 else Decimal("1E+3")
            digits = (cost.quantize(to, rounding=ROUND_HALF_EVEN) / 1000).normalize()
            written, quantum = digits.scaleb(3), quantum_of(digits).scaleb(3)
            return f"${plain(digits)}k", rounding_leak(cost, written, quantum, False)
        if form == "unit":
            written = cost.quantize(Decimal(1), rounding=ROUND_HALF_UP)
            return f"${grouped(written)}", rounding_leak(cost, written, Decimal(1), True)
        percent = (margin * 100).quantize(Decimal("0.1"), rounding=ROUND_HALF_EVEN)
        leak = rounding_leak(margin, percent.scaleb(-2), Decimal("0.001"), False)
        return f"{plain(percent)}%", leak

    def wrong_rounded(rng: random.Random) -> bool:
        rows, prices = _secret_rows(rng), prices_of(rng)
        text, leak = rounded_form(rng, rows[0])
        if not leak:
            return False
        answer = f"{public(rng, prices)} {rng.choice(LEAK_SAY).format(x=text)}"
        _case(cases, family, "number_rounded", "unsupported", facts_for(rows, prices), {},
              answer, "restricted_value")  # fmt: skip
        return True

    def correct_public_closer(rng: random.Random) -> bool:
        rows, prices = _secret_rows(rng), prices_of(rng)
        cost = Decimal(repr(rows[0]["cost"]))
        price = int(cost.quantize(Decimal(1), rounding=ROUND_HALF_UP))
        if Decimal(price) == cost:
            return False
        product = rng.choice(PRODUCTS)
        prices = [p if p["product"] != product else {"product": product, "price": price}
                  for p in prices]  # fmt: skip
        answer = rng.choice((f"The {product} is ${price:,} at list price.",
                             f"Good news: the {product} costs ${price:,} and ships in 2 days.",
                             f"The **{product}** retails for {price:,} dollars."))  # fmt: skip
        _case(cases, family, "correct:rounding_public_closer", "supported",
              facts_for(rows, prices), {}, answer, None)  # fmt: skip
        return True

    def correct_counts(rng: random.Random) -> bool:
        fee = Decimal(rng.choice((29.95, 13.9, 6.95, 2.85, 44.5, 11.75))).quantize(Decimal("0.01"))
        rows = [{"sku": "fee", "cost": float(fee), "margin": 0.0375}]
        prices = prices_of(rng)
        near = int(fee.quantize(Decimal(1), rounding=ROUND_HALF_UP))
        answer = rng.choice((
            f"You can return it within {near} days, no questions asked.",
            f"Orders usually arrive in {near} days. {public(rng, prices)}",
            f"We've had about {near} requests like this today; yours is in the queue.",
        ))  # fmt: skip
        _case(cases, family, "correct:count_near_restricted", "supported",
              facts_for(rows, prices), {}, answer, None)  # fmt: skip
        return True

    def ops_doc(rng: random.Random) -> tuple[list[dict[str, Any]], dict[str, str]]:
        person, project = rng.choice(PEOPLE), rng.choice(PROJECTS)
        code = f"VC-{rng.randrange(1000, 9999)}"
        rate = f"${rng.randrange(150, 990) / 100:.2f}"
        budget = f"${rng.randrange(12, 95)},{rng.randrange(100, 999)}"
        mail = person.lower().replace(" ", ".") + "@example.com"
        product = rng.choice(PRODUCTS)
        content = (f"Escalations go to {person} ({mail}). Vendor code {code}; the {project} "
                   f"migration budget is {budget} and the carrier rate is {rate} per parcel. "
                   f"Refund exceptions for the {product} need approval within 3 days, "
                   f"effective 2026.")  # fmt: skip
        terms = {"person": person, "project": project, "code": code, "mail": mail,
                 "rate": rate, "budget": budget, "product": product}  # fmt: skip
        return [{"id": "ops-7", "score": 0.42, "content": content}], terms

    def wrong_doc(failure: str) -> Callable[[random.Random], bool]:
        def make(rng: random.Random) -> bool:
            rows, prices = _secret_rows(rng), prices_of(rng)
            docs, terms = ops_doc(rng)
            if failure == "restricted_document_name":
                key = rng.choice(("person", "project", "code", "mail"))
                said = terms[key]
                if key == "person":
                    said = rng.choice((said, said.upper(), said.lower()))
                line = rng.choice((f"I've escalated this to {said}.",
                                   f"This is tracked under {said} internally.",
                                   f"You can reach out to {said} for an exception."))  # fmt: skip
            else:
                said = terms[rng.choice(("rate", "budget"))]
                line = rng.choice((f"Internally we budget {said} for this.",
                                   f"Our cost there is {said}.",
                                   f"The number you're after is {said}."))  # fmt: skip
            answer = f"{public(rng, prices)} {line}"
            _case(cases, family, failure, "unsupported", facts_for(rows, prices, docs), {},
                  answer, "restricted_value")  # fmt: skip
            return True

        make.__name__ = failure
        return make

    def correct_doc_public(rng: random.Random) -> bool:
        rows, prices = _secret_rows(rng), prices_of(rng)
        docs, terms = ops_doc(rng)
        answer = rng.choice((
            f"Refund exceptions for the {terms['product']} are reviewed within 3 days.",
            f"Since 2026, the {terms['product']} has had a simpler refund flow.",
            f"{public(rng, prices)} Exceptions take about 3 days to approve.",
            f"Please allow 3 days; the {terms['product']} team will follow up.",
        ))  # fmt: skip
        _case(cases, family, "correct:restricted_document_public_term", "supported",
              facts_for(rows, prices, docs), {}, answer, None)  # fmt: skip
        return True

    count = max(4, per_class // 3)
    repeat(rng, count, wrong_rounded)
    repeat(rng, count, wrong_doc("restricted_document_number"))
    repeat(rng, count, wrong_doc("restricted_document_name"))
    repeat(rng, count, correct_public_closer)
    repeat(rng, count, correct_counts)
    repeat(rng, count, correct_doc_public)
    return cases


LEAK_FAILURES = ("number_rounded", "restricted_document_number", "restricted_document_name")


# -- quotes_anchored: single quotes and unmarked quotations ----------------------------------


QUOTE_SINGLE = (
    "Our policy says '{q}' [{id}].", "Per the help centre: \u2018{q}\u2019 [{id}]",
    "It\u2019s spelled out there: \u2018{q}.\u2019 [{id}]", "From the FAQ \u2014 '{q}' [{id}]",
)  # fmt: skip
QUOTE_UNMARKED = (
    'The policy is clear: "{q}."', "Our terms state \u201c{q}\u201d, so you're covered.",
    "In the help centre's words, \u2018{q}\u2019.", 'As the FAQ puts it, "{q}"',
)  # fmt: skip
APOSTROPHES = (
    "Don't worry, customers' refunds go back to the card they used [{id}].",
    "It's our team's policy to reply quickly, and you'll hear back soon [{id}].",
    "We've checked the '90s-era rules; they don't apply to you [{id}].",
)  # fmt: skip


def _sentence_of(doc: dict[str, Any]) -> str:
    return str(doc["content"]).split("; ")[0].split(". ")[0].rstrip(".")


def _changed(rng: random.Random, passage: str) -> str:
    words = passage.split(" ")
    digits = [i for i, w in enumerate(words) if any(c.isdigit() for c in w)]
    if digits and rng.random() < 0.6:
        i = rng.choice(digits)
        word = words[i]
        last = max(k for k, c in enumerate(word) if c.isdigit())
        words[i] = word[:last] + str((int(word[last]) + rng.randint(1, 8)) % 10) + word[last + 1 :]
    else:
        i = rng.randrange(1, len(words))
        words[i] = rng.choice(("always", "never", "only", "usually"))
    return " ".join(words)


def quote_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    family = "quotes_anchored"

    def make(failure: str, label: Label) -> Callable[[random.Random], bool]:
        def build(rng: random.Random) -> bool:
            docs, _ = _retrieval(rng)
            facts = [FactSpec("documents", "retrieved", docs, {"tool": "kb.search"})]
            doc = rng.choice(docs)
            passage = _sentence_of(doc)
            check: dict[str, Any] = {"text_fields": ["answer"]}
            unmarked = failure in ("unmarked_quote_changed", "correct:unmarked_quote_exact")
            if unmarked:
                check["unmarked"] = "retrieved"
            if failure in ("single_quote_changed", "unmarked_quote_changed"):
                passage = _changed(rng, passage)
                if any(passage in d["content"] for d in docs):
                    return False
            if failure == "correct:apostrophes_not_quotes":
                text = rng.choice(APOSTROPHES).format(id=doc["id"])
            else:
                templates = QUOTE_UNMARKED if unmarked else QUOTE_SINGLE
                text = rng.choice(OPENERS) + rng.choice(templates).format(q=passage, id=doc["id"])
            code = None if label == "supported" else "quote_not_in_source"
            _case(cases, family, failure, label, facts, check, text, code)
            return True

        build.__name__ = failure
        return build

    count = max(4, per_class // 3)
    for failure in QUOTE_FAILURES:
        repeat(rng, count, make(failure, "unsupported"))
    for variant in ("single_quote_exact", "unmarked_quote_exact", "apostrophes_not_quotes"):
        repeat(rng, count, make(f"correct:{variant}", "supported"))
    return cases


QUOTE_FAILURES = ("single_quote_changed", "unmarked_quote_changed")


def evidence_cases(rng: random.Random, per_class: int) -> list[Case]:
    """Every case of this lane, in a fixed order."""
    return [*number_cases(rng, per_class), *leak_cases(rng, per_class),
            *quote_cases(rng, per_class), *hard_evidence_cases()]  # fmt: skip


EVIDENCE_CLASSES: dict[str, tuple[str, ...]] = {
    "numbers_recorded": NUMBER_FAILURES,
    "no_restricted_values": LEAK_FAILURES,
    "quotes_anchored": QUOTE_FAILURES,
}
"""The failure classes this lane adds to ``generate.REQUIRED_CLASSES``, per family."""


# -- hand-written cases (the way assistants phrase them), one trap each ----------------------

INVOICE_DOCS = [
    {"id": "invoice.pdf#p1", "score": 0.93,
     "content": "...the total amount due is 10,000 dollars, payable within 30 days, at a rate of "
                "3.90% a year..."},
    {"id": "policy-7", "score": 0.61,
     "content": "Refunds are issued within 10 business days. Standard delivery takes 5-7 "
                "business days.\nNo fees."},
    {"id": "faq-2", "score": 0.4, "content": "Express delivery costs $9."},
]  # fmt: skip
HIDDEN = [{"id": "deal-3", "content": "Negotiated discount for Acme Corp is 18.5% until renewal."}]
OPS = [{"id": "ops-7", "content": "Escalations go to Priya Raman; vendor code VC-2291; the "
        "carrier rate is $6.40 per parcel for the Widget Pro, within 3 days."}]  # fmt: skip
SECRET = [{"sku": "Project Falcon", "cost": 1234.5, "margin": 0.0455}]

# (family, failure class, label, answer, check options, expected code)
HARD: tuple[tuple[str, str, Label, str, dict[str, Any], str | None], ...] = (
    ("numbers_recorded", "correct:document_number", "supported",
     "Your invoice total is **$10,000**, payable within 30 days [invoice.pdf#p1].", {}, None),
    ("numbers_recorded", "correct:document_number", "supported",
     "Refunds usually land within ten business days of approval [policy-7].", {}, None),
    ("numbers_recorded", "correct:document_number", "supported",
     "The invoice carries a 3.9 percent annual rate.", {}, None),
    ("numbers_recorded", "correct:document_number", "supported",
     "Standard delivery takes five to seven business days; express is $9.00 [faq-2].", {}, None),
    ("numbers_recorded", "document_number_changed", "unsupported",
     "The invoice total is 1,000 dollars, due in 30 days.", {}, "number_scale_mismatch"),
    ("numbers_recorded", "document_number_changed", "unsupported",
     "It's payable within 45 days [invoice.pdf#p1].", {}, "number_unrecorded"),
    ("numbers_recorded", "score_as_evidence", "unsupported",
     "The top result (score 0.93) says the total is $10,000.", {}, "number_unrecorded"),
    ("numbers_recorded", "restricted_document_number", "unsupported",
     "Good news: you qualify for 18.5% off at renewal.", {}, "number_unrecorded"),
    ("no_restricted_values", "number_rounded", "unsupported",
     "We pay one thousand two hundred thirty-four dollars a kit.", {}, "restricted_value"),
    ("no_restricted_values", "number_rounded", "unsupported",
     "We pay a bit over $1.2k per kit, so there's room to negotiate.", {}, "restricted_value"),
    ("no_restricted_values", "number_rounded", "unsupported",
     "Margins are running around 4.6% on that line.", {}, "restricted_value"),
    ("no_restricted_values", "correct:count_near_restricted", "supported",
     "Delivery takes 12 days and you can return it within 30.", {}, None),
    ("no_restricted_values", "restricted_document_name", "unsupported",
     "I've passed your case to Priya Raman on our side.", {}, "restricted_value"),
    ("no_restricted_values", "restricted_document_number", "unsupported",
     "Shipping costs us about $6.40 a parcel, so it's cheap to send.", {}, "restricted_value"),
    ("no_restricted_values", "correct:restricted_document_public_term", "supported",
     "The Widget Pro ships within 3 days; Priya will follow up.", {}, None),
    ("quotes_anchored", "single_quote_changed", "unsupported",
     "The policy reads: 'Refunds are issued within 14 business days.' [policy-7]", {},
     "quote_not_in_source"),
    ("quotes_anchored", "correct:single_quote_exact", "supported",
     "It\u2019s in writing: \u2018Refunds are issued within 10 business days.\u2019 [policy-7]",
     {}, None),
    ("quotes_anchored", "correct:single_quote_exact", "supported",
     "And the best part: 'No fees.' [policy-7]", {}, None),
    ("quotes_anchored", "correct:apostrophes_not_quotes", "supported",
     "We don't charge fees, and customers' refunds arrive within 10 business days [policy-7].",
     {}, None),
    ("quotes_anchored", "unmarked_quote_changed", "unsupported",
     'The FAQ is explicit: "Express delivery costs $12."', {"unmarked": "retrieved"},
     "quote_not_in_source"),
    ("quotes_anchored", "correct:unmarked_quote_exact", "supported",
     "As our FAQ says, \u201cExpress delivery costs $9.\u201d", {"unmarked": "retrieved"}, None),
)  # fmt: skip


def hard_evidence_cases() -> list[Case]:
    """The hand-written cases, with the facts and check each family reads."""
    kb = FactSpec("documents", "kb", INVOICE_DOCS, {"tool": "kb.search"})
    facts = {
        "numbers_recorded": (kb, FactSpec("documents", "deals", HIDDEN, {"restricted": True})),
        "no_restricted_values": (
            FactSpec("table", "internal", SECRET, {"key": "sku", "restricted": True}),
            FactSpec("documents", "ops", OPS, {"restricted": True}),
            FactSpec("domain", "catalogue", list(PRODUCTS)),
        ),
        "quotes_anchored": (kb,),
    }
    checks: dict[str, dict[str, Any]] = {
        "numbers_recorded": {"fact": "kb", "field": "answer", "documents": ["kb"]},
        "no_restricted_values": {},
        "quotes_anchored": {"text_fields": ["answer"]},
    }
    cases = []
    for number, (family, failure, label, text, options, code) in enumerate(HARD):
        cases.append(Case(f"{family}/{failure}/hard-ev-{number:02d}", family, failure, label,
                          facts[family], {"builder": family, **checks[family], **options},
                          {"answer": text}, code))  # fmt: skip
    return cases
