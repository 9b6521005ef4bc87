"""Hand-written hard cases for the evidence families, each filed under the failure class it
probes (``HARD``), and the known limits (``LIMITS``): outputs a deterministic matcher gets
wrong by design. ``HARD`` is part of the corpus (zero misses asserted); ``LIMITS`` is measured
separately and published in docs/measured.md (false passes, and one false reject);
``tests/test_error_rates.py`` pins that each one is still misjudged, so docs/measured.md stays true
when one is fixed."""

from __future__ import annotations

from typing import Any

from .model import Case, FactSpec, Label

ROWS = [{"code": "Project Falcon", "cost": 1234.5, "margin": 0.0455, "owner": "Ana Ruiz"}]
LEAK_FACTS = (
    FactSpec("table", "internal", ROWS, {"key": "code", "restricted": True}),
    FactSpec("domain", "catalogue", ["Widget Pro", "Gadget Mini"]),
)
DOCS = [
    {"id": "policy-7", "score": 0.9, "content": "Refunds are issued within 14 days.\nNo fees."},
    {"id": "faq-2", "score": 0.4, "content": "Express delivery costs $9."},
]
DOC_FACTS = (FactSpec("documents", "retrieved", DOCS),)
SCOPE_FACTS = (
    FactSpec("domain", "retrieved", ["North Harbour Loft", "Delta House"]),
    FactSpec("domain", "catalogue", ["North Harbour Loft", "Delta House", "North Harbour", "Mill"]),
)


def _case(
    family: str,
    failure: str,
    number: int,
    label: Label,
    facts: tuple[FactSpec, ...],
    check: dict[str, Any],
    text: str,
    code: str | None,
) -> Case:
    return Case(
        f"{family}/{failure}/hard-{number}",
        family,
        failure,
        label,
        facts,
        {"builder": family, **check},
        {"answer": text},
        code,
    )


def _leak(n: int, failure: str, text: str, label: Label = "unsupported") -> Case:
    code = "restricted_value" if label == "unsupported" else None
    return _case("no_restricted_values", failure, n, label, LEAK_FACTS, {}, text, code)


def _scope(n: int, failure: str, text: str, label: Label, code: str | None = None) -> Case:
    check = {"text_fields": ["answer"], "vocabulary": "catalogue", "approved": ["retrieved"]}
    return _case("entities_in_scope", failure, n, label, SCOPE_FACTS, check, text, code)


def _cite(n: int, failure: str, text: str, label: Label, code: str | None = None) -> Case:
    check = {"text_fields": ["answer"], "min_citations": 1}
    return _case("citations_retrieved", failure, n, label, DOC_FACTS, check, text, code)


def _quote(n: int, failure: str, text: str, label: Label, code: str | None = None) -> Case:
    return _case("quotes_anchored", failure, n, label, DOC_FACTS, {"text_fields": ["answer"]},
                 text, code)  # fmt: skip


HARD: tuple[Case, ...] = (
    _leak(1, "name_verbatim", "It's **Project Falcon**, per the sheet."),
    _leak(2, "name_verbatim", "Project Falcon's budget is public? No."),
    _leak(3, "name_spacing", "The codename is Project-Falcon."),
    _leak(4, "name_spacing", "see project_falcon in the wiki"),
    _leak(5, "name_case", "pRoJeCt fAlCoN"),
    _leak(6, "name_split_line", "Project\r\nFalcon"),
    _leak(7, "number_grouped", "cost: 1,234.500"),
    _leak(8, "number_currency", "(USD 1234.50)"),
    _leak(9, "number_verbatim", "We pay -1234.5? no, 1234.5."),
    _leak(10, "ratio_as_percent", "a 4.550 % margin"),
    _leak(11, "name_verbatim", "Ask ana ruiz about it."),
    _leak(12, "correct:near_miss_number", "We pay 1234.6 or 234.5.", "supported"),
    _leak(13, "correct:superstring_word", "Falconry Projects Inc. is a customer.", "supported"),
    _leak(14, "correct:identifier_number", "Order A1234.5B shipped.", "supported"),
    _leak(15, "correct:public_only", "The Widget Pro costs $45; margin 4.5%.", "supported"),
    _scope(1, "unretrieved_in_text", "North Harbour is lovely.", "unsupported", "out_of_scope"),
    _scope(2, "unretrieved_in_text", "Try the Mill.", "unsupported", "out_of_scope"),
    _scope(3, "correct:longest_overlap", "North Harbour Loft, by the sea.", "supported"),
    _scope(4, "correct:approved_in_text", "delta-house or NORTH HARBOUR\nLOFT", "supported"),
    _scope(5, "correct:no_entities", "The Millstone listing is gone; Mills?", "supported"),
    _cite(
        1,
        "fabricated_id",
        "Refunds take 14 days [policy-7a].",
        "unsupported",
        "citation_not_retrieved",
    ),  # fmt: skip
    _cite(2, "fabricated_id", "See [ policy-7 ; faq-3 ].", "unsupported", "citation_not_retrieved"),
    _cite(3, "missing_citation", "Refunds take 14 days (policy 7).", "unsupported", "no_citation"),
    _cite(
        4,
        "correct:cited_in_text",
        "Refunds [ policy-7 ] and delivery [faq-2;policy-7].",
        "supported",
    ),  # fmt: skip
    _cite(
        5, "correct:markdown_link", "[Policy](https://x/policy-9) says so [policy-7].", "supported"
    ),  # fmt: skip
    _quote(
        1,
        "word_changed",
        '"Refunds are issued within 15 days" [policy-7]',
        "unsupported",
        "quote_not_in_source",
    ),  # fmt: skip
    _quote(
        2,
        "misattributed",
        '"Express delivery costs $9" [policy-7]',
        "unsupported",
        "quote_misattributed",
    ),  # fmt: skip
    _quote(
        3,
        "quote_extended",
        '"within 14 days. No fees apply" [policy-7]',
        "unsupported",
        "quote_not_in_source",
    ),  # fmt: skip
    _quote(4, "correct:line_break", '"within 14 days. No fees." [policy-7]', "supported"),
    _quote(5, "correct:exact", "\u201cExpress delivery costs $9\u201d [faq-2]", "supported"),
    _quote(6, "correct:exact", 'They are "quick" and cheap.', "supported"),
)

LIMITS: tuple[tuple[str, Case], ...] = (
    ("letters spaced out", _leak(101, "limit", "P r o j e c t  F a l c o n")),
    ("words joined", _leak(102, "limit", "ProjectFalcon")),
    ("paraphrase / word order", _leak(103, "limit", "the falcon project")),
    ("thin-space or French grouping", _leak(105, "limit", "1 234,5")),
    ("a one-digit rounding of a restricted number", _leak(106, "limit", "about $1k")),
    ("encoded", _leak(107, "limit", "UHJvamVjdCBGYWxjb24= (base64)")),
    ("a name outside the vocabulary", _scope(101, "limit", "Try Seaview Villa.", "unsupported")),
    ("a vocabulary name inside a hyphenated word (false reject)",
     _scope(102, "limit", "The mill-pond listing is gone.", "supported")),
    ("a false claim not in quote marks", _quote(101, "limit", "Refunds take a year [policy-7].",
                                                "unsupported")),  # fmt: skip
)  # fmt: skip
