"""The guard behind the real ``openai`` client instrumented by openinference-instrumentation-openai
(LLM spans), with the tool result on an OpenInference TOOL span, against the fake OpenAI server.

OpenInference catches exceptions raised by ``span.end()``, so enforcement goes through an
``enforce()`` scope (the guard's documented answer for instrumentations that swallow them)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest
from fake_openai import FakeOpenAI, answer_turn, tool_call_turn
from integration_harness import Otel, events
from openinference.instrumentation.openai import OpenAIInstrumentor
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode, format_span_id

from groundplane_otel.checks.superlative import superlative
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec, enforce

CTR = {"north": 0.0412, "harbour": 0.0455, "delta": 0.0301}
RIGHT = {"winner": "harbour", "ctr": 0.0455}
WRONG = {"winner": "north", "ctr": 0.0412}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "warehouse_query",
            "parameters": {"type": "object", "properties": {"window": {"type": "string"}}},
        },
    }
]
# An OpenInference AGENT span: the guard matches its agent.name like gen_ai.agent.name.
AGENT = {"openinference.span.kind": "AGENT", "agent.name": "campaign-analyst"}


def config(mode: str = "enforce") -> GuardConfig:
    spec = BoundarySpec(
        "campaign_answer",
        ("campaign_ctr",),
        (superlative(fact="campaign_ctr", score_field="ctr"),),
        match=MatchSpec(agent_name="campaign-analyst"),
        report_mode="first",
    )
    fact = FactSpec("campaign_ctr", "warehouse_query", kind="ranking")
    return GuardConfig(facts=(fact,), boundaries=(spec,), mode=mode)  # type: ignore[arg-type]


@pytest.fixture
def instrumented(otel: Otel) -> Iterator[None]:
    """OpenInference's OpenAI instrumentor on the test's tracer provider, removed afterwards."""
    instrumentor = OpenAIInstrumentor()
    instrumentor.instrument(tracer_provider=otel.tracer_provider)
    yield
    instrumentor.uninstrument()


def run_agent(api: FakeOpenAI, tracer: Any) -> dict[str, Any]:
    """AGENT -> LLM (asks for the tool) -> TOOL (OpenInference attributes) -> LLM (answer)."""
    client = openai.OpenAI(base_url=api.base_url, api_key="test", max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Which campaign won?"}]
    with tracer.start_as_current_span("campaign-analyst", attributes=AGENT):
        first = client.chat.completions.create(model="gpt-fake-1", messages=messages, tools=TOOLS)
        call = first.choices[0].message.tool_calls[0]
        tool_attributes = {
            "openinference.span.kind": "TOOL",
            "tool.name": call.function.name,
            "tool.id": call.id,
            "input.value": call.function.arguments,
            "input.mime_type": "application/json",
        }
        with tracer.start_as_current_span(call.function.name, attributes=tool_attributes) as span:
            result = dict(CTR)
            span.set_attribute("output.value", json.dumps(result))
            span.set_attribute("output.mime_type", "application/json")
        messages += [
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": json.dumps(result)},
        ]
        final = client.chat.completions.create(
            model="gpt-fake-1", messages=messages, response_format={"type": "json_object"}
        )
        return dict(json.loads(final.choices[0].message.content or ""))


def llm_spans(otel: Otel) -> list[ReadableSpan]:
    return [s for s in otel.spans() if (s.attributes or {}).get("openinference.span.kind") == "LLM"]


def script(final: dict[str, Any]) -> list[Any]:
    return [tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(final)]


def test_right_answer_passes(otel: Otel, instrumented: None) -> None:
    """The TOOL span's output.value becomes the fact; the final LLM span passes; the tool-call
    LLM span is not an output."""
    otel.install(config())
    with FakeOpenAI(script(RIGHT)) as api:
        assert run_agent(api, otel.tracer) == RIGHT
    ask, final = llm_spans(otel)
    assert "groundplane.outcome" not in (ask.attributes or {})
    assert (final.attributes or {})["groundplane.outcome"] == "passed"
    assert otel.metrics()["groundplane.facts"] == [
        (
            {
                "groundplane.fact.kind": "ranking",
                "groundplane.fact.source": "openinference",
                "groundplane.fact.outcome": "recorded",
            },
            1,
        )
    ]


def test_wrong_answer_raises_from_the_enforce_scope(
    otel: Otel, instrumented: None, caplog: pytest.LogCaptureFixture
) -> None:
    """OpenInference swallows exceptions raised by span.end(), so the app opens enforce(defer=True):
    the client call returns, the scope raises UnsupportedClaim on exit, nothing is logged as an
    instrumentation error, and the exported LLM span carries the event pointing at the TOOL span.
    Its status is ERROR although OpenInference set OK before end() (the guard overrides it)."""
    otel.install(config())
    returned: list[dict[str, Any]] = []
    with (
        FakeOpenAI(script(WRONG)) as api,
        pytest.raises(UnsupportedClaim) as caught,
        enforce(defer=True),
    ):
        returned.append(run_agent(api, otel.tracer))
    assert returned == [WRONG]
    assert (caught.value.claimed, caught.value.supported) == ("north", "harbour")
    assert [r.getMessage() for r in caplog.records if r.levelname == "ERROR"] == []
    _, final = llm_spans(otel)
    tool_span = otel.span("warehouse_query")
    event, evaluation = events(final)
    assert (evaluation["name"], evaluation["gen_ai.evaluation.score.label"]) == (
        "gen_ai.evaluation.result",
        "unsupported",
    )
    keys = ("gen_ai.guardrail.result.reason", "groundplane.fact.tool", "groundplane.fact.span_id")
    assert {key: event[key] for key in keys} == {
        "gen_ai.guardrail.result.reason": "wrong_winner",
        "groundplane.fact.tool": "warehouse_query",
        "groundplane.fact.span_id": format_span_id(tool_span.context.span_id),
    }
    assert (final.attributes or {})["groundplane.outcome"] == "blocked"
    assert (final.status.status_code, final.status.description) == (
        StatusCode.ERROR,
        "groundplane: output blocked by boundary 'campaign_answer' (1 finding(s))",
    )


def test_without_a_scope_the_instrumentation_swallows_the_claim(
    otel: Otel, instrumented: None, caplog: pytest.LogCaptureFixture
) -> None:
    """Documents the trap: without enforce(), OpenInference catches the UnsupportedClaim raised at
    span end and logs "Failed to end span"; the wrong answer reaches the app (telemetry intact)."""
    otel.install(config())
    with FakeOpenAI(script(WRONG)) as api:
        assert run_agent(api, otel.tracer) == WRONG
    errors = [r for r in caplog.records if r.levelname == "ERROR"]
    assert [(r.name, r.getMessage()) for r in errors] == [
        ("openinference.instrumentation.openai._with_span", "Failed to end span")
    ]
    assert errors[0].exc_info is not None
    assert isinstance(errors[0].exc_info[1], UnsupportedClaim)
    _, final = llm_spans(otel)
    assert (final.attributes or {})["groundplane.outcome"] == "blocked"


def test_observe_mode_flags(otel: Otel, instrumented: None) -> None:
    """Observe: the wrong answer reaches the app; the LLM span is flagged with the event."""
    otel.install(config(mode="observe"))
    with FakeOpenAI(script(WRONG)) as api:
        assert run_agent(api, otel.tracer) == WRONG
    _, final = llm_spans(otel)
    assert (final.attributes or {})["groundplane.outcome"] == "flagged"
    assert [(e["name"], e.get("gen_ai.guardrail.result.value")) for e in events(final)] == [
        ("gen_ai.guardrail.result", "unsupported"),
        ("gen_ai.evaluation.result", None),
    ]


def _stream(api: FakeOpenAI, tracer: Any, chunks: list[str]) -> None:
    client = openai.OpenAI(base_url=api.base_url, api_key="test", max_retries=0)
    tool_attributes = {
        "openinference.span.kind": "TOOL",
        "tool.name": "warehouse_query",
        "output.value": json.dumps(CTR),
    }
    with tracer.start_as_current_span("campaign-analyst", attributes=AGENT):
        with tracer.start_as_current_span("warehouse_query", attributes=tool_attributes):
            pass
        stream = client.chat.completions.create(
            model="gpt-fake-1",
            messages=[{"role": "user", "content": "Which campaign won?"}],
            stream=True,
        )
        chunks.extend(c.choices[0].delta.content or "" for c in stream if c.choices)


def test_stream_is_rejected_after_the_last_chunk(otel: Otel, instrumented: None) -> None:
    """A streamed wrong answer through OpenInference: every chunk reaches the app, then the
    enforce() scope raises UnsupportedClaim."""
    otel.install(config())
    chunks: list[str] = []
    with (
        FakeOpenAI([answer_turn(WRONG)]) as api,
        pytest.raises(UnsupportedClaim),
        enforce(defer=True),
    ):
        _stream(api, otel.tracer, chunks)
    assert "".join(chunks) == json.dumps(WRONG)
    (span,) = llm_spans(otel)
    assert (span.attributes or {})["groundplane.outcome"] == "blocked"
