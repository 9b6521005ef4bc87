"""Recordings of the runnable example agents with wrong answers injected, for the suggest tests.

Each recorder runs the real example agent (its own code, the real OpenTelemetry SDK, the
framework's own model or the loopback fake OpenAI server) into a Collector-format file
(``OtlpFileExporter``) and returns the trace ids of the runs whose answer was made wrong.
"""

from __future__ import annotations

import json
import random
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from groundplane_otel.otel.otlp_files import OtlpFileExporter

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))

Rows = list[dict[str, Any]]
WINDOWS = ("7d", "6d", "5d", "4d", "3d")


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


def record_demo(path: Path, runs: int = 60, wrong_every: int = 10) -> set[str]:
    """The demo's campaign analyst (examples/demo_agent.py) over varying windows; every
    ``wrong_every``-th run answers wrong (runner-up as winner, a wrong total, a misordered
    top 3, a wrong CTR, in turn)."""
    import demo_agent

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
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
