"""The MCP adapter against a real MCP server over stdio (tests/integrations/mcp_server.py) with a
real ClientSession: payload_of, record_result and call_and_record semantics, exact errors."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from integration_harness import Otel, events
from mcp import ClientSession
from mcp_types import CallToolResult, TextContent
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode, format_span_id, format_trace_id

from groundplane_otel.adapters.mcp import (
    MCPToolError,
    call_and_record,
    payload_of,
    record_result,
    stdio_session,
)
from groundplane_otel.boundary import boundary
from groundplane_otel.checks.superlative import superlative
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec
from groundplane_otel.registry import FactRegistry

SERVER = Path(__file__).with_name("mcp_server.py")
CTR = {"north": 0.0412, "harbour": 0.0455, "delta": 0.0301}
T = TypeVar("T")


class _Client:
    """One real stdio MCP session for the module, driven from a background event loop (spawning
    the server costs seconds; every test reuses it)."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.session: ClientSession | None = None
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self.loop.run_until_complete, args=(self._main(),))
        self._thread.start()
        if not self._ready.wait(60) or self._error is not None:
            raise RuntimeError(f"MCP server did not start: {self._error!r}")

    async def _main(self) -> None:
        self._stop = asyncio.Event()
        try:
            async with stdio_session(sys.executable, [str(SERVER)]) as session:
                self.session = session
                self._ready.set()
                await self._stop.wait()
        except BaseException as exc:
            self._error = exc
            self._ready.set()

    def run(self, factory: Callable[[ClientSession], Awaitable[T]]) -> T:
        assert self.session is not None
        session = self.session

        async def call() -> T:
            return await factory(session)

        return asyncio.run_coroutine_threadsafe(call(), self.loop).result(30)

    def close(self) -> None:
        assert self._stop is not None
        self.loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)
        self.loop.close()


@pytest.fixture(autouse=True)
def content_capture_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests read spans with the instrumentations' content switch off (the default):
    ``call_and_record`` then puts no arguments or result on its span."""
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)


@pytest.fixture(scope="module")
def client() -> Iterator[_Client]:
    running = _Client()
    yield running
    running.close()


@pytest.fixture
def spans() -> Iterator[tuple[TracerProvider, InMemorySpanExporter]]:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield provider, exporter
    provider.shutdown()


def _call(client: _Client, tool: str, arguments: dict[str, Any]) -> Any:
    return client.run(lambda session: session.call_tool(tool, arguments))


# -- payload_of on real results ------------------------------------------------------------------


def test_structured_content_wins_over_text(client: _Client) -> None:
    """A tool with structured content: payload_of returns it, not the pretty-printed text."""
    result = _call(client, "campaign_ctr", {"window": "7d"})
    assert result.structured_content == CTR
    assert result.content[0].text.startswith("{\n")
    assert payload_of(result) == CTR


def test_structured_content_wins_even_when_text_disagrees() -> None:
    """When text and structured content disagree, the structured content is the payload."""
    result = CallToolResult(
        content=[TextContent(type="text", text='{"north": 1}')], structured_content=CTR
    )
    assert payload_of(result) == CTR


def test_text_blocks_are_joined_and_parsed(client: _Client) -> None:
    """JSON split over two text blocks parses once joined with a newline."""
    result = _call(client, "campaign_ctr_text", {"window": "7d"})
    assert len(result.content) == 2
    assert result.structured_content is None
    assert payload_of(result) == CTR
    assert payload_of(result, parse_json=False) == (
        '{"north": 0.0412,\n "harbour": 0.0455, "delta": 0.0301}'
    )


def test_text_that_is_not_json_is_the_payload_as_a_string() -> None:
    """With parse_json (the default) prose stays a string; without, even JSON stays text."""
    prose = {"content": [{"type": "text", "text": "42 rows"}, {"type": "text", "text": "ok"}]}
    assert payload_of(prose) == "42 rows\nok"
    assert payload_of({"content": [{"type": "text", "text": "[1, 2]"}]}) == [1, 2]
    assert payload_of({"content": [{"type": "text", "text": "[1, 2]"}]}, parse_json=False) == (
        "[1, 2]"
    )
    registry = FactRegistry()
    fact = record_result(registry, "note", prose, tool="notes", parse_json=False)
    assert (fact.value, registry.value("note")) == ("42 rows\nok", "42 rows\nok")


def test_prose_that_merely_starts_like_refused_json_is_text() -> None:
    """Only a text that *is* JSON is held to strict JSON: prose opening with NaN, or with an
    object repeating a key, is the payload as a string."""
    for text in ("NaN values were dropped", '{"a": 1, "a": 2} is what it printed'):
        assert payload_of({"content": [{"type": "text", "text": text}]}) == text


def test_a_text_block_whose_text_is_not_a_string_is_a_value_error() -> None:
    """A malformed text block is refused as a ValueError naming what it held."""
    with pytest.raises(ValueError) as caught:
        payload_of({"content": [{"type": "text", "text": 42}]})
    assert str(caught.value) == (
        "MCP text block's text must be a string, got int: {'type': 'text', 'text': 42}"
    )


def test_error_result_raises(client: _Client) -> None:
    """isError=true raises MCPToolError carrying the text; it never becomes a fact."""
    result = _call(client, "broken_query", {"window": "7d"})
    with pytest.raises(MCPToolError) as caught:
        payload_of(result)
    assert caught.value.text == "warehouse timeout after 30s"
    assert str(caught.value) == (
        "MCP tool returned an error result (isError=true): 'warehouse timeout after 30s'"
    )


def test_nan_text_is_refused(client: _Client) -> None:
    """JSON text holding NaN raises ValueError instead of yielding a non-finite fact."""
    result = _call(client, "nan_metric", {"window": "7d"})
    with pytest.raises(ValueError) as caught:
        payload_of(result)
    assert str(caught.value) == (
        "MCP result text holds the non-finite number NaN; it cannot be a fact"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            '{"a": Infinity}',
            "MCP result text holds the non-finite number Infinity; it cannot be a fact",
        ),
        (
            '{"a": -Infinity}',
            "MCP result text holds the non-finite number -Infinity; it cannot be a fact",
        ),
        ('{"a": 1e999}', "MCP result text holds the non-finite number inf; it cannot be a fact"),
        (
            '{"a": 1, "a": 2}',
            "MCP result text is JSON with a duplicate key 'a': which value is the fact is "
            "ambiguous, so it is refused",
        ),
        ("NaN", "MCP result text holds the non-finite number NaN; it cannot be a fact"),
    ],
    ids=["infinity", "minus-infinity", "overflow", "duplicate-key", "bare-nan"],
)
def test_bad_text_is_refused(text: str, message: str) -> None:
    """Non-finite numbers and duplicate keys are ValueErrors with exact messages."""
    with pytest.raises(ValueError) as caught:
        payload_of({"content": [{"type": "text", "text": text}]})
    assert str(caught.value) == message


def test_non_finite_structured_content_is_refused() -> None:
    """Structured content with an inf inside is refused like text."""
    with pytest.raises(ValueError) as caught:
        payload_of({"content": [], "structuredContent": {"rows": [{"v": float("inf")}]}})
    assert str(caught.value) == (
        "MCP structured content holds the non-finite number inf; it cannot be a fact"
    )


def test_wire_dicts_work_like_sdk_objects(client: _Client) -> None:
    """The camelCase wire form of every real result gives the same payload (or error)."""
    for tool in ("campaign_ctr", "campaign_ctr_text"):
        result = _call(client, tool, {"window": "7d"})
        wire = result.model_dump(mode="json", by_alias=True, exclude_none=True)
        assert "structuredContent" in wire or tool == "campaign_ctr_text"
        assert payload_of(wire) == payload_of(result) == CTR
    error = _call(client, "broken_query", {"window": "7d"}).model_dump(by_alias=True)
    assert error["isError"] is True
    with pytest.raises(MCPToolError):
        payload_of(error)


def test_result_without_payload_is_refused() -> None:
    """A result with neither structured content nor text blocks is a ValueError."""
    with pytest.raises(ValueError) as caught:
        payload_of({"content": [{"type": "image", "data": "AA==", "mimeType": "image/png"}]})
    assert str(caught.value).startswith(
        "MCP result carries neither structured content nor text blocks:"
    )


# -- record_result ----------------------------------------------------------------------------


def test_record_result_records_payload_with_provenance(client: _Client) -> None:
    """record_result stores the payload under the name with tool and args as provenance."""
    registry = FactRegistry()
    result = _call(client, "campaign_ctr", {"window": "7d"})
    fact = record_result(registry, "ctr", result, tool="campaign_ctr", args={"window": "7d"})
    assert fact.value == CTR
    assert registry.value("ctr") == CTR
    assert str(registry.provenance("ctr")) == "campaign_ctr(window='7d')"


def test_record_result_refuses_error_and_records_nothing(client: _Client) -> None:
    """An error result raises naming the tool and leaves the registry empty."""
    registry = FactRegistry()
    result = _call(client, "broken_query", {"window": "7d"})
    with pytest.raises(MCPToolError) as caught:
        record_result(registry, "ctr", result, tool="broken_query")
    assert str(caught.value) == (
        "MCP tool 'broken_query' returned an error result (isError=true): "
        "'warehouse timeout after 30s'"
    )
    assert registry.names() == []


def test_recorded_result_feeds_a_boundary(client: _Client) -> None:
    """A ranking recorded from the MCP payload makes a wrong winner an UnsupportedClaim."""
    registry = FactRegistry()
    payload = payload_of(_call(client, "campaign_ctr", {"window": "7d"}))
    registry.record_ranking("ctr", payload, key="ctr", tool="campaign_ctr")
    with boundary(registry, facts=["ctr"], checks=[superlative(fact="ctr")]) as entered:
        entered.submit({"winner": "harbour"})
    with (
        pytest.raises(UnsupportedClaim),
        boundary(registry, facts=["ctr"], checks=[superlative(fact="ctr")]) as entered,
    ):
        entered.submit({"winner": "north"})


# -- call_and_record --------------------------------------------------------------------------


def test_call_and_record_with_span_provenance(
    client: _Client, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    """The call runs in an execute_tool span whose ids are the fact's provenance."""
    provider, exporter = spans
    registry = FactRegistry()
    result = client.run(
        lambda session: call_and_record(
            session,
            registry,
            fact="ctr",
            tool="campaign_ctr",
            arguments={"window": "7d"},
            tool_call_id="call_1",
            tracer_provider=provider,
        )
    )
    assert isinstance(result, CallToolResult)  # the raw result the session gave back
    assert result.structured_content == CTR
    fact = registry.get("ctr")
    (span,) = exporter.get_finished_spans()
    assert span.name == "execute_tool campaign_ctr"
    assert span.kind is SpanKind.INTERNAL
    assert dict(span.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "campaign_ctr",
        "gen_ai.tool.type": "extension",
        "gen_ai.tool.call.id": "call_1",
    }
    assert fact.value == CTR
    provenance = registry.provenance("ctr")
    assert provenance.tool == "campaign_ctr"
    assert dict(provenance.args) == {"window": "7d"}
    assert provenance.trace_id == format_trace_id(span.context.trace_id)
    assert provenance.span_id == format_span_id(span.context.span_id)
    assert provenance.tool_call_id == "call_1"


def test_call_and_record_writes_content_when_the_genai_switch_is_on(
    client: _Client,
    spans: tuple[TracerProvider, InMemorySpanExporter],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the instrumentations' content switch on, the span carries the arguments and the
    result, as an instrumented tool span would (what suggest and replay read)."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
    provider, exporter = spans
    client.run(
        lambda session: call_and_record(
            session,
            FactRegistry(),
            fact="ctr",
            tool="campaign_ctr",
            arguments={"window": "7d"},
            tracer_provider=provider,
        )
    )
    (span,) = exporter.get_finished_spans()
    attributes = dict(span.attributes or {})
    assert json.loads(str(attributes["gen_ai.tool.call.arguments"])) == {"window": "7d"}
    assert json.loads(str(attributes["gen_ai.tool.call.result"])) == CTR


def test_call_and_record_uses_the_active_span_without_a_tracer(
    client: _Client, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    """With a no-op tracer (no SDK), the app's active span is the call's provenance."""
    provider, exporter = spans
    from opentelemetry.trace import NoOpTracerProvider

    registry = FactRegistry()

    async def call(session: ClientSession) -> None:
        with provider.get_tracer("app").start_as_current_span("execute_tool app") as outer:
            await call_and_record(
                session,
                registry,
                fact="ctr",
                tool="campaign_ctr",
                arguments={"window": "7d"},
                tracer_provider=NoOpTracerProvider(),
            )
            context = outer.get_span_context()
        assert registry.provenance("ctr").span_id == format_span_id(context.span_id)

    client.run(call)
    assert [span.name for span in exporter.get_finished_spans()] == ["execute_tool app"]


def test_call_and_record_without_any_span_has_no_ids(client: _Client) -> None:
    """No span anywhere: the fact is recorded with tool and args only."""
    from opentelemetry.trace import NoOpTracerProvider

    registry = FactRegistry()
    client.run(
        lambda session: call_and_record(
            session,
            registry,
            fact="ctr",
            tool="campaign_ctr",
            arguments={"window": "7d"},
            tracer_provider=NoOpTracerProvider(),
        )
    )
    provenance = registry.provenance("ctr")
    assert (provenance.trace_id, provenance.span_id) == (None, None)
    assert str(provenance) == "campaign_ctr(window='7d')"


class _MutatingSession:
    """Wraps the real session and mutates the arguments after sending them."""

    def __init__(self, session: ClientSession) -> None:
        self.session = session
        self.sent: dict[str, Any] | None = None

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
        assert arguments is not None
        result = await self.session.call_tool(name, arguments)
        self.sent = arguments
        arguments["window"] = "30d"
        arguments["campaigns"].append("interloper")
        return result


def test_call_and_record_records_arguments_as_sent(
    client: _Client, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    """Arguments mutated during or after the call (by the session or the caller) do not change
    the recorded provenance: it is the copy taken before the call."""
    provider, _ = spans
    registry = FactRegistry()
    arguments = {"window": "7d", "campaigns": ["north", "harbour"]}
    wrapper: list[_MutatingSession] = []

    async def call(session: ClientSession) -> Any:
        mutating = _MutatingSession(session)
        wrapper.append(mutating)
        return await call_and_record(
            mutating,
            registry,
            fact="echo",
            tool="echo_arguments",
            arguments=arguments,
            tracer_provider=provider,
        )

    client.run(call)
    arguments["campaigns"].append("late")
    assert registry.value("echo") == {"window": "7d", "campaigns": ["north", "harbour"]}
    assert dict(registry.provenance("echo").args) == {
        "window": "7d",
        "campaigns": ["north", "harbour"],
    }
    assert wrapper[0].sent is not None
    assert wrapper[0].sent["window"] == "30d"


def test_call_and_record_error_marks_the_span_and_records_nothing(
    client: _Client, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    """An isError result raises MCPToolError; the execute_tool span is ERROR with tool_error."""
    provider, exporter = spans
    registry = FactRegistry()
    with pytest.raises(MCPToolError) as caught:
        client.run(
            lambda session: call_and_record(
                session,
                registry,
                fact="ctr",
                tool="broken_query",
                arguments={"window": "7d"},
                tracer_provider=provider,
            )
        )
    assert caught.value.tool == "broken_query"
    assert registry.names() == []
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR
    assert span.attributes is not None
    assert span.attributes["error.type"] == "tool_error"


def test_call_and_record_refuses_nan_payload(
    client: _Client, spans: tuple[TracerProvider, InMemorySpanExporter]
) -> None:
    """A NaN payload raises ValueError out of call_and_record and nothing is recorded."""
    provider, exporter = spans
    registry = FactRegistry()
    with pytest.raises(ValueError) as caught:
        client.run(
            lambda session: call_and_record(
                session,
                registry,
                fact="ctr",
                tool="nan_metric",
                arguments={"window": "7d"},
                tracer_provider=provider,
            )
        )
    assert "non-finite number NaN" in str(caught.value)
    assert registry.names() == []
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is StatusCode.ERROR


def test_call_and_record_refuses_non_finite_arguments_before_calling() -> None:
    """NaN in the arguments is refused before any call is made."""
    calls: list[str] = []

    class Session:
        async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> Any:
            calls.append(name)
            return {"structuredContent": {}}

    with pytest.raises(ValueError) as caught:
        asyncio.run(
            call_and_record(
                Session(), FactRegistry(), fact="f", tool="t", arguments={"x": float("nan")}
            )
        )
    assert str(caught.value) == (
        "fact 'f': arguments['x'] is nan; non-finite numbers are refused (drop the cell, or "
        "replace it with None, before recording)"
    )
    assert calls == []


def test_write_once_applies_to_call_and_record(client: _Client) -> None:
    """Recording the same fact name twice raises the registry's write-once ValueError."""
    registry = FactRegistry()

    async def twice(session: ClientSession) -> None:
        await call_and_record(
            session, registry, fact="ctr", tool="campaign_ctr", arguments={"window": "7d"}
        )
        await call_and_record(
            session, registry, fact="ctr", tool="campaign_ctr", arguments={"window": "7d"}
        )

    with pytest.raises(ValueError) as caught:
        client.run(twice)
    assert str(caught.value).startswith("fact 'ctr' is write-once and was already recorded")


_ABSENT = """
import sys, asyncio
sys.modules["mcp"] = None
import groundplane_otel.adapters.mcp as adapter
print(adapter.payload_of({"structuredContent": {"a": 1}}))
async def main():
    async with adapter.stdio_session(sys.executable):
        pass
try:
    asyncio.run(main())
except ImportError as exc:
    print(type(exc).__name__, exc.name)
    print(exc)
"""


def test_import_without_mcp_and_exact_install_hint() -> None:
    """With mcp absent the module imports and payload_of works; stdio_session names the pip line."""
    result = subprocess.run(
        [sys.executable, "-c", _ABSENT], capture_output=True, text=True, check=True
    )
    assert result.stdout.splitlines() == [
        "{'a': 1}",
        "ModuleNotFoundError mcp",
        "groundplane_otel.adapters.mcp needs 'mcp', which is not installed; "
        "install it with: pip install 'groundplane-otel[mcp]'",
    ]


# -- with the OpenTelemetry guard installed -------------------------------------------------------


def _guard_config(capture_content: bool) -> GuardConfig:
    spec = BoundarySpec(
        "campaign_answer",
        ("campaign_ctr",),
        (superlative(fact="campaign_ctr"),),
        match=MatchSpec(agent_name="analyst"),
        report_mode="first",
    )
    fact = FactSpec("campaign_ctr", "campaign_ctr", kind="ranking")
    return GuardConfig(facts=(fact,), boundaries=(spec,), capture_content=capture_content)


def _answer(winner: str) -> str:
    text = json.dumps({"winner": winner})
    return json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": text}]}])


def _agent_turn(otel: Otel, winner: str) -> Callable[[ClientSession], Awaitable[None]]:
    """invoke_agent -> call_and_record (execute_tool) -> chat span carrying the final answer."""

    async def turn(session: ClientSession) -> None:
        agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "analyst"}
        with otel.tracer.start_as_current_span("invoke_agent analyst", attributes=agent):
            await call_and_record(
                session,
                FactRegistry(),
                fact="campaign_ctr",
                tool="campaign_ctr",
                arguments={"window": "7d"},
                tool_call_id="call_7",
            )
            chat = {"gen_ai.operation.name": "chat"}
            with otel.tracer.start_as_current_span("chat scripted", attributes=chat) as span:
                span.set_attribute("gen_ai.output.messages", _answer(winner))

    return turn


def test_guard_checks_an_answer_against_the_mcp_fact(client: _Client, otel: Otel) -> None:
    """With the guard installed, the MCP result lands in the trace's registry (typed by the
    FactSpec, source mcp, with the model's tool call id): a wrong winner on the chat span
    raises, and its guardrail event points at the execute_tool span of the MCP call."""
    otel.install(_guard_config(capture_content=False))
    with pytest.raises(UnsupportedClaim) as caught:
        client.run(_agent_turn(otel, "north"))
    assert (caught.value.claimed, caught.value.supported) == ("north", "harbour")
    tool_span = otel.span("execute_tool campaign_ctr")
    provenance = caught.value.provenance
    assert provenance is not None
    assert (provenance.tool, provenance.tool_call_id, provenance.span_id) == (
        "campaign_ctr",
        "call_7",
        format_span_id(tool_span.context.span_id),
    )
    assert dict(tool_span.attributes or {}) == {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "campaign_ctr",
        "gen_ai.tool.type": "extension",
        "gen_ai.tool.call.id": "call_7",
        "groundplane.fact.source": "mcp",
    }
    event, evaluation = events(otel.span("chat scripted"))
    assert (evaluation["name"], evaluation["gen_ai.evaluation.score.label"]) == (
        "gen_ai.evaluation.result",
        "unsupported",
    )
    assert {key: event[key] for key in ("groundplane.fact.tool", "groundplane.fact.span_id")} == {
        "groundplane.fact.tool": "campaign_ctr",
        "groundplane.fact.span_id": format_span_id(tool_span.context.span_id),
    }
    assert otel.metrics()["groundplane.facts"] == [
        (
            {
                "groundplane.fact.kind": "ranking",
                "groundplane.fact.source": "mcp",
                "groundplane.fact.outcome": "recorded",
            },
            1,
        )
    ]


def test_guard_passes_the_right_answer_and_captures_content_when_asked(
    client: _Client, otel: Otel
) -> None:
    """The right winner passes; with capture_content the tool span carries the arguments sent
    and the payload as JSON."""
    otel.install(_guard_config(capture_content=True))
    client.run(_agent_turn(otel, "harbour"))
    assert (otel.span("chat scripted").attributes or {})["groundplane.outcome"] == "passed"
    attributes = otel.span("execute_tool campaign_ctr").attributes or {}
    assert json.loads(str(attributes["gen_ai.tool.call.arguments"])) == {"window": "7d"}
    assert json.loads(str(attributes["gen_ai.tool.call.result"])) == CTR


def test_stdio_session_reraises_a_lone_exception_unwrapped() -> None:
    """An exception raised inside ``async with stdio_session(...)`` leaves the block as itself,
    not wrapped in the SDK's task-group exception groups."""

    async def main() -> None:
        async with stdio_session(sys.executable, [str(SERVER)]) as session:
            payload = payload_of(await session.call_tool("campaign_ctr", {"window": "7d"}))
            raise UnsupportedClaim("winner", "north", max(payload, key=payload.get))

    with pytest.raises(UnsupportedClaim) as caught:
        asyncio.run(main())
    assert type(caught.value) is UnsupportedClaim
    assert (caught.value.claimed, caught.value.supported) == ("north", "harbour")
