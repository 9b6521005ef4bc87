"""Two instrumentations wrapping one model call: each answer is checked and counted once, at the
innermost span that carries it, and the app gets the exception whichever span raised it.

Real nesting: opentelemetry-instrumentation-genai-openai wraps ``Completions.create`` (its
``chat`` span), OpenInference's OpenAI instrumentor wraps the client's transport (its
``ChatCompletion`` LLM span), so OpenInference is always inside, and it swallows what
``span.end()`` raises. The reverse nesting (an OpenInference LLM span of a framework around an
instrumented client call) is built here by hand, as LangChain's OpenInference instrumentation
does: an LLM span whose ``llm.output_messages.*`` are set after the call returns."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from typing import Any

import openai
import pytest
from fake_openai import FakeOpenAI, answer_turn, tool_call_turn
from integration_harness import Otel
from openinference.instrumentation.openai import OpenAIInstrumentor as OpenInferenceInstrumentor
from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor as GenAIInstrumentor
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from groundplane_otel.checks.superlative import superlative
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
CTR = {"north": 0.0412, "harbour": 0.0455, "delta": 0.0301}
RIGHT = {"winner": "harbour", "ctr": 0.0455}
WRONG = {"winner": "north", "ctr": 0.0412}
AGENT = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "campaign-analyst"}
GENAI, OPENINFERENCE, FRAMEWORK = "chat gpt-fake-1", "ChatCompletion", "framework LLM"
LABELS = {
    "groundplane.boundary": "campaign_answer",
    "groundplane.mode": "enforce",
    "gen_ai.agent.name": "campaign-analyst",  # the boundary's configured match
}
# nesting -> (inner span name, outer span name)
NESTINGS = {"openinference-inside": (OPENINFERENCE, GENAI), "genai-inside": (GENAI, FRAMEWORK)}


def config() -> GuardConfig:
    spec = BoundarySpec(
        "campaign_answer",
        ("campaign_ctr",),
        (superlative(fact="campaign_ctr", score_field="ctr"),),
        match=MatchSpec(agent_name="campaign-analyst"),
        report_mode="first",
    )
    fact = FactSpec("campaign_ctr", "warehouse_query", kind="ranking")
    return GuardConfig(facts=(fact,), boundaries=(spec,))


@pytest.fixture
def instrumented(otel: Otel) -> Iterator[Callable[[str, str], None]]:
    """instrument(nesting, content_mode): genai-openai always (content per ``content_mode``),
    OpenInference's instrumentor too for ``openinference-inside``; removed afterwards."""
    applied: list[Any] = []

    def apply(nesting: str, content_mode: str) -> None:
        with pytest.MonkeyPatch.context() as patch:  # read at instrument time
            patch.setenv(CONTENT_ENV, content_mode)
            applied.append(GenAIInstrumentor())
            if nesting == "openinference-inside":
                applied.append(OpenInferenceInstrumentor())
            for instrumentor in applied:
                instrumentor.instrument(
                    tracer_provider=otel.tracer_provider, meter_provider=otel.meter_provider
                )

    yield apply
    for instrumentor in reversed(applied):
        instrumentor.uninstrument()


def framework_llm(tracer: Any, nesting: str) -> Callable[[Callable[[], Any]], Any]:
    """How the app calls the model: directly, or (``genai-inside``) inside a framework's
    OpenInference LLM span that records the response's message after the call returns."""

    def call(create: Callable[[], Any]) -> Any:
        if nesting != "genai-inside":
            return create()
        attributes = {"openinference.span.kind": "LLM"}
        with tracer.start_as_current_span(FRAMEWORK, attributes=attributes) as span:
            response = create()
            message = response.choices[0].message
            prefix = "llm.output_messages.0.message."
            span.set_attribute(prefix + "role", "assistant")
            if message.content:
                span.set_attribute(prefix + "content", message.content)
            for index, tool_call in enumerate(message.tool_calls or ()):
                span.set_attribute(f"{prefix}tool_calls.{index}.tool_call.id", tool_call.id)
            return response

    return call


def run_agent(api: FakeOpenAI, tracer: Any, nesting: str) -> dict[str, Any]:
    """invoke_agent -> chat (asks for the tool) -> execute_tool -> chat (the JSON answer)."""
    client = openai.OpenAI(base_url=api.base_url, api_key="test", max_retries=0)
    llm = framework_llm(tracer, nesting)
    messages: list[dict[str, Any]] = [{"role": "user", "content": "Which campaign won?"}]
    with tracer.start_as_current_span("invoke_agent campaign-analyst", attributes=AGENT):
        first = llm(lambda: client.chat.completions.create(model="gpt-fake-1", messages=messages))
        call = first.choices[0].message.tool_calls[0]
        tool = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": call.function.name,
            "gen_ai.tool.call.id": call.id,
            "gen_ai.tool.call.result": json.dumps(CTR),
        }
        with tracer.start_as_current_span(f"execute_tool {call.function.name}", attributes=tool):
            pass
        messages += [
            first.choices[0].message.model_dump(exclude_none=True),
            {"role": "tool", "tool_call_id": call.id, "content": json.dumps(CTR)},
        ]
        final = llm(lambda: client.chat.completions.create(model="gpt-fake-1", messages=messages))
        return dict(json.loads(final.choices[0].message.content or ""))


def final_call(otel: Otel, inner_name: str, outer_name: str) -> tuple[ReadableSpan, ReadableSpan]:
    """(inner, outer) spans of the final model call, checking how they nest."""
    inner = otel.spans(inner_name)[-1]
    outer = otel.spans(outer_name)[-1]
    assert inner.parent is not None
    assert inner.parent.span_id == outer.context.span_id
    return inner, outer


def guarded(otel: Otel) -> list[ReadableSpan]:
    return [
        span
        for span in otel.spans()
        if any(key.startswith("groundplane.") for key in span.attributes or {})
    ]


def script(answer: dict[str, Any]) -> list[Any]:
    return [tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(answer)]


@pytest.mark.parametrize("nesting", list(NESTINGS))
def test_wrong_answer_checked_once_at_the_inner_span_and_raised_to_the_app(
    otel: Otel, instrumented: Callable[[str, str], None], nesting: str
) -> None:
    """In both nestings the app gets UnsupportedClaim from the client call (OpenInference
    swallows it at the inner span: the outer span raises it again); only the inner LLM span of
    the final call is annotated (blocked, ERROR, one event); one output and one claim count."""
    instrumented(nesting, "SPAN_ONLY")
    otel.install(config())
    with FakeOpenAI(script(WRONG)) as api, pytest.raises(UnsupportedClaim) as caught:
        run_agent(api, otel.tracer, nesting)
    assert (caught.value.claimed, caught.value.supported) == ("north", "harbour")
    inner, outer = final_call(otel, *NESTINGS[nesting])
    assert guarded(otel) == [inner]
    assert (inner.attributes or {})["groundplane.outcome"] == "blocked"
    assert inner.status.status_code is StatusCode.ERROR
    assert [event.name for event in inner.events] == [
        "gen_ai.guardrail.result",
        "gen_ai.evaluation.result",
    ]
    assert [event.name for event in outer.events if event.name != "exception"] == []
    metrics = otel.metrics()
    assert metrics["groundplane.claims"] == [
        ({"groundplane.check": "superlative", "groundplane.verdict": "unsupported", **LABELS}, 1)
    ]
    assert metrics["groundplane.outputs"] == [({"groundplane.outcome": "blocked", **LABELS}, 1)]


@pytest.mark.parametrize("nesting", list(NESTINGS))
def test_right_answer_passes_once(
    otel: Otel, instrumented: Callable[[str, str], None], nesting: str
) -> None:
    """In both nestings the right answer reaches the app, checked once at the inner span."""
    instrumented(nesting, "SPAN_ONLY")
    otel.install(config())
    with FakeOpenAI(script(RIGHT)) as api:
        assert run_agent(api, otel.tracer, nesting) == RIGHT
    inner, _ = final_call(otel, *NESTINGS[nesting])
    assert guarded(otel) == [inner]
    assert (inner.attributes or {})["groundplane.outcome"] == "passed"
    metrics = otel.metrics()
    assert metrics["groundplane.claims"] == [
        ({"groundplane.check": "superlative", "groundplane.verdict": "supported", **LABELS}, 1)
    ]
    assert metrics["groundplane.outputs"] == [({"groundplane.outcome": "passed", **LABELS}, 1)]


@pytest.mark.parametrize("answer", [RIGHT, WRONG], ids=["right", "wrong"])
@pytest.mark.parametrize("nesting", list(NESTINGS))
def test_the_span_without_content_is_neither_checked_nor_failed(
    otel: Otel, instrumented: Callable[[str, str], None], nesting: str, answer: dict[str, Any]
) -> None:
    """genai-openai with content capture off carries no answer: its chat span is not checked
    (no false output_unreadable) when the OpenInference span of the same call carries it,
    inside or outside; that one is checked once and a wrong answer reaches the app as
    UnsupportedClaim."""
    instrumented(nesting, "NO_CONTENT")
    otel.install(config())
    raised: AbstractContextManager[Any] = (
        pytest.raises(UnsupportedClaim) if answer is WRONG else nullcontext()
    )
    with FakeOpenAI(script(answer)) as api, raised:
        assert run_agent(api, otel.tracer, nesting) == answer
    inner, outer = final_call(otel, *NESTINGS[nesting])
    carrier = inner if nesting == "openinference-inside" else outer
    assert guarded(otel) == [carrier]
    outcome = "blocked" if answer is WRONG else "passed"
    assert (carrier.attributes or {})["groundplane.outcome"] == outcome
    assert [value for _, value in otel.metrics()["groundplane.outputs"]] == [1]
