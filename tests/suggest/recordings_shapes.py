"""Recordings of LangChain agents traced by OpenInference's LangChain instrumentation, for the
result shapes ``suggest`` must read (issue 41): rows nested under keys, money totals, a result
whose shape changes part-way, and two agents no span names with ``gen_ai.agent.name``.

Each run is a real LangChain v1 ``create_agent`` (or LangGraph ``create_react_agent``) agent
through langchain-openai against the loopback fake OpenAI server (a tool call, then the scripted
answer), recorded by ``openinference-instrumentation-langchain`` (content on, its default) into
a Collector-format file. Every ``wrong_every``-th answer is made wrong; the recorder returns the
trace ids of those runs.
"""

from __future__ import annotations

import json
import random
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.trace import Tracer

from groundplane_otel.otel.otlp_files import OtlpFileExporter

REPS = ("ann", "bob", "cyd", "dee", "eve", "fay")


@dataclass(frozen=True, slots=True)
class Run:
    """One run: the agent (LangChain ``create_agent`` name, or a LangGraph graph's name with
    ``graph=True``), its tool, the tool's result, the answer, whether it is wrong."""

    agent: str
    tool: str
    result: Any
    answer: dict[str, Any]
    wrong: bool
    graph: bool = False


@contextmanager
def openinference(path: Path) -> Iterator[Tracer]:
    """OpenInference's LangChain instrumentation recording every span to ``path``."""
    from openinference.instrumentation.langchain import LangChainInstrumentor

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    LangChainInstrumentor().instrument(tracer_provider=provider)
    try:
        yield provider.get_tracer("suggest-shapes")
    finally:
        LangChainInstrumentor().uninstrument()
        provider.shutdown()


def _tool(name: str, result: Any) -> Any:
    """A LangChain tool ``name`` returning ``result`` as JSON text."""
    from langchain_core.tools import StructuredTool

    def query(region: str) -> str:
        return json.dumps(result)

    return StructuredTool.from_function(query, name=name, description=f"{name} rows")


def record(path: Path, runs: Iterator[Run]) -> set[str]:
    """Run each agent run once under a root span; the trace ids of the wrong ones."""
    from fake_openai import FakeOpenAI, answer_turn, tool_call_turn
    from langchain.agents import create_agent
    from langchain_openai import ChatOpenAI
    from langgraph.prebuilt import create_react_agent

    wrong_ids: set[str] = set()
    with openinference(path) as tracer:
        for run in runs:
            script = [tool_call_turn(run.tool, {"region": "eu"}), answer_turn(run.answer)]
            with FakeOpenAI(script) as api, tracer.start_as_current_span("request") as root:
                model = ChatOpenAI(model="gpt-fake-1", base_url=api.base_url, api_key="x")
                tools = [_tool(run.tool, run.result)]
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")  # create_react_agent: deprecated in 1.x
                    if run.graph:
                        agent = create_react_agent(model, tools=tools, name=run.agent)
                    else:
                        agent = create_agent(model, tools=tools, name=run.agent)
                agent.invoke({"messages": [{"role": "user", "content": "How did we do?"}]})
                if run.wrong:
                    wrong_ids.add(f"{root.get_span_context().trace_id:032x}")
    return wrong_ids


def money(cents: int) -> float:
    """An amount of cents as the two-decimal float a JSON payload or a model writes."""
    return float(Decimal(cents) / 100)


def _sales(rng: random.Random) -> tuple[list[dict[str, Any]], str, str, float]:
    """Rows of reps' sales (two-decimal amounts): the rows, the best rep, the runner-up, the
    total as written."""
    cents = rng.sample(range(10_000, 9_000_000), len(REPS))
    rows = [{"rep": rep, "amount": c / 100} for rep, c in zip(REPS, cents, strict=True)]
    ranked = sorted(rows, key=lambda row: row["amount"], reverse=True)
    return rows, ranked[0]["rep"], ranked[1]["rep"], money(sum(cents))


def nested(
    runs: int = 30, wrong_every: int = 5, *, graph: bool = False, seed: int = 41
) -> Iterator[Run]:
    """sales-bot: its tool's rows are under ``data.items``; it answers the best rep and the
    total; every ``wrong_every``-th answer names the runner-up or is a cent off, in turn.
    ``graph``: a LangGraph graph (``create_react_agent``), whose spans name no agent."""
    rng = random.Random(seed)
    for index in range(runs):
        rows, best, second, total = _sales(rng)
        wrong = index % wrong_every == wrong_every - 1
        answer = {"top_rep": best, "total": total}
        if wrong and (index // wrong_every) % 2:
            answer["total"] = money(round(total * 100) + 1)
        elif wrong:
            answer["top_rep"] = second
        result = {"data": {"items": rows, "count": len(rows)}, "status": "ok"}
        yield Run("sales-bot", "sales_report", result, answer, wrong, graph)


def ledgers(runs: int = 40, wrong_every: int = 5, seed: int = 43) -> Iterator[Run]:
    """billing-bot: a ledger of 2 to 12 two-decimal amounts; it answers the total as written
    (the binary float sum is often its neighbour); every ``wrong_every``-th is a cent off."""
    rng = random.Random(seed)
    for index in range(runs):
        cents = [rng.randrange(100, 9_000_000) for _ in range(rng.randint(2, 12))]
        rows = [{"invoice": f"inv-{index}-{n}", "amount": c / 100} for n, c in enumerate(cents)]
        wrong = index % wrong_every == wrong_every - 1
        total = sum(cents) + (rng.choice((-1, 1)) if wrong else 0)
        yield Run("billing-bot", "ledger", rows, {"total": money(total)}, wrong)


def shape_change(runs: int = 40, wrong_every: int = 5, seed: int = 47) -> Iterator[Run]:
    """sales-bot: its tool returns a bare list of rows, and from half-way the rows under
    ``items`` (a new API version); every ``wrong_every``-th answer names the runner-up."""
    rng = random.Random(seed)
    for index in range(runs):
        rows, best, second, _ = _sales(rng)
        wrong = index % wrong_every == wrong_every - 1
        result: Any = rows if index < runs // 2 else {"items": rows, "version": 2}
        answer = {"top_rep": second if wrong else best}
        yield Run("sales-bot", "sales_report", result, answer, wrong)


def two_agents(
    runs: int = 40, wrong_every: int = 5, *, graph: bool = False, seed: int = 53
) -> Iterator[Run]:
    """Two agents, interleaved: sales-bot (the best rep from sales_report) and ops-bot (the
    busiest site from site_load); no span carries gen_ai.agent.name. ``graph``: LangGraph
    graphs (``create_react_agent``), whose spans name no agent at all."""
    rng = random.Random(seed)
    for index in range(runs):
        wrong = index % wrong_every == wrong_every - 1
        if index % 2 == 0:
            rows, best, second, _ = _sales(rng)
            answer = {"top_rep": second if wrong else best}
            yield Run("sales-bot", "sales_report", rows, answer, wrong, graph)
        else:
            loads = rng.sample(range(1, 10_000), 5)
            sites = [{"site": f"s{n}", "load": load} for n, load in enumerate(loads)]
            ranked = sorted(sites, key=lambda row: row["load"], reverse=True)
            busiest = ranked[1 if wrong else 0]["site"]
            yield Run("ops-bot", "site_load", {"sites": sites}, {"busiest": busiest}, wrong, graph)


RECORDERS: dict[str, Callable[[], Iterator[Run]]] = {
    "nested": nested,
    "money": ledgers,
    "shape_change": shape_change,
    "two_agents": two_agents,
}
