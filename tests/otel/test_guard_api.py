"""The guard's public API for adapters and application code: ``Guard.record_fact`` and
``Guard.record_evaluation`` write the guard's own facts and telemetry, count every check of a
boundary whatever stopped it, and never raise into the application."""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any

import pytest
from opentelemetry.trace import StatusCode
from otel_harness import Harness, evaluations, guardrail_events, sales_config

from groundplane_otel.boundary import boundary
from groundplane_otel.checks._base import NamedCheck
from groundplane_otel.checks.ranking_prefix import ranking_prefix
from groundplane_otel.checks.superlative import superlative
from groundplane_otel.errors import ClaimsUnsupported, UnregisteredFact, UnsupportedClaim
from groundplane_otel.facts import Ranking
from groundplane_otel.otel import Guard, trace_registry
from groundplane_otel.registry import FactRegistry
from groundplane_otel.report import Report

LABELS = {"groundplane.boundary": "node", "groundplane.mode": "enforce"}
WINNER_RULE = "superlative(fact='sales', field='winner')"


class Counting:
    """A check wrapper counting its calls (to see which checks record_evaluation re-runs)."""

    def __init__(self, check: NamedCheck) -> None:
        self.check = check
        self.name, self.family, self.facts = check.name, check.family, check.facts
        self.calls = 0

    def __call__(self, registry: FactRegistry, output: Mapping[str, Any]) -> None:
        self.calls += 1
        self.check(registry, output)


def sales_registry() -> FactRegistry:
    registry = FactRegistry()
    registry.record_ranking("sales", {"EU": 10, "US": 7}, key="total", tool="top_sales")
    return registry


def _last(registry: FactRegistry, output: Mapping[str, Any]) -> None:
    last = registry.peek("sales").value.items[-1][0]
    if output.get("last") != last:
        raise UnsupportedClaim("last", output.get("last"), last, fact="sales", code="wrong_last")


def three_checks() -> list[Counting]:
    return [
        Counting(ranking_prefix("sales", "top", k=2)),
        Counting(superlative(fact="sales", winner_field="winner")),
        Counting(NamedCheck("last()", _last, family="custom", facts=("sales",))),
    ]


def run_node(
    guard: Guard, otel: Harness, output: dict[str, Any], mode: str, checks: list[Counting]
) -> BaseException | None:
    """What an adapter does: run groundplane's boundary, then report it to the guard on a span."""
    registry = sales_registry()
    with otel.tracer.start_as_current_span("node") as span:
        started = time.perf_counter()
        result: Report | BaseException | None
        try:
            with boundary(registry, ["sales"], checks, mode=mode) as entered:  # type: ignore[arg-type]
                entered.submit(output)
            result = entered.last_report
        except (UnsupportedClaim, ClaimsUnsupported) as exc:
            result = exc
        guard.record_evaluation(
            span,
            boundary="node",
            checks=checks,
            output=output,
            report_or_error=result,
            duration_s=time.perf_counter() - started,
            registry=registry,
            facts=["sales"],
        )
    return result if isinstance(result, BaseException) else None


def claims(otel: Harness) -> list[tuple[str, str, int]]:
    return sorted(
        (attrs["groundplane.check"], attrs["groundplane.verdict"], value)
        for attrs, value in otel.metrics()["groundplane.claims"]
    )


WRONG = {"winner": "US", "top": ["EU", "US"], "last": "EU"}
# One gen_ai.evaluation.result per check of three_checks() on WRONG, in check order.
EVALUATIONS = [
    ("ranking_prefix", "supported"),
    ("superlative", "unsupported"),
    ("custom", "unsupported"),
]


class TestRecordEvaluation:
    def test_report_mode_first_counts_every_check(self, otel: Harness) -> None:
        """The boundary stopped at the first claim (mode first): the guard evaluates the others
        for telemetry, so all 3 checks are counted, and the node span carries both events."""
        guard = otel.install()
        checks = three_checks()
        error = run_node(guard, otel, WRONG, "first", checks)
        assert isinstance(error, UnsupportedClaim)
        assert claims(otel) == [
            ("custom", "unsupported", 1),
            ("ranking_prefix", "supported", 1),
            ("superlative", "unsupported", 1),
        ]
        (node,) = otel.spans("node")
        assert node.attributes["groundplane.outcome"] == "blocked"  # type: ignore[index]
        assert node.status.status_code is StatusCode.ERROR
        reasons = [
            event.attributes["gen_ai.guardrail.result.reason"]  # type: ignore[index]
            for event in guardrail_events(node)
        ]
        assert reasons == ["wrong_winner", "wrong_last"]
        assert evaluations(node) == EVALUATIONS
        assert len(node.events) == 2 + 3

    def test_a_full_report_is_used_as_is(self, otel: Harness) -> None:
        """Mode all: the Report accounts for every check, nothing is run again."""
        guard = otel.install()
        checks = three_checks()
        error = run_node(guard, otel, WRONG, "all", checks)
        assert isinstance(error, ClaimsUnsupported)
        assert [check.calls for check in checks] == [1, 1, 1]
        assert claims(otel) == [
            ("custom", "unsupported", 1),
            ("ranking_prefix", "supported", 1),
            ("superlative", "unsupported", 1),
        ]
        (node,) = otel.spans("node")
        (first, _) = guardrail_events(node)
        assert evaluations(node) == EVALUATIONS
        assert len(node.events) == 2 + 3
        assert dict(first.attributes or {}) == {
            "gen_ai.guardrail.component.name": "groundplane",
            "gen_ai.guardrail.policy.id": "node",
            "gen_ai.guardrail.policy.rule.id": WINNER_RULE,
            "gen_ai.guardrail.result.type": "verdict",
            "gen_ai.guardrail.result.value": "unsupported",
            "gen_ai.guardrail.result.reason": "wrong_winner",
            "gen_ai.guardrail.source": "model_response",
            "groundplane.check": "superlative",
            "groundplane.field": "winner",
            "groundplane.fact": "sales",
            "groundplane.fact.tool": "top_sales",
        }

    def test_a_passing_report_runs_nothing_again(self, otel: Harness) -> None:
        """A passing boundary: every check counted supported from the report, none re-run."""
        guard = otel.install()
        checks = three_checks()
        right = {"winner": "EU", "top": ["EU", "US"], "last": "US"}
        assert run_node(guard, otel, right, "first", checks) is None
        assert [check.calls for check in checks] == [1, 1, 1]
        assert claims(otel) == [
            ("custom", "supported", 1),
            ("ranking_prefix", "supported", 1),
            ("superlative", "supported", 1),
        ]
        assert otel.metrics()["groundplane.outputs"] == [
            ({"groundplane.outcome": "passed", **LABELS}, 1)
        ]
        assert otel.metrics()["groundplane.check.duration"] == [
            ({"groundplane.boundary": "node"}, 1)
        ]

    def test_failure_before_any_check_is_one_error_finding(self, otel: Harness) -> None:
        """No output reached the checks (a declared fact is not registered): one fact_missing
        error event naming the fact, no claim counted, outcome error."""
        guard = otel.install()
        with otel.tracer.start_as_current_span("node") as span:
            guard.record_evaluation(
                span,
                boundary="node",
                checks=three_checks(),
                output=None,
                report_or_error=UnregisteredFact("sales"),
                duration_s=0.001,
                registry=FactRegistry(),
                facts=["sales"],
            )
        (node,) = otel.spans("node")
        (event,) = node.events
        assert (
            event.attributes["gen_ai.guardrail.result.reason"],  # type: ignore[index]
            event.attributes["groundplane.fact"],  # type: ignore[index]
        ) == ("fact_missing", "sales")
        assert node.attributes["groundplane.outcome"] == "error"  # type: ignore[index]
        assert "groundplane.claims" not in otel.metrics()

    @pytest.mark.parametrize("capture", [False, True], ids=["capture-off", "capture-on"])
    def test_the_apps_exception_is_marked_only_with_capture_off(
        self, otel: Harness, capture: bool
    ) -> None:
        """Capture off: the exception the app will raise carries the content-free summary."""
        guard = otel.install(sales_config(capture_content=capture))
        error = run_node(guard, otel, WRONG, "first", three_checks())
        expected = (
            "unsupported claim in field 'winner' (boundary 'node', check superlative, "
            "reason wrong_winner)"
        )
        assert isinstance(error, UnsupportedClaim)
        assert str(error) == (error.diagnosis if capture else expected)
        assert error.redacted is not capture

    def test_a_bug_inside_is_counted_never_raised(
        self, otel: Harness, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A failure while writing telemetry is logged and counted; the caller continues."""
        guard = otel.install()
        guard.processor.raise_internal_errors = False

        def boom(*args: object) -> None:
            raise RuntimeError("guard bug")

        monkeypatch.setattr(guard.processor.results, "record", boom)
        run_node(guard, otel, WRONG, "all", three_checks())
        assert guard.processor.internal_errors == 1

    def test_bad_mode_is_a_value_error(self, otel: Harness) -> None:
        """A mode outside enforce/observe is a developer error, raised at once."""
        guard = otel.install()
        with pytest.raises(ValueError, match="mode must be one of"):
            guard.record_evaluation(
                None,
                boundary="node",
                checks=[],
                output=None,
                report_or_error=None,
                duration_s=0.0,
                registry=FactRegistry(),
                mode="shadow",  # type: ignore[arg-type]
            )


class TestRecordFact:
    def test_typed_by_the_fact_spec_with_tool_call_id_and_span_provenance(
        self, otel: Harness
    ) -> None:
        """The value is typed by the guard's FactSpec for the tool, its provenance names the
        tool, arguments, span and tool call id, and it is counted with the given source."""
        guard = otel.install()
        with otel.tracer.start_as_current_span("execute_tool top_sales") as span:
            guard.record_fact(
                span,
                tool="top_sales",
                fact=None,
                value={"rows": [{"region": "EU", "total": 10}, {"region": "US", "total": 7}]},
                arguments={"year": 2025},
                source="mcp",
                tool_call_id="call_9",
            )
            fact = trace_registry(guard=guard).get("sales")
        assert fact.value == Ranking("total", (("EU", 10), ("US", 7)))
        provenance = fact.provenance
        assert (provenance.tool, dict(provenance.args), provenance.tool_call_id) == (
            "top_sales",
            {"year": 2025},
            "call_9",
        )
        assert provenance.span_id == f"{span.get_span_context().span_id:016x}"
        assert otel.metrics()["groundplane.facts"] == [
            (
                {
                    "groundplane.fact.kind": "ranking",
                    "groundplane.fact.source": "mcp",
                    "groundplane.fact.outcome": "recorded",
                },
                1,
            )
        ]

    def test_a_value_that_cannot_be_a_fact_is_counted_not_raised(self, otel: Harness) -> None:
        """NaN is never a fact: counted unparseable under the named fact, nothing raised."""
        guard = otel.install()
        with otel.tracer.start_as_current_span("tool") as span:
            guard.record_fact(
                span, tool="t", fact="ratio", value=math.nan, arguments={}, source="code"
            )
        assert otel.metrics()["groundplane.facts"] == [
            (
                {
                    "groundplane.fact.kind": "value",
                    "groundplane.fact.source": "code",
                    "groundplane.fact.outcome": "unparseable",
                },
                1,
            )
        ]

    def test_unknown_source_is_a_value_error_and_no_span_is_a_no_op(self, otel: Harness) -> None:
        """``source`` is a metric label: only the fixed vocabulary; without a span nothing is
        recorded."""
        guard = otel.install()
        with pytest.raises(ValueError, match="source must be one of"):
            guard.record_fact(None, tool="t", fact="f", value=1, arguments={}, source="crm")
        guard.record_fact(None, tool="t", fact="f", value=1, arguments={}, source="code")
        assert "groundplane.facts" not in otel.metrics()
