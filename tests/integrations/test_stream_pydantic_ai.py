"""pydantic-ai ``run_stream`` gated through pydantic-ai's own extension point (the ``Groundplane``
capability's wrapper model, ``adapters.pydantic_ai_stream``): the real pydantic-ai agent with its
OpenAI model on the real openai client against the loopback fake server streaming real SSE,
pydantic-ai's native instrumentation tracing. A wrong second sentence never reaches
``stream_text`` / ``stream_output``: the first sentence does, then the refusal; a right answer
arrives whole; counted once (the capability's output check takes the stream's)."""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest
from fake_openai import FakeOpenAI, Turn, tool_call_turn
from integration_harness import Otel
from pydantic_ai import Agent
from pydantic_ai.capabilities import Instrumentation
from pydantic_ai.models.instrumented import InstrumentationSettings
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai import OpenAIProvider
from stream_policy import AGENT_NAME, revenue_config

from groundplane_otel.adapters.pydantic_ai import Groundplane
from groundplane_otel.adapters.pydantic_ai_stream import guarded_model
from groundplane_otel.errors import UnsupportedClaim

AGENT = AGENT_NAME
ROWS = [{"id": "A", "total": 10000, "rate": 3.9}, {"id": "B", "total": 250, "rate": 1.5}]
FIRST = "Invoice A totals 10,000 dollars."
RIGHT = FIRST + " Its rate was 3.9% last month. Invoice B totals 250 dollars."
WRONG = FIRST + " Its rate was 4.7% last month. Invoice B totals 250 dollars."


def invoice_query() -> list[dict[str, Any]]:
    """The invoices."""
    return ROWS


def words(text: str) -> tuple[str, ...]:
    parts = text.split(" ")
    return (parts[0], *(" " + part for part in parts[1:]))


def outcomes(otel: Otel) -> list[str]:
    return [
        attributes["groundplane.outcome"]
        for attributes, value in otel.metrics().get("groundplane.outputs", [])
        for _ in range(int(value))
    ]


def agent_for(
    otel: Otel, api: FakeOpenAI, *, reask: bool = False, traced: bool = True
) -> Agent[None, str]:
    otel.install(revenue_config())
    client = openai.AsyncOpenAI(base_url=api.base_url, api_key="test", max_retries=0)
    model = OpenAIChatModel("gpt-fake-1", provider=OpenAIProvider(openai_client=client))
    settings = InstrumentationSettings(
        tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider
    )
    tracing = [Instrumentation(settings)] if traced else []
    agent: Agent[None, str] = Agent(
        model, name=AGENT, capabilities=[*tracing, Groundplane(reask=reask)]
    )
    agent.tool_plain(invoice_query)
    return agent


@pytest.mark.parametrize("how", ["stream_text", "stream_output"])
@pytest.mark.parametrize(("answer", "refused"), [(WRONG, True), (RIGHT, False)])
def test_run_stream_never_yields_the_wrong_sentence(
    otel: Otel, how: str, answer: str, refused: bool
) -> None:
    """stream_text(delta=True) / stream_output(): the first sentence, then the refusal (a
    wrong rate in the second sentence); a right answer whole; one outcome, on the chat span
    with the characters released."""
    seen: list[str] = []
    codes: list[str] = []

    async def main() -> None:
        script = [tool_call_turn("invoice_query", {}), Turn(content=answer, pieces=words(answer))]
        with FakeOpenAI(script) as api:
            agent = agent_for(otel, api)
            try:
                async with agent.run_stream("How are the invoices?") as result:
                    if how == "stream_text":
                        async for delta in result.stream_text(delta=True, debounce_by=None):
                            seen.append(delta)
                    else:
                        async for output in result.stream_output(debounce_by=None):
                            seen.append(output)
            except UnsupportedClaim as claim:
                codes.append(claim.code)

    asyncio.run(main())
    assert codes == (["number_unrecorded"] if refused else [])
    shown = "".join(seen) if how == "stream_text" else (seen[-1] if seen else "")
    assert shown == (FIRST if refused else answer)
    assert all("4.7" not in item for item in seen)
    assert outcomes(otel) == ["blocked" if refused else "passed"]
    (counted,) = [s for s in otel.spans() if "groundplane.outcome" in (s.attributes or {})]
    assert counted.name == "chat gpt-fake-1"
    released = (counted.attributes or {})["groundplane.stream.released_chars"]
    assert released == len(FIRST if refused else RIGHT)


@pytest.mark.parametrize("reask", [False, True])
def test_without_pydantic_ai_tracing_the_capability_s_span_counts_it(
    otel: Otel, reask: bool
) -> None:
    """No instrumentation: the stream is counted on the capability's own invoke_agent span;
    the wrong sentence never arrives. reask=True changes nothing for a stream (pydantic-ai
    retries no streamed answer): the refusal raises."""
    seen: list[str] = []
    codes: list[str] = []

    async def main() -> None:
        script = [tool_call_turn("invoice_query", {}), Turn(content=WRONG, pieces=words(WRONG))]
        with FakeOpenAI(script) as api:
            agent = agent_for(otel, api, reask=reask, traced=False)
            try:
                async with agent.run_stream("How are the invoices?") as result:
                    async for delta in result.stream_text(delta=True, debounce_by=None):
                        seen.append(delta)
            except UnsupportedClaim as claim:
                codes.append(claim.code)

    asyncio.run(main())
    assert (codes, "".join(seen)) == (["number_unrecorded"], FIRST)
    assert outcomes(otel) == ["blocked"]
    (counted,) = [s for s in otel.spans() if "groundplane.outcome" in (s.attributes or {})]
    assert counted.name == f"invoke_agent {AGENT}"
    assert (counted.attributes or {})["groundplane.stream.released_chars"] == len(FIRST)


def test_a_pydantic_ai_model_is_required() -> None:
    """Anything but a pydantic-ai Model is a TypeError naming what was given."""
    with pytest.raises(TypeError, match="^model must be a pydantic-ai Model, got str$"):
        guarded_model("gpt-4")


def test_pydantic_ai_events_are_read_by_kind() -> None:
    """Text parts and deltas are answer text, tool calls never are, thinking carries none;
    a file part cannot be checked: an unknown chunk (the gate fails closed on it)."""
    from pydantic_ai.messages import (
        BinaryContent,
        FilePart,
        PartDeltaEvent,
        PartStartEvent,
        TextPart,
        TextPartDelta,
        ThinkingPartDelta,
        ToolCallPart,
        ToolCallPartDelta,
    )

    from groundplane_otel.otel._stream.chunks import UnknownChunk, read_chunk, shape_of

    start = PartStartEvent(index=0, part=TextPart("Invoice A"))
    assert shape_of(start) == "pydantic_ai"
    assert read_chunk("pydantic_ai", start) == ("Invoice A", False)
    delta = PartDeltaEvent(index=0, delta=TextPartDelta(" totals 10,000."))
    assert read_chunk("pydantic_ai", delta) == (" totals 10,000.", False)
    call = PartStartEvent(index=1, part=ToolCallPart("invoice_query", "{}"))
    assert read_chunk("pydantic_ai", call) == ("", True)
    args = PartDeltaEvent(index=1, delta=ToolCallPartDelta(args_delta='{"a": 1}'))
    assert read_chunk("pydantic_ai", args) == ("", True)
    thought = PartDeltaEvent(index=2, delta=ThinkingPartDelta(content_delta="hmm"))
    assert read_chunk("pydantic_ai", thought) == ("", False)
    image = PartStartEvent(index=3, part=FilePart(BinaryContent(data=b"x", media_type="image/png")))
    with pytest.raises(UnknownChunk, match="^a pydantic-ai 'file' part \\(not text\\)$"):
        read_chunk("pydantic_ai", image)


def test_a_run_stream_left_early_is_counted_once_as_abandoned(otel: Otel) -> None:
    """The app stops reading after the first delta and leaves ``run_stream``: the stream is
    counted once, as an error (stream_abandoned, on the chat span before it ends), with the
    characters released when it was left — never concluded as a complete answer."""
    seen: list[str] = []

    async def main() -> None:
        script = [tool_call_turn("invoice_query", {}), Turn(content=RIGHT, pieces=words(RIGHT))]
        with FakeOpenAI(script) as api:
            agent = agent_for(otel, api)
            async with agent.run_stream("How are the invoices?") as result:
                async for delta in result.stream_text(delta=True, debounce_by=None):
                    seen.append(delta)
                    break

    asyncio.run(main())
    assert seen == ["Invoice"]  # released with its sentence, then the app stopped
    points = otel.metrics().get("groundplane.outputs", [])
    assert [(a["groundplane.outcome"], v) for a, v in points] == [("error", 1)]
    (counted,) = [s for s in otel.spans() if "groundplane.outcome" in (s.attributes or {})]
    assert counted.name == "chat gpt-fake-1"
    reasons = [(e.attributes or {}).get("gen_ai.guardrail.result.reason") for e in counted.events]
    assert reasons == ["stream_abandoned"]
    assert (counted.attributes or {})["groundplane.stream.released_chars"] < len(RIGHT)
