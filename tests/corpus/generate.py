"""Generate the labelled corpus: deterministic (``random.Random(20261129)``), in memory.

At least 2,000 wrong outputs covering every failure class of every check family, and at least
2,000 correct ones (reordered ties, values within the declared tolerance, 2 vs 2.0, case-
insensitive names where configured, the float nearest to an exact rational, large ints). Each
case carries its facts, check, output, label, family and failure class; see ``model.py``.

    python -m tests.corpus.generate            # a summary: cases per family and class
"""

from __future__ import annotations

import random
from collections import Counter

from .gen_citations import anchor_cases, citation_cases
from .gen_hard import HARD
from .gen_leaks import leak_cases, scope_cases
from .gen_money import FAILURES as MONEY_FAILURES
from .gen_money import money_cases
from .gen_names import entities_cases, field_cases, row_cases
from .gen_numeric import aggregate_cases, comparison_cases
from .gen_prose import FAILURES as PROSE_FAILURES
from .gen_prose import prose_cases
from .gen_prose_direction import FAILURES as DIRECTION_FAILURES
from .gen_prose_direction import RESTRICTED_FAILURES as DIRECTION_LEAKS
from .gen_prose_direction import direction_corpus
from .gen_prose_evidence import EVIDENCE_CLASSES, evidence_cases
from .gen_prose_hard import hard_cases
from .gen_prose_ranks_dates import DATE_FAILURES, RANK_FAILURES, ranks_dates_cases
from .gen_prose_second import CLASSES as SECOND_CLASSES
from .gen_prose_second import FAMILY_OF as SECOND_FAMILY
from .gen_prose_second import second_pass_cases
from .gen_ranked import prefix_cases, superlative_cases
from .model import Case

SEED = 20261129
PER_CLASS = 70

GENERATORS = (
    superlative_cases,
    prefix_cases,
    aggregate_cases,
    entities_cases,
    row_cases,
    comparison_cases,
    field_cases,
    leak_cases,
    scope_cases,
    citation_cases,
    anchor_cases,
    prose_cases,
    evidence_cases,
    direction_corpus,
    ranks_dates_cases,
    money_cases,
    second_pass_cases,  # last: the cases before it keep their seeds
)

# Every failure class the corpus must cover (issue 6, item 2), per family.
REQUIRED_CLASSES: dict[str, tuple[str, ...]] = {
    "superlative": (
        "wrong_winner", "invented_score", "unranked_entity", "flattened_tie", "min_max_flip",
        "numeric_string", "bool_as_number", "inconsistent_rank",
    ),
    "ranking_prefix": (
        "invented_order", "interloper", "repeat", "tie_cut", "bare_string", "wrong_length",
    ),
    "aggregate_reconciles": (
        "wrong_sum", "unweighted_mean", "wrong_subset", "not_exhaustive", "non_int_count",
        "partial_column", "count_within_tolerance", "unrepresentable_result",
        *MONEY_FAILURES,
    ),
    "entities_recorded": ("blended_name", "case_drift", "leaked_id", "empty_list"),
    "row_integrity": ("attribute_swap",),
    "comparison": (
        "wrong_sign", "pct_vs_pp", "ratio_as_difference", "entities_swapped", "zero_base",
        "unrepresentable_result",
    ),
    "no_restricted_values": (
        "name_verbatim", "name_case", "name_split_line", "name_hyphen_break", "name_spacing",
        "name_zero_width", "number_verbatim", "number_grouped", "number_currency",
        "number_scaled", "ratio_as_percent", "structured_number", "structured_key",
        *DIRECTION_LEAKS,
    ),
    "entities_in_scope": (
        "unretrieved_in_text", "unretrieved_case", "unretrieved_split_line",
        "restricted_in_text", "unretrieved_in_field",
    ),
    "citations_retrieved": (
        "fabricated_id", "near_miss_id", "restricted_id", "missing_citation", "field_fabricated",
    ),
    "quotes_anchored": (
        "word_changed", "number_changed", "case_changed", "quote_extended", "misattributed",
        "content_not_captured",
    ),
    "numbers_recorded": PROSE_FAILURES + DIRECTION_FAILURES + RANK_FAILURES,
    "dates_recorded": DATE_FAILURES,
}  # fmt: skip
for _family, _classes in EVIDENCE_CLASSES.items():  # issue 22, prose-evidence
    REQUIRED_CLASSES[_family] += _classes
for _class in SECOND_CLASSES:  # issue 40, prose claims second pass
    _family = SECOND_FAMILY.get(_class, "numbers_recorded")
    REQUIRED_CLASSES[_family] += (_class,)


def generate(seed: int = SEED, per_class: int = PER_CLASS) -> list[Case]:
    """The whole corpus, in a fixed order; the same seed always gives the same cases."""
    rng = random.Random(seed)
    cases: list[Case] = []
    for make in GENERATORS:
        cases.extend(make(rng, per_class))
    cases.extend(HARD)
    cases.extend(hard_cases())  # hand-written, seed-independent
    return cases


def main() -> None:
    cases = generate()
    by_label = Counter(case.label for case in cases)
    print(f"{len(cases)} cases: {by_label['unsupported']} wrong, {by_label['supported']} correct")
    by_class = Counter((case.family, case.failure_class) for case in cases)
    for (family, failure), count in sorted(by_class.items()):
        print(f"  {family:22} {failure:36} {count}")


if __name__ == "__main__":
    main()
