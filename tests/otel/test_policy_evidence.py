"""The policy file declares restricted facts, documents facts and the four evidence families;
each mistake is located (file, line, key path, fix)."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundplane_otel.otel.config import FactSpec
from groundplane_otel.otel.policy import PolicyError, load_policy

POLICY = """\
version: 1
facts:
  wholesale: {tool: erp.costs, kind: table, key: sku, restricted: true}
  listings: {tool: search.listings, kind: table, key: name}
  catalogue: {tool: catalogue.all, kind: domain}
  retrieved: {tool: kb, kind: documents}
boundaries:
  answer:
    facts: [wholesale, listings, catalogue, retrieved]
    checks:
      - no_restricted_values: {fields: [answer]}
      - entities_in_scope: {text_fields: [answer], vocabulary: catalogue, approved: [listings]}
      - citations_retrieved: {text_fields: [answer], min_citations: 1, documents: [retrieved]}
      - quotes_anchored: {text_fields: [answer]}
"""


def load(tmp_path: Path, text: str) -> object:
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    return load_policy(path)


def test_the_evidence_policy_loads(tmp_path: Path) -> None:
    """restricted and kind documents reach the FactSpecs; the four families are built with
    their arguments and the facts they read."""
    config = load(tmp_path, POLICY)
    facts = config.facts  # type: ignore[attr-defined]
    assert facts[0] == FactSpec("wholesale", "erp.costs", "table", key="sku", restricted=True)
    assert facts[3] == FactSpec("retrieved", "kb", "documents")
    (boundary,) = config.boundaries  # type: ignore[attr-defined]
    assert [(c.family, c.facts) for c in boundary.checks] == [
        ("no_restricted_values", ()),
        ("entities_in_scope", ("listings", "catalogue")),
        ("citations_retrieved", ("retrieved",)),
        ("quotes_anchored", ()),
    ]


def test_a_policy_can_ask_for_the_whole_answer(tmp_path: Path) -> None:
    """``text_fields: ["*"]`` and the default field arguments build checks that read a whole
    answer text (``NamedCheck.text``); named fields build checks that do not."""
    whole = POLICY.replace("{fields: [answer]}", "{}").replace(
        "text_fields: [answer]", 'text_fields: ["*"]'
    )
    (boundary,) = load(tmp_path, whole).boundaries  # type: ignore[attr-defined]
    assert [c.text for c in boundary.checks] == [True, True, True, True]
    (boundary,) = load(tmp_path, POLICY).boundaries  # type: ignore[attr-defined]
    assert [c.text for c in boundary.checks] == [False, False, False, False]


ERRORS = {
    "restricted not a bool": (
        POLICY.replace("restricted: true", "restricted: yes please"),
        "3: facts.wholesale.restricted: expected true or false, got 'yes please'. "
        "Fix: write true or false",
    ),
    "documents with a key": (
        POLICY.replace("{tool: kb, kind: documents}", "{tool: kb, kind: documents, key: id}"),
        "6: facts.retrieved.key: a documents fact takes no `key` or `score` (each document has "
        "its id and score). Fix: drop it",
    ),
    "documents list names an undeclared fact": (
        POLICY.replace("documents: [retrieved]", "documents: [retreived]"),
        "13: boundaries.answer.checks[2].citations_retrieved.documents[0]: fact 'retreived' is "
        "not among this boundary's facts. Fix: did you mean 'retrieved'?",
    ),
    "vocabulary not in the boundary": (
        POLICY.replace("vocabulary: catalogue", "vocabulary: products"),
        "12: boundaries.answer.checks[1].entities_in_scope.vocabulary: fact 'products' is not "
        "among this boundary's facts. Fix: add 'products' to this boundary's facts",
    ),
    "marker without a group": (
        POLICY.replace("{text_fields: [answer]}\n", "{text_fields: [answer], marker: '\\[x\\]'}\n"),
        "14: boundaries.answer.checks[3].quotes_anchored.marker: marker must have exactly one "
        "group (the cited id), got 0 in '\\\\[x\\\\]'. Fix: give `marker` a value "
        "quotes_anchored() accepts",
    ),
    "no restricted fact in the boundary": (
        POLICY.replace(", restricted: true}", "}"),
        "11: boundaries.answer.checks[0].no_restricted_values: none of this boundary's facts is "
        "restricted, so the check could never run. Fix: declare `restricted: true` on the fact "
        "that must not leak",
    ),
    "listed fact not restricted": (
        POLICY.replace("{fields: [answer]}", "{fields: [answer], facts: [listings]}"),
        "11: boundaries.answer.checks[0].no_restricted_values.facts[0]: fact 'listings' is not "
        "restricted. Fix: declare `restricted: true` on fact 'listings'",
    ),
    "documents of the wrong kind": (
        POLICY.replace("documents: [retrieved]", "documents: [listings]"),
        "13: boundaries.answer.checks[2].citations_retrieved.documents[0]: fact 'listings' is "
        "not an unrestricted documents fact. Fix: cite a fact declared `kind: documents` (fact "
        "'listings' is table)",
    ),
    "no documents fact for quotes": (
        POLICY.replace("  retrieved: {tool: kb, kind: documents}\n", "")
        .replace(", retrieved]", "]")
        .replace(
            "      - citations_retrieved: {text_fields: [answer], min_citations: 1, "
            "documents: [retrieved]}\n",
            "",
        ),
        "12: boundaries.answer.checks[2].quotes_anchored: none of this boundary's facts is an "
        "unrestricted `kind: documents` fact. Fix: declare the retrieval as a fact with "
        "`kind: documents` and list it here",
    ),
    "approved restricted": (
        POLICY.replace("approved: [listings]", "approved: [wholesale]"),
        "12: boundaries.answer.checks[1].entities_in_scope.approved[0]: fact 'wholesale' is "
        "restricted and cannot be approved. Fix: approve unrestricted facts only (restricted "
        "names are refused by this check)",
    ),
    "vocabulary of documents": (
        POLICY.replace("vocabulary: catalogue", "vocabulary: retrieved"),
        "12: boundaries.answer.checks[1].entities_in_scope.vocabulary: fact 'retrieved' is a "
        "documents fact and holds no names. Fix: name a fact of kind ranking, table or domain",
    ),
    "bad min_citations": (
        POLICY.replace("min_citations: 1", "min_citations: -2"),
        "13: boundaries.answer.checks[2].citations_retrieved.min_citations: min_citations must "
        "be an int >= 0, got -2. Fix: give `min_citations` a value citations_retrieved() accepts",
    ),
}


@pytest.mark.parametrize("case", sorted(ERRORS))
def test_each_mistake_is_located(tmp_path: Path, case: str) -> None:
    """The whole message is pinned: `file:line: key.path: problem. Fix: fix`."""
    text, expected = ERRORS[case]
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    assert str(caught.value) == f"{path}:{expected}"
