"""LangChain and LangGraph streams gated through a wrapped chat model
(``adapters.langchain_stream.guarded_chat_model``): the real langchain-openai model against the
loopback fake server streaming real SSE, genai-langchain instrumenting. ``.stream()``,
``.astream()`` and LangGraph's ``stream_mode="messages"`` hand the app the first sentence, never
the wrong second one, then the refusal; each run counted once (the post_model_hook's check of a
right answer takes the stream's check)."""

from __future__ import annotations

import asyncio
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from fake_openai import FakeOpenAI, Turn, tool_call_turn
from integration_harness import Otel
from langchain_core.tools import tool as langchain_tool
from langchain_openai import ChatOpenAI
from stream_policy import AGENT_NAME, revenue_config

from groundplane_otel.adapters.langchain import post_model_hook, tool_call_wrapper
from groundplane_otel.adapters.langchain_stream import guarded_chat_model
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.otel import tool

AGENT = AGENT_NAME
AGENT_SPAN = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": AGENT}
ROWS = [{"id": "A", "total": 10000, "rate": 3.9}, {"id": "B", "total": 250, "rate": 1.5}]
FIRST = "Invoice A totals 10,000 dollars."
RIGHT = FIRST + " Its rate was 3.9% last month. Invoice B totals 250 dollars."
WRONG = FIRST + " Its rate was 4.7% last month. Invoice B totals 250 dollars."


def words(text: str) -> tuple[str, ...]:
    """Each word with the space before it: no chunk straddles a sentence end."""
    parts = text.split(" ")
    return (parts[0], *(" " + part for part in parts[1:]))


@pytest.fixture
def otel_langchain(otel: Otel) -> Iterator[Otel]:
    """The guard (a prose boundary for the revenue-analyst) and genai-langchain."""
    from opentelemetry.instrumentation.genai.langchain import LangChainInstrumentor

    otel.install(revenue_config())
    instrumentor = LangChainInstrumentor()
    instrumentor.instrument(
        tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider
    )
    yield otel
    instrumentor.uninstrument()


def outcomes(otel: Otel) -> list[str]:
    return [
        attributes["groundplane.outcome"]
        for attributes, value in otel.metrics().get("groundplane.outputs", [])
        for _ in range(int(value))
    ]


def model(api: FakeOpenAI) -> Any:
    chat = ChatOpenAI(model="gpt-fake-1", base_url=api.base_url, api_key="test", max_retries=0)
    return guarded_chat_model(chat)


@pytest.mark.parametrize(("answer", "refused"), [(WRONG, True), (RIGHT, False)])
def test_a_model_stream_releases_only_checked_sentences(
    otel_langchain: Otel, answer: str, refused: bool
) -> None:
    """model.stream(): the first sentence then UnsupportedClaim, or the whole right answer."""
    otel = otel_langchain
    received: list[str] = []
    codes: list[str] = []
    with (
        FakeOpenAI([Turn(content=answer, pieces=words(answer))]) as api,
        otel.tracer.start_as_current_span(f"invoke_agent {AGENT}", attributes=AGENT_SPAN),
    ):
        tool("invoice_query")(lambda: ROWS)()
        stream = model(api).stream("How are the invoices?")
        try:
            for chunk in stream:
                received.append(chunk.content)
        except UnsupportedClaim as claim:
            codes.append(claim.code)
    assert codes == (["number_unrecorded"] if refused else [])
    assert "".join(received) == (FIRST if refused else RIGHT)
    assert outcomes(otel) == ["blocked" if refused else "passed"]


def test_a_model_astream_is_gated_alike(otel_langchain: Otel) -> None:
    """model.astream(): the first sentence, then the refusal."""
    otel = otel_langchain
    received: list[str] = []

    async def run(api: FakeOpenAI) -> None:
        with otel.tracer.start_as_current_span(f"invoke_agent {AGENT}", attributes=AGENT_SPAN):
            tool("invoice_query")(lambda: ROWS)()
            async for chunk in model(api).astream("How are the invoices?"):
                received.append(chunk.content)

    with (
        FakeOpenAI([Turn(content=WRONG, pieces=words(WRONG))]) as api,
        pytest.raises(UnsupportedClaim),
    ):
        asyncio.run(run(api))
    assert "".join(received) == FIRST
    assert outcomes(otel) == ["blocked"]


@langchain_tool("invoice_query")
def invoice_query_tool() -> list[dict[str, Any]]:
    """The invoices."""
    return ROWS


def build(api: FakeOpenAI, flavor: str) -> Any:
    """LangGraph's create_react_agent with post_model_hook, or LangChain v1's create_agent with
    GroundplaneMiddleware, on the guarded model."""
    if flavor == "v1":
        from langchain.agents import create_agent

        from groundplane_otel.adapters.langchain import GroundplaneMiddleware

        return create_agent(
            model(api),
            tools=[invoice_query_tool],
            middleware=[GroundplaneMiddleware()],
            name=AGENT,
        )
    from langgraph.prebuilt import ToolNode, create_react_agent

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # create_react_agent is deprecated in LangGraph 1.x
        return create_react_agent(
            model(api),
            tools=ToolNode([invoice_query_tool], wrap_tool_call=tool_call_wrapper()),
            post_model_hook=post_model_hook(agent_name=AGENT),  # type: ignore[arg-type]
            name=AGENT,
        )


@pytest.mark.parametrize("flavor", ["langgraph", "v1"])
@pytest.mark.parametrize(("answer", "refused"), [(WRONG, True), (RIGHT, False)])
def test_messages_mode_never_streams_the_wrong_sentence(
    otel_langchain: Otel, answer: str, refused: bool, flavor: str
) -> None:
    """An agent on the guarded model (LangGraph create_react_agent + post_model_hook, or
    LangChain v1 create_agent + GroundplaneMiddleware), .stream(stream_mode="messages"): the
    tool-call turn flows; the answer's tokens reach the app sentence by sentence; a wrong
    second sentence never does (the refusal leaves the stream); counted once."""
    otel = otel_langchain
    script = [tool_call_turn("invoice_query", {}), Turn(content=answer, pieces=words(answer))]
    tokens: list[str] = []
    codes: list[str] = []
    with FakeOpenAI(script) as api:
        agent = build(api, flavor)
        question = {"messages": [{"role": "user", "content": "How are the invoices?"}]}
        try:
            for message, meta in agent.stream(question, stream_mode="messages"):
                if meta.get("langgraph_node") in ("agent", "model") and isinstance(
                    message.content, str
                ):
                    tokens.append(message.content)
        except UnsupportedClaim as claim:
            codes.append(claim.code)
    assert codes == (["number_unrecorded"] if refused else [])
    assert "".join(tokens) == (FIRST if refused else RIGHT)
    assert outcomes(otel) == ["blocked" if refused else "passed"]


def test_the_middleware_reasks_a_refused_stream_and_gates_the_second(
    otel_langchain: Otel,
) -> None:
    """create_agent + GroundplaneMiddleware(on_violation="reask"), stream_mode="messages": the
    wrong stream is cut after its first sentence, the model is asked again with the violation
    (the wrong rate and the recorded one), the second stream is gated too and arrives whole;
    two outcomes (blocked, then passed), the final answer the right one."""
    from langchain.agents import create_agent

    from groundplane_otel.adapters.langchain import GroundplaneMiddleware

    otel = otel_langchain
    script = [
        tool_call_turn("invoice_query", {}),
        Turn(content=WRONG, pieces=words(WRONG)),
        Turn(content=RIGHT, pieces=words(RIGHT)),
    ]
    tokens: dict[str, list[str]] = {}
    with FakeOpenAI(script) as api:
        agent = create_agent(
            model(api),
            tools=[invoice_query_tool],
            middleware=[GroundplaneMiddleware(on_violation="reask")],
            name=AGENT,
        )
        question = {"messages": [{"role": "user", "content": "How are the invoices?"}]}
        final = None
        for mode, data in agent.stream(question, stream_mode=["messages", "values"]):
            if mode == "values":
                final = data
                continue
            message, meta = data
            if meta.get("langgraph_node") == "model" and isinstance(message.content, str):
                tokens.setdefault(str(message.id), []).append(message.content)
        reasked = api.requests[-1]["messages"][-1]
    assert ["".join(parts) for parts in tokens.values() if "".join(parts)] == [FIRST, RIGHT]
    assert final is not None
    assert final["messages"][-1].content == RIGHT
    assert reasked["role"] == "user"
    assert "4.7" in reasked["content"]
    assert outcomes(otel) == ["blocked", "passed"]


def test_the_stream_reasks_are_bounded(otel_langchain: Otel) -> None:
    """A model that answers wrong every time (astream, async middleware): asked again
    STREAM_REASKS times, then the last refusal raises; every stream counted (blocked each)."""
    from langchain.agents import create_agent

    from groundplane_otel.adapters.langchain import STREAM_REASKS, GroundplaneMiddleware

    otel = otel_langchain
    wrong = [Turn(content=WRONG, pieces=words(WRONG)) for _ in range(STREAM_REASKS + 1)]
    codes: list[str] = []

    async def run(api: FakeOpenAI) -> None:
        agent = create_agent(
            model(api),
            tools=[invoice_query_tool],
            middleware=[GroundplaneMiddleware(on_violation="reask")],
            name=AGENT,
        )
        question = {"messages": [{"role": "user", "content": "How are the invoices?"}]}
        try:
            async for _ in agent.astream(question, stream_mode="messages"):
                pass
        except UnsupportedClaim as claim:
            codes.append(claim.code)

    with FakeOpenAI([tool_call_turn("invoice_query", {}), *wrong]) as api:
        asyncio.run(run(api))
        calls = len(api.requests)
    assert codes == ["number_unrecorded"]
    assert calls == 1 + STREAM_REASKS + 1
    assert outcomes(otel) == ["blocked"] * (STREAM_REASKS + 1)


def test_a_chat_model_is_required() -> None:
    """Anything but a LangChain chat model is a TypeError naming what was given."""
    with pytest.raises(TypeError, match="^model must be a LangChain BaseChatModel, got str$"):
        guarded_chat_model("gpt-4")
