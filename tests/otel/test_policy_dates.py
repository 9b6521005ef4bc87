"""dates_recorded in a policy file: the opt-in key builds the same check as the code API (fact
defaults to every fact of the boundary) and a bad option fails at load, located."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundplane_otel.checks.dates_recorded import dates_recorded
from groundplane_otel.otel.policy import PolicyError, load_policy

BASE = """\
version: 1
facts:
  tickets: {tool: crm.tickets, kind: table, key: id, path: rows}
  hours: {tool: kb.lookup}
boundaries:
  support:
    facts: [tickets, hours]
    checks:
      - dates_recorded: {field: reply, times: false, day_first: true}
"""


def load(tmp_path: Path, text: str) -> object:
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    (boundary,) = load_policy(str(path)).boundaries
    (check,) = boundary.checks
    return check


def test_the_policy_key_builds_the_code_built_check(tmp_path: Path) -> None:
    """Name, family, facts (every fact of the boundary by default) and options match."""
    check = load(tmp_path, BASE)
    built = dates_recorded(["tickets", "hours"], "reply", times=False, day_first=True)
    assert (check.name, check.family, check.facts, repr(check.fn)) == (  # type: ignore[attr-defined]
        built.name, built.family, built.facts, repr(built.fn),
    )  # fmt: skip


def test_a_bad_option_fails_at_load_at_its_key(tmp_path: Path) -> None:
    """``times: maybe`` is refused at boundaries.support.checks[0].dates_recorded.times."""
    with pytest.raises(PolicyError) as caught:
        load(tmp_path, BASE.replace("times: false", "times: maybe"))
    assert "boundaries.support.checks[0].dates_recorded.times: " in str(caught.value)
    assert "times must be True or False, got 'maybe'" in str(caught.value)
