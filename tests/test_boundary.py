"""boundary(): declared facts only, submit/report/validate, exit rules, decorator forms."""

from __future__ import annotations

import asyncio
import json
import math
from collections.abc import Mapping
from typing import Any

import pytest

from groundplane_otel.boundary import boundary
from groundplane_otel.checks._base import NamedCheck, field_value
from groundplane_otel.errors import (
    MISSING,
    ClaimsUnsupported,
    FactBoundaryError,
    UnregisteredFact,
    UnsupportedClaim,
)
from groundplane_otel.facts import Provenance
from groundplane_otel.registry import FactRegistry
from groundplane_otel.report import Report


def make_registry() -> FactRegistry:
    reg = FactRegistry()
    reg.record("answer", 42, tool="calc", args={"q": "life"})
    reg.record("other", 7)
    return reg


def equals_answer(registry: FactRegistry, output: Mapping[str, Any]) -> None:
    fact = registry.peek("answer")
    claimed = field_value(output, "n")
    if claimed != fact.value:
        raise UnsupportedClaim(
            "n", claimed, fact.value, fact="answer", provenance=fact.provenance, reason="differs"
        )


def under_ten(registry: FactRegistry, output: Mapping[str, Any]) -> None:
    if field_value(output, "m") >= 10:
        raise UnsupportedClaim("m", output["m"], "< 10", reason="too big")


def misconfigured(registry: FactRegistry, output: Mapping[str, Any]) -> None:
    raise ValueError("check misconfigured: column 'x' does not exist")


def test_submit_returns_the_same_output_when_supported() -> None:
    """A supported output is returned unchanged (the same object)."""
    out = {"n": 42}
    with boundary(make_registry(), facts=["answer"], checks=[equals_answer]) as b:
        assert b.submit(out) is out


def test_first_mode_raises_the_first_unsupported_claim() -> None:
    """mode='first' propagates the first UnsupportedClaim with the full message."""
    with (
        pytest.raises(UnsupportedClaim) as info,
        boundary(make_registry(), facts=["answer"], checks=[equals_answer, under_ten]) as b,
    ):
        b.submit({"n": 41, "m": 99})
    assert str(info.value) == (
        "unsupported claim in field 'n': model said 41, registered facts support 42 | "
        "fact='answer' | provenance=calc(q='life') | differs"
    )


def test_all_mode_raises_claims_unsupported_with_every_violation() -> None:
    """mode='all' collects every violation; str() is the report's text."""
    with (
        pytest.raises(ClaimsUnsupported) as info,
        boundary(
            make_registry(), facts=["answer"], checks=[equals_answer, under_ten], mode="all"
        ) as b,
    ):
        b.submit({"n": 41, "m": 99})
    report = info.value.report
    assert report.failed == ("equals_answer", "under_ten")
    assert [claim.field for claim in report.violations] == ["n", "m"]
    assert str(info.value) == report.to_text()
    assert len(report.to_text().splitlines()) == 2


def test_submit_mode_overrides_the_declaration() -> None:
    """submit(out, mode='all') reports every violation even on a 'first' boundary."""
    with (
        pytest.raises(ClaimsUnsupported),
        boundary(make_registry(), facts=["answer"], checks=[equals_answer, under_ten]) as b,
    ):
        b.submit({"n": 41, "m": 99}, mode="all")


def test_report_never_raises_for_a_model_mistake_and_counts_as_submitted() -> None:
    """report() returns a failing Report and the block still exits cleanly."""
    with boundary(make_registry(), facts=["answer"], checks=[equals_answer, under_ten]) as b:
        report = b.report({"n": 41, "m": 1})
    assert not report.ok
    assert report  # a Report is always truthy, as groundplane's is: read .ok
    assert report.passed == ("under_ten",)
    assert report.failed == ("equals_answer",)


def test_report_lets_a_developer_mistake_propagate() -> None:
    """A check raising ValueError (misconfiguration) propagates out of report()."""
    with (
        pytest.raises(ValueError, match="check misconfigured"),
        boundary(make_registry(), facts=["answer"], checks=[misconfigured]) as b,
    ):
        b.report({"n": 42})


def test_leaving_unchecked_raises() -> None:
    """Exiting without submit()/report() is an error: a check that never ran is worse than none."""
    with (
        pytest.raises(FactBoundaryError, match="exited without submit"),
        boundary(make_registry(), facts=["answer"], checks=[equals_answer]),
    ):
        pass


def test_require_output_false_allows_no_output() -> None:
    """require_output=False lets a block legitimately produce nothing."""
    with boundary(make_registry(), facts=["answer"], checks=[equals_answer], require_output=False):
        pass


def test_leaving_by_exception_adds_nothing() -> None:
    """An exception inside the block propagates as is; exit never runs the checks."""
    with (
        pytest.raises(RuntimeError, match="boom"),
        boundary(make_registry(), facts=["answer"], checks=[equals_answer]),
    ):
        raise RuntimeError("boom")


def test_entering_verifies_declared_facts_exist() -> None:
    """A boundary naming a missing fact fails on entry with UnregisteredFact."""
    with pytest.raises(UnregisteredFact) as info, boundary(make_registry(), facts=["missing"]):
        pass
    assert str(info.value) == (
        "fact 'missing' is not registered; registered facts: ['answer', 'other']"
    )


def test_boundary_sees_only_declared_facts_read_only() -> None:
    """b.registry holds only the declared facts and refuses recording."""
    with boundary(make_registry(), facts=["answer"], checks=[], require_output=False) as b:
        view = b.registry
        assert view.names() == ["answer"]
        with pytest.raises(FactBoundaryError):
            view.record("x", 1)
        with pytest.raises(UnregisteredFact):
            view.get("other")


def test_check_reading_an_undeclared_fact_is_a_developer_error() -> None:
    """A check that reads a fact outside the boundary gets UnregisteredFact, not a pass."""

    def reads_other(registry: FactRegistry, output: Mapping[str, Any]) -> None:
        registry.peek("other")

    with (
        pytest.raises(UnregisteredFact),
        boundary(make_registry(), facts=["answer"], checks=[reads_other]) as b,
    ):
        b.submit({})


def test_submit_refuses_prose() -> None:
    """A string output is a TypeError saying free prose is out of scope."""
    with (
        pytest.raises(TypeError, match="free prose is out of scope"),
        boundary(make_registry(), facts=["answer"], checks=[equals_answer]) as b,
    ):
        b.submit("the answer is 42")  # type: ignore[arg-type]


def test_mode_is_validated_immediately() -> None:
    """An unknown mode fails when the boundary is declared, not when it runs."""
    with pytest.raises(ValueError) as info:
        boundary(make_registry(), facts=[], mode="some")  # type: ignore[arg-type]
    assert str(info.value) == 'mode must be "first" or "all", got \'some\''


def test_validate_reruns_on_the_stored_output() -> None:
    """validate() re-runs the checks on what was submitted."""
    with boundary(make_registry(), facts=["answer"], checks=[equals_answer]) as b:
        b.report({"n": 41})
        with pytest.raises(UnsupportedClaim):
            b.validate()


def test_declaration_is_reusable_and_reentrant() -> None:
    """One declaration can be entered again, nested, each entry with its own state."""
    decl = boundary(make_registry(), facts=["answer"], checks=[equals_answer])
    with decl as outer:
        with decl as inner:
            inner.submit({"n": 42})
        assert inner is not outer
        outer.submit({"n": 42})
    with decl as again:
        again.submit({"n": 42})


def test_decorator_submits_the_return_value() -> None:
    """The decorator form submits what the function returns and returns it."""
    decl = boundary(make_registry(), facts=["answer"], checks=[equals_answer])

    @decl
    def answer(n: int) -> dict[str, int]:
        return {"n": n}

    assert answer(42) == {"n": 42}
    with pytest.raises(UnsupportedClaim):
        answer(1)


def test_decorator_works_on_async_functions() -> None:
    """The decorator awaits an async function before submitting (the reference does not)."""
    decl = boundary(make_registry(), facts=["answer"], checks=[equals_answer])

    @decl
    async def answer(n: int) -> dict[str, int]:
        await asyncio.sleep(0)
        return {"n": n}

    assert asyncio.run(answer(42)) == {"n": 42}
    with pytest.raises(UnsupportedClaim):
        asyncio.run(answer(1))


def test_named_check_is_frozen_hashable_and_named_in_reports() -> None:
    """A NamedCheck's name is what a Report lists; plain callables use __name__."""
    named = NamedCheck("my_check(fact='answer')", equals_answer)
    assert hash(named) == hash(NamedCheck("my_check(fact='answer')", equals_answer))
    with boundary(make_registry(), facts=["answer"], checks=[named, under_ten]) as b:
        report = b.report({"n": 1, "m": 11})
    assert report.failed == ("my_check(fact='answer')", "under_ten")


def test_missing_field_fails_with_a_value_and_no_fact() -> None:
    """An absent declared field fails with supported='a value' and no fact or provenance."""
    with boundary(make_registry(), facts=["answer"], checks=[equals_answer]) as b:
        report = b.report({})
    claim = report.violations[0]
    assert claim.claimed is MISSING
    assert claim.supported == "a value"
    assert claim.code == "field_missing"
    assert str(claim) == (
        "unsupported claim in field 'n': the output has no such field | the output declared no "
        "field 'n'"
    )


def test_report_to_dict_is_strict_json_safe() -> None:
    """NaN, sets and objects in a claim become their repr; the dict has the public keys."""
    claim = UnsupportedClaim(
        "x", math.nan, {1, 2}, fact="f", provenance=Provenance("t", {"a": 1}), reason="r"
    )
    report = Report((claim,), (), ("c",))
    data = report.to_dict()
    json.dumps(data, allow_nan=False)
    assert data == {
        "ok": False,
        "passed": [],
        "failed": ["c"],
        "violations": [
            {
                "field": "x",
                "claimed": "nan",
                "supported": "{1, 2}",
                "fact": "f",
                "provenance": "t(a=1)",
                "reason": "r",
            }
        ],
    }
    assert Report().to_text() == ""
    assert Report().ok
