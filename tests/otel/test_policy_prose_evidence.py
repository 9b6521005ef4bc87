"""The policy file declares retrieved documents as evidence for numbers_recorded
(``documents: [...]``) and the quote options of quotes_anchored; mistakes are located."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundplane_otel.otel.policy import PolicyError, load_policy

POLICY = """\
version: 1
facts:
  invoices: {tool: erp.invoices, kind: table, key: id}
  retrieved: {tool: kb, kind: documents}
  internal: {tool: kb.internal, kind: documents, restricted: true}
boundaries:
  answer:
    facts: [invoices, retrieved, internal]
    answer: text
    checks:
      - numbers_recorded: {documents: [retrieved]}
      - no_restricted_values: {}
      - quotes_anchored: {text_fields: ["*"], unmarked: retrieved, single_quotes: true}
"""


def load(tmp_path: Path, text: str) -> object:
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    return load_policy(path)


def test_documents_as_evidence_load(tmp_path: Path) -> None:
    """numbers_recorded reads every boundary fact (the default) and needs its documents;
    quotes_anchored takes single_quotes and unmarked."""
    (boundary,) = load(tmp_path, POLICY).boundaries  # type: ignore[attr-defined]
    numbers, _, quotes = boundary.checks
    assert numbers.facts == ("invoices", "retrieved", "internal")
    assert numbers.fn.documents == ("retrieved",)
    assert (quotes.fn.unmarked, quotes.fn.single_quotes) == ("retrieved", True)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (
            "documents: [retrieved]}",
            "documents: [internal]}",
            "11: boundaries.answer.checks[0].numbers_recorded.documents[0]: fact 'internal' is "
            "not an unrestricted documents fact. Fix: read a fact declared `kind: documents` "
            "(fact 'internal' is restricted)",
        ),
        (
            "documents: [retrieved]}",
            "documents: [invoices]}",
            "11: boundaries.answer.checks[0].numbers_recorded.documents[0]: fact 'invoices' is "
            "not an unrestricted documents fact. Fix: read a fact declared `kind: documents` "
            "(fact 'invoices' is table)",
        ),
        (
            "documents: [retrieved]}",
            "documents: [retreived]}",
            "11: boundaries.answer.checks[0].numbers_recorded.documents[0]: fact 'retreived' is "
            "not among this boundary's facts. Fix: did you mean 'retrieved'?",
        ),
        (
            "unmarked: retrieved",
            "unmarked: always",
            '13: boundaries.answer.checks[2].quotes_anchored.unmarked: unmarked must be "skip" '
            "or \"retrieved\", got 'always'. Fix: give `unmarked` a value quotes_anchored() "
            "accepts",
        ),
    ],
)
def test_each_mistake_is_located(tmp_path: Path, old: str, new: str, expected: str) -> None:
    """The whole message is pinned: `file:line: key.path: problem. Fix: fix`."""
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY.replace(old, new), encoding="utf-8")
    with pytest.raises(PolicyError) as caught:
        load_policy(path)
    assert str(caught.value) == f"{path}:{expected}"
