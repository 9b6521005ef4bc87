"""The guard behind the real ``openai`` client instrumented by opentelemetry-instrumentation-genai-
openai, talking to a loopback fake OpenAI server: agent loop, JSON format, parse(), enforce and
observe, content capture on and off, streaming and the Responses API."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import openai
import pytest
from fake_openai import FakeOpenAI, Turn, answer_turn, tool_call_turn
from integration_harness import Otel, events
from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode, format_span_id
from pydantic import BaseModel

from groundplane_otel.checks.superlative import superlative
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.otel import (
    BoundarySpec,
    FactSpec,
    GuardConfig,
    MatchSpec,
    OutputUnchecked,
    submit_output,
    tool,
)

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
CTR = {"north": 0.0412, "harbour": 0.0455, "delta": 0.0301}
RIGHT = {"winner": "harbour", "ctr": 0.0455}
WRONG = {"winner": "north", "ctr": 0.0412}
AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "campaign-analyst"}
RULE = "superlative(fact='campaign_ctr', field='winner')"
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
WRONG_MESSAGE = (
    "unsupported claim in field 'winner': model said 'north', registered facts support "
    "'harbour' | fact='campaign_ctr' | provenance=warehouse_query(window='7d') | computed "
    "argmax on 'score' is 'harbour' (0.0455); 'north' ranked #2 at 0.0412"
)


def config(*, mode: str = "enforce", match: MatchSpec | None = None) -> GuardConfig:
    """warehouse_query results become the ranking campaign_ctr; answers of the
    campaign-analyst agent must name its argmax and quote its score."""
    spec = BoundarySpec(
        "campaign_answer",
        ("campaign_ctr",),
        (superlative(fact="campaign_ctr", score_field="ctr"),),
        match=match if match is not None else MatchSpec(agent_name="campaign-analyst"),
        report_mode="first",
    )
    fact = FactSpec("campaign_ctr", "warehouse_query", kind="ranking")
    return GuardConfig(facts=(fact,), boundaries=(spec,), mode=mode)  # type: ignore[arg-type]


@pytest.fixture
def instrument(otel: Otel, monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[str], None]]:
    """instrument(content_mode): set the content env var, then instrument the OpenAI client
    with the test's providers (the instrumentation reads the variable at instrument time)."""
    instrumentor = OpenAIInstrumentor()

    def apply(content_mode: str) -> None:
        if content_mode:
            monkeypatch.setenv(CONTENT_ENV, content_mode)
        else:
            monkeypatch.delenv(CONTENT_ENV, raising=False)
        instrumentor.instrument(
            tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider
        )

    yield apply
    if instrumentor.is_instrumented_by_opentelemetry:
        instrumentor.uninstrument()


def warehouse_query(window: str) -> dict[str, float]:
    """The application's tool: CTR per campaign (ground truth)."""
    assert window == "7d"
    return dict(CTR)


def run_agent(api: FakeOpenAI, tracer: Any, *, manual_tool_span: bool = False) -> dict[str, Any]:
    """invoke_agent -> chat (asks for the tool) -> execute_tool -> chat (final JSON answer)."""
    client = openai.OpenAI(base_url=api.base_url, api_key="test", max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Which campaign won?"}]
    with tracer.start_as_current_span("invoke_agent campaign-analyst", attributes=AGENT):
        first = client.chat.completions.create(model="gpt-fake-1", messages=messages, tools=TOOLS)
        call = first.choices[0].message.tool_calls[0]
        arguments = json.loads(call.function.arguments)
        if manual_tool_span:
            attributes = {
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": call.function.name,
                "gen_ai.tool.call.id": call.id,
                "gen_ai.tool.call.arguments": call.function.arguments,
            }
            with tracer.start_as_current_span(
                f"execute_tool {call.function.name}", attributes=attributes
            ) as span:
                result = warehouse_query(**arguments)
                span.set_attribute("gen_ai.tool.call.result", json.dumps(result))
        else:
            result = tool("warehouse_query")(warehouse_query)(**arguments)
        messages += [
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)},
        ]
        final = client.chat.completions.create(
            model="gpt-fake-1",
            messages=messages,
            response_format={"type": "json_object"},
        )
        return dict(json.loads(final.choices[0].message.content or ""))


def chat_spans(otel: Otel) -> list[ReadableSpan]:
    return otel.spans("chat gpt-fake-1")


def evaluation_event(span: ReadableSpan, label: str) -> dict[str, Any]:
    """The superlative check's gen_ai.evaluation.result, with the chat span's response id."""
    response_id = (span.attributes or {})["gen_ai.response.id"]
    assert str(response_id).startswith("chatcmpl-fake-")  # the fake server's completion id
    return {
        "name": "gen_ai.evaluation.result",
        "gen_ai.evaluation.name": "superlative",
        "gen_ai.evaluation.score.label": label,
        "gen_ai.response.id": response_id,
    }


def guardrail_event(span: ReadableSpan, tool_span: ReadableSpan) -> dict[str, Any]:
    return {
        "name": "gen_ai.guardrail.result",
        "gen_ai.guardrail.component.name": "groundplane",
        "gen_ai.guardrail.policy.id": "campaign_answer",
        "gen_ai.guardrail.result.type": "verdict",
        "gen_ai.guardrail.result.value": "unsupported",
        "gen_ai.guardrail.result.reason": "wrong_winner",
        "gen_ai.guardrail.source": "model_response",
        "gen_ai.guardrail.policy.rule.id": RULE,
        "groundplane.check": "superlative",
        "groundplane.field": "winner",
        "groundplane.fact": "campaign_ctr",
        "groundplane.fact.tool": "warehouse_query",
        "groundplane.fact.trace_id": f"{tool_span.context.trace_id:032x}",
        "groundplane.fact.span_id": format_span_id(tool_span.context.span_id),
    }


def script(final: Sequence[Turn]) -> list[Turn]:
    return [tool_call_turn("warehouse_query", {"window": "7d"}), *final]


# -- the agent loop -------------------------------------------------------------------------------


@pytest.mark.parametrize("manual_tool_span", [False, True], ids=["tool-decorator", "manual-span"])
def test_agent_loop_right_answer_passes(
    otel: Otel, instrument: Callable[[str], None], manual_tool_span: bool
) -> None:
    """Tool-call turn ignored, tool result captured as a fact, the right final answer passes:
    the final chat span is OK with outcome passed, and the fact came from the tool span."""
    otel.install(config())
    instrument("SPAN_ONLY")
    with FakeOpenAI(script([answer_turn(RIGHT)])) as api:
        assert run_agent(api, otel.tracer, manual_tool_span=manual_tool_span) == RIGHT
        assert api.requests[1]["messages"][-1] == {
            "role": "tool",
            "tool_call_id": "call_1",
            "content": json.dumps(CTR),
        }
    ask, final = chat_spans(otel)
    assert "groundplane.outcome" not in (ask.attributes or {})
    assert (final.attributes or {})["groundplane.outcome"] == "passed"
    assert (final.status.status_code, events(final)) == (
        StatusCode.UNSET,
        [evaluation_event(final, "supported")],
    )
    source = "genai" if manual_tool_span else "code"
    assert otel.metrics()["groundplane.facts"] == [
        (
            {
                "groundplane.fact.kind": "ranking",
                "groundplane.fact.source": source,
                "groundplane.fact.outcome": "recorded",
            },
            1,
        )
    ]


@pytest.mark.parametrize("manual_tool_span", [False, True], ids=["tool-decorator", "manual-span"])
def test_agent_loop_wrong_answer_raises_from_the_client_call(
    otel: Otel, instrument: Callable[[str], None], manual_tool_span: bool
) -> None:
    """Enforce: the wrong winner raises UnsupportedClaim out of chat.completions.create, and the
    exported chat span is ERROR with the guardrail event linking the tool span."""
    otel.install(config())
    instrument("SPAN_ONLY")
    with FakeOpenAI(script([answer_turn(WRONG)])) as api, pytest.raises(UnsupportedClaim) as caught:
        run_agent(api, otel.tracer, manual_tool_span=manual_tool_span)
    assert caught.value.diagnosis == WRONG_MESSAGE
    _, final = chat_spans(otel)
    tool_span = otel.span("execute_tool warehouse_query")
    assert final.status.status_code is StatusCode.ERROR
    assert {k: v for k, v in (final.attributes or {}).items() if k.startswith("groundplane.")} == {
        "groundplane.boundary": "campaign_answer",
        "groundplane.boundary_matched": True,
        "groundplane.outcome": "blocked",
        "groundplane.violations": 1,
        "groundplane.facts": ("campaign_ctr",),
        "groundplane.mode": "enforce",
    }
    assert events(final) == [
        guardrail_event(final, tool_span),
        evaluation_event(final, "unsupported"),
    ]
    assert [link.context.span_id for link in final.links] == [tool_span.context.span_id]
    assert otel.metrics()["groundplane.outputs"] == [
        (
            {
                "groundplane.boundary": "campaign_answer",
                "groundplane.outcome": "blocked",
                "groundplane.mode": "enforce",
                "gen_ai.agent.name": "campaign-analyst",
            },
            1,
        )
    ]


def test_observe_mode_flags_without_raising(otel: Otel, instrument: Callable[[str], None]) -> None:
    """Observe: the wrong answer reaches the app, the span keeps UNSET status but carries the
    event and outcome flagged."""
    otel.install(config(mode="observe"))
    instrument("SPAN_ONLY")
    with FakeOpenAI(script([answer_turn(WRONG)])) as api:
        assert run_agent(api, otel.tracer) == WRONG
    _, final = chat_spans(otel)
    assert final.status.status_code is StatusCode.UNSET
    assert (final.attributes or {})["groundplane.outcome"] == "flagged"
    guardrail, evaluation = events(final)
    assert guardrail["gen_ai.guardrail.result.reason"] == "wrong_winner"
    assert evaluation == evaluation_event(final, "unsupported")
    assert otel.metrics()["groundplane.claims"] == [
        (
            {
                "groundplane.check": "superlative",
                "groundplane.verdict": "unsupported",
                "groundplane.boundary": "campaign_answer",
                "groundplane.mode": "observe",
                "gen_ai.agent.name": "campaign-analyst",
            },
            1,
        )
    ]


# -- JSON response format and parse() -----------------------------------------------------------


class CampaignAnswer(BaseModel):
    winner: str
    ctr: float


def _parse(api: FakeOpenAI, tracer: Any) -> CampaignAnswer | None:
    client = openai.OpenAI(base_url=api.base_url, api_key="test", max_retries=0)
    with tracer.start_as_current_span("invoke_agent campaign-analyst", attributes=AGENT):
        tool("warehouse_query")(warehouse_query)(window="7d")
        completion = client.chat.completions.parse(
            model="gpt-fake-1",
            messages=[{"role": "user", "content": "Which campaign won?"}],
            response_format=CampaignAnswer,
        )
    return completion.choices[0].message.parsed


def test_parse_is_traced_and_checked(otel: Otel, instrument: Callable[[str], None]) -> None:
    """chat.completions.parse() with a pydantic response_format: the right answer parses and
    passes (span gen_ai.output.type=json); the wrong one raises out of parse()."""
    otel.install(config())
    instrument("SPAN_ONLY")
    with FakeOpenAI([answer_turn(RIGHT)]) as api:
        assert _parse(api, otel.tracer) == CampaignAnswer(winner="harbour", ctr=0.0455)
        assert api.requests[0]["response_format"]["type"] == "json_schema"
    (span,) = chat_spans(otel)
    attributes = span.attributes or {}
    assert (attributes["gen_ai.output.type"], attributes["groundplane.outcome"]) == (
        "json",
        "passed",
    )
    with FakeOpenAI([answer_turn(WRONG)]) as api, pytest.raises(UnsupportedClaim) as caught:
        _parse(api, otel.tracer)
    assert caught.value.code == "wrong_winner"


# -- content capture off --------------------------------------------------------------------------


def test_content_off_fails_closed_with_a_clear_reason(
    otel: Otel, instrument: Callable[[str], None]
) -> None:
    """Without content capture the chat span has no output to read: enforce fails closed with
    OutputUnchecked (output_unreadable), even for the right answer, and says so on the span."""
    otel.install(config())
    instrument("")
    with FakeOpenAI(script([answer_turn(RIGHT)])) as api, pytest.raises(OutputUnchecked) as caught:
        run_agent(api, otel.tracer)
    assert caught.value.code == "output_unreadable"
    assert caught.value.diagnosis.startswith(
        "boundary 'campaign_answer' could not check the output (output_unreadable): "
    )
    _, final = chat_spans(otel)
    assert "gen_ai.output.messages" not in (final.attributes or {})
    (event,) = events(final)
    assert (event["gen_ai.guardrail.result.value"], event["gen_ai.guardrail.result.reason"]) == (
        "error",
        "output_unreadable",
    )
    assert (final.attributes or {})["groundplane.outcome"] == "error"


def _submitted(api: FakeOpenAI, tracer: Any) -> dict[str, Any]:
    """The app checks the parsed answer itself: submit_output on its own span."""
    client = openai.OpenAI(base_url=api.base_url, api_key="test", max_retries=0)
    with tracer.start_as_current_span("campaign answer") as span:
        tool("warehouse_query")(warehouse_query)(window="7d")
        completion = client.chat.completions.create(
            model="gpt-fake-1",
            messages=[{"role": "user", "content": "Which campaign won?"}],
            response_format={"type": "json_object"},
        )
        answer = dict(json.loads(completion.choices[0].message.content or ""))
        submit_output(answer, span, boundary="campaign_answer")
    return answer


@pytest.mark.parametrize(
    ("answer", "passes"), [(RIGHT, True), (WRONG, False)], ids=["right", "wrong"]
)
def test_content_off_submit_output_still_checks(
    otel: Otel, instrument: Callable[[str], None], answer: dict[str, Any], passes: bool
) -> None:
    """Content off, boundary matched only by name: the output the app submits is checked when
    its span ends — the right answer passes, the wrong one raises at the end of that span."""
    otel.install(config(match=MatchSpec()))
    instrument("NO_CONTENT")
    with FakeOpenAI([answer_turn(answer)]) as api:
        if passes:
            assert _submitted(api, otel.tracer) == RIGHT
        else:
            with pytest.raises(UnsupportedClaim) as caught:
                _submitted(api, otel.tracer)
            assert caught.value.code == "wrong_winner"
    (chat,) = chat_spans(otel)
    assert "groundplane.outcome" not in (chat.attributes or {})  # the chat span is not guarded
    outcome = (otel.span("campaign answer").attributes or {})["groundplane.outcome"]
    assert outcome == ("passed" if passes else "blocked")


# -- streaming ------------------------------------------------------------------------------------


def _stream(api: FakeOpenAI, tracer: Any, chunks: list[str]) -> None:
    client = openai.OpenAI(base_url=api.base_url, api_key="test", max_retries=0)
    with tracer.start_as_current_span("invoke_agent campaign-analyst", attributes=AGENT):
        tool("warehouse_query")(warehouse_query)(window="7d")
        stream = client.chat.completions.create(
            model="gpt-fake-1",
            messages=[{"role": "user", "content": "Which campaign won?"}],
            stream=True,
            stream_options={"include_usage": True},
        )
        for chunk in stream:
            if chunk.choices and chunk.choices[0].delta.content:
                chunks.append(chunk.choices[0].delta.content)


def test_stream_is_rejected_after_the_last_chunk(
    otel: Otel, instrument: Callable[[str], None]
) -> None:
    """A streamed wrong answer: every chunk reaches the app first, then the iteration raises
    UnsupportedClaim when the stream is exhausted (the span ends there)."""
    otel.install(config())
    instrument("SPAN_ONLY")
    chunks: list[str] = []
    with FakeOpenAI([answer_turn(WRONG)]) as api, pytest.raises(UnsupportedClaim) as caught:
        _stream(api, otel.tracer, chunks)
    assert "".join(chunks) == json.dumps(WRONG)
    assert caught.value.code == "wrong_winner"
    (span,) = chat_spans(otel)
    assert (span.attributes or {})["gen_ai.request.stream"] is True
    assert (span.attributes or {})["groundplane.outcome"] == "blocked"


def test_stream_right_answer_passes(otel: Otel, instrument: Callable[[str], None]) -> None:
    """A streamed right answer is consumed to the end without error and counted as passed."""
    otel.install(config())
    instrument("SPAN_ONLY")
    chunks: list[str] = []
    with FakeOpenAI([answer_turn(RIGHT)]) as api:
        _stream(api, otel.tracer, chunks)
    assert json.loads("".join(chunks)) == RIGHT
    (span,) = chat_spans(otel)
    assert (span.attributes or {})["groundplane.outcome"] == "passed"


# -- async client and the Responses API -----------------------------------------------------------


def test_async_client_raises_from_await(otel: Otel, instrument: Callable[[str], None]) -> None:
    """AsyncOpenAI: the wrong answer raises UnsupportedClaim out of the awaited create()."""
    otel.install(config())
    instrument("SPAN_ONLY")

    async def main(api: FakeOpenAI) -> None:
        client = openai.AsyncOpenAI(base_url=api.base_url, api_key="test", max_retries=0)
        with otel.tracer.start_as_current_span("invoke_agent campaign-analyst", attributes=AGENT):
            tool("warehouse_query")(warehouse_query)(window="7d")
            await client.chat.completions.create(
                model="gpt-fake-1",
                messages=[{"role": "user", "content": "Which campaign won?"}],
                response_format={"type": "json_object"},
            )

    with FakeOpenAI([answer_turn(WRONG)]) as api, pytest.raises(UnsupportedClaim) as caught:
        asyncio.run(main(api))
    assert caught.value.code == "wrong_winner"


def _respond(api: FakeOpenAI, tracer: Any) -> str:
    client = openai.OpenAI(base_url=api.base_url, api_key="test", max_retries=0)
    with tracer.start_as_current_span("invoke_agent campaign-analyst", attributes=AGENT):
        tool("warehouse_query")(warehouse_query)(window="7d")
        return client.responses.create(model="gpt-fake-1", input="Which campaign won?").output_text


def test_responses_api_is_checked(otel: Otel, instrument: Callable[[str], None]) -> None:
    """responses.create: the right answer passes, the wrong one raises; both spans are chat
    spans of api type responses."""
    otel.install(config())
    instrument("SPAN_ONLY")
    with FakeOpenAI([answer_turn(RIGHT), answer_turn(WRONG)]) as api:
        assert json.loads(_respond(api, otel.tracer)) == RIGHT
        with pytest.raises(UnsupportedClaim) as caught:
            _respond(api, otel.tracer)
    assert caught.value.code == "wrong_winner"
    passed, blocked = chat_spans(otel)
    assert [(s.attributes or {})["openai.api.type"] for s in (passed, blocked)] == ["responses"] * 2
    assert [(s.attributes or {})["groundplane.outcome"] for s in (passed, blocked)] == [
        "passed",
        "blocked",
    ]
    assert blocked.status.status_code is StatusCode.ERROR
