"""The LangChain adapter on real agents talking to the loopback fake OpenAI server through
langchain-openai: LangChain v1 ``create_agent`` with ``GroundplaneMiddleware``, LangGraph's
prebuilt ``create_react_agent`` with ``post_model_hook`` and a ``ToolNode`` wrapper; traced by
opentelemetry-instrumentation-genai-langchain or OpenInference's LangChain instrumentation. The
wrong winner raises out of ``invoke`` (no callback swallows it) or goes back to the model;
counted once; content capture off leaks nothing."""

from __future__ import annotations

import json
import logging
import warnings
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fake_openai import FakeOpenAI, Turn, answer_turn, tool_call_turn
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
from langchain.agents import create_agent
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from opentelemetry.trace import StatusCode
from pydantic import BaseModel

from groundplane_otel.adapters.langchain import (
    GroundplaneMiddleware,
    post_model_hook,
    tool_call_wrapper,
)
from groundplane_otel.errors import UnsupportedClaim

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


@tool("warehouse_query")
def warehouse_query_tool(window: str) -> dict[str, float]:
    """CTR per campaign."""
    return warehouse_query(window)


class Answer(BaseModel):
    winner: str
    ctr: float


Instrument = Callable[[str], None]


@pytest.fixture
def instrument(otel: Otel, monkeypatch: pytest.MonkeyPatch) -> Iterator[Instrument]:
    """instrument("genai" | "openinference" | "openinference-hidden") on the test's providers."""
    undo: list[Callable[[], None]] = []
    monkeypatch.delenv(CONTENT_ENV, raising=False)

    def apply(kind: str) -> None:
        if kind == "genai":
            from opentelemetry.instrumentation.genai.langchain import LangChainInstrumentor

            instrumentor: Any = LangChainInstrumentor()
            instrumentor.instrument(
                tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider
            )
        else:
            from openinference.instrumentation import TraceConfig
            from openinference.instrumentation.langchain import (
                LangChainInstrumentor as OpenInferenceLangChain,
            )

            hidden = kind == "openinference-hidden"
            instrumentor = OpenInferenceLangChain()
            instrumentor.instrument(
                tracer_provider=otel.tracer_provider,
                config=TraceConfig(hide_inputs=hidden, hide_outputs=hidden),
            )
        undo.append(instrumentor.uninstrument)

    yield apply
    for step in reversed(undo):
        step()


def build(
    api: FakeOpenAI,
    flavor: str,
    on_violation: str = "raise",
    response_format: Any = None,
) -> Any:
    """flavor "v1": create_agent + GroundplaneMiddleware; "langgraph": create_react_agent +
    post_model_hook + ToolNode(wrap_tool_call=tool_call_wrapper())."""
    model = ChatOpenAI(model="gpt-fake-1", base_url=api.base_url, api_key="test", max_retries=0)
    if flavor == "v1":
        return create_agent(
            model,
            tools=[warehouse_query_tool],
            middleware=[GroundplaneMiddleware(on_violation=on_violation)],  # type: ignore[arg-type]
            response_format=response_format,
            name=AGENT,
        )
    from langgraph.prebuilt import ToolNode, create_react_agent

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in LangGraph 1.x
        return create_react_agent(
            model,
            tools=ToolNode([warehouse_query_tool], wrap_tool_call=tool_call_wrapper()),
            post_model_hook=post_model_hook(agent_name=AGENT, on_violation=on_violation),  # type: ignore[arg-type]
            name=AGENT,
        )


def script(*answers: dict[str, Any]) -> list[Turn]:
    return [tool_call_turn("warehouse_query", {"window": "7d"}), *map(answer_turn, answers)]


def ask(agent: Any) -> dict[str, Any]:
    return dict(agent.invoke({"messages": [{"role": "user", "content": "Which campaign won?"}]}))


def guarded(otel: Otel, kind: str, flavor: str) -> list[Any]:
    """The spans the adapter writes on: genai's invoke_agent span (current in the graph), or
    OpenInference's span of the node running the check."""
    if kind == "genai":
        return otel.spans(f"invoke_agent {AGENT}")
    node = "GroundplaneMiddleware.after_model" if flavor == "v1" else "post_model_hook"
    return [span for span in otel.spans(node) if "groundplane.outcome" in (span.attributes or {})]


ROWS = [
    ("genai", "v1"),
    ("genai", "langgraph"),
    ("openinference", "v1"),
    ("openinference", "langgraph"),
]


@pytest.mark.parametrize(("kind", "flavor"), ROWS)
def test_wrong_winner_raises_out_of_invoke(
    otel: Otel, instrument: Instrument, kind: str, flavor: str
) -> None:
    """UnsupportedClaim leaves agent.invoke; the guardrail event is on the exported span with
    the fact's provenance; one blocked output; the fact recorded once."""
    otel.install(config())
    instrument(kind)
    with FakeOpenAI(script(WRONG)) as api, pytest.raises(UnsupportedClaim) as caught:
        ask(build(api, flavor))
    assert (caught.value.field, caught.value.claimed) == ("winner", WRONG["winner"])
    (span,) = guarded(otel, kind, flavor)
    assert span.status.status_code is StatusCode.ERROR
    (event,) = guardrail_events(span)
    if kind == "openinference":  # content on: the TOOL span's result was captured first
        (tool_span,) = otel.spans("warehouse_query")
        source = "openinference"
    else:  # the tool span has ended when wrap_tool_call sees the result: the agent span
        tool_span, source = span, "langchain"
    assert event == guardrail_event(tool_span.context.span_id, tool_span.context.trace_id)
    assert outputs(otel) == [("blocked", 1)]
    assert facts_recorded(otel) == [(source, "recorded", 1)]


@pytest.mark.parametrize(("kind", "flavor"), ROWS)
def test_right_winner_passes(otel: Otel, instrument: Instrument, kind: str, flavor: str) -> None:
    """The computed winner is the final message; one passed output, no event."""
    otel.install(config())
    instrument(kind)
    with FakeOpenAI(script(RIGHT)) as api:
        final = ask(build(api, flavor))
    assert json.loads(final["messages"][-1].content) == RIGHT
    (span,) = guarded(otel, kind, flavor)
    assert guardrail_events(span) == []
    assert outputs(otel) == [("passed", 1)]


@pytest.mark.parametrize(("kind", "flavor"), ROWS)
def test_reask_routes_back_to_the_model(
    otel: Otel, instrument: Instrument, kind: str, flavor: str
) -> None:
    """on_violation="reask": the violation goes back to the model as a human message naming
    the claim and the supported winner; the corrected answer ends the run; each counted once."""
    otel.install(config())
    instrument(kind)
    with FakeOpenAI(script(WRONG, RIGHT)) as api:
        final = ask(build(api, flavor, on_violation="reask"))
        reask = api.requests[-1]["messages"][-1]
    assert json.loads(final["messages"][-1].content) == RIGHT
    assert reask["role"] == "user"
    assert WRONG["winner"] in reask["content"]
    assert RIGHT["winner"] in reask["content"]
    assert outputs(otel) == [("blocked", 1), ("passed", 1)]


@pytest.mark.parametrize(("kind", "flavor"), ROWS)
def test_the_same_wrong_answer_twice_is_two_outcomes(
    otel: Otel, instrument: Instrument, kind: str, flavor: str
) -> None:
    """Wrong, the same wrong again, right: every answer the model gives is one outcome, so the
    repeated wrong answer is blocked (and counted) twice."""
    otel.install(config())
    instrument(kind)
    with FakeOpenAI(script(WRONG, WRONG, RIGHT)) as api:
        final = ask(build(api, flavor, on_violation="reask"))
    assert json.loads(final["messages"][-1].content) == RIGHT
    assert outputs(otel) == [("blocked", 2), ("passed", 1)]


def test_structured_response_is_what_is_checked(otel: Otel, instrument: Instrument) -> None:
    """create_agent(response_format=Answer): the structured response is checked."""
    otel.install(config())
    instrument("genai")
    with FakeOpenAI(script(WRONG)) as api, pytest.raises(UnsupportedClaim):
        ask(build(api, "v1", response_format=Answer))
    assert outputs(otel) == [("blocked", 1)]


@pytest.mark.parametrize(
    ("kind", "flavor", "on_violation"),
    [
        ("genai", "v1", "reask"),
        ("genai", "langgraph", "reask"),
        ("genai", "v1", "raise"),
        ("genai", "langgraph", "raise"),
        ("openinference-hidden", "v1", "raise"),
        ("openinference-hidden", "langgraph", "reask"),
        ("openinference-hidden", "v1", "reask"),
        ("openinference-hidden", "langgraph", "raise"),
    ],
)
def test_content_off_leaks_nothing(
    otel: Otel,
    instrument: Instrument,
    kind: str,
    flavor: str,
    on_violation: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Content capture off (genai's default, OpenInference hide_inputs/outputs): no campaign
    name in spans, events, metrics, log records or Python logs, reasked or raised."""
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="groundplane_otel")
    otel.install(config())
    instrument(kind)
    answers = (WRONG, RIGHT) if on_violation == "reask" else (WRONG,)
    with FakeOpenAI(script(*answers)) as api:
        try:
            ask(build(api, flavor, on_violation=on_violation))
        except UnsupportedClaim:
            assert on_violation == "raise"
    assert outputs(otel)[0] == ("blocked", 1)
    assert assert_no_content(otel, caplog.records) > 30


def test_content_on_is_the_positive_control(
    otel: Otel, instrument: Instrument, caplog: pytest.LogCaptureFixture
) -> None:
    """OpenInference captures content by default: the canaries show up, the search is live."""
    otel.install(config())
    instrument("openinference")
    with FakeOpenAI(script(RIGHT)) as api:
        ask(build(api, "v1"))
    assert contains_content(otel, caplog.records)


def test_post_model_hook_needs_a_boundary_or_agent_name() -> None:
    """A prebuilt graph has no hook before its first model call: post_model_hook() refuses to
    be built without knowing its boundary."""
    with pytest.raises(ValueError, match=r"post_model_hook needs boundary= or agent_name="):
        post_model_hook()


def test_on_violation_is_validated() -> None:
    """A misspelt on_violation is a ValueError naming the allowed values."""
    with pytest.raises(ValueError, match=r"on_violation must be 'raise' or 'reask', got 'retry'"):
        GroundplaneMiddleware(on_violation="retry")  # type: ignore[arg-type]
