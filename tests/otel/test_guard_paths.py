"""The guard on the pass, block, flag, skip and error paths: exact names, values and types of
the span attributes, events, links, status and metrics it writes (DESIGN §4)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.trace import StatusCode
from otel_harness import (
    AGENT,
    GUARDRAIL,
    SALES_ROWS,
    Harness,
    answer,
    evaluations,
    guardrail_events,
    sales_config,
    tool_call_turn,
)

from groundplane_otel.checks._base import NamedCheck
from groundplane_otel.errors import ClaimsUnsupported, UnsupportedClaim
from groundplane_otel.otel import (
    BoundarySpec,
    GuardConfig,
    Limits,
    MatchSpec,
    OutputUnchecked,
    submit_output,
)

RULE = "superlative(fact='sales', field='winner')"


def run_agent(
    otel: Harness, winner: str, *, facts: object = SALES_ROWS, final: str | None = None
) -> None:
    """invoke_agent analyst -> chat (tool call) -> execute_tool(s) -> chat (final answer).

    ``facts``: one tool result, a list of results (one tool call each), or None (no tool call).
    """
    with otel.agent():
        otel.chat(tool_call_turn())
        for result in facts if isinstance(facts, list) else [] if facts is None else [facts]:
            otel.tool(result)
        otel.chat(final if final is not None else answer({"winner": winner}))


def final_chat(otel: Harness):  # type: ignore[no-untyped-def]
    return [
        span for span in otel.spans("chat gpt-test") if "groundplane.outcome" in span.attributes
    ]


def fact_ids(otel: Harness) -> tuple[str, str]:
    tool = otel.spans("execute_tool top_sales")[0].context
    return f"{tool.trace_id:032x}", f"{tool.span_id:016x}"


class TestPass:
    def test_supported_answer_passes_with_summary_link_and_metrics(self, otel: Harness) -> None:
        """A supported answer ends with outcome passed, no event, a link to the fact span, and
        one supported claim and one passed output counted."""
        otel.install()
        run_agent(otel, "EU")
        (chat,) = final_chat(otel)
        assert dict(chat.attributes) == {
            "gen_ai.operation.name": "chat",
            "gen_ai.output.messages": answer({"winner": "EU"}),
            "groundplane.boundary": "answer",
            "groundplane.boundary_matched": True,
            "groundplane.outcome": "passed",
            "groundplane.violations": 0,
            "groundplane.facts": ("sales",),
            "groundplane.mode": "enforce",
        }
        assert type(chat.attributes["groundplane.violations"]) is int
        assert guardrail_events(chat) == []
        assert evaluations(chat) == [("superlative", "supported")]
        assert [event.name for event in chat.events] == ["gen_ai.evaluation.result"]
        assert chat.status.status_code is StatusCode.UNSET
        tool = otel.spans("execute_tool top_sales")[0]
        assert [(link.context.span_id, dict(link.attributes)) for link in chat.links] == [
            (tool.context.span_id, {"groundplane.fact": "sales"})
        ]
        metrics = otel.metrics()
        assert metrics["groundplane.claims"] == [
            (
                {
                    "groundplane.check": "superlative",
                    "groundplane.verdict": "supported",
                    "groundplane.boundary": "answer",
                    "groundplane.mode": "enforce",
                    **AGENT,
                },
                1,
            )
        ]
        assert metrics["groundplane.outputs"] == [
            (
                {
                    "groundplane.boundary": "answer",
                    "groundplane.outcome": "passed",
                    "groundplane.mode": "enforce",
                    **AGENT,
                },
                1,
            )
        ]
        assert metrics["groundplane.check.duration"] == [
            ({"groundplane.boundary": "answer", **AGENT}, 1)
        ]
        assert metrics["groundplane.facts"] == [
            (
                {
                    "groundplane.fact.kind": "ranking",
                    "groundplane.fact.source": "genai",
                    "groundplane.fact.outcome": "recorded",
                },
                1,
            )
        ]

    def test_instruments_have_explicit_units(self, otel: Harness) -> None:
        """Every instrument carries the unit of the contract."""
        otel.install()
        run_agent(otel, "EU")
        data = otel.reader.get_metrics_data()
        units = {
            metric.name: metric.unit
            for resource in data.resource_metrics
            for scope in resource.scope_metrics
            for metric in scope.metrics
        }
        assert units == {
            "groundplane.claims": "{claim}",
            "groundplane.outputs": "{output}",
            "groundplane.check.duration": "s",
            "groundplane.facts": "{fact}",
            "groundplane.traces.active": "{trace}",
            "groundplane.coverage": "{trace}",
        }

    def test_exemplars_point_at_the_guarded_trace(self, otel: Harness) -> None:
        """Metrics are recorded in the guarded span's context: exemplars carry its trace id."""
        otel.install()
        run_agent(otel, "EU")
        (chat,) = final_chat(otel)
        points = otel.metric_points()
        for name in ("groundplane.claims", "groundplane.outputs", "groundplane.check.duration"):
            (point,) = points[name]
            assert [exemplar.trace_id for exemplar in point.exemplars] == [chat.context.trace_id]
            assert [exemplar.span_id for exemplar in point.exemplars] == [chat.context.span_id]


class TestBlock:
    def test_wrong_winner_raises_after_the_span_was_exported_with_error(
        self, otel: Harness
    ) -> None:
        """Enforce raises ClaimsUnsupported to whoever ended the span, after the span was
        exported with ERROR status and one guardrail event with the exact attributes."""
        otel.install()
        with pytest.raises(ClaimsUnsupported) as raised:
            run_agent(otel, "US")
        (claim,) = raised.value.report.violations
        assert (claim.field, claim.claimed, claim.supported, claim.code) == (
            "winner",
            "US",
            "EU",
            "wrong_winner",
        )
        (chat,) = final_chat(otel)
        assert chat.status.status_code is StatusCode.ERROR
        assert chat.attributes["groundplane.outcome"] == "blocked"
        assert chat.attributes["groundplane.violations"] == 1
        trace_id, span_id = fact_ids(otel)
        assert [event.name for event in chat.events] == [GUARDRAIL, "gen_ai.evaluation.result"]
        (event,) = guardrail_events(chat)
        assert dict(event.attributes) == {
            "gen_ai.guardrail.component.name": "groundplane",
            "gen_ai.guardrail.policy.id": "answer",
            "gen_ai.guardrail.policy.rule.id": RULE,
            "gen_ai.guardrail.result.type": "verdict",
            "gen_ai.guardrail.result.value": "unsupported",
            "gen_ai.guardrail.result.reason": "wrong_winner",
            "gen_ai.guardrail.source": "model_response",
            "groundplane.check": "superlative",
            "groundplane.field": "winner",
            "groundplane.fact": "sales",
            "groundplane.fact.tool": "top_sales",
            "groundplane.fact.trace_id": trace_id,
            "groundplane.fact.span_id": span_id,
        }
        assert evaluations(chat) == [("superlative", "unsupported")]
        metrics = otel.metrics()
        assert [value for attrs, value in metrics["groundplane.claims"]] == [1]
        assert metrics["groundplane.claims"][0][0]["groundplane.verdict"] == "unsupported"
        assert metrics["groundplane.outputs"][0][0]["groundplane.outcome"] == "blocked"

    def test_exception_reaches_the_caller_with_the_span_already_exported(
        self, otel: Harness
    ) -> None:
        """When the exception arrives, the exporter already holds the blocked span."""
        otel.install()
        with otel.agent():
            otel.tool(SALES_ROWS)
            try:
                otel.chat(answer({"winner": "US"}))
            except ClaimsUnsupported:
                (chat,) = otel.spans("chat gpt-test")
                assert chat.status.status_code is StatusCode.ERROR
            else:
                pytest.fail("the blocked output did not raise")

    def test_report_mode_first_raises_the_claim_itself(self, otel: Harness) -> None:
        """With report_mode "first" the app gets the UnsupportedClaim, as groundplane raises it."""
        otel.install(sales_config(report_mode="first"))
        with pytest.raises(UnsupportedClaim) as raised:
            run_agent(otel, "US")
        assert raised.value.code == "wrong_winner"

    def test_events_exported_when_the_guard_is_added_before_the_exporter(
        self, otel: Harness
    ) -> None:
        """Processor order does not matter: the guard writes before the span really ends."""
        otel.install(exporter_first=False)
        with pytest.raises(ClaimsUnsupported):
            run_agent(otel, "US")
        (chat,) = final_chat(otel)
        assert [event.name for event in chat.events] == [
            "gen_ai.guardrail.result",
            "gen_ai.evaluation.result",
        ]
        assert chat.status.status_code is StatusCode.ERROR

    def test_content_capture_adds_claimed_supported_and_message(self, otel: Harness) -> None:
        """With capture_content the event also carries the values and the human message."""
        otel.install(sales_config(capture_content=True))
        with pytest.raises(ClaimsUnsupported):
            run_agent(otel, "US")
        (chat,) = final_chat(otel)
        (event,) = guardrail_events(chat)
        assert event.attributes["groundplane.claimed"] == '"US"'
        assert event.attributes["groundplane.supported"] == '"EU"'
        message = str(event.attributes["groundplane.message"])
        assert message.startswith("unsupported claim in field 'winner'")
        (evaluation,) = [event for event in chat.events if event.name != GUARDRAIL]
        assert evaluation.attributes["gen_ai.evaluation.explanation"] == message


class TestFlag:
    def test_observe_flags_without_raising_or_touching_status(self, otel: Harness) -> None:
        """Observe mode writes the same event, counts flagged, never raises nor sets status."""
        otel.install(sales_config(mode="observe"))
        run_agent(otel, "US")
        (chat,) = final_chat(otel)
        assert chat.status.status_code is StatusCode.UNSET
        assert chat.attributes["groundplane.outcome"] == "flagged"
        assert chat.attributes["groundplane.mode"] == "observe"
        assert [
            event.attributes["gen_ai.guardrail.result.reason"] for event in guardrail_events(chat)
        ] == ["wrong_winner"]
        assert evaluations(chat) == [("superlative", "unsupported")]
        metrics = otel.metrics()
        assert metrics["groundplane.outputs"] == [
            (
                {
                    "groundplane.boundary": "answer",
                    "groundplane.outcome": "flagged",
                    "groundplane.mode": "observe",
                    **AGENT,
                },
                1,
            )
        ]

    def test_boundary_mode_overrides_the_guard_mode(self, otel: Harness) -> None:
        """A boundary in observe is flagged even when the guard enforces."""
        otel.install(sales_config(boundary_mode="observe"))
        run_agent(otel, "US")
        assert final_chat(otel)[0].attributes["groundplane.outcome"] == "flagged"


class TestSkip:
    def test_refusal_is_skipped_not_failed(self, otel: Harness) -> None:
        """A refusal claims nothing: outcome skipped with skip_reason refusal, no claims."""
        otel.install()
        refusal = json.dumps(
            [{"role": "assistant", "parts": [{"type": "refusal", "content": "no"}]}]
        )
        with otel.agent():
            otel.tool(SALES_ROWS)
            otel.chat(refusal)
        (chat,) = final_chat(otel)
        assert chat.attributes["groundplane.outcome"] == "skipped"
        assert chat.events == ()
        metrics = otel.metrics()
        assert metrics["groundplane.outputs"] == [
            (
                {
                    "groundplane.boundary": "answer",
                    "groundplane.outcome": "skipped",
                    "groundplane.mode": "enforce",
                    "groundplane.skip_reason": "refusal",
                    **AGENT,
                },
                1,
            )
        ]
        assert "groundplane.claims" not in metrics
        assert "groundplane.check.duration" not in metrics

    def test_failed_model_call_keeps_its_own_exception(self, otel: Harness) -> None:
        """A chat span that ends with the app's exception and no output is skipped
        (span_error): the app's exception is not replaced."""
        otel.install()

        def failing_model_call() -> None:
            with otel.agent():
                otel.tool(SALES_ROWS)
                with otel.tracer.start_as_current_span(
                    "chat gpt-test", attributes={"gen_ai.operation.name": "chat"}
                ):
                    raise TimeoutError("model timed out")

        with pytest.raises(TimeoutError):
            failing_model_call()
        outputs = otel.metrics()["groundplane.outputs"]
        assert outputs[0][0]["groundplane.skip_reason"] == "span_error"


class TestError:
    def test_unreadable_output_fails_closed(self, otel: Harness) -> None:
        """Prose without a JSON object cannot be checked: error event output_unreadable, ERROR
        status, and OutputUnchecked reaches the app (inside ClaimsUnsupported)."""
        otel.install()
        prose = json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "EU, I think"}]}]
        )
        with pytest.raises(ClaimsUnsupported) as raised:
            run_agent(otel, "", final=prose)
        (unchecked,) = raised.value.report.violations
        assert isinstance(unchecked, OutputUnchecked)
        assert unchecked.code == "output_unreadable"
        (chat,) = final_chat(otel)
        assert chat.status.status_code is StatusCode.ERROR
        (event,) = chat.events  # no check ran: no evaluation event
        assert dict(event.attributes) == {
            "gen_ai.guardrail.component.name": "groundplane",
            "gen_ai.guardrail.policy.id": "answer",
            "gen_ai.guardrail.result.type": "verdict",
            "gen_ai.guardrail.result.value": "error",
            "gen_ai.guardrail.result.reason": "output_unreadable",
            "gen_ai.guardrail.source": "model_response",
        }
        metrics = otel.metrics()
        assert metrics["groundplane.outputs"][0][0]["groundplane.outcome"] == "error"
        assert "groundplane.claims" not in metrics

    @pytest.mark.parametrize(
        ("results", "reason", "fact_outcomes"),
        [
            ([], "fact_missing", []),
            (
                [SALES_ROWS, {"rows": [{"region": "US", "total": 99}]}],
                "fact_conflict",
                ["recorded", "conflict"],
            ),
            (['{"rows": [{"region": "EU", "total": NaN}]}'], "fact_unparseable", ["unparseable"]),
            (['{"rows": [], "rows": []}'], "fact_unparseable", ["unparseable"]),
        ],
        ids=["missing", "conflict", "nan", "duplicate-key"],
    )
    def test_unusable_fact_fails_the_check_closed(
        self, otel: Harness, results: list[object], reason: str, fact_outcomes: list[str]
    ) -> None:
        """A check whose fact is missing, conflicting or unparseable is not run: verdict error,
        one error event naming the check and the fact, and enforce raises."""
        otel.install(sales_config(report_mode="first"))
        with pytest.raises(OutputUnchecked) as raised:
            run_agent(otel, "EU", facts=results)
        assert raised.value.code == reason
        (chat,) = final_chat(otel)
        (event,) = guardrail_events(chat)
        assert evaluations(chat) == [("superlative", "error")]
        assert dict(event.attributes) == {
            "gen_ai.guardrail.component.name": "groundplane",
            "gen_ai.guardrail.policy.id": "answer",
            "gen_ai.guardrail.policy.rule.id": RULE,
            "gen_ai.guardrail.result.type": "verdict",
            "gen_ai.guardrail.result.value": "error",
            "gen_ai.guardrail.result.reason": reason,
            "gen_ai.guardrail.source": "model_response",
            "groundplane.check": "superlative",
            "groundplane.fact": "sales",
        }
        metrics = otel.metrics()
        assert [attrs["groundplane.verdict"] for attrs, _ in metrics["groundplane.claims"]] == [
            "error"
        ]
        assert sorted(
            attrs["groundplane.fact.outcome"]
            for attrs, value in metrics.get("groundplane.facts", [])
            if value
        ) == sorted(fact_outcomes)

    def test_truncated_tool_result_fails_closed(self, make_otel) -> None:  # type: ignore[no-untyped-def]
        """A result cut by the attribute length limit is never a fact: counted truncated, and
        the check fails with fact_truncated."""
        from opentelemetry.sdk.trace import SpanLimits

        otel = make_otel(SpanLimits(max_attribute_length=30))
        otel.install()

        def submitted_answer() -> None:
            with otel.agent():
                otel.tool(SALES_ROWS)
                with otel.tracer.start_as_current_span(
                    "chat gpt-test", attributes={"gen_ai.operation.name": "chat"}
                ):
                    submit_output({"winner": "EU"}, guard=otel.guards[0])

        with pytest.raises(ClaimsUnsupported) as raised:
            submitted_answer()
        codes = [claim.code for claim in raised.value.report.violations]
        assert codes == ["fact_truncated"]
        facts = otel.metrics()["groundplane.facts"]
        assert facts == [
            (
                {
                    "groundplane.fact.kind": "ranking",
                    "groundplane.fact.source": "genai",
                    "groundplane.fact.outcome": "truncated",
                },
                1,
            )
        ]

    def test_oversized_tool_result_fails_closed_as_rejected(self, otel: Harness) -> None:
        """A result over max_payload_bytes is counted rejected; its check fails fact_rejected."""
        otel.install(sales_config(limits=Limits(max_payload_bytes=500), report_mode="first"))
        rows = [{"region": "EU", "total": 10}] + [
            {"region": f"R{i}", "total": 1} for i in range(60)
        ]
        with pytest.raises(OutputUnchecked) as raised:
            run_agent(otel, "EU", facts={"rows": rows})
        assert raised.value.code == "fact_rejected"
        (attrs, value), *_ = otel.metrics()["groundplane.facts"]
        assert (attrs["groundplane.fact.outcome"], value) == ("rejected", 1)

    def test_same_result_twice_is_not_a_conflict(self, otel: Harness) -> None:
        """The same result recorded twice in one trace passes and is counted once."""
        otel.install()
        with otel.agent():
            otel.tool(SALES_ROWS)
            otel.tool(SALES_ROWS, call_id="call_2")
            otel.chat(answer({"winner": "EU"}))
        assert final_chat(otel)[0].attributes["groundplane.outcome"] == "passed"
        assert [value for _, value in otel.metrics()["groundplane.facts"]] == [1]

    def test_observe_counts_errors_without_raising(self, otel: Harness) -> None:
        """Observe never raises, even when the output cannot be checked; it counts error."""
        otel.install(sales_config(mode="observe"))
        run_agent(otel, "EU", facts=None)
        (chat,) = final_chat(otel)
        assert chat.attributes["groundplane.outcome"] == "error"
        assert chat.status.status_code is StatusCode.UNSET

    def test_a_crashing_check_is_a_check_error(self, otel: Harness) -> None:
        """A check raising something else than UnsupportedClaim fails closed as check_error."""

        def broken(registry: object, output: object) -> None:
            raise KeyError("bug")

        check = NamedCheck("broken()", broken, family="custom", facts=("sales",))
        config = GuardConfig(
            facts=sales_config().facts,
            boundaries=(
                BoundarySpec("answer", ("sales",), (check,), match=MatchSpec(agent_name="analyst")),
            ),
        )
        otel.install(config)
        with pytest.raises(ClaimsUnsupported) as raised:
            run_agent(otel, "EU")
        (claim,) = raised.value.report.violations
        assert claim.code == "check_error"
        assert isinstance(claim.check_error, KeyError)  # not chained: content capture is off


class TestAgentLoop:
    def test_tool_call_turn_is_neither_checked_nor_counted(self, otel: Harness) -> None:
        """A turn that only asks for tool calls carries no groundplane attribute or metric;
        the answer after it is the run's one counted output."""
        otel.install()
        with otel.agent():
            otel.chat(tool_call_turn())
            otel.chat(None, **{"gen_ai.response.finish_reasons": ("tool_calls",)})
            otel.tool(SALES_ROWS)
            otel.chat(answer({"winner": "EU"}))
        chats = otel.spans("chat gpt-test")
        assert ["groundplane.outcome" in span.attributes for span in chats] == [False, False, True]
        assert [value for _, value in otel.metrics()["groundplane.outputs"]] == [1]

    def test_a_run_of_only_tool_call_turns_is_an_error_no_output(self, otel: Harness) -> None:
        """A matched agent run that ends with no answer under it is counted error/no_output on
        the agent span and refused in enforce mode (never silence)."""
        otel.install()

        def tool_turns_only() -> None:
            with otel.agent():
                otel.chat(tool_call_turn())
                otel.chat(None, **{"gen_ai.response.finish_reasons": ("tool_calls",)})

        with pytest.raises(ClaimsUnsupported) as raised:
            tool_turns_only()
        (claim,) = raised.value.report.violations
        assert isinstance(claim, OutputUnchecked)
        assert claim.code == "no_output"
        (agent,) = otel.spans("invoke_agent analyst")
        assert agent.attributes["groundplane.outcome"] == "error"
        (event,) = agent.events  # no check ran: no evaluation event
        assert event.attributes["gen_ai.guardrail.result.reason"] == "no_output"
        assert otel.metrics()["groundplane.outputs"] == [
            (
                {
                    "groundplane.boundary": "answer",
                    "groundplane.outcome": "error",
                    "groundplane.mode": "enforce",
                    **AGENT,
                },
                1,
            )
        ]

    def test_agent_name_matched_through_ancestors(self, otel: Harness) -> None:
        """The agent name lives on the enclosing invoke_agent span, two levels up."""
        otel.install()
        with otel.agent(), otel.tracer.start_as_current_span("framework step"):
            otel.tool(SALES_ROWS)
            otel.chat(answer({"winner": "EU"}))
        assert final_chat(otel)[0].attributes["groundplane.boundary"] == "answer"

    def test_other_agents_are_not_guarded(self, otel: Harness) -> None:
        """A chat span under another agent is not matched."""
        otel.install()
        with otel.agent("writer"):
            otel.chat(answer({"winner": "US"}))
        assert final_chat(otel) == []

    def test_answer_on_chat_and_agent_is_checked_once(self, otel: Harness) -> None:
        """When both the final chat span and invoke_agent carry the answer, it is checked and
        counted once (on the chat span)."""
        otel.install()
        with otel.agent() as agent_span:
            otel.tool(SALES_ROWS)
            otel.chat(answer({"winner": "EU"}))
            agent_span.set_attribute("gen_ai.output.messages", answer({"winner": "EU"}))
        (agent,) = otel.spans("invoke_agent analyst")
        assert "groundplane.outcome" not in agent.attributes
        assert [value for _, value in otel.metrics()["groundplane.outputs"]] == [1]
        assert [value for _, value in otel.metrics()["groundplane.claims"]] == [1]

    def test_blocked_chat_raises_once_through_the_agent_span(self, otel: Harness) -> None:
        """The exception raised at the chat span passes through invoke_agent without a second
        check or a second count."""
        otel.install()
        with pytest.raises(ClaimsUnsupported):
            run_agent(otel, "US")
        assert [value for _, value in otel.metrics()["groundplane.outputs"]] == [1]


class TestInternalErrors:
    def test_guard_bug_never_breaks_the_app(
        self, otel: Harness, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """A bug while writing telemetry is logged and counted; the span is still exported and
        nothing reaches the app."""
        guard = otel.install()
        guard.processor.raise_internal_errors = False

        def boom(*args: object, **options: object) -> None:
            raise RuntimeError("guard bug")

        monkeypatch.setattr(guard.processor.results, "annotate", boom)
        run_agent(otel, "EU")
        assert guard.processor.internal_errors == 1
        assert len(otel.spans("chat gpt-test")) == 2

    def test_guard_bug_reraises_when_asked(
        self, otel: Harness, monkeypatch: pytest.MonkeyPatch
    ) -> None:
        """With raise_internal_errors the bug surfaces, after the span was exported."""
        guard = otel.install()

        def boom(*args: object, **options: object) -> None:
            raise RuntimeError("guard bug")

        monkeypatch.setattr(guard.processor.results, "annotate", boom)
        with pytest.raises(RuntimeError, match="guard bug"):
            run_agent(otel, "EU")
        assert len(otel.spans("chat gpt-test")) == 2


def test_guardrail_events_also_go_to_the_logger_provider(otel: Harness) -> None:
    """With a logger provider, each finding is also a log event in the guarded span's trace."""
    from opentelemetry.sdk._logs import LoggerProvider
    from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor

    from groundplane_otel.otel import install

    logs = InMemoryLogRecordExporter()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    otel.add_exporter()
    otel.guards.append(
        install(
            sales_config(mode="observe"),
            tracer_provider=otel.tracer_provider,
            meter_provider=otel.meter_provider,
            logger_provider=logger_provider,
            raise_internal_errors=True,
        )
    )
    run_agent(otel, "US")
    records = [data.log_record for data in logs.get_finished_logs()]
    (chat,) = final_chat(otel)
    assert [record.event_name for record in records] == [event.name for event in chat.events]
    assert [record.event_name for record in records] == [GUARDRAIL, "gen_ai.evaluation.result"]
    for record, event in zip(records, chat.events, strict=True):
        assert record.trace_id == chat.context.trace_id
        assert dict(record.attributes or {}) == dict(event.attributes or {})


class TestInstallation:
    def test_a_second_guard_on_one_provider_is_refused(self, otel: Harness) -> None:
        """One guard per TracerProvider: the second install() is a RuntimeError saying how to
        keep one, and the first guard alone checks and counts each output once."""
        first = otel.install(sales_config(mode="observe"))
        with pytest.raises(RuntimeError, match="already installed on this TracerProvider"):
            otel.install()
        run_agent(otel, "US")
        assert [
            (attrs["groundplane.mode"], attrs["groundplane.outcome"], value)
            for attrs, value in otel.metrics()["groundplane.outputs"]
        ] == [("observe", "flagged", 1)]
        (chat,) = final_chat(otel)
        assert len(guardrail_events(chat)) == 1
        assert evaluations(chat) == [("superlative", "unsupported")]
        first.uninstall()
        otel.install()  # once the first is uninstalled, a new guard is welcome

    def test_uninstalled_guard_does_nothing(self, otel: Harness) -> None:
        """After uninstall() the processor stays registered but checks and counts nothing."""
        guard = otel.install()
        guard.uninstall()
        run_agent(otel, "US")
        assert final_chat(otel) == []
        assert "groundplane.outputs" not in otel.metrics()

    def test_non_sdk_providers_warn(self) -> None:
        """An API-only tracer or meter provider gets a RuntimeWarning naming the problem."""
        from opentelemetry.metrics import NoOpMeterProvider
        from opentelemetry.trace import NoOpTracerProvider

        from groundplane_otel.otel import install

        with pytest.warns(RuntimeWarning) as warned:
            guard = install(
                sales_config(),
                tracer_provider=NoOpTracerProvider(),
                meter_provider=NoOpMeterProvider(),
            )
        messages = [str(warning.message) for warning in warned]
        assert any("cannot see spans" in message for message in messages)
        assert any("metrics will not be exported" in message for message in messages)
        assert (guard.attached, guard.active) == (False, False)


def test_openinference_tool_and_llm_spans_end_to_end(otel: Harness) -> None:
    """OpenInference TOOL output feeds the fact; the LLM span's flattened answer is blocked."""
    (fact,) = sales_config().facts
    boundary = BoundarySpec(
        "answer",
        ("sales",),
        sales_config().boundaries[0].checks,
        match=MatchSpec(attributes={"openinference.span.kind": "LLM"}),
    )
    otel.install(GuardConfig(facts=(fact,), boundaries=(boundary,)))
    tool = {
        "openinference.span.kind": "TOOL",
        "tool.name": "top_sales",
        "output.value": json.dumps(SALES_ROWS),
    }
    llm = {
        "openinference.span.kind": "LLM",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": '```json\n{"winner": "US"}\n```',
    }

    def pipeline() -> None:
        with otel.tracer.start_as_current_span("agent"):
            with otel.tracer.start_as_current_span("top_sales", attributes=tool):
                pass
            with otel.tracer.start_as_current_span("ChatCompletion", attributes=llm):
                pass

    with pytest.raises(ClaimsUnsupported):
        pipeline()
    (llm_span,) = otel.spans("ChatCompletion")
    assert llm_span.attributes["groundplane.outcome"] == "blocked"
    facts = otel.metrics()["groundplane.facts"]
    assert [attrs["groundplane.fact.source"] for attrs, _ in facts] == ["openinference"]


def _three_checks(report_mode: str) -> GuardConfig:
    """ranking_prefix (passes on the wrong answer), superlative (fails), a custom check (fails)."""
    from groundplane_otel.checks.ranking_prefix import ranking_prefix
    from groundplane_otel.checks.superlative import superlative

    def never(registry: object, output: object) -> None:
        raise UnsupportedClaim("note", "x", None, code="custom_reason")

    checks = (
        ranking_prefix("sales", "top", k=2),
        superlative(fact="sales", winner_field="winner"),
        NamedCheck("never()", never, family="custom", facts=("sales",)),
    )
    spec = BoundarySpec(
        "answer",
        ("sales",),
        checks,
        match=MatchSpec(agent_name="analyst"),
        report_mode=report_mode,  # type: ignore[arg-type]
    )
    return GuardConfig(facts=sales_config().facts, boundaries=(spec,))


class TestEveryCheckCounted:
    @pytest.mark.parametrize("report_mode", ["first", "all"])
    def test_blocked_output_with_three_checks_counts_three_claims(
        self, otel: Harness, report_mode: str
    ) -> None:
        """Whatever the report mode, a blocked output with 3 checks counts exactly 3 claims
        (one per check, by verdict) and carries one event per failing check."""
        otel.install(_three_checks(report_mode))
        expected = UnsupportedClaim if report_mode == "first" else ClaimsUnsupported
        with pytest.raises(expected):
            run_agent(otel, "US", final=answer({"winner": "US", "top": ["EU", "US"]}))
        labels = {"groundplane.boundary": "answer", "groundplane.mode": "enforce", **AGENT}
        assert otel.metrics()["groundplane.claims"] == [
            (
                {
                    "groundplane.check": "ranking_prefix",
                    "groundplane.verdict": "supported",
                    **labels,
                },
                1,
            ),
            (
                {
                    "groundplane.check": "superlative",
                    "groundplane.verdict": "unsupported",
                    **labels,
                },
                1,
            ),
            ({"groundplane.check": "custom", "groundplane.verdict": "unsupported", **labels}, 1),
        ]
        (chat,) = final_chat(otel)
        assert [
            event.attributes["gen_ai.guardrail.result.reason"] for event in guardrail_events(chat)
        ] == ["wrong_winner", "custom_reason"]
        assert evaluations(chat) == [
            ("ranking_prefix", "supported"),
            ("superlative", "unsupported"),
            ("custom", "unsupported"),
        ]
        assert chat.attributes["groundplane.violations"] == 2

    def test_report_mode_first_raises_the_first_failing_check(self, otel: Harness) -> None:
        """report_mode "first" raises the claim of the first failing check, in check order."""
        otel.install(_three_checks("first"))
        with pytest.raises(UnsupportedClaim) as raised:
            run_agent(otel, "US", final=answer({"winner": "US", "top": ["EU", "US"]}))
        assert (raised.value.field, raised.value.code) == ("winner", "wrong_winner")

    def test_report_mode_all_reports_every_failing_check(self, otel: Harness) -> None:
        """report_mode "all" raises ClaimsUnsupported with both claims, failed and passed names."""
        otel.install(_three_checks("all"))
        with pytest.raises(ClaimsUnsupported) as raised:
            run_agent(otel, "US", final=answer({"winner": "US", "top": ["EU", "US"]}))
        report = raised.value.report
        assert [claim.code for claim in report.violations] == ["wrong_winner", "custom_reason"]
        assert report.failed == (RULE, "never()")
        assert report.passed == ("ranking_prefix(fact='sales', field='top')",)


class TestOpenInferenceAgents:
    @staticmethod
    def _agent(otel: Harness, name: str) -> Any:
        attributes = {"openinference.span.kind": "AGENT", "agent.name": name}
        return otel.tracer.start_as_current_span(name, attributes=attributes)

    def test_agent_name_of_an_openinference_agent_span_matches(self, otel: Harness) -> None:
        """An OpenInference AGENT span's ``agent.name`` (no gen_ai.agent.name) is matched like
        ``gen_ai.agent.name``: its chat span is guarded and blocked."""
        otel.install()

        def run() -> None:
            with self._agent(otel, "analyst"):
                otel.tool(SALES_ROWS)
                otel.chat(answer({"winner": "US"}))

        with pytest.raises(ClaimsUnsupported):
            run()
        (chat,) = final_chat(otel)
        assert (
            chat.attributes["groundplane.boundary"],
            chat.attributes["groundplane.outcome"],
        ) == (
            "answer",
            "blocked",
        )

    def test_other_openinference_agents_are_not_guarded(self, otel: Harness) -> None:
        """An OpenInference agent with another ``agent.name`` is not matched."""
        otel.install()
        with self._agent(otel, "writer"):
            otel.tool(SALES_ROWS)
            otel.chat(answer({"winner": "US"}))
        assert final_chat(otel) == []

    def test_agent_name_on_the_llm_span_itself_matches(self, otel: Harness) -> None:
        """``agent.name`` on the OpenInference LLM span itself matches too."""
        otel.install()
        llm = {
            "openinference.span.kind": "LLM",
            "agent.name": "analyst",
            "output.value": json.dumps({"winner": "EU"}),
        }
        with otel.tracer.start_as_current_span("root"):
            otel.tool(SALES_ROWS)
            with otel.tracer.start_as_current_span("ChatCompletion", attributes=llm):
                pass
        (span,) = otel.spans("ChatCompletion")
        assert span.attributes["groundplane.outcome"] == "passed"


@pytest.mark.parametrize("kind", ["mixed-key-types", "cyclic"])
def test_an_output_json_cannot_encode_is_still_checked_under_an_agent(
    otel: Harness, kind: str
) -> None:
    """A submitted output json.dumps cannot encode (its identity for checked-once cannot be a
    JSON text) is still checked, raised on and counted once: the guard never fails open."""
    guard = otel.install()
    output: dict[Any, Any] = {"winner": "US", 1: "one"}
    if kind == "cyclic":
        output = {"winner": "US"}
        output["self"] = output

    def agent_turn() -> None:
        with otel.agent():
            otel.tool(SALES_ROWS)
            with otel.tracer.start_as_current_span(
                "chat gpt-test", attributes={"gen_ai.operation.name": "chat"}
            ):
                submit_output(output, guard=guard)

    with pytest.raises(ClaimsUnsupported):
        agent_turn()
    assert [value for _, value in otel.metrics()["groundplane.outputs"]] == [1]
    assert guard.processor.internal_errors == 0


def test_generic_hooks_decide_like_the_fast_ones(
    otel: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On an SDK whose span layout the hooks do not know, the same hooks read each span through
    the public API (the guard is added as a span processor): they capture the fact, match
    through the agent, block, count once and drop the trace at its root's end."""
    import groundplane_otel.otel._live.processor as guard_module

    monkeypatch.setattr(guard_module, "sdk_layout", lambda: False)
    guard = otel.install()
    assert guard.processor._leave_dispatch is None  # not riding: added as a span processor
    assert vars(guard.processor)["on_start"].__name__ == "public_start"  # on a PublicSpan
    with pytest.raises(ClaimsUnsupported):
        run_agent(otel, "US")
    (chat,) = final_chat(otel)
    assert chat.attributes["groundplane.outcome"] == "blocked"
    assert [value for _, value in otel.metrics()["groundplane.outputs"]] == [1]
    assert len(guard.processor.engine.store) == 0


def test_a_bug_reading_a_span_through_the_public_api_never_breaks_the_app(
    otel: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On an SDK whose layout the hooks do not know, a bug while reading a span through the
    public API (``PublicSpan``) is logged and counted at its start and at its end; the span is
    still exported and nothing reaches the app."""
    import groundplane_otel.otel._engine.sdk.hooks as hooks_module
    import groundplane_otel.otel._live.processor as guard_module

    monkeypatch.setattr(guard_module, "sdk_layout", lambda: False)
    guard = otel.install()
    guard.processor.raise_internal_errors = False

    def boom(span: object) -> None:
        raise RuntimeError("guard bug")

    monkeypatch.setattr(hooks_module, "span_attributes", boom)
    otel.tracer.start_span("GET /campaigns").end()
    assert guard.processor.internal_errors == 2
    assert len(otel.spans("GET /campaigns")) == 1


def test_shutdown_switches_the_hooks_off(otel: Harness) -> None:
    """After uninstall the guard's hooks are gone (its class's do nothing): no root is
    tracked, nothing is checked."""
    guard = otel.install()
    assert "on_start" in vars(guard.processor)
    guard.uninstall()
    assert "on_start" not in vars(guard.processor)
    assert "on_end" not in vars(guard.processor)
    run_agent(otel, "US")
    assert guard.processor.engine.store.roots == {}
    assert final_chat(otel) == []
