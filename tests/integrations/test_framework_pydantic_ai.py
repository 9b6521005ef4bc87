"""The pydantic-ai capability (``adapters.pydantic_ai.Groundplane``) on a real pydantic-ai agent
driven by a scripted ``FunctionModel``, traced by pydantic-ai's native instrumentation or by
OpenInference's pydantic-ai span processor (before or after the guard): the wrong winner raises
out of ``agent.run``, or becomes a reask; counted once; content capture off leaks nothing."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

import pytest
from framework_kit import (
    AGENT,
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
from openinference.instrumentation.pydantic_ai import OpenInferenceSpanProcessor
from opentelemetry.trace import StatusCode
from pydantic import BaseModel
from pydantic_ai import Agent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.models.instrumented import InstrumentationSettings

from groundplane_otel.adapters.pydantic_ai import Groundplane
from groundplane_otel.errors import UnsupportedClaim


class Answer(BaseModel):
    winner: str
    ctr: float


Tracing = str  # "native" | "openinference-before" | "openinference-after"


def scripted(answers: list[dict[str, Any]], seen: list[list[ModelMessage]], *, text: bool) -> Any:
    """A model that first asks for warehouse_query, then gives the scripted answers in turn
    (through the output tool, or as JSON text)."""
    queue = list(answers)

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        seen.append(list(messages))
        if len(seen) == 1:
            call = ToolCallPart("warehouse_query", {"window": "7d"}, tool_call_id="call_1")
            return ModelResponse(parts=[call])
        answer = queue.pop(0)
        if text:
            return ModelResponse(parts=[TextPart(json.dumps(answer))])
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name, answer)])

    return FunctionModel(model)


def build(
    otel: Otel,
    answers: list[dict[str, Any]],
    *,
    tracing: Tracing = "native",
    reask: bool = False,
    text: bool = False,
    include_content: bool = False,
    seen: list[list[ModelMessage]] | None = None,
    retries: int | None = None,
) -> Agent[None, Any]:
    """The app: guard installed (OpenInference's processor registered before or after it),
    an agent named campaign-analyst with the native instrumentation and the capability."""
    if tracing == "openinference-before":
        otel.tracer_provider.add_span_processor(OpenInferenceSpanProcessor())
    otel.install(config())
    if tracing == "openinference-after":
        otel.tracer_provider.add_span_processor(OpenInferenceSpanProcessor())
    settings = InstrumentationSettings(
        tracer_provider=otel.tracer_provider,
        meter_provider=otel.meter_provider,
        include_content=include_content,
    )
    agent: Agent[None, Any] = Agent(
        scripted(answers, seen if seen is not None else [], text=text),
        output_type=str if text else Answer,
        name=AGENT,
        capabilities=[Instrumentation(settings), Groundplane(reask=reask)],
        retries=retries,
    )
    agent.tool_plain(warehouse_query)
    return agent


TRACINGS = ["native", "openinference-before", "openinference-after"]


@pytest.mark.parametrize("tracing", TRACINGS)
def test_wrong_winner_raises_out_of_run(otel: Otel, tracing: Tracing) -> None:
    """The guard's UnsupportedClaim leaves agent.run_sync; the invoke_agent span is ERROR with
    the event linking the execute_tool span; one blocked output, one fact (source pydantic_ai)."""
    agent = build(otel, [WRONG], tracing=tracing)
    with pytest.raises(UnsupportedClaim) as caught:
        agent.run_sync("Which campaign won?")
    assert (caught.value.field, caught.value.claimed) == ("winner", WRONG["winner"])
    (run,) = [span for span in otel.spans() if span.name == f"invoke_agent {AGENT}"]
    (tool_span,) = [span for span in otel.spans() if span.name == "execute_tool warehouse_query"]
    assert run.status.status_code is StatusCode.ERROR
    assert (run.attributes or {})["groundplane.outcome"] == "blocked"
    assert guardrail_events(run) == [
        guardrail_event(tool_span.context.span_id, tool_span.context.trace_id)
    ]
    assert outputs(otel) == [("blocked", 1)]
    assert facts_recorded(otel) == [("pydantic_ai", "recorded", 1)]


@pytest.mark.parametrize("tracing", TRACINGS)
def test_right_winner_passes(otel: Otel, tracing: Tracing) -> None:
    """The computed winner is returned; one passed output, no guardrail event."""
    agent = build(otel, [RIGHT], tracing=tracing)
    assert agent.run_sync("Which campaign won?").output == Answer(**RIGHT)
    (run,) = [span for span in otel.spans() if span.name == f"invoke_agent {AGENT}"]
    assert (run.attributes or {})["groundplane.outcome"] == "passed"
    assert guardrail_events(run) == []
    assert outputs(otel) == [("passed", 1)]


def test_reask_sends_the_violation_back_and_the_corrected_answer_passes(otel: Otel) -> None:
    """reask=True: the wrong answer becomes ModelRetry (the model sees the claim and the
    supported winner), the corrected answer is returned; each answer counted once."""
    seen: list[list[ModelMessage]] = []
    agent = build(otel, [WRONG, RIGHT], reask=True, seen=seen)
    assert agent.run_sync("Which campaign won?").output == Answer(**RIGHT)
    retried = [
        part
        for message in seen[-1]
        for part in getattr(message, "parts", ())
        if getattr(part, "outcome", None) == "retried"
    ]
    assert len(retried) == 1  # the output tool call's return, marked retried
    assert WRONG["winner"] in str(retried[0].content)
    assert RIGHT["winner"] in str(retried[0].content)
    assert outputs(otel) == [("blocked", 1), ("passed", 1)]


@pytest.mark.parametrize("tracing", TRACINGS)
def test_the_same_wrong_answer_twice_is_two_outcomes(otel: Otel, tracing: Tracing) -> None:
    """A reask answered with the same wrong answer again, then the right one: every answer the
    model gives is one outcome — two blocked, one passed."""
    agent = build(otel, [WRONG, WRONG, RIGHT], tracing=tracing, reask=True, retries=2)
    assert agent.run_sync("Which campaign won?").output == Answer(**RIGHT)
    assert outputs(otel) == [("blocked", 2), ("passed", 1)]


def test_text_output_is_checked_too(otel: Otel) -> None:
    """A plain-text agent (JSON in the answer text) is checked at after_output_process."""
    agent = build(otel, [WRONG], text=True)
    with pytest.raises(UnsupportedClaim):
        agent.run_sync("Which campaign won?")
    assert outputs(otel) == [("blocked", 1)]


def test_async_run_observe_mode_without_instrumentation(otel: Otel) -> None:
    """agent.run (async), observe mode, no pydantic-ai instrumentation: the run gets the
    guard's own invoke_agent span, the wrong answer is returned and counted flagged there."""
    otel.install(config(mode="observe"))
    agent: Agent[None, Any] = Agent(
        scripted([WRONG], [], text=False),
        output_type=Answer,
        name=AGENT,
        capabilities=[Groundplane()],
    )
    agent.tool_plain(warehouse_query)
    assert asyncio.run(agent.run("Which campaign won?")).output == Answer(**WRONG)
    assert outputs(otel) == [("flagged", 1)]
    (run,) = otel.spans(f"invoke_agent {AGENT}")
    assert (run.attributes or {})["groundplane.outcome"] == "flagged"
    assert facts_recorded(otel) == [("pydantic_ai", "recorded", 1)]


@pytest.mark.parametrize("tracing", TRACINGS)
def test_content_off_leaks_nothing(
    otel: Otel, tracing: Tracing, caplog: pytest.LogCaptureFixture
) -> None:
    """include_content=False and the guard's capture off: no campaign name (fact or claim) in
    any span, event, metric, log record or Python log — a reask, then the last try's violation
    raised as the guard's exception."""
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="groundplane_otel")
    agent = build(otel, [WRONG, WRONG], tracing=tracing, reask=True)
    with pytest.raises(UnsupportedClaim):
        agent.run_sync("Which campaign won?")
    assert outputs(otel) == [("blocked", 2)]  # the same wrong answer twice: two outcomes
    assert assert_no_content(otel, caplog.records) > 50


def test_content_on_is_the_positive_control(otel: Otel, caplog: pytest.LogCaptureFixture) -> None:
    """With pydantic-ai's content on, the canaries do show up: the leak search is live."""
    agent = build(otel, [RIGHT], include_content=True)
    agent.run_sync("Which campaign won?")
    assert contains_content(otel, caplog.records)


def test_unknown_agent_is_a_clear_error(otel: Otel) -> None:
    """An agent no boundary names (and no boundary=) fails its run, naming the agent."""
    otel.install(config())
    agent: Agent[None, Any] = Agent(
        scripted([RIGHT], [], text=False),
        output_type=Answer,
        name="someone-else",
        capabilities=[Groundplane()],
    )
    with pytest.raises(ValueError, match=r"no boundary matches agent 'someone-else'"):
        agent.run_sync("Which campaign won?")
