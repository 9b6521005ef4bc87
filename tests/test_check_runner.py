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
        check_each(FactRegistry(), {"winner": "US"}, [wrong, after], mode="first")
    assert ran == []


def test_check_each_returns_only_the_checks_that_did_not_pass() -> None:
    """The engine's call (mode "all", errors recorded): a passing check has no entry; a failed
    one maps to the claim or the exception it raised, by index."""
    failures = check_each(FactRegistry(), {"winner": "US"}, CHECKS, on_error="record")
    assert sorted(failures) == [1, 2]
    assert isinstance(failures[1], UnsupportedClaim)
    assert failures[1].code == "wrong_winner"
    assert isinstance(failures[2], ZeroDivisionError)


def test_a_blocked_check_is_a_failure_and_is_not_run() -> None:
    """``blocked`` returning a claim for a check makes that claim its failure, without calling
    the check (on_error "raise" would otherwise let its ZeroDivisionError out)."""
    reason = UnsupportedClaim("<output>", None, None, fact="sales", code="fact_missing")
    failures = check_each(
        FactRegistry(),
        {"winner": "US"},
        [broken, supported],
        on_error="raise",
        blocked=lambda index: reason if index == 0 else None,
    )
    assert failures == {0: reason}
