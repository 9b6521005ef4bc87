"""numbers_recorded in a policy file: it builds the same check as the code API (fact defaults to
every fact of the boundary, or a list), and each mistake fails at load, located and fixable."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundplane_otel.checks.numbers_recorded import numbers_recorded
from groundplane_otel.otel.policy import PolicyError, load_policy

BASE = """\
version: 1
facts:
  invoice: {tool: erp.invoices, kind: table, key: id, path: rows}
  policy: {tool: docs.read}
  question: {tool: user.question}
boundaries:
  summary:
    facts: [invoice, policy, question]
    checks:
      - numbers_recorded: {field: summary, fact: [invoice, policy], question_fact: question}
"""


def write(tmp_path: Path, text: str) -> str:
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    return str(path)


def only_check(text: str, tmp_path: Path) -> object:
    (boundary,) = load_policy(write(tmp_path, text)).boundaries
    (check,) = boundary.checks
    return check


def test_a_policy_check_equals_the_code_built_one(tmp_path: Path) -> None:
    """Name, family, needed facts and validated arguments match numbers_recorded(...)."""
    check = only_check(BASE, tmp_path)
    built = numbers_recorded(["invoice", "policy"], "summary", question_fact="question")
    assert (check.name, check.family, check.facts, repr(check.fn)) == (  # type: ignore[attr-defined]
        built.name,
        built.family,
        built.facts,
        repr(built.fn),
    )


def test_fact_defaults_to_every_fact_of_the_boundary(tmp_path: Path) -> None:
    """Without ``fact`` the text may draw on every fact the boundary lists."""
    text = BASE.replace(", fact: [invoice, policy], question_fact: question", "")
    check = only_check(text, tmp_path)
    assert check.facts == ("invoice", "policy", "question")  # type: ignore[attr-defined]


def test_options_are_read_from_the_file(tmp_path: Path) -> None:
    """locale, percent_as_ratio, rounding and years reach the builder as written."""
    text = BASE.replace(
        "question_fact: question}",
        "locale: de, percent_as_ratio: true, rounding: half_up, years: skip}",
    )
    check = only_check(text, tmp_path)
    built = numbers_recorded(
        ["invoice", "policy"],
        "summary",
        locale="de",
        percent_as_ratio=True,
        rounding="half_up",
        years="skip",
    )
    assert repr(check.fn) == repr(built.fn)  # type: ignore[attr-defined]


ERRORS = {
    "a listed fact the boundary does not list": (
        BASE.replace("fact: [invoice, policy]", "fact: [invoice, polcy]"),
        "10: boundaries.summary.checks[0].numbers_recorded.fact[1]: the check reads fact "
        "'polcy', which this boundary does not list in its facts. Fix: did you mean 'policy'?",
    ),
    "a fact in the list is not a string": (
        BASE.replace("fact: [invoice, policy]", "fact: [invoice, 3]"),
        "10: boundaries.summary.checks[0].numbers_recorded.fact[1]: expected a non-empty "
        "string, got 3. Fix: write a name here",
    ),
    "rounding misspelt": (
        BASE.replace("question_fact: question}", "rounding: half_evn}"),
        "10: boundaries.summary.checks[0].numbers_recorded.rounding: rounding must be None, "
        '"half_even" or "half_up", got \'half_evn\'. '
        "Fix: give `rounding` a value numbers_recorded() accepts",
    ),
    "locale from the process": (
        BASE.replace("question_fact: question}", "locale: de_DE.UTF-8}"),
        "10: boundaries.summary.checks[0].numbers_recorded.locale: locale must be one of "
        "['ch', 'de', 'en', 'fr'], got 'de_DE.UTF-8'. "
        "Fix: give `locale` a value numbers_recorded() accepts",
    ),
    "unknown argument": (
        BASE.replace("question_fact: question}", "question: question}"),
        "10: boundaries.summary.checks[0].numbers_recorded.question: unknown key 'question'. "
        "Fix: rename it to 'question_fact'",
    ),
    "the question listed as a source": (
        BASE.replace("fact: [invoice, policy]", "fact: [invoice, question]"),
        "10: boundaries.summary.checks[0].numbers_recorded.question_fact: question_fact "
        "'question' is also listed in fact; the question is not a source. "
        "Fix: give `question_fact` a value numbers_recorded() accepts",
    ),
    "percent_as_ratio not a bool": (
        BASE.replace("question_fact: question}", "percent_as_ratio: 'yes'}"),
        "10: boundaries.summary.checks[0].numbers_recorded.percent_as_ratio: percent_as_ratio "
        "must be True or False, got 'yes'. "
        "Fix: give `percent_as_ratio` a value numbers_recorded() accepts",
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_each_mistake_names_file_line_key_path_and_fix(tmp_path: Path, case: str) -> None:
    """The whole message is pinned: `file:line: key.path: problem. Fix: fix`."""
    text, expected = ERRORS[case]
    path = write(tmp_path, text)
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    assert str(caught.value) == f"{path}:{expected}"
