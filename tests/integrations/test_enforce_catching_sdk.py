"""Enforcement when the SDK catches what span processors raise.

OpenTelemetry Python has an open change (opentelemetry-python PR #5626, for issue #5624) that
catches and logs every exception a span processor raises from its hooks, as the specification
asks. The fixture ``catching_sdk`` patches the installed SDK that way **in this test only**:
``SynchronousMultiSpanProcessor``'s and ``ConcurrentMultiSpanProcessor``'s hooks call each
processor inside ``try``/``except Exception`` and log, and ``Span.end`` catches and logs what its
processor dispatch raises. Then the whole enforce matrix runs — the real ``openai`` client
instrumented by genai-openai against the loopback fake server (a plain call, a plain stream, the
async client, the Responses API, a ``guard_stream``), a span the app ends in its own ``with``
block, ``enforce()`` scopes (the exception propagating, ``defer=True``, a framework that
swallows), report modes first and all,
under the three dispatch set-ups (the default dispatcher ridden, a concurrent one ridden, an
app's own dispatcher class with the guard added as a processor) — and the app gets the claim
error in every cell, counted ``blocked`` exactly once: the guard delivers it from code it owns
(the span's wrapped ``end``, the scope, the stream gate), never from the SDK's ``on_end`` loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from collections.abc import Callable, Iterator
from typing import Any

import openai
import pytest
import test_stream_openai as streamed
from fake_openai import FakeOpenAI, answer_turn, tool_call_turn
from integration_harness import Otel
from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import (
    ConcurrentMultiSpanProcessor,
    Span,
    SpanProcessor,
    SynchronousMultiSpanProcessor,
    TracerProvider,
)
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.trace import StatusCode
from stream_policy import revenue_config

from groundplane_otel.checks.superlative import superlative
from groundplane_otel.errors import ClaimsUnsupported, FactBoundaryError, UnsupportedClaim
from groundplane_otel.otel import (
    BoundarySpec,
    FactSpec,
    GuardConfig,
    MatchSpec,
    enforce,
    submit_output,
    tool,
)

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
CAUGHT = "groundplane.test.catching_sdk"  # the logger the patched SDK logs what it caught to
CTR = {"north": 0.0412, "harbour": 0.0455, "delta": 0.0301}
WRONG = {"winner": "north", "ctr": 0.0412}
AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "campaign-analyst"}
TOOLS = [{"type": "function", "function": {"name": "warehouse_query", "parameters": {}}}]
MESSAGE = (
    "unsupported claim in field 'winner': model said 'north', registered facts support "
    "'harbour' | fact='campaign_ctr' | provenance=warehouse_query(window='7d') | computed "
    "argmax on 'score' is 'harbour' (0.0455); 'north' ranked #2 at 0.0412"
)

SHORT = (
    "unsupported claim in field 'winner' (boundary 'campaign_answer', check superlative, "
    "reason wrong_winner)"
)


# -- the SDK, catching as the upstream change does ------------------------------------------------


def _catching(hook: str) -> Callable[..., None]:
    """A dispatcher hook that calls each processor's ``hook`` and logs what it raises."""

    def dispatch(self: Any, *args: Any, **kwargs: Any) -> None:
        for processor in self._span_processors:
            try:
                getattr(processor, hook)(*args, **kwargs)
            except Exception:
                logging.getLogger(CAUGHT).exception("Error in span processor %s", hook)

    return dispatch


@pytest.fixture
def catching_sdk(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[logging.LogRecord]]:
    """The SDK's dispatch catches and logs every exception from a processor's hooks; yields
    the log records of what it caught."""
    for kind in (SynchronousMultiSpanProcessor, ConcurrentMultiSpanProcessor):
        for hook in ("on_start", "_on_ending", "on_end"):
            monkeypatch.setattr(kind, hook, _catching(hook))
    sdk_end = Span.end

    @functools.wraps(sdk_end)
    def end(self: Span, end_time: int | None = None) -> None:
        try:  # a dispatcher of another class (the guard's riding one): caught here
            sdk_end(self, end_time)
        except Exception:
            logging.getLogger(CAUGHT).exception("Error in span processor dispatch at span end")

    monkeypatch.setattr(Span, "end", end)
    caught: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = caught.append  # type: ignore[method-assign]
    logging.getLogger(CAUGHT).addHandler(handler)
    yield caught
    logging.getLogger(CAUGHT).removeHandler(handler)


class RaisingProcessor(SpanProcessor):
    """An application's processor that breaks the specification: it raises at every span end
    (without the patch, this RuntimeError would replace the claim error)."""

    def on_end(self, span: Any) -> None:
        raise RuntimeError("processor failed")


class AppDispatch(SynchronousMultiSpanProcessor):
    """A dispatcher class of the application's own: the guard is added as a span processor,
    so the SDK's (patched) dispatch calls the guard's ``on_end``."""


DISPATCH: dict[str, Callable[[], Any]] = {
    "riding-sync": SynchronousMultiSpanProcessor,
    "riding-concurrent": ConcurrentMultiSpanProcessor,
    "added-processor": AppDispatch,
}


@pytest.fixture(params=list(DISPATCH))
def harness(
    request: pytest.FixtureRequest, catching_sdk: list[logging.LogRecord]
) -> Iterator[Otel]:
    """The integration harness on a provider with the parametrized dispatcher, the app's
    raising processor registered after the exporter (zero-code order: the guard comes last)."""
    otel = Otel()
    otel.tracer_provider.shutdown()  # its exporter too: a fresh one
    otel.exporter = InMemorySpanExporter()
    otel.tracer_provider = TracerProvider(
        sampler=ALWAYS_ON, active_span_processor=DISPATCH[request.param]()
    )
    otel.tracer_provider.add_span_processor(SimpleSpanProcessor(otel.exporter))
    otel.tracer_provider.add_span_processor(RaisingProcessor())
    otel.tracer = otel.tracer_provider.get_tracer("integration-app")
    yield otel
    otel.close()


@pytest.fixture
def instrumented(harness: Otel, monkeypatch: pytest.MonkeyPatch) -> Iterator[Otel]:
    """The OpenAI client instrumented by genai-openai with the harness's providers."""
    monkeypatch.setenv(CONTENT_ENV, "SPAN_ONLY")
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(
        tracer_provider=harness.tracer_provider, meter_provider=harness.meter_provider
    )
    yield harness
    instrumentor.uninstrument()


# -- the app ---------------------------------------------------------------------------------------


def config(report_mode: str) -> GuardConfig:
    spec = BoundarySpec(
        "campaign_answer",
        ("campaign_ctr",),
        (superlative(fact="campaign_ctr", score_field="ctr"),),
        match=MatchSpec(agent_name="campaign-analyst"),
        report_mode=report_mode,  # type: ignore[arg-type]
    )
    fact = FactSpec("campaign_ctr", "warehouse_query", kind="ranking")
    return GuardConfig(facts=(fact,), boundaries=(spec,), mode="enforce")


def warehouse_query(window: str) -> dict[str, float]:
    return dict(CTR)


def client_call(otel: Otel, api: FakeOpenAI, *, stream: bool = False) -> Any:
    """invoke_agent -> chat (asks for the tool) -> execute_tool -> chat (the final answer,
    read whole; streamed: read to its end)."""
    client = openai.OpenAI(base_url=api.base_url, api_key="test", max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Which campaign won?"}]
    with otel.tracer.start_as_current_span("invoke_agent campaign-analyst", attributes=AGENT):
        first = client.chat.completions.create(model="gpt-fake-1", messages=messages, tools=TOOLS)
        call = first.choices[0].message.tool_calls[0]
        result = tool("warehouse_query")(warehouse_query)(**json.loads(call.function.arguments))
        messages += [
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)},
        ]
        if stream:
            chunks = client.chat.completions.create(
                model="gpt-fake-1", messages=messages, stream=True
            )
            return "".join(
                chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices
            )
        final = client.chat.completions.create(
            model="gpt-fake-1", messages=messages, response_format={"type": "json_object"}
        )
        return final.choices[0].message.content


def responses_call(otel: Otel, api: FakeOpenAI) -> str:
    """The Responses API: the first response asks for the tool, the second answers."""
    client = openai.OpenAI(base_url=api.base_url, api_key="test", max_retries=0)
    with otel.tracer.start_as_current_span("invoke_agent campaign-analyst", attributes=AGENT):
        client.responses.create(model="gpt-fake-1", input="Which campaign won?")
        tool("warehouse_query")(warehouse_query)("7d")
        return client.responses.create(model="gpt-fake-1", input="Which campaign won?").output_text


def async_call(otel: Otel, api: FakeOpenAI) -> Any:
    """The async client: the same two calls, awaited."""

    async def main() -> Any:
        client = openai.AsyncOpenAI(base_url=api.base_url, api_key="test", max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "user", "content": "Which campaign won?"}]
        with otel.tracer.start_as_current_span("invoke_agent campaign-analyst", attributes=AGENT):
            await client.chat.completions.create(model="gpt-fake-1", messages=messages)
            tool("warehouse_query")(warehouse_query)("7d")
            final = await client.chat.completions.create(model="gpt-fake-1", messages=messages)
            return final.choices[0].message.content

    return asyncio.run(main())


def own_span(otel: Otel, api: FakeOpenAI) -> None:
    """A tool and a model call the app traces itself: the tool's result reaches the guard
    through its span's end (the dispatch), the model call's span ends in the app's own
    ``with`` block."""
    with otel.tracer.start_as_current_span("invoke_agent campaign-analyst", attributes=AGENT):
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "warehouse_query",
            "gen_ai.tool.call.arguments": json.dumps({"window": "7d"}),
            "gen_ai.tool.call.result": json.dumps(warehouse_query("7d")),
        }
        with otel.tracer.start_as_current_span(
            "execute_tool warehouse_query", attributes=attributes
        ):
            pass
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-fake-1"}
        with otel.tracer.start_as_current_span("chat gpt-fake-1", attributes=attributes):
            submit_output(WRONG)


def swallowed(otel: Otel, api: FakeOpenAI) -> None:
    """A framework that catches whatever the model call raises, inside ``enforce()``."""
    with enforce(), contextlib.suppress(FactBoundaryError):
        client_call(otel, api)


def deferred(otel: Otel, api: FakeOpenAI) -> None:
    """``enforce(defer=True)``: the call returns the answer, the scope raises on exit."""
    with enforce(defer=True):
        assert json.loads(client_call(otel, api)) == WRONG


def in_scope(otel: Otel, api: FakeOpenAI) -> None:
    """The call raises through an ``enforce()`` scope, which does not raise it again."""
    with enforce():
        client_call(otel, api)


PATHS: dict[str, Callable[[Otel, FakeOpenAI], Any]] = {
    "client-call": client_call,
    "client-stream": functools.partial(client_call, stream=True),
    "async-client": async_call,
    "responses-api": responses_call,
    "own-with-block": own_span,
    "enforce-scope": in_scope,
    "enforce-defer": deferred,
    "enforce-swallowed": swallowed,
}


def blocked_counts(otel: Otel) -> list[tuple[str, int]]:
    return [
        (attributes["groundplane.outcome"], int(value))
        for attributes, value in otel.metrics().get("groundplane.outputs", [])
    ]


@pytest.mark.parametrize("report_mode", ["first", "all"])
@pytest.mark.parametrize("path", list(PATHS))
def test_the_app_gets_the_claim_error_when_the_sdk_catches_processor_exceptions(
    instrumented: Otel,
    catching_sdk: list[logging.LogRecord],
    path: str,
    report_mode: str,
) -> None:
    """Every enforce path, with the SDK swallowing processor exceptions: the claim error
    reaches the app (its own type, not the raising processor's), the answer is counted blocked
    once, the chat span is exported with ERROR status, and the SDK's catch really ran (the
    app's raising processor was caught and logged)."""
    otel = instrumented
    otel.install(config(report_mode))
    turns = [tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(WRONG)]
    with FakeOpenAI(turns) as api, pytest.raises(FactBoundaryError) as raised:
        PATHS[path](otel, api)
    if report_mode == "first":
        assert type(raised.value) is UnsupportedClaim
        assert raised.value.diagnosis == MESSAGE
    else:
        assert type(raised.value) is ClaimsUnsupported
        assert str(raised.value) == SHORT
    assert blocked_counts(otel) == [("blocked", 1)]
    (chat,) = [span for span in otel.spans("chat gpt-fake-1") if span.events]
    assert chat.status.status_code is StatusCode.ERROR
    caught = {record.getMessage().startswith("Error in span processor") for record in catching_sdk}
    assert caught == {True}
    assert all("processor failed" in str(record.exc_info[1]) for record in catching_sdk)


def test_a_guarded_stream_refuses_the_wrong_sentence_with_the_sdk_catching(
    instrumented: Otel, catching_sdk: list[logging.LogRecord]
) -> None:
    """``guard_stream``: the refused sentence never arrives and the claim error reaches the
    app from the stream, with the SDK catching processor exceptions."""
    otel = instrumented
    otel.install(revenue_config())
    received: list[Any] = []
    turns = [streamed.answer(streamed.WRONG)]
    with FakeOpenAI(turns) as api, pytest.raises(FactBoundaryError) as raised:
        streamed.stream_chat(api, otel.tracer, received)
    assert str(raised.value) == (
        "unsupported claim in field '*' (boundary 'revenue_answer', check numbers_recorded, "
        "reason number_unrecorded)"
    )
    assert "".join(map(streamed.text_of, received)) == streamed.FIRST
    assert blocked_counts(otel) == [("blocked", 1)]
    assert catching_sdk
