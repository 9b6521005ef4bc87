"""guard_stream over the real ``openai`` client (instrumented by genai-openai) against the
loopback fake server streaming real SSE: a streamed answer reaches the app sentence by
sentence, each checked first; the refused sentence never arrives; each run counted once."""

from __future__ import annotations

import asyncio
import gc
import json
from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest
from fake_openai import FakeOpenAI, Turn, tool_call_turn
from integration_harness import Otel, events
from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor
from opentelemetry.trace import StatusCode
from stream_policy import revenue_config

from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.otel import (
    OutputUnchecked,
    guard_stream,
    tool,
)

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "revenue-analyst"}
FIRST = "Invoice A totals 10,000 dollars."
WRONG_SECOND = " Its rate was 4.7% last month."
RIGHT_SECOND = " Its rate was 3.9% last month."
THIRD = " Invoice B totals 250 dollars."
RIGHT = FIRST + RIGHT_SECOND + THIRD
WRONG = FIRST + WRONG_SECOND + THIRD
QUESTION = [{"role": "user", "content": "How are the invoices doing?"}]


def tokens(text: str) -> tuple[str, ...]:
    """The text in model-like tokens: each word with the space before it, punctuation apart."""
    out: list[str] = []
    for word in text.split(" "):
        lead = " " if out else ""
        if word and word[-1] in ".,%":
            out += [lead + word[:-1], word[-1]] if word[:-1] else [lead + word]
        else:
            out.append(lead + word)
    assert "".join(out) == text
    return tuple(out)


def invoice_query() -> list[dict[str, Any]]:
    """The application's tool: the ground truth."""
    return [{"id": "A", "total": 10000, "rate": 3.9}, {"id": "B", "total": 250, "rate": 1.5}]


@pytest.fixture
def instrument(otel: Otel, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    """instrument(content_mode): the OpenAI client instrumented with the test's providers."""
    instrumentor = OpenAIInstrumentor()

    def apply(content_mode: str) -> None:
        monkeypatch.setenv(CONTENT_ENV, content_mode)
        instrumentor.instrument(
            tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider
        )

    yield apply
    if instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.uninstrument()


def answer(text: str, **options: Any) -> Turn:
    return Turn(content=text, pieces=tokens(text), **options)


def outcomes(otel: Otel) -> list[tuple[str, str | None]]:
    """(outcome, skip reason) of every counted output, one entry per count."""
    found: list[tuple[str, str | None]] = []
    for attributes, value in otel.metrics().get("groundplane.outputs", []):
        found += [(attributes["groundplane.outcome"], attributes.get("groundplane.skip_reason"))]
        found += [found[-1]] * (int(value) - 1)
    return found


def chat_span(otel: Otel) -> Any:
    (span,) = [s for s in otel.spans() if s.name.startswith("chat")]
    return span


def text_of(chunk: Any) -> str:
    if isinstance(chunk, str):
        return chunk
    if getattr(chunk, "object", None) == "chat.completion.chunk":
        return "".join(c.delta.content or "" for c in chunk.choices if c.delta)
    return str(getattr(chunk, "delta", "")) if chunk.type == "response.output_text.delta" else ""


def stream_chat(api: FakeOpenAI, tracer: Any, received: list[Any]) -> None:
    """The agent: the tool, then a streamed answer read through guard_stream."""
    client = openai.OpenAI(base_url=api.base_url, api_key="test", max_retries=0)
    with tracer.start_as_current_span("invoke_agent revenue-analyst", attributes=AGENT):
        tool("invoice_query")(invoice_query)()
        stream = client.chat.completions.create(
            model="gpt-fake-1",
            messages=QUESTION,
            stream=True,
            stream_options={"include_usage": True},
        )
        for chunk in guard_stream(stream):
            received.append(chunk)


def test_a_wrong_number_in_the_second_sentence_stops_the_stream_after_the_first(
    otel: Otel, instrument: Callable[[str], None]
) -> None:
    """The app has received exactly the first sentence, then the exception; the run is counted
    once (blocked), with the event and the characters released on the chat span."""
    otel.install(revenue_config())
    instrument("SPAN_ONLY")
    received: list[Any] = []
    with FakeOpenAI([answer(WRONG)]) as api, pytest.raises(UnsupportedClaim) as caught:
        stream_chat(api, otel.tracer, received)
    assert "".join(text_of(chunk) for chunk in received) == FIRST
    assert caught.value.code == "number_unrecorded"
    assert all(type(c).__name__ == "ChatCompletionChunk" for c in received)
    assert outcomes(otel) == [("blocked", None)]
    span = chat_span(otel)
    attributes = dict(span.attributes or {})
    assert attributes["groundplane.outcome"] == "blocked"
    assert attributes["groundplane.stream.released_chars"] == len(FIRST)
    assert span.status.status_code is StatusCode.ERROR
    (event,) = [e for e in events(span) if e["name"] == "gen_ai.guardrail.result"]
    assert event["gen_ai.guardrail.result.value"] == "unsupported"
    assert event["gen_ai.guardrail.policy.rule.id"] == "numbers_recorded(fact='invoice', field='*')"
    agent = otel.span("invoke_agent revenue-analyst")
    assert "groundplane.outcome" not in (agent.attributes or {})  # the run counted once


def test_a_wrong_last_sentence_is_refused_at_the_stream_end_counted_once(
    otel: Otel, instrument: Callable[[str], None]
) -> None:
    """The wrong number in the last sentence is checked when the stream (and the chat span)
    ends: the app has the first two sentences, then the exception; one blocked output, one
    event, on the chat span."""
    otel.install(revenue_config())
    instrument("SPAN_ONLY")
    received: list[Any] = []
    last_wrong = FIRST + RIGHT_SECOND + " Invoice B totals 260 dollars."
    with FakeOpenAI([answer(last_wrong)]) as api, pytest.raises(UnsupportedClaim):
        stream_chat(api, otel.tracer, received)
    assert "".join(text_of(chunk) for chunk in received) == FIRST + RIGHT_SECOND
    assert outcomes(otel) == [("blocked", None)]
    span = chat_span(otel)
    assert len([e for e in events(span) if e["name"] == "gen_ai.guardrail.result"]) == 1
    assert (span.attributes or {})["groundplane.stream.released_chars"] == len(FIRST + RIGHT_SECOND)


def test_a_right_answer_arrives_whole_and_is_counted_once(
    otel: Otel, instrument: Callable[[str], None]
) -> None:
    """Every chunk arrives, unchanged and in order; the run is passed, once."""
    otel.install(revenue_config())
    instrument("SPAN_ONLY")
    received: list[Any] = []
    with FakeOpenAI([answer(RIGHT)]) as api:
        stream_chat(api, otel.tracer, received)
    assert "".join(text_of(chunk) for chunk in received) == RIGHT
    assert len(received) == len(tokens(RIGHT)) + 3  # role, the tokens, finish, usage
    assert received[-1].usage is not None
    assert not received[-1].choices
    assert outcomes(otel) == [("passed", None)]
    attributes = dict(chat_span(otel).attributes or {})
    assert attributes["groundplane.stream.released_chars"] == len(RIGHT)


def test_chunks_are_released_a_sentence_at_a_time(
    otel: Otel, instrument: Callable[[str], None]
) -> None:
    """While the app reads, it never holds text of a sentence that was not complete and
    checked: when a chunk reaches it, the gate had received that chunk's whole sentence."""
    otel.install(revenue_config())
    instrument("NO_CONTENT")
    seen: list[tuple[str, int]] = []
    with FakeOpenAI([answer(RIGHT)]) as api:
        client = openai.OpenAI(base_url=api.base_url, api_key="test", max_retries=0)
        with otel.tracer.start_as_current_span("invoke_agent revenue-analyst", attributes=AGENT):
            tool("invoice_query")(invoice_query)()
            stream = client.chat.completions.create(
                model="gpt-fake-1", messages=QUESTION, stream=True
            )
            guarded = guard_stream(stream)
            text = ""
            for chunk in guarded:
                text += text_of(chunk)
                seen.append((text, guarded.gate.received))
    ends = [len(FIRST), len(FIRST + RIGHT_SECOND), len(RIGHT)]
    for text, received in seen:
        if text:
            assert received >= min(end for end in ends if end >= len(text)), text
    assert any(received < len(RIGHT) for text, received in seen if text)  # not held whole
    assert seen[-1][0] == RIGHT


def test_the_async_client_is_guarded_alike(otel: Otel, instrument: Callable[[str], None]) -> None:
    """AsyncOpenAI stream, async for: the first sentence, then the exception."""
    otel.install(revenue_config())
    instrument("SPAN_ONLY")
    received: list[str] = []

    async def agent(api: FakeOpenAI) -> None:
        client = openai.AsyncOpenAI(base_url=api.base_url, api_key="test", max_retries=0)
        with otel.tracer.start_as_current_span("invoke_agent revenue-analyst", attributes=AGENT):
            tool("invoice_query")(invoice_query)()
            stream = await client.chat.completions.create(
                model="gpt-fake-1", messages=QUESTION, stream=True
            )
            async for chunk in guard_stream(stream):
                received.append(text_of(chunk))

    with FakeOpenAI([answer(WRONG)]) as api, pytest.raises(UnsupportedClaim):
        asyncio.run(agent(api))
    assert "".join(received) == FIRST
    assert outcomes(otel) == [("blocked", None)]


@pytest.mark.parametrize(("text", "passes"), [(RIGHT, True), (WRONG, False)])
def test_a_responses_stream_yields_its_events_unchanged(
    otel: Otel, instrument: Callable[[str], None], text: str, passes: bool
) -> None:
    """The Responses API: the same event objects in order; a wrong second sentence stops the
    events after the first sentence's deltas; the .done events wait for the whole answer."""
    otel.install(revenue_config())
    instrument("SPAN_ONLY")
    received: list[Any] = []
    with FakeOpenAI([answer(text)]) as api:
        client = openai.OpenAI(base_url=api.base_url, api_key="test", max_retries=0)
        with otel.tracer.start_as_current_span("invoke_agent revenue-analyst", attributes=AGENT):
            tool("invoice_query")(invoice_query)()
            stream = client.responses.create(model="gpt-fake-1", input="How?", stream=True)
            refused: list[UnsupportedClaim] = []
            try:
                for event in guard_stream(stream):
                    received.append(event)
            except UnsupportedClaim as claim:
                refused.append(claim)
    assert [claim.code for claim in refused] == ([] if passes else ["number_unrecorded"])
    kinds = [event.type for event in received]
    assert "".join(text_of(event) for event in received) == (text if passes else FIRST)
    assert kinds[:4] == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.content_part.added",
    ]
    assert (kinds[-1] == "response.completed") is passes
    assert "response.output_text.done" not in kinds[:-4]
    assert outcomes(otel) == [("passed" if passes else "blocked", None)]


def test_a_provider_failing_mid_stream_reaches_the_app_unchanged(
    otel: Otel, instrument: Callable[[str], None]
) -> None:
    """The provider's error event mid-answer: the app gets openai's APIError (not a claim),
    nothing after the last checked sentence, and the run is counted once as an error."""
    otel.install(revenue_config())
    instrument("SPAN_ONLY")
    received: list[Any] = []
    turn = answer(RIGHT, fail_after=len(tokens(FIRST)) + 3)
    with FakeOpenAI([turn]) as api, pytest.raises(openai.APIError) as caught:
        stream_chat(api, otel.tracer, received)
    assert "upstream overloaded" in str(caught.value)
    assert not isinstance(caught.value, UnsupportedClaim)
    assert "".join(text_of(chunk) for chunk in received) == FIRST
    assert outcomes(otel) == [("error", None)]
    (event,) = [e for e in events(chat_span(otel)) if e["name"] == "gen_ai.guardrail.result"]
    assert event["gen_ai.guardrail.result.reason"] == "stream_failed"


@pytest.mark.parametrize("how", ["break", "close", "gc"])
def test_an_abandoned_stream_is_counted_once_and_ends_its_span(
    otel: Otel, instrument: Callable[[str], None], how: str
) -> None:
    """break, close() or garbage collection mid-answer: counted once (error
    ``stream_abandoned``), the chat span ended, nothing held by the gate."""
    otel.install(revenue_config())
    instrument("SPAN_ONLY")
    gates: list[Any] = []
    with FakeOpenAI([answer(RIGHT)]) as api:
        client = openai.OpenAI(base_url=api.base_url, api_key="test", max_retries=0)
        with otel.tracer.start_as_current_span("invoke_agent revenue-analyst", attributes=AGENT):
            tool("invoice_query")(invoice_query)()
            stream = client.chat.completions.create(
                model="gpt-fake-1", messages=QUESTION, stream=True
            )
            guarded = guard_stream(stream)
            gates.append(guarded.gate)
            if how == "break":
                for count, _ in enumerate(guarded, 1):
                    if count == 7:  # the first sentence; the second one's first token held
                        assert gates[0].held
                        break
                del guarded
            else:
                iterator = iter(guarded)
                for _ in range(7):
                    next(iterator)
                assert gates[0].held
                if how == "close":
                    guarded.close()
                else:
                    del iterator, guarded, stream
                    gc.collect()
    gate = gates[0]
    assert not gate.held
    assert not gate.parts
    assert outcomes(otel) == [("error", None)]
    span = chat_span(otel)  # exported: it ended
    (event,) = [e for e in events(span) if e["name"] == "gen_ai.guardrail.result"]
    assert event["gen_ai.guardrail.result.reason"] == "stream_abandoned"
    assert (span.attributes or {})["groundplane.stream.released_chars"] == len(FIRST)


def test_tool_call_deltas_are_never_answer_text(
    otel: Otel, instrument: Callable[[str], None]
) -> None:
    """A streamed tool-call turn flows through unheld and counts nothing; the streamed
    answer after the tool result is guarded and counted once."""
    otel.install(revenue_config())
    instrument("SPAN_ONLY")
    with FakeOpenAI([tool_call_turn("invoice_query", {}), answer(RIGHT)]) as api:
        client = openai.OpenAI(base_url=api.base_url, api_key="test", max_retries=0)
        with otel.tracer.start_as_current_span("invoke_agent revenue-analyst", attributes=AGENT):
            stream = client.chat.completions.create(
                model="gpt-fake-1", messages=QUESTION, stream=True
            )
            calls = [c for c in guard_stream(stream) if c.choices and c.choices[0].delta.tool_calls]
            deltas = [c.choices[0].delta.tool_calls[0] for c in calls]
            assert deltas[0].function.name == "invoice_query"
            assert "".join(d.function.arguments or "" for d in deltas) == "{}"  # in 2 deltas
            assert len(deltas) == 2
            tool("invoice_query")(invoice_query)()
            stream = client.chat.completions.create(
                model="gpt-fake-1", messages=QUESTION, stream=True
            )
            text = "".join(text_of(c) for c in guard_stream(stream))
    assert text == RIGHT
    assert outcomes(otel) == [("passed", None)]


def test_observe_lets_every_chunk_through_and_flags_the_run_once(
    otel: Otel, instrument: Callable[[str], None]
) -> None:
    """Observe mode: the whole wrong answer flows, no exception, flagged once."""
    otel.install(revenue_config(mode="observe"))
    instrument("SPAN_ONLY")
    received: list[Any] = []
    with FakeOpenAI([answer(WRONG)]) as api:
        stream_chat(api, otel.tracer, received)
    assert "".join(text_of(chunk) for chunk in received) == WRONG
    assert outcomes(otel) == [("flagged", None)]


def test_content_capture_off_leaves_no_answer_text_in_telemetry(
    otel: Otel, instrument: Callable[[str], None]
) -> None:
    """NO_CONTENT: the planted values (the wrong rate, the sentence) appear in no exported
    attribute, event, log record or metric; the refusal's message is redacted."""
    otel.install(revenue_config())
    instrument("NO_CONTENT")
    with FakeOpenAI([answer(WRONG)]) as api, pytest.raises(UnsupportedClaim) as caught:
        stream_chat(api, otel.tracer, [])
    dumped = json.dumps(
        [[dict(s.attributes or {}), events(s), s.status.description] for s in otel.spans()]
        + [
            [dict(r.log_record.attributes or {}), str(r.log_record.body)]
            for r in otel.logs.get_finished_logs()
        ]
        + [otel.metrics()],
        default=str,
    )
    for planted in ("4.7", "last month", "Its rate"):
        assert planted not in dumped
        assert planted not in str(caught.value)
    assert outcomes(otel) == [("blocked", None)]


def test_a_chunk_of_unknown_shape_fails_closed(otel: Otel) -> None:
    """A str stream that yields something else: refused (OutputUnchecked), counted once as an
    error, and the text held before it never released."""
    otel.install(revenue_config())
    received: list[Any] = []
    with otel.tracer.start_as_current_span("invoke_agent revenue-analyst", attributes=AGENT):
        tool("invoice_query")(invoice_query)()
        guarded = guard_stream(iter(["Invoice A totals ", b"10,000", " dollars."]))
        with pytest.raises(OutputUnchecked) as caught:
            received.extend(guarded)
    assert received == []
    assert caught.value.code == "stream_chunk_unknown"
    assert "a stream chunk of unknown shape: bytes" in caught.value.reason
    assert outcomes(otel) == [("error", None)]


def test_a_stream_read_from_two_tasks_refuses_the_second_reader(otel: Otel) -> None:
    """Two tasks reading one guarded async stream at once: the second gets RuntimeError from
    the async generator; the first reads the checked answer to its end, counted once."""
    otel.install(revenue_config())

    async def source() -> Any:
        for piece in tokens(RIGHT):
            await asyncio.sleep(0)
            yield piece

    async def main() -> tuple[list[Any], list[str]]:
        with otel.tracer.start_as_current_span("invoke_agent revenue-analyst", attributes=AGENT):
            tool("invoice_query")(invoice_query)()
            guarded = guard_stream(source())
            first: list[str] = []

            async def read() -> None:
                async for delta in guarded:
                    first.append(delta)

            return await asyncio.gather(read(), read(), return_exceptions=True), first

    results, first = asyncio.run(main())
    assert any(isinstance(r, RuntimeError) for r in results)
    assert "".join(first) == RIGHT
    assert outcomes(otel) == [("passed", None)]
