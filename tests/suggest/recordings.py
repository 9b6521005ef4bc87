"""Recordings of the runnable example agents with wrong answers injected, for the suggest tests.

Each recorder runs the real example agent (its own code, the real OpenTelemetry SDK, the
framework's own model or the loopback fake OpenAI server) into a Collector-format file
(``OtlpFileExporter``) and returns the trace ids of the runs whose answer was made wrong.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from groundplane_otel.otel.otlp_files import OtlpFileExporter

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))

Rows = list[dict[str, Any]]
WINDOWS = ("7d", "6d", "5d", "4d", "3d")


@contextlib.contextmanager
def _genai_content() -> Iterator[None]:
    """OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY for the block only."""
    name = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
    saved = os.environ.get(name)
    os.environ[name] = "SPAN_ONLY"
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved


def _wrong_total(rows: Rows) -> dict[str, Any]:
    import demo_agent

    answer = demo_agent.right_answer(rows)
    return {**answer, "total_clicks": answer["total_clicks"] + 17}


def _wrong_top3(rows: Rows) -> dict[str, Any]:
    import demo_agent

    answer = demo_agent.right_answer(rows)
    top = answer["top3"]
    return {**answer, "top3": [top[0], top[2], top[1]]}


def _wrong_ctr(rows: Rows) -> dict[str, Any]:
    import demo_agent

    answer = demo_agent.right_answer(rows)
    return {**answer, "ctr": round(answer["ctr"] + 0.001, 4)}


def record_demo(
    path: Path, runs: int = 60, wrong_every: int = 10, *, guarded: bool = False
) -> set[str]:
    """The demo's campaign analyst (examples/demo_agent.py) over varying windows; every
    ``wrong_every``-th run answers wrong (runner-up as winner, a wrong total, a misordered
    top 3, a wrong CTR, in turn). ``guarded``: recorded with the demo's policy installed
    (observe mode), so the spans carry what a live guard writes."""
    import dataclasses

    import demo_agent
    from opentelemetry.sdk.metrics import MeterProvider

    from groundplane_otel.otel import install
    from groundplane_otel.otel.policy import load_policy

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    if guarded:
        config = dataclasses.replace(load_policy(demo_agent.POLICY), mode="observe")
        guard = install(config, tracer_provider=provider, meter_provider=MeterProvider())
    tracer = provider.get_tracer("suggest-test")
    db = demo_agent.build_warehouse()
    wrongs: list[Callable[[Rows], dict[str, Any]]] = [
        demo_agent.wrong_winner,
        _wrong_total,
        _wrong_top3,
        _wrong_ctr,
    ]
    wrong_ids: set[str] = set()
    for index in range(runs):
        wrong = index % wrong_every == wrong_every - 1
        answer = wrongs[(index // wrong_every) % len(wrongs)] if wrong else demo_agent.right_answer
        window = WINDOWS[index % len(WINDOWS)]

        def ask(tracer: Any, window: str = window) -> dict[str, Any]:
            arguments = {"table": "campaign_daily", "window": window}
            call = {"type": "tool_call", "id": "call_1", "name": "warehouse.query"}
            call["arguments"] = arguments  # type: ignore[assignment]
            model.chat(tracer, [call], "tool_calls")
            return call

        model = demo_agent.ScriptedModel(answer)
        model.ask_for_rows = ask  # type: ignore[method-assign]
        with tracer.start_as_current_span("request") as root:
            demo_agent.run_agent(tracer, model, db)
            if wrong:
                wrong_ids.add(f"{root.get_span_context().trace_id:032x}")
    if guarded:
        guard.uninstall()
    provider.shutdown()
    return wrong_ids


def shuffled_ctr(rng: random.Random) -> dict[str, float]:
    """A CTR per campaign with one clear winner."""
    names = ["north", "harbour", "delta", "summit", "meadow"]
    return {name: round(rng.uniform(0.01, 0.09), 4) for name in names}


def best(ctr: dict[str, float]) -> tuple[str, float]:
    name = max(ctr, key=ctr.__getitem__)
    return name, ctr[name]


def runner_up(ctr: dict[str, float]) -> tuple[str, float]:
    name = sorted(ctr, key=ctr.__getitem__, reverse=True)[1]
    return name, ctr[name]


def json_answer(winner: tuple[str, float]) -> str:
    return json.dumps({"winner": winner[0], "ctr": winner[1]})


def record_openai(path: Path, runs: int = 30, wrong_every: int = 6) -> set[str]:
    """``_record_openai`` with the instrumentations' content switch on, restored afterwards (the
    guard's ``@tool`` follows it too: left on, it would leak into later tests)."""
    with _genai_content():
        return _record_openai(path, runs, wrong_every)


def _record_openai(path: Path, runs: int = 30, wrong_every: int = 6) -> set[str]:
    """examples/openai_agent.py's ``run_agent``: the real ``openai`` client, instrumented,
    against the loopback fake server; its tool runs in a GenAI ``execute_tool`` span carrying
    the result (as a tool instrumentation records it: the example's ``tool`` decorator records
    the fact in code, which no recording can replay); the CTRs change per run; every
    ``wrong_every``-th answer names the runner-up."""

    import openai
    import openai_agent
    from fake_openai import FakeOpenAI, answer_turn, tool_call_turn
    from opentelemetry.instrumentation.genai.openai import OpenAIInstrumentor
    from opentelemetry.sdk.metrics import MeterProvider

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    meters = MeterProvider()
    OpenAIInstrumentor().instrument(tracer_provider=provider, meter_provider=meters)
    tracer = provider.get_tracer("suggest-test")
    rng = random.Random(7)
    wrong_ids: set[str] = set()
    ctr: dict[str, float] = {}

    def warehouse_query(window: str) -> dict[str, float]:
        attributes = {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": "warehouse_query",
            "gen_ai.tool.call.arguments": json.dumps({"window": window}),
        }
        with tracer.start_as_current_span("execute_tool warehouse_query") as span:
            span.set_attributes(attributes)
            span.set_attribute("gen_ai.tool.call.result", json.dumps(ctr))
        return dict(ctr)

    decorated = openai_agent.warehouse_query
    openai_agent.warehouse_query = warehouse_query  # type: ignore[assignment]
    try:
        for index in range(runs):
            ctr.clear()
            ctr.update(shuffled_ctr(rng))
            wrong = index % wrong_every == wrong_every - 1
            claimed = runner_up(ctr) if wrong else best(ctr)
            script = [
                tool_call_turn("warehouse_query", {"window": "7d"}),
                answer_turn({"winner": claimed[0], "ctr": claimed[1]}),
            ]
            with FakeOpenAI(script) as api, tracer.start_as_current_span("request") as root:
                client = openai.OpenAI(base_url=api.base_url, api_key="not-needed", max_retries=0)
                openai_agent.run_agent(client, tracer)
                if wrong:
                    wrong_ids.add(f"{root.get_span_context().trace_id:032x}")
    finally:
        openai_agent.warehouse_query = decorated
        OpenAIInstrumentor().uninstrument()
        provider.shutdown()
        meters.shutdown()
    return wrong_ids


def record_pydantic_ai(path: Path, runs: int = 30, wrong_every: int = 5) -> set[str]:
    """A pydantic-ai agent as examples/pydantic_ai_agent.py builds it (its ``FunctionModel``,
    the real instrumentation with content on), answering in text (JSON); the tool's CTRs change
    per run; every ``wrong_every``-th answer names the runner-up."""
    from pydantic_ai import Agent
    from pydantic_ai.capabilities import Instrumentation
    from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart
    from pydantic_ai.models.function import AgentInfo, FunctionModel
    from pydantic_ai.models.instrumented import InstrumentationSettings

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    settings = InstrumentationSettings(tracer_provider=provider, include_content=True)
    tracer = provider.get_tracer("suggest-test")
    rng = random.Random(11)
    wrong_ids: set[str] = set()
    for index in range(runs):
        ctr = shuffled_ctr(rng)
        wrong = index % wrong_every == wrong_every - 1
        claimed = runner_up(ctr) if wrong else best(ctr)

        def respond(
            messages: list[ModelMessage], info: AgentInfo, claimed: Any = claimed
        ) -> ModelResponse:
            if len(messages) == 1:
                return ModelResponse(parts=[ToolCallPart("warehouse_query", {"window": "7d"})])
            return ModelResponse(parts=[TextPart(json_answer(claimed))])

        agent = Agent(
            FunctionModel(respond),
            name="campaign-analyst",
            capabilities=[Instrumentation(settings)],
        )

        @agent.tool_plain
        def warehouse_query(window: str, ctr: dict[str, float] = ctr) -> dict[str, float]:
            """CTR per campaign."""
            return dict(ctr)

        with tracer.start_as_current_span("request") as root:
            agent.run_sync("Which campaign won?")
            if wrong:
                wrong_ids.add(f"{root.get_span_context().trace_id:032x}")
    provider.shutdown()
    return wrong_ids


def record_demo_prose(path: Path, runs: int = 30, wrong_every: int = 5) -> set[str]:
    """The demo's campaign analyst answering in prose (its tool, its model's chat spans); every
    ``wrong_every``-th answer quotes a click count that is not in the table."""
    import demo_agent

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    tracer = provider.get_tracer("suggest-test")
    db = demo_agent.build_warehouse()
    wrong_ids: set[str] = set()

    class ProseModel(demo_agent.ScriptedModel):
        def __init__(self, window: str, wrong: bool) -> None:
            super().__init__(demo_agent.right_answer)
            self.window, self.wrong = window, wrong

        def ask_for_rows(self, tracer: Any) -> dict[str, Any]:
            arguments = {"table": "campaign_daily", "window": self.window}
            call = {"type": "tool_call", "id": "call_1", "name": "warehouse.query"}
            call["arguments"] = arguments  # type: ignore[assignment]
            self.chat(tracer, [call], "tool_calls")
            return call

        def final_answer(self, tracer: Any, rows: Rows) -> dict[str, Any]:
            top = max(rows, key=lambda row: row["ctr"])
            clicks = top["clicks"] + (1000 if self.wrong else 0)
            text = f"{top['campaign']} led with a CTR of {top['ctr']} on {clicks} clicks."
            self.chat(tracer, [{"type": "text", "content": text}], "stop")
            return {"text": text}

    for index in range(runs):
        wrong = index % wrong_every == wrong_every - 1
        model = ProseModel(WINDOWS[index % len(WINDOWS)], wrong)
        with tracer.start_as_current_span("request") as root:
            demo_agent.run_agent(tracer, model, db)
            if wrong:
                wrong_ids.add(f"{root.get_span_context().trace_id:032x}")
    provider.shutdown()
    return wrong_ids


def record_langchain(path: Path, runs: int = 30, wrong_every: int = 6) -> set[str]:
    """``_record_langchain`` with the instrumentations' content switch on, restored afterwards (the
    guard's ``@tool`` follows it too: left on, it would leak into later tests)."""
    with _genai_content():
        return _record_langchain(path, runs, wrong_every)


def _record_langchain(path: Path, runs: int = 30, wrong_every: int = 6) -> set[str]:
    """examples/langchain_agent.py's agent and tool: LangChain v1 ``create_agent`` through
    langchain-openai against the loopback fake server, traced by
    opentelemetry-instrumentation-genai-langchain with content capture on; the tool's CTRs
    change per run; every ``wrong_every``-th answer names the runner-up."""

    import _framework_setup
    import langchain_agent
    from fake_openai import FakeOpenAI, answer_turn, tool_call_turn
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI
    from opentelemetry.instrumentation.genai.langchain import LangChainInstrumentor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    LangChainInstrumentor().instrument(tracer_provider=provider)
    tracer = provider.get_tracer("suggest-test")
    rng = random.Random(13)
    wrong_ids: set[str] = set()
    ctr = _framework_setup.CTR  # the example's tool returns a copy of this dict
    saved = dict(ctr)
    try:
        for index in range(runs):
            ctr.clear()
            ctr.update(shuffled_ctr(rng))
            wrong = index % wrong_every == wrong_every - 1
            claimed = runner_up(ctr) if wrong else best(ctr)
            script = [
                tool_call_turn("warehouse_query", {"window": "7d"}),
                answer_turn({"winner": claimed[0], "ctr": claimed[1]}),
            ]
            with FakeOpenAI(script) as api, tracer.start_as_current_span("request") as root:
                model = ChatOpenAI(model="gpt-fake-1", base_url=api.base_url, api_key="not-needed")
                agent = create_agent(
                    model, tools=[langchain_agent.warehouse_query], name=langchain_agent.AGENT
                )
                agent.invoke({"messages": [{"role": "user", "content": "Which campaign won?"}]})
                if wrong:
                    wrong_ids.add(f"{root.get_span_context().trace_id:032x}")
    finally:
        ctr.clear()
        ctr.update(saved)
        LangChainInstrumentor().uninstrument()
        provider.shutdown()
    return wrong_ids
