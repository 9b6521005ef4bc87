"""The OpenAI Agents SDK adapter (``adapters.openai_agents.guard``: an output guardrail and fact
hooks) on a real agent talking to the loopback fake OpenAI server, traced by
opentelemetry-instrumentation-genai-openai-agents (+ genai-openai for the chat spans) or by
OpenInference's openai-agents instrumentation: the wrong winner trips the SDK's own
``OutputGuardrailTripwireTriggered`` with the report as output info; counted once; content
capture off leaks nothing."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
from collections.abc import Callable, Iterator
from typing import Any

import agents
import openai
import pytest
from agents import Agent, OpenAIChatCompletionsModel, Runner, function_tool
from agents.tracing import set_trace_processors
from fake_openai import FakeOpenAI, answer_turn, tool_call_turn
from framework_kit import (
    AGENT,
    BOUNDARY,
    CTR,
    RIGHT,
    WRONG,
    assert_no_content,
    config,
    contains_content,
    facts_recorded,
    guardrail_event,
    guardrail_events,
    outputs,
    warehouse_query,
)
from integration_harness import Otel
from pydantic import BaseModel, RootModel

from groundplane_otel.adapters.openai_agents import (
    FactHooks,
    RunFactHooks,
    guard,
    output_guardrail,
)
from groundplane_otel.otel import FactSpec, GuardConfig

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


class Answer(BaseModel):
    winner: str
    ctr: float


@function_tool
def warehouse_query_tool(window: str) -> dict[str, float]:
    """CTR per campaign."""
    return warehouse_query(window)


warehouse_query_tool.name = "warehouse_query"

Instrument = Callable[[str], None]


@pytest.fixture
def instrument(otel: Otel, monkeypatch: pytest.MonkeyPatch) -> Iterator[Instrument]:
    """instrument("genai" | "openinference" | "openinference-hidden"): the SDK's default
    exporter removed, then the chosen instrumentation on the test's providers."""
    undo: list[Callable[[], None]] = []
    monkeypatch.delenv(CONTENT_ENV, raising=False)
    set_trace_processors([])

    def apply(kind: str) -> None:
        if kind == "genai":
            from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor
            from opentelemetry.instrumentation.genai.openai_agents import (
                OpenAIAgentsInstrumentor,
            )

            providers = {
                "tracer_provider": otel.tracer_provider,
                "meter_provider": otel.meter_provider,
            }
            for instrumentor in (OpenAIAgentsInstrumentor(), OpenAIInstrumentor()):
                instrumentor.instrument(**providers)
                undo.append(instrumentor.uninstrument)
            return
        from openinference.instrumentation import TraceConfig
        from openinference.instrumentation.openai_agents import (
            OpenAIAgentsInstrumentor as OpenInferenceAgents,
        )

        hidden = kind == "openinference-hidden"
        trace_config = TraceConfig(hide_inputs=hidden, hide_outputs=hidden)
        oi = OpenInferenceAgents()
        oi.instrument(tracer_provider=otel.tracer_provider, config=trace_config)
        undo.append(oi.uninstrument)

    yield apply
    for step in reversed(undo):
        step()
    set_trace_processors([])


def run(
    otel: Otel,
    answer: dict[str, Any],
    *,
    sensitive: bool = True,
    hooks: str = "guard",
    tool: Any = warehouse_query_tool,
    guard_config: GuardConfig | None = None,
    sent: list[dict[str, Any]] | None = None,
) -> tuple[Any, BaseException | None]:
    """The app: guard installed, guard(Agent(...)) run once against the fake server (hooks
    "none": the plain agent, no adapter). ``sent`` collects the request bodies the model got."""
    otel.install(guard_config or config())
    result: Any = None
    raised: BaseException | None = None

    async def main() -> None:
        nonlocal result, raised
        script = [tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(answer)]
        with FakeOpenAI(script) as api:
            client = openai.AsyncOpenAI(base_url=api.base_url, api_key="test", max_retries=0)
            plain = Agent(
                name=AGENT,
                model=OpenAIChatCompletionsModel("gpt-fake-1", client),
                tools=[tool],
                output_type=Answer,
            )
            run_hooks = None
            if hooks == "none":
                agent = plain
            elif hooks == "guard":
                agent = guard(plain)
            elif hooks == "long-form":  # what guard() does
                agent = plain.clone(output_guardrails=[output_guardrail()], hooks=FactHooks())
            else:  # run hooks, for an agent that keeps hooks of its own
                agent = plain.clone(output_guardrails=[output_guardrail()])
                run_hooks = RunFactHooks()
            run_config = agents.RunConfig(trace_include_sensitive_data=sensitive)
            try:
                result = await Runner.run(
                    agent, "Which campaign won?", run_config=run_config, hooks=run_hooks
                )
            except Exception as exc:
                raised = exc
            if sent is not None:
                sent.extend(api.requests)

    asyncio.run(main())
    return result, raised


ROWS = ["genai", "openinference"]


def _guarded_span(otel: Otel, kind: str) -> Any:
    """Where the guardrail writes: the span current in the guardrail function."""
    name = f"invoke_agent {AGENT}" if kind == "genai" else "groundplane"
    (span,) = otel.spans(name)
    return span


def _tool_span(otel: Otel, kind: str) -> Any:
    (span,) = otel.spans("execute_tool warehouse_query" if kind == "genai" else "warehouse_query")
    return span


@pytest.mark.parametrize("kind", ROWS)
@pytest.mark.parametrize("hooks", ["guard", "long-form", "run-hooks"])
def test_wrong_winner_trips_the_sdk_guardrail(
    otel: Otel, instrument: Instrument, kind: str, hooks: str
) -> None:
    """Runner.run raises OutputGuardrailTripwireTriggered; its output info is the report; the
    event (linking the tool span) is on the exported span; one blocked output, one fact."""
    instrument(kind)
    _, raised = run(otel, WRONG, hooks=hooks)
    assert isinstance(raised, agents.OutputGuardrailTripwireTriggered)
    info = raised.guardrail_result.output.output_info
    assert (info["boundary"], info["outcome"], info["errors"]) == (BOUNDARY, "blocked", [])
    (violation,) = info["violations"]
    assert (violation["field"], violation["claimed"], violation["supported"]) == (
        "winner",
        WRONG["winner"],
        RIGHT["winner"],
    )
    span, tool_span = _guarded_span(otel, kind), _tool_span(otel, kind)
    assert (span.attributes or {})["groundplane.outcome"] == "blocked"
    assert guardrail_events(span) == [
        guardrail_event(tool_span.context.span_id, tool_span.context.trace_id)
    ]
    assert outputs(otel) == [("blocked", 1)]
    assert facts_recorded(otel) == [("openai_agents", "recorded", 1)]


@pytest.mark.parametrize("kind", ROWS)
def test_right_winner_passes(otel: Otel, instrument: Instrument, kind: str) -> None:
    """The computed winner is the final output; one passed output, no event."""
    instrument(kind)
    result, raised = run(otel, RIGHT)
    assert raised is None
    assert result.final_output == Answer(**RIGHT)
    span = _guarded_span(otel, kind)
    assert (span.attributes or {})["groundplane.outcome"] == "passed"
    assert guardrail_events(span) == []
    assert outputs(otel) == [("passed", 1)]


@pytest.mark.parametrize("kind", ["genai", "openinference-hidden"])
def test_content_off_leaks_nothing(
    otel: Otel, instrument: Instrument, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Content capture off everywhere (genai's default; OpenInference hide_inputs/outputs, the
    SDK's trace_include_sensitive_data=False): no campaign name in spans, events, metrics, log
    records or Python logs, though the wrong winner was blocked."""
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="groundplane_otel")
    instrument(kind)
    _, raised = run(otel, WRONG, sensitive=False)
    assert isinstance(raised, agents.OutputGuardrailTripwireTriggered)
    assert outputs(otel) == [("blocked", 1)]
    assert assert_no_content(otel, caplog.records) > 30


def test_content_on_is_the_positive_control(
    otel: Otel, instrument: Instrument, caplog: pytest.LogCaptureFixture
) -> None:
    """OpenInference captures content by default: the canaries show up, the search is live."""
    instrument("openinference")
    run(otel, RIGHT)
    assert contains_content(otel, caplog.records)


def test_guard_refuses_an_agent_with_hooks(otel: Otel) -> None:
    """guard() on an agent that has hooks of its own is a ValueError saying what to do."""
    otel.install(config())
    agent = Agent(name=AGENT, hooks=agents.AgentHooks())
    with pytest.raises(
        ValueError, match=r"already has hooks \(AgentHooksBase\); pass RunFactHooks\(\) to Runner"
    ):
        guard(agent)


def test_unknown_agent_name_fails_at_guard_time(otel: Otel) -> None:
    """An agent no boundary names is refused when guarded, not at request time."""
    otel.install(config())
    with pytest.raises(ValueError, match=r"no boundary matches agent 'other'"):
        guard(Agent(name="other"))


# -- util-genai's completion hook beside the adapter (content off: the docs' one variable) --

HOOK_ENV = "OTEL_INSTRUMENTATION_GENAI_COMPLETION_HOOK"
HOOK_LOGGER = "groundplane_otel.otel.completion_hook"


@pytest.fixture
def hooked(instrument: Instrument, monkeypatch: pytest.MonkeyPatch) -> Callable[[], None]:
    """genai-openai-agents + genai-openai, content capture off, the groundplane hook selected
    (genai-openai loads it when it instruments)."""

    def apply() -> None:
        monkeypatch.setenv(HOOK_ENV, "groundplane")
        instrument("genai")

    return apply


def tool_message(sent: list[dict[str, Any]]) -> Any:
    """The content of the one tool message the model was given."""
    (message,) = [m for body in sent for m in body["messages"] if m["role"] == "tool"]
    return message["content"]


def test_with_the_hook_a_right_answer_passes(otel: Otel, hooked: Callable[[], None]) -> None:
    """The SDK sends the dict tool result as its Python repr; the hook reads that repr as the
    very fact the adapter recorded (a duplicate, not counted): the right winner passes once,
    no fact problem, no internal error."""
    hooked()
    sent: list[dict[str, Any]] = []
    result, raised = run(otel, RIGHT, sent=sent)
    assert raised is None
    assert result.final_output == Answer(**RIGHT)
    assert tool_message(sent) == str(CTR)  # a Python literal, not JSON
    assert (_guarded_span(otel, "genai").attributes or {})["groundplane.outcome"] == "passed"
    assert outputs(otel) == [("passed", 1)]
    assert facts_recorded(otel) == [("openai_agents", "recorded", 1)]
    assert otel.guards[0].processor.internal_errors == 0


def test_with_the_hook_a_wrong_answer_trips_the_guardrail(
    otel: Otel, hooked: Callable[[], None]
) -> None:
    """The same setup, the runner-up named: OutputGuardrailTripwireTriggered with the
    wrong_winner violation (no fact error), one blocked output."""
    hooked()
    _, raised = run(otel, WRONG)
    assert isinstance(raised, agents.OutputGuardrailTripwireTriggered)
    info = raised.guardrail_result.output.output_info
    assert (info["outcome"], info["errors"]) == ("blocked", [])
    assert [v["field"] for v in info["violations"]] == ["winner"]
    assert outputs(otel) == [("blocked", 1)]
    assert facts_recorded(otel) == [("openai_agents", "recorded", 1)]


def test_the_hook_alone_reads_the_repr_as_the_fact(otel: Otel, hooked: Callable[[], None]) -> None:
    """No adapter at all: the fact comes only from the repr the hook read (source genai, with
    the final chat span as provenance), and the final chat span checks the answer — the right
    winner passes there, once."""
    hooked()
    _, raised = run(otel, RIGHT, hooks="none")
    assert raised is None
    _, final = otel.spans("chat gpt-fake-1")
    assert (final.attributes or {})["groundplane.outcome"] == "passed"
    assert outputs(otel) == [("passed", 1)]
    assert facts_recorded(otel) == [("genai", "recorded", 1)]


def _many(window: str) -> dict[str, float]:
    """The ranking plus 4000 low-CTR campaigns: a repr past the literal reader's length cap."""
    return {**warehouse_query(window), **{f"c{i}": 0.0001 for i in range(4000)}}


def _deep(window: str) -> dict[str, Any]:
    """The ranking under "scores", beside a diagnostic nested 80 levels (the adapter keeps it;
    the text's brackets are past the depth limit of 64 before any parser runs)."""
    deep: Any = 0
    for _ in range(80):
        deep = [deep]
    return {"scores": warehouse_query(window), "trace": deep}


class Scores(RootModel[dict[str, float]]):
    """A pydantic result: the adapter dumps it, the SDK sends ``str()``: ``root={...}``."""


def _model(window: str) -> Scores:
    return Scores(warehouse_query(window))


HOSTILE = {
    "huge": (_many, "", "rejected", r"Python literal: \d+ characters exceed 65536"),
    "deep": (_deep, "scores", "rejected", "nested deeper than 64 levels"),  # JSON's reader
    "not a literal": (_model, "", "unparseable", r"Python literal: invalid syntax \(SyntaxError\)"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_repr_the_hook_cannot_read_never_replaces_the_good_fact(
    otel: Otel, hooked: Callable[[], None], caplog: pytest.LogCaptureFixture, case: str
) -> None:
    """A repr that is too long, too deep or no literal at all is refused by the hook with a
    bounded, content-free reason (logged at DEBUG, counted as that fact outcome), and the fact
    the adapter recorded from the same tool call stays: the right winner passes."""
    make, path, status, reason = HOSTILE[case]
    caplog.set_level(logging.DEBUG, logger=HOOK_LOGGER)
    facts = (FactSpec("campaign_ctr", "warehouse_query", kind="ranking", path=path),)
    hooked()
    _, raised = run(
        otel,
        RIGHT,
        tool=function_tool(make, name_override="warehouse_query"),
        guard_config=dataclasses.replace(config(), facts=facts),
    )
    assert raised is None
    assert outputs(otel) == [("passed", 1)]
    assert facts_recorded(otel) == [("genai", status, 1), ("openai_agents", "recorded", 1)]
    (logged,) = [r.getMessage() for r in caplog.records if r.name == HOOK_LOGGER]
    prefix = "groundplane: a 'warehouse_query' result given to the model is not a fact: "
    assert re.fullmatch(re.escape(prefix) + reason, logged)
    assert assert_no_content(otel, caplog.records) > 30
