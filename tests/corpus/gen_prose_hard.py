"""Hand-written hard cases for numbers_recorded: one per trap, each labelled by hand.

``known_limit`` marks the cases the checker gets wrong *by design* (a recorded number attached
to the wrong entity; fractions and "one" in words; dates, which are never checked; digits or
dashes a rule cannot tell apart). They are
published as false passes / false rejects, and ``tests/test_error_rates.py`` fails if one of
them stops failing (the limits in docs/measured.md would then be out of date) or if any other
case misses.
"""

from __future__ import annotations

from typing import Any

from .model import Case, FactSpec

FACT = "sales"
ROWS = [
    {"id": "A", "total": 10000, "rate": 3.9, "change": -3.2, "regions": 9, "secs": 1.5},
    {"id": "B", "total": 9500, "rate": 4.75, "change": 0.5, "regions": 12, "secs": 21},
    {"id": "C", "total": 1250000, "rate": 0.0455, "change": 0.1 + 0.2, "regions": 10, "secs": 0},
]
ARGS = {"year": 2026}

# (name, label, text, check options, expected code, known limit?)
HARD: tuple[tuple[str, str, str, dict[str, Any], str | None, bool], ...] = (
    ("up_from", "supported", "Revenue rose to $10,000 (up from $9,500).", {}, None, False),
    ("quarter_and_sku", "supported", "Q3 2026: 10,000 units under SKU-1234.", {}, None, False),
    ("ordinal_hyphen", "supported", "The 2nd-best region sold 9,500.", {}, None, False),
    ("model_name", "supported", "gpt-4o answered in 1.5 seconds.", {}, None, False),
    ("words", "supported", "Nine of the twelve regions grew.", {}, None, False),
    ("currency_code", "supported", "It cost USD9,500.00 in total.", {}, None, False),
    ("unicode_minus", "supported", "\u22123.2% year over year.", {}, None, False),
    ("half_even_tie", "supported", "C totals 1.2M.", {"rounding": "half_even"}, None, False),
    ("half_up_tie", "supported", "C totals 1.3M.", {"rounding": "half_up"}, None, False),
    ("list", "supported", "1. Sales were 10,000.\n2. Costs were 9,500.", {}, None, False),
    ("date_time", "supported", "On 2026-11-30 at 10:45 the total was 10,000.", {}, None, False),
    ("version", "supported", "Version 1.2.3 processed 10,000 rows.", {}, None, False),
    ("ordinal_word", "supported", "Ranked third with 9,500.", {}, None, False),
    ("german", "supported", "Umsatz 10.000 \u20ac, Marge 3,9 %.", {"locale": "de"}, None, False),
    ("french", "supported", "Total 10\u202f000 \u20ac, taux 3,9 %.", {"locale": "fr"}, None, False),
    ("pronoun", "supported", "One region reported 10,000.", {}, None, False),
    ("float_repr", "supported", "C changed by 0.30000000000000004.", {}, None, False),
    ("ratio", "supported", "C converts at 4.55%.", {"percent_as_ratio": True}, None, False),
    ("range", "supported", "Totals ran 9,500\u201310,000.", {}, None, False),
    ("magnitude", "supported", "C reached 1.25 million.", {}, None, False),
    (
        "ten_vs_one",
        "unsupported",
        "The invoice total is 1,000 dollars.",
        {},
        "number_scale_mismatch",
        False,
    ),
    ("nine_vs_eight", "unsupported", "Eight regions grew.", {}, "number_unrecorded", False),
    ("million_unrounded", "unsupported", "C totals 1.3M.", {}, "number_rounding_undeclared", False),
    (
        "half_even_not_up",
        "unsupported",
        "C totals 1.3M.",
        {"rounding": "half_even"},
        "number_unrecorded",
        False,
    ),
    ("sign_dropped", "unsupported", "A changed by 3.2%.", {}, "number_sign_flipped", False),
    ("sign_added", "unsupported", "B changed by -0.5.", {}, "number_sign_flipped", False),
    (
        "pp_difference",
        "unsupported",
        "The rate rose 0.85% to 4.75%.",
        {},
        "number_unrecorded",
        False,
    ),
    (
        "relative_change",
        "unsupported",
        "The rate rose 21.8% to 4.75%.",
        {},
        "number_unrecorded",
        False,
    ),
    ("float_rounded", "unsupported", "C changed by 0.3.", {}, "number_rounding_undeclared", False),
    ("off_by_one", "unsupported", "A totals 10,001.", {}, "number_unrecorded", False),
    ("wrong_year", "unsupported", "In 2025, A totalled 10,000.", {}, "number_unrecorded", False),
    (
        "hidden_by_dates",
        "unsupported",
        "On 2026-11-30 (Q3, v2.1) the total was 10,500.",
        {},
        "number_unrecorded",
        False,
    ),
    ("range_end", "unsupported", "Totals ran 9,500\u201310,500.", {}, "number_unrecorded", False),
    ("magnitude_off", "unsupported", "A totals 10.5k.", {}, "number_unrecorded", False),
    ("locale_confusion", "unsupported", "Marge 3,9 %.", {}, "number_unrecorded", False),
    (
        "ratio_undeclared",
        "unsupported",
        "C converts at 4.55%.",
        {},
        "number_ratio_undeclared",
        False,
    ),
    ("words_off", "unsupported", "Twenty-two seconds.", {}, "number_unrecorded", False),
    (
        "billion_vs_million",
        "unsupported",
        "C totals 1.25 billion.",
        {},
        "number_scale_mismatch",
        False,
    ),
    (
        "list_marker_is_not_cover",
        "unsupported",
        "1. Costs were 9,400.",
        {},
        "number_unrecorded",
        False,
    ),
    ("wrong_attachment", "unsupported", "A totals 9,500.", {}, None, True),
    (
        "half_a_million",
        "unsupported",
        "C totals half a million.",
        {},
        "number_scale_mismatch",
        False,
    ),
    ("point_in_words", "supported", "C totals one point two five million.", {}, None, False),
    ("a_dozen", "unsupported", "A dozen regions grew.", {}, None, True),
    ("around_the_clock", "supported", "Support runs 24/7 for 9 regions.", {}, None, True),
    ("one_as_a_count", "unsupported", "Only one region grew.", {}, None, True),
    ("wrong_date", "unsupported", "A is due on 2026-12-30, for 10,000.", {}, None, True),
    ("en_dash_as_minus", "supported", "A changed by \u20133.2%.", {}, None, False),
)


def hard_cases() -> list[Case]:
    facts = (FactSpec("table", FACT, ROWS, {"key": "id", "args": ARGS}),)
    cases = []
    for name, label, text, options, code, limit in HARD:
        failure = "correct:hard" if label == "supported" else f"hard:{name}"
        cases.append(
            Case(
                id=f"numbers_recorded/hard/{name}",
                family="numbers_recorded",
                failure_class=failure,
                label=label,  # type: ignore[arg-type]
                facts=facts,
                check={"builder": "numbers_recorded", "fact": FACT, "field": "s", **options},
                output={"s": text},
                expect_code=code,
                known_limit=limit,
            )
        )
    return cases
