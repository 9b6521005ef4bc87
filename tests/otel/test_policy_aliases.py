"""numbers_recorded's ``aliases`` in a policy file: read as written, and a wrong one fails at
load, located at its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundplane_otel.checks.numbers_recorded import numbers_recorded
from groundplane_otel.otel.policy import PolicyError, load_policy

BASE = """\
version: 1
facts:
  stores: {tool: bi.query, kind: table, key: store, path: rows}
boundaries:
  summary:
    facts: [stores]
    checks:
      - numbers_recorded: {aliases: {visits: [busiest, traffic], revenue: [sales]}}
"""


def load(tmp_path: Path, text: str) -> object:
    path = tmp_path / "policy.yaml"
    path.write_text(text, encoding="utf-8")
    (boundary,) = load_policy(str(path)).boundaries
    (check,) = boundary.checks
    return check


def test_aliases_reach_the_builder(tmp_path: Path) -> None:
    """The policy's aliases build the same check as the code API."""
    check = load(tmp_path, BASE)
    built = numbers_recorded(
        ["stores"], aliases={"visits": ["busiest", "traffic"], "revenue": ["sales"]}
    )
    assert repr(check.fn) == repr(built.fn)  # type: ignore[attr-defined]


def test_a_bare_string_alias_fails_at_its_key(tmp_path: Path) -> None:
    """An alias list written as one string is a load error naming the line and the key path."""
    with pytest.raises(PolicyError) as caught:
        load(tmp_path, BASE.replace("[sales]", "sales"))
    assert str(caught.value) == (
        f"{tmp_path / 'policy.yaml'}:8: boundaries.summary.checks[0].numbers_recorded.aliases: "
        "aliases['revenue'] must be a non-empty list of words, got 'sales'. Fix: give `aliases` "
        "a value numbers_recorded() accepts"
    )


def test_a_wrong_superlative_direction_fails_at_its_key(tmp_path: Path) -> None:
    """``busiest:upward`` is not a direction: the load error says which are."""
    with pytest.raises(PolicyError) as caught:
        load(tmp_path, BASE.replace("busiest,", "'busiest:upward',"))
    assert "numbers_recorded.aliases: aliases['visits'] must list words" in str(caught.value)
    assert "got 'busiest:upward'" in str(caught.value)


DATES = """\
version: 1
facts:
  stores: {tool: kb.stores, kind: table, key: store, path: rows}
boundaries:
  hours:
    facts: [stores]
    checks:
      - dates_recorded: {units: {opens: hour}, periods: true}
"""


def test_dates_recorded_units_and_periods_reach_the_builder(tmp_path: Path) -> None:
    """dates_recorded's clock-hour units and periods build the same check as the code API."""
    from groundplane_otel.checks.dates_recorded import dates_recorded

    check = load(tmp_path, DATES)
    built = dates_recorded(["stores"], units={"opens": "hour"}, periods=True)
    assert repr(check.fn) == repr(built.fn)  # type: ignore[attr-defined]


def test_a_dates_unit_other_than_hour_fails_at_its_key(tmp_path: Path) -> None:
    """A unit dates_recorded does not read is a located load error."""
    with pytest.raises(PolicyError) as caught:
        load(tmp_path, DATES.replace("opens: hour", "opens: minute"))
    assert str(caught.value).startswith(
        f"{tmp_path / 'policy.yaml'}:8: boundaries.hours.checks[0].dates_recorded.units: "
        "units['opens'] is 'minute'; dates_recorded reads only \"hour\""
    )
