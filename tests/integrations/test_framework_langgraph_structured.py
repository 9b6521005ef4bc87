"""LangGraph's prebuilt ``create_react_agent(..., response_format=Answer)`` behind the guard: the
``structured_response`` that a second model call makes after ``post_model_hook`` is the run's
answer, checked by ``guard_structured_response`` when its node returns (sync, async, streamed),
counted once; the prose final message before it is neither counted nor refused; a graph that
makes one without the wrapper is refused at the hook's first call. Real compiled graphs against
the loopback fake OpenAI server through langchain-openai, traced by genai-langchain or
OpenInference."""

from __future__ import annotations

import asyncio
import logging
import warnings
from typing import Any, TypedDict

import pytest
import test_framework_langchain as langchain_matrix
from fake_openai import FakeOpenAI, Turn, answer_turn, tool_call_turn
from framework_kit import (
    AGENT,
    RIGHT,
    WRONG,
    assert_no_content,
    config,
    guardrail_event,
    guardrail_events,
    outputs,
)
from integration_harness import Otel
from langchain_openai import ChatOpenAI
from langgraph.prebuilt import ToolNode, create_react_agent
from opentelemetry.trace import StatusCode
from test_framework_langchain import Answer, Instrument, warehouse_query_tool

from groundplane_otel.adapters.langchain import (
    guard_structured_response,
    post_model_hook,
    tool_call_wrapper,
)
from groundplane_otel.errors import UnsupportedClaim

instrument = langchain_matrix.instrument  # the LangChain matrix's tracing fixture, shared

PROSE = "The campaign with the best click-through rate won this week."
QUESTION = {"messages": [{"role": "user", "content": "Which campaign won?"}]}
UNGUARDED = (
    r"^post_model_hook: this graph was built with create_react_agent\(response_format=\.\.\.\), "
    r"whose structured response is made by a second model call after this hook, so the hook "
    r"cannot check the answer the app receives; wrap the compiled graph: agent = "
    r"guard_structured_response\(create_react_agent\(\.\.\.\)\) "
    r"\(from groundplane_otel\.adapters\.langchain\)"
)


class AnswerDict(TypedDict):
    winner: str
    ctr: float


def react_agent(
    api: FakeOpenAI,
    *,
    hook: bool = True,
    response_format: Any = Answer,
    on_violation: str = "raise",
) -> Any:
    """create_react_agent with the ToolNode wrapper, post_model_hook (unless hook=False) and
    response_format, compiled and not yet guarded."""
    model = ChatOpenAI(model="gpt-fake-1", base_url=api.base_url, api_key="test", max_retries=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in LangGraph 1.x
        return create_react_agent(
            model,
            tools=ToolNode([warehouse_query_tool], wrap_tool_call=tool_call_wrapper()),
            post_model_hook=(
                post_model_hook(agent_name=AGENT, on_violation=on_violation)  # type: ignore[arg-type]
                if hook
                else None
            ),
            response_format=response_format,
            name=AGENT,
        )


def script(*structured: dict[str, Any]) -> list[Turn]:
    """A tool call, then per structured answer: the prose final message and the structured
    response's own model call (JSON under response_format)."""
    turns = [tool_call_turn("warehouse_query", {"window": "7d"})]
    for answer in structured:
        turns += [answer_turn(PROSE), answer_turn(answer)]
    return turns


def run(agent: Any, how: str) -> Any:
    """The app's call: invoke, ainvoke, stream or astream (updates); the final structured
    response (streamed: the last update's)."""
    if how == "invoke":
        return agent.invoke(QUESTION)["structured_response"]
    if how == "ainvoke":
        return asyncio.run(agent.ainvoke(QUESTION))["structured_response"]
    if how == "stream":
        updates = list(agent.stream(QUESTION, stream_mode="updates"))
    else:

        async def collect() -> list[Any]:
            return [update async for update in agent.astream(QUESTION, stream_mode="updates")]

        updates = asyncio.run(collect())
    return updates[-1]["generate_structured_response"]["structured_response"]


def guarded_span(otel: Otel, kind: str) -> Any:
    """The span the check wrote on: genai's invoke_agent span (current in the graph), or
    OpenInference's span of the generate_structured_response node."""
    name = f"invoke_agent {AGENT}" if kind == "genai" else "generate_structured_response"
    (span,) = [s for s in otel.spans(name) if "groundplane.outcome" in (s.attributes or {})]
    return span


CALLS = ["invoke", "ainvoke", "stream", "astream"]


@pytest.mark.parametrize("how", CALLS)
def test_right_structured_response_passes_once(
    otel: Otel, instrument: Instrument, how: str
) -> None:
    """A right structured response after a prose final message: returned, one passed outcome
    (the prose is neither counted nor refused as output_unreadable), no guardrail event."""
    otel.install(config())
    instrument("genai")
    with FakeOpenAI(script(RIGHT)) as api:
        answer = run(guard_structured_response(react_agent(api)), how)
        assert api.requests[-1]["response_format"]["json_schema"]["name"] == "Answer"
    assert answer == Answer(**RIGHT)
    assert outputs(otel) == [("passed", 1)]
    assert guardrail_events(guarded_span(otel, "genai")) == []


@pytest.mark.parametrize("how", CALLS)
def test_wrong_structured_response_raises_out_of_the_call(
    otel: Otel, instrument: Instrument, how: str
) -> None:
    """A wrong winner in the structured response: the app's call gets the exact
    UnsupportedClaim, one blocked outcome, the guardrail event on the exported span."""
    otel.install(config())
    instrument("genai")
    with FakeOpenAI(script(WRONG)) as api, pytest.raises(UnsupportedClaim) as caught:
        run(guard_structured_response(react_agent(api)), how)
    assert (caught.value.field, caught.value.claimed) == ("winner", WRONG["winner"])
    assert str(caught.value) == (
        "unsupported claim in field 'winner' (boundary 'campaign_answer', check superlative, "
        "reason wrong_winner)"
    )
    assert outputs(otel) == [("blocked", 1)]
    span = guarded_span(otel, "genai")
    assert span.status.status_code is StatusCode.ERROR
    assert guardrail_events(span) == [guardrail_event(span.context.span_id, span.context.trace_id)]


def test_wrong_structured_response_never_reaches_the_stream(
    otel: Otel, instrument: Instrument
) -> None:
    """Streamed, the refused node writes nothing: every update before the exception is a
    step before the structured response."""
    otel.install(config())
    instrument("genai")
    seen: list[str] = []

    def consume(agent: Any) -> None:
        for update in agent.stream(QUESTION, stream_mode="updates"):
            seen.extend(update)

    with FakeOpenAI(script(WRONG)) as api, pytest.raises(UnsupportedClaim):
        consume(guard_structured_response(react_agent(api)))
    assert seen == ["agent", "post_model_hook", "tools", "agent", "post_model_hook"]


# langchain-openai's streamed structured output warns while serialising its parsed model
@pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")
@pytest.mark.parametrize(("answer", "refused"), [(RIGHT, False), (WRONG, True)])
def test_structured_tokens_are_not_streamed(
    otel: Otel, instrument: Instrument, answer: dict[str, Any], refused: bool
) -> None:
    """stream_mode=["updates", "messages"]: the structured call's tokens never reach the app
    (the prose's do); the structured response arrives only as the checked node's update."""
    otel.install(config())
    instrument("genai")
    chunks: list[tuple[str, Any]] = []

    def consume(agent: Any) -> None:
        chunks.extend(agent.stream(QUESTION, stream_mode=["updates", "messages"]))

    with FakeOpenAI(script(answer)) as api:
        agent = guard_structured_response(react_agent(api))
        if refused:
            with pytest.raises(UnsupportedClaim):
                consume(agent)
        else:
            consume(agent)
    streamed = [(c[1]["langgraph_node"], c[0].content) for m, c in chunks if m == "messages"]
    assert {node for node, _ in streamed} == {"agent", "tools"}
    assert "".join(text for node, text in streamed if node == "agent") == PROSE
    structured = [
        c["generate_structured_response"]
        for m, c in chunks
        if m == "updates" and "generate_structured_response" in c
    ]
    assert structured == ([] if refused else [{"structured_response": Answer(**RIGHT)}])
    assert outputs(otel) == [("blocked" if refused else "passed", 1)]


def test_observe_mode_flags_and_returns_the_structured_response(
    otel: Otel, instrument: Instrument
) -> None:
    """Observe mode: the wrong structured response reaches the app, counted flagged (never
    blocked), no exception."""
    otel.install(config(mode="observe"))
    instrument("genai")
    with FakeOpenAI(script(WRONG)) as api:
        answer = run(guard_structured_response(react_agent(api)), "invoke")
    assert answer == Answer(**WRONG)
    for attributes, _ in otel.metrics()["groundplane.outputs"]:
        assert attributes["groundplane.mode"] == "observe"
    assert outputs(otel) == [("flagged", 1)]


@pytest.mark.parametrize(("kind", "how"), [("openinference", "invoke"), ("genai", "ainvoke")])
def test_without_post_model_hook_the_wrapper_alone_guards(
    otel: Otel, instrument: Instrument, kind: str, how: str
) -> None:
    """No post_model_hook: the wrapper still checks the structured response (OpenInference:
    on the generate_structured_response node's span), one blocked outcome."""
    otel.install(config())
    instrument(kind)
    with FakeOpenAI(script(WRONG)) as api, pytest.raises(UnsupportedClaim) as caught:
        run(guard_structured_response(react_agent(api, hook=False)), how)
    assert caught.value.claimed == WRONG["winner"]
    assert outputs(otel) == [("blocked", 1)]
    assert len(guardrail_events(guarded_span(otel, kind))) == 1


def test_typed_dict_structured_response_is_checked(otel: Otel, instrument: Instrument) -> None:
    """response_format=TypedDict: the structured response is a dict, checked the same way."""
    otel.install(config())
    instrument("genai")
    with FakeOpenAI(script(WRONG)) as api, pytest.raises(UnsupportedClaim) as caught:
        run(guard_structured_response(react_agent(api, response_format=AnswerDict)), "invoke")
    assert caught.value.claimed == WRONG["winner"]
    assert outputs(otel) == [("blocked", 1)]


def test_reask_goes_back_to_the_model_then_the_corrected_answer_passes(
    otel: Otel, instrument: Instrument
) -> None:
    """on_violation="reask": the wrong structured response never reaches the state; the model
    gets the violation as a human message and the corrected structured response ends the run;
    one outcome per answer."""
    otel.install(config())
    instrument("genai")
    with FakeOpenAI(script(WRONG, RIGHT)) as api:
        agent = guard_structured_response(react_agent(api), on_violation="reask")
        answer = run(agent, "invoke")
        reask = api.requests[3]["messages"][-1]
    assert answer == Answer(**RIGHT)
    assert reask["role"] == "user"
    assert WRONG["winner"] in reask["content"]
    assert RIGHT["winner"] in reask["content"]
    assert len(api.requests) == 5
    assert outputs(otel) == [("blocked", 1), ("passed", 1)]


@pytest.mark.parametrize("kind", ["genai", "openinference-hidden"])
def test_content_off_leaks_nothing(
    otel: Otel, instrument: Instrument, kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Content capture off (genai's default, OpenInference hide_inputs/outputs): a refused
    structured response puts no campaign name in spans, events, metrics or logs."""
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="groundplane_otel")
    otel.install(config())
    instrument(kind)
    with FakeOpenAI(script(WRONG)) as api, pytest.raises(UnsupportedClaim):
        run(guard_structured_response(react_agent(api)), "invoke")
    assert outputs(otel) == [("blocked", 1)]
    assert assert_no_content(otel, caplog.records) > 30


def test_hook_without_the_wrapper_refuses_the_graph(otel: Otel, instrument: Instrument) -> None:
    """post_model_hook in a response_format graph without guard_structured_response: a
    ValueError naming the fix at the hook's first call, before any tool runs; the run that
    failed is skipped/span_error, never passed."""
    otel.install(config())
    instrument("genai")
    with FakeOpenAI(script(RIGHT)) as api, pytest.raises(ValueError, match=UNGUARDED):
        react_agent(api).invoke(QUESTION)
    assert len(api.requests) == 1
    ((attributes, count),) = otel.metrics()["groundplane.outputs"]
    assert (attributes["groundplane.outcome"], attributes["groundplane.skip_reason"]) == (
        "skipped",
        "span_error",
    )
    assert count == 1


def test_wrapper_refuses_a_graph_without_a_structured_response(otel: Otel) -> None:
    """Without response_format there is nothing to wrap: a ValueError naming post_model_hook."""
    otel.install(config())
    with FakeOpenAI([]) as api:
        agent = react_agent(api, response_format=None)
    with pytest.raises(ValueError) as caught:
        guard_structured_response(agent)
    assert str(caught.value) == (
        "guard_structured_response needs a compiled create_react_agent graph with a "
        "'generate_structured_response' node (built with response_format=...), got "
        "CompiledStateGraph; without response_format, post_model_hook(...) alone checks the "
        "answer"
    )


def test_wrapper_refuses_to_guard_twice(otel: Otel) -> None:
    """Guarding a graph twice would check its answer twice: a ValueError."""
    otel.install(config())
    with FakeOpenAI([]) as api:
        agent = guard_structured_response(react_agent(api))
    with pytest.raises(ValueError, match=r"^guard_structured_response: this graph is already"):
        guard_structured_response(agent)


def test_wrapper_needs_a_boundary_for_an_unnamed_graph(otel: Otel) -> None:
    """A graph whose name matches no boundary: a ValueError at wrap time naming boundary=."""
    otel.install(config())
    with FakeOpenAI([]) as api, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = ChatOpenAI(model="gpt-fake-1", base_url=api.base_url, api_key="test")
        agent = create_react_agent(model, tools=[warehouse_query_tool], response_format=Answer)
    with pytest.raises(ValueError, match=r"^no boundary matches agent 'LangGraph'"):
        guard_structured_response(agent)
