"""numbers_recorded's ``units`` and ``changes`` in a policy file: read as written, and a wrong
unit fails at load, located at its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundplane_otel.checks.numbers_recorded import numbers_recorded
from groundplane_otel.otel.policy import PolicyError, load_policy

BASE = """\
version: 1
facts:
  kpi: {tool: bi.query, kind: table, key: region, path: rows}
boundaries:
  summary:
    facts: [kpi]
    checks:
      - numbers_recorded: {field: summary, units: {churn: pp, revenue: USD}, changes: [trend]}
"""


def load(tmp_path: Path, text: str) -> object:
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    (boundary,) = load_policy(str(path)).boundaries
    (check,) = boundary.checks
    return check


def test_units_and_changes_reach_the_builder(tmp_path: Path) -> None:
    """The policy's units and changes build the same check as the code API."""
    check = load(tmp_path, BASE)
    built = numbers_recorded(
        ["kpi"], "summary", units={"churn": "pp", "revenue": "USD"}, changes=["trend"]
    )
    assert repr(check.fn) == repr(built.fn)  # type: ignore[attr-defined]


def test_an_unknown_unit_fails_at_its_key(tmp_path: Path) -> None:
    """A unit the library does not know is a load error naming the line and the key path."""
    with pytest.raises(PolicyError) as caught:
        load(tmp_path, BASE.replace("revenue: USD", "revenue: doubloons"))
    assert str(caught.value) == (
        f"{tmp_path / 'policy.yaml'}:8: boundaries.summary.checks[0].numbers_recorded.units: "
        "units['revenue'] is 'doubloons', which is not a unit; use one of pp, bps, percent, "
        "ratio, AUD, CAD, CHF, CNY, DKK, EUR, GBP, INR, JPY, NOK, SEK, USD, km, mi, m, kg, lb, "
        "g, day, hour, minute, second, m…. Fix: give `units` a value numbers_recorded() accepts"
    )
