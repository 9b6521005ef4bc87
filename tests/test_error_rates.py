"""The checker's own error rates: a fixed-seed labelled corpus, zero false passes or rejects."""

from __future__ import annotations

from collections import Counter

import pytest
from corpus.generate import REQUIRED_CLASSES, SEED, generate
from corpus.model import Case
from corpus.rates import Result, describe, markdown, run


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    return generate()


@pytest.fixture(scope="module")
def result(cases: list[Case]) -> Result:
    return run(cases)


def test_corpus_is_large_enough_on_both_sides(cases: list[Case]) -> None:
    """At least 2,000 wrong and 2,000 correct outputs."""
    labels = Counter(case.label for case in cases)
    assert labels["unsupported"] >= 2000
    assert labels["supported"] >= 2000


def test_corpus_covers_every_failure_class_of_every_family(cases: list[Case]) -> None:
    """Each required failure class has wrong cases, and each family has correct ones."""
    present = Counter((case.family, case.failure_class) for case in cases)
    missing = [
        (family, failure)
        for family, failures in REQUIRED_CLASSES.items()
        for failure in failures
        if present[(family, failure)] < 20
    ]
    assert not missing, f"failure classes without (enough) cases: {missing}"
    for family in REQUIRED_CLASSES:
        assert sum(1 for c in cases if c.family == family and c.label == "supported") >= 200


def test_corpus_is_deterministic() -> None:
    """The same seed gives the same corpus (ids, labels and outputs)."""
    first = generate(SEED, per_class=5)
    second = generate(SEED, per_class=5)
    assert [(c.id, c.label, repr(c.output)) for c in first] == [
        (c.id, c.label, repr(c.output)) for c in second
    ]


def test_no_false_pass_no_false_reject(result: Result) -> None:
    """Every wrong output is rejected and every correct one passes, family by family."""
    print()
    print(markdown(result))
    shown = "\n".join(describe(case, outcome) for case, outcome in result.misses[:20])
    assert not result.misses, f"{len(result.misses)} misclassified case(s):\n{shown}"


def test_rejections_carry_the_expected_reason_code(result: Result) -> None:
    """A wrong output is rejected for the right reason (the code telemetry reports)."""
    shown = "\n".join(describe(case, outcome) for case, outcome in result.miscoded[:20])
    assert not result.miscoded, f"{len(result.miscoded)} case(s) with another code:\n{shown}"


def test_known_limits_are_still_what_the_readme_says() -> None:
    """Each published limit (tests/corpus/gen_hard.py LIMITS) is still misjudged: when one gets
    fixed, this fails, and the limits table in docs/measured.md must be updated with it."""
    from corpus.gen_hard import LIMITS
    from corpus.model import evaluate

    still = [what for what, case in LIMITS if evaluate(case).verdict != case.label]
    assert still == [what for what, _ in LIMITS]


KNOWN_LIMITS = {
    "numbers_recorded/hard/wrong_attachment": ("unsupported", "supported"),
    "numbers_recorded/hard/a_dozen": ("unsupported", "supported"),
    "numbers_recorded/hard/around_the_clock": ("supported", "unsupported"),
    "numbers_recorded/hard/one_as_a_count": ("unsupported", "supported"),
    "numbers_recorded/hard/wrong_date": ("unsupported", "supported"),
    "numbers_recorded/hard40/undeclared_synonym": ("unsupported", "supported"),
    "numbers_recorded/hard40/attached_ms": ("unsupported", "supported"),
    "no_restricted_values/hard40/just_shy_of": ("unsupported", "supported"),
}
"""The published misses (docs/measured.md, "The checker's own error rates"): case id →
(label, what the checker says)."""


def test_known_limits_are_exactly_the_published_ones(result: Result, cases: list[Case]) -> None:
    """Each documented limit still misses the way docs/measured.md says; no other case is one."""
    assert {case.id for case in cases if case.known_limit} == set(KNOWN_LIMITS)
    assert not result.fixed_limits, "a known limit is now classified right: update docs/measured.md"
    assert {case.id: (case.label, outcome.verdict) for case, outcome in result.limits} == (
        KNOWN_LIMITS
    )


def test_numbers_recorded_rates_are_the_published_ones(result: Result) -> None:
    """The prose family's false passes / rejects are exactly its known limits (the table in
    docs/measured.md)."""
    tally = result.by_family["numbers_recorded"]
    assert (tally.false_pass, tally.false_reject, tally.errors, tally.wrong_code) == (6, 1, 0, 0)
