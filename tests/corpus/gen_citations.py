"""Prose corpus for what an answer may cite and quote: citations_retrieved and quotes_anchored.
A retrieval of 2-6 documents (ids and passages from templates, fixed seed) and an answer that
cites or quotes them, one failure class at a time."""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from ._common import repeat
from .model import Case, FactSpec, Label

PREFIXES = ("policy", "faq", "kb", "doc", "guide", "note")
SUBJECTS = ("Orders", "Refunds", "Returns", "Exchanges", "Repairs", "Deliveries")
VERBS = ("ship within", "are processed within", "are accepted within", "take up to", "arrive in")
UNITS = ("business days", "calendar days", "working days", "hours")
CITE = (
    "{s} [{id}].", "According to our policy, {s} [{id}]", "{s} (see [{id}]).",
    "In short: {s} [{id}]",
    "{s} [{id}, {id2}].", "{s}\n\nSources: [{id}]", "Yes — {s} [{id}]!",
)  # fmt: skip
QUOTE = (
    'The policy says "{q}" [{id}].', 'Quote: "{q}" [{id}]', "It reads \u201c{q}\u201d [{id}].",
    'As stated, "{q}"  [{id}], so you are covered.', '"{q}" [{id}]\nHope that helps.',
)  # fmt: skip


def _retrieval(rng: random.Random) -> list[dict[str, Any]]:
    ids = rng.sample([f"{p}-{n}" for p in PREFIXES for n in range(1, 40)], rng.randint(2, 6))
    docs = []
    for doc_id in ids:
        sentence = (
            f"{rng.choice(SUBJECTS)} {rng.choice(VERBS)} {rng.randint(2, 45)} {rng.choice(UNITS)}."
        )
        docs.append({"id": doc_id, "score": round(rng.random(), 3), "content": sentence})
    return docs


def _case(cases: list[Case], family: str, failure: str, label: Label, docs: list[dict[str, Any]],
          check: dict[str, Any], output: dict[str, Any], code: str | None,
          extra: tuple[FactSpec, ...] = ()) -> None:  # fmt: skip
    number = sum(1 for c in cases if c.failure_class == failure)
    facts = (FactSpec("documents", "retrieved", docs, {"tool": "kb.search"}), *extra)
    cases.append(Case(f"{family}/{failure}/{number:03d}", family, failure, label, facts,
                      {"builder": family, **check}, output, code))  # fmt: skip


def _claim_of(doc: dict[str, Any]) -> str:
    return doc["content"].rstrip(".")


def citation_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    prose = {"text_fields": ["answer"]}

    def make(failure: str, label: Label, code: str | None = None) -> Callable[[Any], bool]:
        def build(rng: random.Random) -> bool:
            docs = _retrieval(rng)
            ids = [d["id"] for d in docs]
            doc = rng.choice(docs)
            cited, second = doc["id"], rng.choice(ids)
            check: dict[str, Any] = dict(prose)
            extra: tuple[FactSpec, ...] = ()
            if failure == "fabricated_id":
                cited = f"{rng.choice(('source', 'ref', 'wiki'))}-{rng.randint(100, 999)}"
            elif failure == "near_miss_id":
                prefix, _, n = cited.partition("-")
                cited = f"{prefix}-{int(n) + rng.choice((1, 10, 40))}"
                if cited in ids:
                    return False
            elif failure == "restricted_id":
                cited = f"hr-{rng.randint(1, 9)}"
                extra = (FactSpec("documents", "hr", [{"id": cited}], {"restricted": True}),)
            elif failure == "missing_citation":
                check["min_citations"] = 1
            text = rng.choice(CITE).format(s=_claim_of(doc), id=cited, id2=second)
            if failure == "missing_citation":
                text = _claim_of(doc) + rng.choice((".", " — see our website.", "!"))
            if failure == "correct:markdown_link":
                text = f"{_claim_of(doc)} [our policy](https://example.com/{cited}) [{cited}]"
            output: dict[str, Any] = {"answer": text}
            if failure in ("field_fabricated", "correct:cited_in_field"):
                bad = failure == "field_fabricated"
                output, check = {"sources": [cited, "made-up-1" if bad else second]}, {
                    "fields": ["sources"]}  # fmt: skip
            _case(cases, "citations_retrieved", failure, label, docs, check, output, code, extra)
            return True

        return build

    for failure, code in (("fabricated_id", "citation_not_retrieved"),
                          ("near_miss_id", "citation_not_retrieved"),
                          ("restricted_id", "citation_restricted"),
                          ("missing_citation", "no_citation"),
                          ("field_fabricated", "citation_not_retrieved")):  # fmt: skip
        repeat(rng, per_class, make(failure, "unsupported", code))
    for variant in ("cited_in_text", "markdown_link", "cited_in_field"):
        repeat(rng, per_class, make(f"correct:{variant}", "supported"))
    return cases


def _perturb(rng: random.Random, failure: str, passage: str) -> str | None:
    words = passage.split(" ")
    if failure == "word_changed":
        i = rng.randrange(len(words))
        words[i] = rng.choice(("never", "always", "usually", "all"))
    elif failure == "number_changed":
        i = next((k for k, w in enumerate(words) if w.isdigit()), None)
        if i is None:
            return None
        words[i] = str(int(words[i]) + rng.choice((1, 2, 10)))
    elif failure == "case_changed":
        return passage.upper() if passage.upper() != passage else None
    elif failure == "quote_extended":
        return passage + rng.choice((" and are free", " or sooner", ", guaranteed"))
    return " ".join(words)


def anchor_cases(rng: random.Random, per_class: int) -> list[Case]:
    cases: list[Case] = []
    prose = {"text_fields": ["answer"]}

    def make(failure: str, label: Label, code: str | None = None) -> Callable[[Any], bool]:
        def build(rng: random.Random) -> bool:
            docs = _retrieval(rng)
            doc = rng.choice(docs)
            passage = _claim_of(doc)
            cited = doc["id"]
            if failure in ("word_changed", "number_changed", "case_changed", "quote_extended"):
                changed = _perturb(rng, failure, passage)
                if changed is None or any(changed in d["content"] for d in docs):
                    return False
                passage = changed
            elif failure == "misattributed":
                others = [d for d in docs if d is not doc and passage not in d["content"]]
                if not others:
                    return False
                cited = rng.choice(others)["id"]
            elif failure == "content_not_captured":
                doc["content"] = None
            elif failure == "correct:line_break":
                passage = passage.replace(" ", "\n", 1)
            elif failure == "correct:trailing_period":
                passage += "."
            elif failure == "correct:chunked":
                docs.append({"id": cited, "score": 0.1, "content": "Other chunk. " + passage})
                doc["content"] = "Unrelated first chunk."
            text = rng.choice(QUOTE).format(q=passage, id=cited)
            _case(cases, "quotes_anchored", failure, label, docs, dict(prose), {"answer": text},
                  code)  # fmt: skip
            return True

        return build

    for failure, code in (("word_changed", "quote_not_in_source"),
                          ("number_changed", "quote_not_in_source"),
                          ("case_changed", "quote_not_in_source"),
                          ("quote_extended", "quote_not_in_source"),
                          ("misattributed", "quote_misattributed"),
                          ("content_not_captured", "content_missing")):  # fmt: skip
        repeat(rng, per_class, make(failure, "unsupported", code))
    for variant in ("exact", "line_break", "trailing_period", "chunked"):
        repeat(rng, per_class, make(f"correct:{variant}", "supported"))
    return cases
