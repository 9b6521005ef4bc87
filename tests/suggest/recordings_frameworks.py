"""Recordings of the framework example agents (LangGraph, the OpenAI Agents SDK traced by the
GenAI instrumentations and by OpenInference, Traceloop, MCP) with wrong answers injected.

As in ``recordings.py``: each recorder runs the example's own agent and tool with the real
framework and instrumentation against the loopback fake OpenAI server, into a Collector-format
file (``OtlpFileExporter``); the tool's CTRs change per run, every ``wrong_every``-th answer names
the runner-up, and the recorder returns those runs' trace ids. Some also record the example as
written: behind its adapter with the guard on (``guarded``), or recording its facts in code
(``as_written``, ``record_langgraph_state``), which no recording can replay.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Span, Tracer
from recordings import best, runner_up, shuffled_ctr

from groundplane_otel.otel.otlp_files import OtlpFileExporter

CONTENT_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


@dataclass(frozen=True, slots=True)
class Turn:
    """One run to record: its CTRs, the answer the model gives, whether it is wrong."""

    ctr: dict[str, float]
    answer: dict[str, Any]
    wrong: bool

    def script(self) -> list[Any]:
        """The fake server's turns: the tool call, then the answer."""
        from fake_openai import answer_turn, tool_call_turn

        return [tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(self.answer)]


def turns(seed: int, runs: int, wrong_every: int) -> Iterator[Turn]:
    """``runs`` turns with fresh CTRs; every ``wrong_every``-th names the runner-up."""
    rng = random.Random(seed)
    for index in range(runs):
        ctr = shuffled_ctr(rng)
        wrong = index % wrong_every == wrong_every - 1
        winner, score = runner_up(ctr) if wrong else best(ctr)
        yield Turn(ctr, {"winner": winner, "ctr": score}, wrong)


def recorder(path: Path, *, guarded: bool = False) -> TracerProvider:
    """A provider exporting every span to ``path`` (Collector file-exporter format); ``guarded``:
    sampled as a guard wants it (``GuardSampler``)."""
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON

    from groundplane_otel.otel.sampling import GuardSampler

    provider = TracerProvider(sampler=GuardSampler(ALWAYS_ON)) if guarded else TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    return provider


def content_on(name: str, value: str) -> Callable[[], None]:
    """Set the instrumentation's content-capture variable; the returned call restores it."""
    saved = os.environ.get(name)
    os.environ[name] = value

    def restore() -> None:
        if saved is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = saved

    return restore


def trace_id(span: Span) -> str:
    return f"{span.get_span_context().trace_id:032x}"


@contextmanager
def shared_ctr() -> Iterator[dict[str, float]]:
    """The examples' shared CTR dict (``_framework_setup.CTR``, which their tools copy), restored
    on exit."""
    import _framework_setup

    ctr = _framework_setup.CTR
    saved = dict(ctr)
    try:
        yield ctr
    finally:
        ctr.clear()
        ctr.update(saved)


def tool_span(tracer: Tracer, tool: str, arguments: dict[str, Any], result: Any) -> None:
    """A GenAI ``execute_tool`` span carrying the call's arguments and result, as a tool
    instrumentation with content capture on records it."""
    attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": tool,
        "gen_ai.tool.call.arguments": json.dumps(arguments),
        "gen_ai.tool.call.result": json.dumps(result),
    }
    with tracer.start_as_current_span(f"execute_tool {tool}", attributes=attributes):
        pass


def record_langgraph(path: Path, runs: int = 30, wrong_every: int = 6) -> set[str]:
    """LangGraph's prebuilt ``create_react_agent`` over examples/langchain_agent.py's tool (its
    ``--langgraph`` agent, without the guard's hooks), through langchain-openai against the fake
    server, traced by opentelemetry-instrumentation-genai-langchain with content capture on."""
    import warnings

    import langchain_agent
    from fake_openai import FakeOpenAI
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent
    from opentelemetry.instrumentation.genai.langchain import LangChainInstrumentor

    restore = content_on(CONTENT_ENV, "SPAN_ONLY")
    provider = recorder(path)
    LangChainInstrumentor().instrument(tracer_provider=provider)
    tracer = provider.get_tracer("suggest-test")
    wrong_ids: set[str] = set()
    try:
        with shared_ctr() as ctr:
            for turn in turns(17, runs, wrong_every):
                ctr.clear()
                ctr.update(turn.ctr)
                with FakeOpenAI(turn.script()) as api, tracer.start_as_current_span("r") as root:
                    model = ChatOpenAI(
                        model="gpt-fake-1", base_url=api.base_url, api_key="not-needed"
                    )
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")  # deprecated in LangGraph 1.x
                        agent = create_react_agent(
                            model,
                            tools=[langchain_agent.warehouse_query],
                            name=langchain_agent.AGENT,
                        )
                    agent.invoke({"messages": [{"role": "user", "content": "Which won?"}]})
                    if turn.wrong:
                        wrong_ids.add(trace_id(root))
    finally:
        LangChainInstrumentor().uninstrument()
        provider.shutdown()
        restore()
    return wrong_ids


def _agents_run(turn: Turn, guarded: bool) -> None:
    """examples/openai_agents_agent.py's agent run once (``guarded``: behind ``guard(...)``, as
    the example runs it)."""
    import openai
    import openai_agents_agent
    from agents import Agent, OpenAIChatCompletionsModel, Runner
    from fake_openai import FakeOpenAI

    from groundplane_otel.adapters.openai_agents import guard

    async def ask() -> None:
        with FakeOpenAI(turn.script()) as api:
            client = openai.AsyncOpenAI(base_url=api.base_url, api_key="not-needed", max_retries=0)
            agent = Agent(
                name="campaign-analyst",
                model=OpenAIChatCompletionsModel("gpt-fake-1", client),
                tools=[openai_agents_agent.warehouse_query],
                output_type=openai_agents_agent.Answer,
            )
            await Runner.run(guard(agent) if guarded else agent, "Which campaign won?")
            await client.close()  # inside the loop asyncio.run closes

    asyncio.run(ask())


def record_openai_agents(
    path: Path,
    runs: int = 30,
    wrong_every: int = 6,
    *,
    openinference: bool = False,
    guarded: bool = False,
) -> set[str]:
    """examples/openai_agents_agent.py: the OpenAI Agents SDK agent and its ``function_tool``,
    instrumented by the example's ``instrument`` (genai-openai-agents + genai-openai with content
    capture on; ``openinference``: OpenInference's openai-agents instrumentation, as
    examples/openinference_agent.py runs it), against the fake server. ``guarded``: as the
    example runs it, behind ``guard(...)`` with examples/frameworks_policy.yaml installed (in
    observe mode: the wrong answers are recorded, not refused)."""
    import dataclasses

    import _framework_setup
    import openai_agents_agent
    from agents.tracing import set_trace_processors
    from opentelemetry.sdk.metrics import MeterProvider

    from groundplane_otel.otel import install
    from groundplane_otel.otel.policy import load_policy

    restore = content_on(CONTENT_ENV, "SPAN_ONLY")
    provider = recorder(path, guarded=guarded)
    installed = None
    if guarded:
        policy = load_policy(_framework_setup.HERE / "frameworks_policy.yaml")
        config = dataclasses.replace(policy, mode="observe")
        installed = install(config, tracer_provider=provider, meter_provider=MeterProvider())
    setup = SimpleNamespace(tracer_provider=provider)  # what the example's instrument() reads
    instrumentors = openai_agents_agent.instrument(setup, openinference)  # type: ignore[arg-type]
    tracer = provider.get_tracer("suggest-test")
    wrong_ids: set[str] = set()
    try:
        with shared_ctr() as ctr:
            for turn in turns(19, runs, wrong_every):
                ctr.clear()
                ctr.update(turn.ctr)
                with tracer.start_as_current_span("request") as root:
                    _agents_run(turn, guarded)
                    if turn.wrong:
                        wrong_ids.add(trace_id(root))
    finally:
        for instrumentor in instrumentors:
            instrumentor.uninstrument()
        set_trace_processors([])
        if installed is not None:
            installed.uninstall()
        provider.shutdown()
        restore()
    return wrong_ids


def record_traceloop(path: Path, runs: int = 30, wrong_every: int = 6) -> set[str]:
    """examples/traceloop_agent.py's ``run_agent`` (plain and streamed calls in turn), traced by
    Traceloop's opentelemetry-instrumentation-openai with content on, against the fake server.
    The example's tool is the guard's ``tool`` decorator, which records the fact in code (no
    recording can replay that): here it runs in an ``execute_tool`` span carrying the result, as
    a tool instrumentation records it."""
    import openai
    import traceloop_agent
    from fake_openai import FakeOpenAI
    from opentelemetry.instrumentation.openai import OpenAIInstrumentor

    restore = content_on("TRACELOOP_TRACE_CONTENT", "true")
    provider = recorder(path)
    OpenAIInstrumentor().instrument(tracer_provider=provider)
    tracer = provider.get_tracer("suggest-test")
    setup = SimpleNamespace(tracer_provider=provider)  # what run_agent reads
    ctr: dict[str, float] = {}

    def warehouse_query(window: str) -> dict[str, float]:
        tool_span(tracer, "warehouse_query", {"window": window}, ctr)
        return dict(ctr)

    decorated = traceloop_agent.warehouse_query
    traceloop_agent.warehouse_query = warehouse_query  # type: ignore[assignment]
    wrong_ids: set[str] = set()
    try:
        for index, turn in enumerate(turns(23, runs, wrong_every)):
            ctr.clear()
            ctr.update(turn.ctr)
            with FakeOpenAI(turn.script()) as api, tracer.start_as_current_span("r") as root:
                client = openai.OpenAI(base_url=api.base_url, api_key="not-needed", max_retries=0)
                traceloop_agent.run_agent(setup, client, stream=index % 2 == 1)  # type: ignore[arg-type]
                if turn.wrong:
                    wrong_ids.add(trace_id(root))
    finally:
        traceloop_agent.warehouse_query = decorated
        OpenAIInstrumentor().uninstrument()
        unwrap_left_by(TRACELOOP_WRAPPERS)
        provider.shutdown()
        restore()
    return wrong_ids


TRACELOOP_WRAPPERS = "opentelemetry.instrumentation.openai."


def unwrap_left_by(package: str) -> int:
    """Undo the wrappers an instrumentation's ``uninstrument`` left on the ``openai`` client's
    resource classes (those whose wrapper function lives under ``package``); how many.

    Traceloop's opentelemetry-instrumentation-openai unwraps by dotted paths its ``unwrap``
    cannot resolve (``unwrap("openai.resources.chat.completions", "Completions.create")`` looks
    for a module attribute named ``Completions.create``), so its wrappers stay after
    ``uninstrument`` and every later OpenAI instrumentation in the process runs under them."""
    import inspect

    import wrapt

    undone = 0
    for name, module in list(sys.modules.items()):
        if not name.startswith("openai.resources") or module is None:
            continue
        for cls in [value for value in vars(module).values() if inspect.isclass(value)]:
            for attr, value in list(vars(cls).items()):
                wrapper = getattr(value, "_self_wrapper", None)
                if isinstance(value, wrapt.FunctionWrapper) and getattr(
                    wrapper, "__module__", ""
                ).startswith(package):
                    setattr(cls, attr, value.__wrapped__)
                    undone += 1
    return undone


def record_mcp(
    path: Path, runs: int = 30, wrong_every: int = 6, *, as_written: bool = False
) -> set[str]:
    """examples/mcp_agent.py: its own MCP server (``--serve``, spawned over stdio) gives the CTRs
    (the same every run: only the injected answers change), and a chat span per run carries
    the scripted answer (its ``model_turn``), inside the example's agent span. ``as_written``:
    the tool is called with the example's ``call_and_record`` under its guard with content
    capture on, which records the fact in code (``groundplane.fact.source: mcp``): no recording
    can replay that. Else the session's call runs in an ``execute_tool`` span carrying the
    result, as an MCP instrumentation records it."""
    import dataclasses

    import mcp_agent
    from opentelemetry.sdk.metrics import MeterProvider

    from groundplane_otel.adapters.mcp import call_and_record, payload_of, stdio_session
    from groundplane_otel.otel import install
    from groundplane_otel.registry import FactRegistry

    provider = recorder(path, guarded=as_written)
    tracer = provider.get_tracer("suggest-test")
    guard = None
    if as_written:
        config = dataclasses.replace(mcp_agent.config(), mode="observe", capture_content=True)
        guard = install(config, tracer_provider=provider, meter_provider=MeterProvider())
    wrong_ids: set[str] = set()
    arguments = {"window": "7d"}

    async def agent() -> None:
        async with stdio_session(sys.executable, [mcp_agent.__file__, "--serve"]) as session:
            for turn in turns(29, runs, wrong_every):
                with tracer.start_as_current_span(
                    "invoke_agent campaign-analyst", attributes=mcp_agent.AGENT
                ) as root:
                    if as_written:
                        registry = FactRegistry()
                        await call_and_record(
                            session, registry, fact="campaign_ctr", tool="campaign_ctr",
                            arguments=arguments,
                        )  # fmt: skip
                        ctr = registry.get("campaign_ctr").value
                    else:
                        ctr = payload_of(await session.call_tool("campaign_ctr", arguments))
                        tool_span(tracer, "campaign_ctr", arguments, ctr)
                    winner, score = runner_up(ctr) if turn.wrong else best(ctr)
                    mcp_agent.model_turn(tracer, {"winner": winner, "ctr": score})
                    if turn.wrong:
                        wrong_ids.add(trace_id(root))

    try:
        asyncio.run(agent())
    finally:
        if guard is not None:
            guard.uninstall()
        provider.shutdown()
    return wrong_ids


def record_langgraph_state(path: Path, runs: int = 6) -> None:
    """examples/langgraph_agent.py as written: its StateGraph (the tool node adopts the ranking
    as a fact in code, ``record_state``; the model node is a ``guarded_node``), run ``runs``
    times under a guard with content capture on, as its ``main`` installs one."""
    import langgraph_agent
    from opentelemetry.sdk.metrics import MeterProvider

    from groundplane_otel.otel import GuardConfig, install
    from groundplane_otel.registry import FactRegistry

    provider = recorder(path, guarded=True)
    config = GuardConfig(capture_content=True)
    guard = install(config, tracer_provider=provider, meter_provider=MeterProvider())
    tracer = provider.get_tracer("suggest-test")
    try:
        for _ in range(runs):
            with tracer.start_as_current_span("request"):
                langgraph_agent.build(FactRegistry()).invoke({})
    finally:
        guard.uninstall()
        provider.shutdown()
