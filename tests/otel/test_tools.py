"""The ``tool`` decorator: a GenAI execute_tool span, the return value recorded for the trace
(typed by the tool's FactSpec), no content on the span unless content capture is on."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from otel_harness import Harness, answer, sales_config

from groundplane_otel.errors import ClaimsUnsupported
from groundplane_otel.facts import Ranking
from groundplane_otel.otel import tool, trace_registry
from groundplane_otel.otel.otlp_files import OtlpFileExporter, read_requests
from groundplane_otel.otel.replay import Replayer

ROWS = {"rows": [{"region": "EU", "total": 10}, {"region": "US", "total": 7}]}


@tool("top_sales")
def top_sales(year: int, limit: int = 10) -> dict[str, Any]:
    return ROWS


@tool("top_sales")
async def top_sales_async(year: int) -> dict[str, Any]:
    await asyncio.sleep(0)
    return ROWS


@tool("headcount", fact="staff")
def headcount() -> int:
    return 42


@tool("broken_numbers", fact="broken")
def broken_numbers() -> dict[str, float]:
    return {"total": float("nan")}


def test_sync_tool_opens_a_genai_span_and_records_a_typed_fact(otel: Harness) -> None:
    """The span follows GenAI semconv without content; the fact is a Ranking whose provenance
    is the bound call and the tool span."""
    otel.install()
    with otel.tracer.start_as_current_span("request"):
        assert top_sales(2025) == ROWS
        fact = trace_registry().get("sales")
    (span,) = otel.spans("execute_tool top_sales")
    assert dict(span.attributes) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "top_sales",
        "gen_ai.tool.type": "function",
        "groundplane.fact.source": "code",
    }
    assert fact.value == Ranking("total", (("EU", 10), ("US", 7)))
    assert (fact.provenance.tool, dict(fact.provenance.args)) == (
        "top_sales",
        {"year": 2025, "limit": 10},
    )
    assert (fact.provenance.trace_id, fact.provenance.span_id) == (
        f"{span.context.trace_id:032x}",
        f"{span.context.span_id:016x}",
    )
    assert otel.metrics()["groundplane.facts"] == [
        (
            {
                "groundplane.fact.kind": "ranking",
                "groundplane.fact.source": "code",
                "groundplane.fact.outcome": "recorded",
            },
            1,
        )
    ]


def test_content_capture_puts_arguments_and_result_on_the_span(otel: Harness) -> None:
    """With capture_content the span carries the JSON arguments and result; still one fact."""
    otel.install(sales_config(capture_content=True))
    with otel.tracer.start_as_current_span("request"):
        top_sales(2025)
    (span,) = otel.spans("execute_tool top_sales")
    assert json.loads(str(span.attributes["gen_ai.tool.call.arguments"])) == {
        "year": 2025,
        "limit": 10,
    }
    assert json.loads(str(span.attributes["gen_ai.tool.call.result"])) == ROWS
    assert [value for _, value in otel.metrics()["groundplane.facts"]] == [1]


def test_async_tool(otel: Harness) -> None:
    """Async tools record the same way."""
    otel.install()

    async def main() -> Any:
        with otel.tracer.start_as_current_span("request"):
            await top_sales_async(2025)
            return trace_registry().ranking("sales")

    assert asyncio.run(main()).winner == "EU"


def test_tool_without_fact_spec_records_a_value(otel: Harness) -> None:
    """A tool the config does not declare records its value under fact=."""
    otel.install()
    with otel.tracer.start_as_current_span("request"):
        headcount()
        assert trace_registry().value("staff") == 42


def test_non_finite_result_is_counted_and_returned(otel: Harness) -> None:
    """A NaN result is never a fact (counted unparseable) but the app still gets it."""
    otel.install()
    with otel.tracer.start_as_current_span("request"):
        assert broken_numbers()["total"] != broken_numbers()["total"]
        assert "broken" not in trace_registry()
    outcomes = [
        attrs["groundplane.fact.outcome"] for attrs, _ in otel.metrics()["groundplane.facts"]
    ]
    assert outcomes == ["unparseable"]


def test_tool_exception_propagates_and_records_nothing(otel: Harness) -> None:
    """A failing tool raises to the app; nothing is recorded."""
    otel.install()

    @tool("flaky")
    def flaky() -> None:
        raise ConnectionError("db down")

    with otel.tracer.start_as_current_span("request"), pytest.raises(ConnectionError):
        flaky()
    assert "groundplane.facts" not in otel.metrics()


def test_decorated_tool_feeds_the_guard_end_to_end(otel: Harness) -> None:
    """tool -> chat with the wrong winner -> blocked, with the fact span linked."""
    otel.install()

    def agent_turn() -> None:
        with otel.agent():
            top_sales(2025)
            otel.chat(answer({"winner": "US"}))

    with pytest.raises(ClaimsUnsupported):
        agent_turn()
    (tool_span,) = otel.spans("execute_tool top_sales")
    (chat,) = otel.spans("chat gpt-test")
    assert [link.context.span_id for link in chat.links] == [tool_span.context.span_id]


def test_without_a_guard_the_tool_still_runs(otel: Harness) -> None:
    """No guard installed: the function runs and returns as usual."""
    assert headcount() == 42


def recorded_with_tool(tmp_path: Path) -> Path:
    """The app of docs/guard.md: ``@tool`` under an agent span, then a wrong answer, recorded
    to an OTLP file with the guard's own capture_content off (observe mode)."""
    otel = Harness()
    path = tmp_path / "traces.jsonl"
    otel.tracer_provider.add_span_processor(SimpleSpanProcessor(OtlpFileExporter(path)))
    otel.install(sales_config(mode="observe"))
    try:
        with otel.agent("analyst"):
            top_sales(2025)
            otel.chat(answer({"winner": "US"}))
    finally:
        otel.close()
    return path


def replayed_outcomes(path: Path) -> dict[tuple[str, str], int]:
    replayer = Replayer(sales_config())
    for request in read_requests([path], []):
        replayer.feed(request)
    replayer.finish()
    return dict(replayer.counts()["outputs"])


def test_the_genai_content_switch_records_enough_for_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Finding 4: with the instrumentations' switch on (and the guard's capture_content off),
    ``@tool`` writes the arguments and result on its span, so replay finds the fact and blocks
    the wrong answer, as the live guard did; with it off, replay can only say fact_missing."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    assert replayed_outcomes(recorded_with_tool(tmp_path)) == {("answer", "blocked"): 1}
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
    (tmp_path / "off").mkdir()
    assert replayed_outcomes(recorded_with_tool(tmp_path / "off")) == {("answer", "error"): 1}
