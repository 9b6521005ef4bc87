"""A fact's ``path`` may list places (issue 41): the first the tool's result has is read, so one
fact reads rows that moved (a bare list, later under ``items``); the policy file says it as a
list, ``''`` being the result itself."""

from __future__ import annotations

from pathlib import Path

import pytest

from groundplane_otel.facts import Table
from groundplane_otel.otel._engine.capture import build_fact
from groundplane_otel.otel.config import FactSpec
from groundplane_otel.otel.policy import PolicyError, load_policy

ROWS = [{"rep": "ann", "amount": 12.5}, {"rep": "bob", "amount": 3.25}]
SPEC = FactSpec("sales", "sales_report", kind="table", key="rep", path=("items", ""))


@pytest.mark.parametrize("result", [ROWS, {"items": ROWS, "version": 2}], ids=["bare", "items"])
def test_the_first_place_the_result_has_is_read(result: object) -> None:
    """The rows under ``items``, else the result itself: the same table either way."""
    table = build_fact(SPEC, result)
    assert isinstance(table, Table)
    assert [row["rep"] for row in table.rows] == ["ann", "bob"]


def test_a_result_holding_none_of_the_places_is_refused_by_name() -> None:
    """No place listed is in the result: a ValueError naming every place."""
    spec = FactSpec("sales", "sales_report", kind="table", key="rep", path=("items", "data.rows"))
    with pytest.raises(ValueError) as caught:
        build_fact(spec, {"rows": ROWS})
    assert (
        str(caught.value)
        == "fact 'sales': none of the paths ['items', 'data.rows'] is in the result"
    )


def test_a_policy_lists_places_and_refuses_a_non_string(tmp_path: Path) -> None:
    """``path: [items, '']`` loads as a tuple; a number in the list is located and refused."""
    text = (
        "version: 1\nfacts:\n  sales: {tool: sales_report, kind: table, key: rep, path: %s}\n"
        "boundaries:\n  b:\n    facts: [sales]\n    match: {agent_name: a}\n"
        "    checks:\n      - superlative: {fact: sales, column: amount, winner_field: w}\n"
    )
    good = tmp_path / "good.yaml"
    good.write_text(text % "[items, '']")
    assert load_policy(good).facts[0].path == ("items", "")
    bad = tmp_path / "bad.yaml"
    bad.write_text(text % "[items, 3]")
    with pytest.raises(PolicyError) as caught:
        load_policy(bad)
    assert str(caught.value) == (
        f"{bad}:3: facts.sales.path[1]: expected a path (a string; '' is the result itself), "
        "got 3. Fix: write a dotted path such as data.items"
    )
    with pytest.raises(ValueError) as refused:
        FactSpec("sales", "t", path=())
    assert str(refused.value) == (
        "fact 'sales': path must be a string or a non-empty tuple of strings, got ()"
    )
