"""The one check runner (``groundplane_otel._runner``): the core's ``run_checks`` and the
engine's ``run_all`` differ only by its explicit arguments (report mode, raise or record an
error, checks blocked before they run)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from groundplane_otel._runner import check_each, run_checks
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.registry import FactRegistry


def supported(registry: FactRegistry, output: Mapping[str, Any]) -> None:
    """A check that always passes."""


def wrong(registry: FactRegistry, output: Mapping[str, Any]) -> None:
    raise UnsupportedClaim("winner", output.get("winner"), "EU", code="wrong_winner")


def broken(registry: FactRegistry, output: Mapping[str, Any]) -> None:
    raise ZeroDivisionError("a bad cell")


CHECKS = [supported, wrong, broken]
NAMES = ["supported", "wrong", "broken"]


def test_raise_lets_a_check_error_propagate() -> None:
    """on_error "raise" (the core's default): a check's own exception reaches the caller."""
    with pytest.raises(ZeroDivisionError, match="a bad cell"):
        run_checks(FactRegistry(), {"winner": "US"}, CHECKS, "all")


def test_record_makes_a_check_error_an_error_result() -> None:
    """on_error "record" (the engine's): every check has a result in order, the exception is
    kept on its error result, and the Report is not ok."""
    report = run_checks(FactRegistry(), {"winner": "US"}, CHECKS, "all", on_error="record")
    assert [(r.name, r.verdict) for r in report.results] == [
        ("supported", "supported"),
        ("wrong", "unsupported"),
        ("broken", "error"),
    ]
    assert (report.passed, report.failed) == (("supported",), ("wrong",))
    assert [claim.code for claim in report.violations] == ["wrong_winner"]
    assert isinstance(report.results[2].error, ZeroDivisionError)
    assert report.results[2].claim is None
    assert report.ok is False


def test_first_raises_the_first_claim_and_runs_no_further_check() -> None:
    """mode "first": the first UnsupportedClaim is raised, the checks after it never run."""
    ran: list[str] = []

    def after(registry: FactRegistry, output: Mapping[str, Any]) -> None:
        ran.append("after")

    with pytest.raises(UnsupportedClaim, match="model said 'US'"):
        check_each(
            FactRegistry(), {"winner": "US"}, [wrong, after], ["wrong", "after"], mode="first"
        )
    assert ran == []


def test_a_blocked_check_is_an_error_result_and_is_not_run() -> None:
    """``blocked`` returning a claim for a check makes it an error result carrying that claim,
    without calling the check."""
    reason = UnsupportedClaim("<output>", None, None, fact="sales", code="fact_missing")
    results = check_each(
        FactRegistry(),
        {"winner": "US"},
        [broken, supported],
        ["broken", "supported"],
        on_error="raise",
        blocked=lambda index: reason if index == 0 else None,
    )
    assert [(r.name, r.verdict, r.claim) for r in results] == [
        ("broken", "error", reason),
        ("supported", "supported", None),
    ]
