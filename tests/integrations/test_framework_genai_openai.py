"""The genai-openai row with content capture off: util-genai's completion hook
(``OTEL_INSTRUMENTATION_GENAI_COMPLETION_HOOK=groundplane``) hands the guard the typed messages
of each chat call — the tool result the model was given and its final answer — so the span path
checks the answer when the chat span ends, and the wrong winner raises out of
``chat.completions.create``, with no content on any span, event, metric or log."""

from __future__ import annotations

import dataclasses
import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest
from fake_openai import FakeOpenAI, answer_turn, tool_call_turn
from framework_kit import (
    AGENT,
    BOUNDARY,
    RIGHT,
    WRONG,
    assert_no_content,
    config,
    facts_recorded,
    guardrail_event,
    guardrail_events,
    outputs,
    warehouse_query,
)
from integration_harness import Otel
from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor
from opentelemetry.trace import StatusCode

from groundplane_otel.checks.numbers_recorded import numbers_recorded
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.otel import BoundarySpec, GuardConfig, MatchSpec
from groundplane_otel.otel.completion_hook import GroundplaneCompletionHook
from groundplane_otel.otel.result import OutputUnchecked

HOOK_ENV = "OTEL_INSTRUMENTATION_GENAI_COMPLETION_HOOK"
CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "warehouse_query",
            "description": "CTR per campaign",
            "parameters": {"type": "object", "properties": {"window": {"type": "string"}}},
        },
    }
]


@pytest.fixture
def instrument(otel: Otel, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[], None]]:
    """genai-openai with content capture at its default (off) and the hook selected by name,
    as zero-code would configure it (the instrumentation loads the hook at instrument time)."""
    instrumentor = OpenAIInstrumentor()

    def apply() -> None:
        monkeypatch.delenv(CONTENT_ENV, raising=False)
        monkeypatch.setenv(HOOK_ENV, "groundplane")
        instrumentor.instrument(
            tracer_provider=otel.tracer_provider,
            meter_provider=otel.meter_provider,
            logger_provider=otel.logger_provider,
        )

    yield apply
    if instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.uninstrument()


def run_agent(api: FakeOpenAI, tracer: Any) -> dict[str, Any]:
    """invoke_agent -> chat (asks for the tool) -> the app runs it -> chat (final JSON). No
    tool span, no decorator: the fact comes from the tool result the model is given."""
    client = openai.OpenAI(base_url=api.base_url, api_key="test", max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Which campaign won?"}]
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT}
    with tracer.start_as_current_span(f"invoke_agent {AGENT}", attributes=attributes):
        first = client.chat.completions.create(model="gpt-fake-1", messages=messages, tools=TOOLS)
        call = first.choices[0].message.tool_calls[0]
        result = warehouse_query(**json.loads(call.function.arguments))
        messages += [
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)},
        ]
        final = client.chat.completions.create(
            model="gpt-fake-1", messages=messages, response_format={"type": "json_object"}
        )
        return dict(json.loads(final.choices[0].message.content or ""))


def script(answer: dict[str, Any]) -> list[Any]:
    return [tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(answer)]


def test_wrong_winner_raises_from_the_client_call(
    otel: Otel, instrument: Callable[[], None]
) -> None:
    """Content off, hook on: UnsupportedClaim leaves chat.completions.create; the final chat
    span is ERROR/blocked with the event (the fact's provenance: that chat span and the tool
    call id); one output; the fact recorded once (source genai)."""
    otel.install(config())
    instrument()
    with FakeOpenAI(script(WRONG)) as api, pytest.raises(UnsupportedClaim):
        run_agent(api, otel.tracer)
    ask, final = otel.spans("chat gpt-fake-1")
    assert "groundplane.outcome" not in (ask.attributes or {})
    assert final.status.status_code is StatusCode.ERROR
    assert (final.attributes or {})["groundplane.outcome"] == "blocked"
    assert guardrail_events(final) == [
        guardrail_event(final.context.span_id, final.context.trace_id)
    ]
    assert outputs(otel) == [("blocked", 1)]
    assert facts_recorded(otel) == [("genai", "recorded", 1)]


def test_right_winner_passes(otel: Otel, instrument: Callable[[], None]) -> None:
    """Content off, hook on: the computed winner reaches the app, passed once."""
    otel.install(config())
    instrument()
    with FakeOpenAI(script(RIGHT)) as api:
        assert run_agent(api, otel.tracer) == RIGHT
    assert outputs(otel) == [("passed", 1)]


def test_content_off_leaks_nothing(
    otel: Otel, instrument: Callable[[], None], caplog: pytest.LogCaptureFixture
) -> None:
    """Blocked with content off: no campaign name in spans, events, metrics, log records (the
    instrumentation's and the guard's) or Python logs."""
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="groundplane_otel")
    otel.install(config())
    instrument()
    with FakeOpenAI(script(WRONG)) as api, pytest.raises(UnsupportedClaim):
        run_agent(api, otel.tracer)
    assert assert_no_content(otel, caplog.records) > 30


def test_the_hook_is_an_entry_point_util_genai_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """load_completion_hook() finds ours by name (wrapped in util-genai's safe wrapper)."""
    from opentelemetry.util.genai.completion_hook import load_completion_hook

    monkeypatch.setenv(HOOK_ENV, "groundplane")
    hook = load_completion_hook()
    assert isinstance(vars(hook)["_wrapped"], GroundplaneCompletionHook)


def test_without_a_guard_the_hook_does_nothing() -> None:
    """No active guard: the hook returns without touching anything (no span needed)."""
    GroundplaneCompletionHook().on_completion(inputs=[], outputs=[], system_instruction=[])


def test_the_hook_feeds_the_span_path_under_genai_langchain(
    otel: Otel, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """genai-langchain, content off, the hook selected, no adapter, observe mode: the final
    chat span's answer and the tool result reach the span path through the hook — the wrong
    winner is flagged once on that span — and no campaign name leaks."""
    from langchain.agents import create_agent
    from langchain_core.tools import tool
    from langchain_openai import ChatOpenAI
    from opentelemetry.instrumentation.genai.langchain import LangChainInstrumentor

    caplog.set_level(logging.INFO)
    monkeypatch.delenv(CONTENT_ENV, raising=False)
    monkeypatch.setenv(HOOK_ENV, "groundplane")
    otel.install(config(mode="observe"))
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(tracer_provider=otel.tracer_provider)

    @tool("warehouse_query")
    def warehouse_query_tool(window: str) -> dict[str, float]:
        """CTR per campaign."""
        return warehouse_query(window)

    try:
        with FakeOpenAI(script(WRONG)) as api:
            model = ChatOpenAI(
                model="gpt-fake-1", base_url=api.base_url, api_key="test", max_retries=0
            )
            agent = create_agent(model, tools=[warehouse_query_tool], name=AGENT)
            agent.invoke({"messages": [{"role": "user", "content": "Which campaign won?"}]})
    finally:
        instrumentor.uninstrument()
    ask, final = otel.spans("chat gpt-fake-1")
    assert (final.attributes or {})["groundplane.outcome"] == "flagged"
    assert [event["gen_ai.guardrail.result.reason"] for event in guardrail_events(final)] == [
        "wrong_winner"
    ]
    assert outputs(otel) == [("flagged", 1)]
    assert facts_recorded(otel) == [("genai", "recorded", 1)]
    assert assert_no_content(otel, caplog.records) > 30


# -- answer: text — the hook hands the whole answer text over, content off -------------------


def text_config() -> GuardConfig:
    """The same fact, read by a prose boundary: every number in the answer must be recorded."""
    boundary = BoundarySpec(
        BOUNDARY,
        ("campaign_ctr",),
        (numbers_recorded("campaign_ctr"),),
        match=MatchSpec(agent_name=AGENT),
        report_mode="first",
        answer="text",
    )
    return dataclasses.replace(config(), boundaries=(boundary,))


def run_prose_agent(api: FakeOpenAI, tracer: Any) -> str:
    """invoke_agent -> chat (asks for the tool) -> the app runs it -> chat (a prose answer)."""
    client = openai.OpenAI(base_url=api.base_url, api_key="test", max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "What was the best CTR?"}]
    attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT}
    with tracer.start_as_current_span(f"invoke_agent {AGENT}", attributes=attributes):
        first = client.chat.completions.create(model="gpt-fake-1", messages=messages, tools=TOOLS)
        call = first.choices[0].message.tool_calls[0]
        result = warehouse_query(**json.loads(call.function.arguments))
        messages += [
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)},
        ]
        final = client.chat.completions.create(model="gpt-fake-1", messages=messages)
        return final.choices[0].message.content or ""


def prose_script(text: str) -> list[Any]:
    return [tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(text)]


def test_a_right_prose_answer_passes_a_text_boundary(
    otel: Otel, instrument: Callable[[], None]
) -> None:
    """Content off, hook on, answer: text: the prose (no JSON in it) is checked number by
    number on the final chat span and passes, once."""
    otel.install(text_config())
    instrument()
    text = "The best CTR this week was 0.0455, ahead of 0.0412."
    with FakeOpenAI(prose_script(text)) as api:
        assert run_prose_agent(api, otel.tracer) == text
    _, final = otel.spans("chat gpt-fake-1")
    assert (final.attributes or {})["groundplane.outcome"] == "passed"
    assert outputs(otel) == [("passed", 1)]
    assert facts_recorded(otel) == [("genai", "recorded", 1)]


def test_a_wrong_number_in_prose_is_refused_as_unrecorded(
    otel: Otel, instrument: Callable[[], None]
) -> None:
    """A number no fact records raises UnsupportedClaim from the client call for what it is —
    number_unrecorded (numbers_recorded's reason), not output_unreadable — with the event on
    the final chat span."""
    otel.install(text_config())
    instrument()
    with (
        FakeOpenAI(prose_script("The best CTR this week was 0.0512.")) as api,
        pytest.raises(UnsupportedClaim) as raised,
    ):
        run_prose_agent(api, otel.tracer)
    assert raised.value.code == "number_unrecorded"
    _, final = otel.spans("chat gpt-fake-1")
    assert final.status.status_code is StatusCode.ERROR
    assert [e["gen_ai.guardrail.result.reason"] for e in guardrail_events(final)] == [
        "number_unrecorded"
    ]
    assert outputs(otel) == [("blocked", 1)]


def test_a_prose_answer_to_a_json_boundary_is_unreadable_on_its_chat_span(
    otel: Otel, instrument: Callable[[], None]
) -> None:
    """The hook hands the text over for every boundary: a JSON boundary finds no JSON object
    in the prose and fails closed right there (OutputUnchecked from the client call, reason
    output_unreadable on the final chat span), one error — never a pass."""
    otel.install(config())
    instrument()
    with (
        FakeOpenAI(prose_script("harbour won.")) as api,
        pytest.raises(OutputUnchecked) as raised,
    ):
        run_prose_agent(api, otel.tracer)
    assert raised.value.code == "output_unreadable"
    _, final = otel.spans("chat gpt-fake-1")
    assert [e["gen_ai.guardrail.result.reason"] for e in guardrail_events(final)] == [
        "output_unreadable"
    ]
    assert outputs(otel) == [("error", 1)]
