"""One exception to catch: whatever the report mode, ``except UnsupportedClaim`` (the docs'
advice) catches the guard's refusal; ``ClaimsUnsupported`` is an ``UnsupportedClaim`` whose
fields are its first claim's and whose ``str()`` is still its report's text."""

from __future__ import annotations

import pickle

import pytest
from otel_harness import SALES_ROWS, Harness, answer, sales_config

from groundplane_otel import FactRegistry, boundary, superlative
from groundplane_otel.errors import ClaimsUnsupported, UnsupportedClaim

WRONG_WINNER = (
    "unsupported claim in field 'winner': model said 'US', registered facts support 'EU' | "
    "fact='sales' | provenance=top_sales() | computed argmax on 'total' is 'EU' (10); 'US' "
    "ranked #2 at 7"
)


@pytest.mark.parametrize("report_mode", ["all", "first"])
def test_except_unsupported_claim_catches_the_refusal_in_each_report_mode(
    otel: Harness, report_mode: str
) -> None:
    """Finding 3: the user's code, as docs/zero-code.md writes it, catches both modes."""
    otel.install(sales_config(report_mode=report_mode, capture_content=True))
    caught: UnsupportedClaim | None = None
    try:
        with otel.agent("analyst"):
            otel.tool(SALES_ROWS)
            otel.chat(answer({"winner": "US"}))
    except UnsupportedClaim as exc:
        caught = exc
    assert caught is not None
    assert type(caught) is (ClaimsUnsupported if report_mode == "all" else UnsupportedClaim)
    assert (caught.field, caught.claimed, caught.supported, caught.fact) == (
        "winner",
        "US",
        "EU",
        "sales",
    )
    assert caught.code == "wrong_winner"
    assert str(caught) == caught.diagnosis == WRONG_WINNER


def test_claims_unsupported_keeps_groundplanes_contract() -> None:
    """``mode="all"`` in the core: ``.report`` holds every claim, ``str()`` is
    ``report.to_text()``, ``to_dict()`` has the six fields (of the first claim), and it
    survives pickling."""
    registry = FactRegistry()
    registry.record_ranking("sales", {"EU": 10, "US": 7}, key="region")
    checks = [
        superlative("sales", winner_field="winner"),
        superlative("sales", winner_field="runner"),
    ]
    with (
        pytest.raises(UnsupportedClaim) as raised,
        boundary(registry, ["sales"], checks, mode="all") as b,
    ):
        b.submit({"winner": "US", "runner": "US"})
    error = raised.value
    assert isinstance(error, ClaimsUnsupported)
    assert [claim.field for claim in error.claims] == ["winner", "runner"]
    assert error.claims == error.report.violations
    assert str(error) == error.report.to_text()
    assert sorted(error.to_dict()) == [
        "claimed",
        "fact",
        "field",
        "provenance",
        "reason",
        "supported",
    ]
    assert error.to_dict()["field"] == "winner"
    copy = pickle.loads(pickle.dumps(error))
    assert (str(copy), copy.field, len(copy.claims)) == (str(error), "winner", 2)
