"""Leaks and trust: planted canary values never reach exported spans, log records, Python logs
or metrics with content capture off (and do with it on: the canaries are live); tool and fact
names from traffic never multiply metric series; one trace never reads or overwrites another's
facts. (A policy file that tries to run code is pinned in tests/otel/test_policy.py.)"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import pickle
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hardening_kit import AGENT, codes, install_guard, metric_points, tally
from opentelemetry.context import Context
from opentelemetry.sdk._logs import LoggerProvider, LoggingHandler
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan
from otel_harness import SALES_ROWS, Harness, answer, sales_config

from groundplane_otel.checks.row_integrity import row_integrity
from groundplane_otel.checks.superlative import superlative
from groundplane_otel.errors import ClaimsUnsupported, FactBoundaryError, UnsupportedClaim
from groundplane_otel.otel import (
    BoundarySpec,
    FactSpec,
    Guard,
    GuardConfig,
    MatchSpec,
    enforce,
    submit_output,
    tool,
    trace_registry,
)

# The canaries: built so that no source line the tests execute spells them out (a traceback
# quoting a call site must not plant a canary of its own).
FACT = "-".join(("CANARY", "FACT", "7f3a"))  # a fact value: a table's key cell
CELL = "-".join(("CANARY", "CELL", "c0de"))  # a fact value: another cell of that row
KEY = "-".join(("CANARY", "KEY", "5e1d"))  # a fact value that is a JSON object key
CLAIM = "-".join(("CANARY", "CLAIM", "91b2"))  # what the model claimed
ARG = "-".join(("CANARY", "ARG", "44d1"))  # a tool argument
CANARIES = (FACT, CELL, KEY, CLAIM, ARG)

TOOL_RESULT = {
    "rows": [{"account": FACT, "owner": CELL}, {"account": "acme", "owner": "bob"}],
    "revenue": {KEY: 10, "acme": 5},
}
ANSWER = {"account": FACT, "owner": CLAIM, "top": CLAIM}  # two unsupported claims
TOOL_SPAN, CHAT_SPAN = "execute_tool crm", "chat gpt-test"
# What the APPLICATION's own instrumentation chose to capture (content on its own spans): the
# only places a canary may appear with the guard's content capture off.
APP_CAPTURED = {
    (TOOL_SPAN, "gen_ai.tool.call.result"),
    (TOOL_SPAN, "gen_ai.tool.call.arguments"),
    (CHAT_SPAN, "gen_ai.output.messages"),
}


def canary_config(*, capture: bool, mode: str = "enforce", report_mode: str = "all") -> Any:
    facts = (
        FactSpec("accounts", "crm", kind="table", key="account", path="rows"),
        FactSpec("revenue", "crm", kind="ranking", path="revenue"),
    )
    checks = (row_integrity("accounts", "account"), superlative("revenue", winner_field="top"))
    boundary = BoundarySpec(
        "accounts_report",
        ("accounts", "revenue"),
        checks,
        match=MatchSpec(agent_name="analyst"),
        report_mode=report_mode,  # type: ignore[arg-type]
    )
    return GuardConfig(facts, (boundary,), mode, capture)  # type: ignore[arg-type]


@dataclass
class Sinks:
    """Everything the process exported or logged, as (where, text) pairs."""

    otel: Harness
    logs: InMemoryLogRecordExporter
    caplog: pytest.LogCaptureFixture
    exclude: set[tuple[str, str]] = field(default_factory=set)

    def items(self) -> Iterator[tuple[str, str]]:
        for span in self.otel.spans():
            yield from span_items(span, self.exclude)
        for data in self.logs.get_finished_logs():
            record = data.log_record
            yield "log record body", str(record.body)
            yield "log record event name", str(getattr(record, "event_name", ""))
            for key, value in (record.attributes or {}).items():
                yield f"log record attribute {key}", f"{key}={value!r}"
        yield from metric_items(self.otel.reader)
        for record in self.caplog.records:
            yield f"python log {record.name}", f"{record.getMessage()} {record.exc_text or ''}"
        yield "python log text", self.caplog.text

    def leaks(self) -> list[str]:
        return sorted({where for where, text in self.items() if any(c in text for c in CANARIES)})

    def found(self) -> set[str]:
        return {canary for _, text in self.items() for canary in CANARIES if canary in text}


def span_items(span: ReadableSpan, exclude: set[tuple[str, str]]) -> Iterator[tuple[str, str]]:
    where = f"span {span.name!r}"
    yield f"{where} name", span.name
    for key, value in (span.attributes or {}).items():
        if (span.name, key) not in exclude:
            yield f"{where} attribute {key}", f"{key}={value!r}"
    for event in span.events:
        yield f"{where} event name", event.name
        for key, value in (event.attributes or {}).items():
            yield f"{where} event {event.name} {key}", f"{key}={value!r}"
    for link in span.links:
        for key, value in (link.attributes or {}).items():
            yield f"{where} link {key}", f"{key}={value!r}"
    yield f"{where} status", str(span.status.description)
    for key, value in span.resource.attributes.items():
        yield f"{where} resource {key}", f"{key}={value!r}"


def metric_items(reader: InMemoryMetricReader) -> Iterator[tuple[str, str]]:
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                where = f"metric {metric.name}"
                yield where, f"{metric.name} {metric.description} {metric.unit}"
                for point in metric.data.data_points:
                    yield f"{where} attributes", repr(dict(point.attributes))
                    for exemplar in getattr(point, "exemplars", None) or ():
                        yield f"{where} exemplar", repr(dict(exemplar.filtered_attributes or {}))


def sinks_for(
    otel: Harness, config: GuardConfig, caplog: pytest.LogCaptureFixture
) -> tuple[Sinks, Any]:
    """The guard installed with a real LoggerProvider too; every logger captured at DEBUG."""
    caplog.set_level(logging.DEBUG)
    logs = InMemoryLogRecordExporter()
    logger_provider = LoggerProvider()
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    guard = install_guard(otel, config, logger_provider=logger_provider)
    return Sinks(otel, logs, caplog), guard


def run_instrumented_agent(
    otel: Harness, result: Any = TOOL_RESULT, output: Any = ANSWER
) -> str | None:
    """An instrumented framework's trace: the tool span carries its arguments and result, the
    chat span its answer (content the app chose to capture). Returns the app's exception."""
    try:
        with otel.agent():
            otel.tool(
                result,
                name="crm",
                **{"gen_ai.tool.call.arguments": json.dumps({"query": ARG})},
            )
            otel.chat(answer(output))
    except FactBoundaryError as error:
        return type(error).__name__
    return None


@pytest.mark.parametrize(
    ("mode", "report_mode", "raised"),
    [
        ("enforce", "all", "ClaimsUnsupported"),
        ("enforce", "first", "UnsupportedClaim"),
        ("observe", "all", None),
    ],
)
def test_with_capture_off_no_canary_leaves_the_app_spans(
    otel: Harness, caplog: pytest.LogCaptureFixture, mode: str, report_mode: str, raised: str
) -> None:
    """Fact values, claimed values and tool arguments appear in no exported span (names,
    attributes, events, links, status), log record, Python log or metric — except the three
    attributes the app's own instrumentation captured on its own spans."""
    sinks, _ = sinks_for(
        otel, canary_config(capture=False, mode=mode, report_mode=report_mode), caplog
    )
    assert run_instrumented_agent(otel) == raised
    (chat,) = otel.spans(CHAT_SPAN)
    assert chat.attributes["groundplane.violations"] == 2  # both claims were checked
    assert sinks.leaks() == sorted(
        f"span {name!r} attribute {key}" for name, key in APP_CAPTURED
    )  # the app's own captures hold them: the search sees them
    sinks.exclude = APP_CAPTURED
    assert sinks.leaks() == []


def test_with_capture_on_the_canaries_reach_the_guard_events(
    otel: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """Content capture on: every canary shows up in the guard's own events and log records,
    so the capture-off searches above look for values that really flow."""
    sinks, _ = sinks_for(otel, canary_config(capture=True), caplog)
    assert run_instrumented_agent(otel) == "ClaimsUnsupported"
    (chat,) = otel.spans(CHAT_SPAN)
    guard_events = " ".join(
        repr(dict(event.attributes or {}))
        for event in chat.events
        if event.name == "gen_ai.guardrail.result"
    )
    assert [canary for canary in CANARIES if canary in guard_events] == list(CANARIES)
    log_records = " ".join(
        repr(dict(d.log_record.attributes or {})) for d in sinks.logs.get_finished_logs()
    )
    assert [canary for canary in CANARIES if canary in log_records] == list(CANARIES)


def test_facts_recorded_in_code_leave_no_canary_anywhere(
    otel: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """A decorated tool and a submitted output, capture off, enforce raising through the agent
    span: no canary anywhere in telemetry or logs, with nothing excluded."""
    sinks, guard = sinks_for(otel, canary_config(capture=False), caplog)

    @tool("crm", guard=guard)
    def crm(query: str) -> dict[str, Any]:
        return TOOL_RESULT

    def agent() -> None:
        with otel.agent():
            crm(ARG)
            with otel.tracer.start_as_current_span(
                CHAT_SPAN, attributes={"gen_ai.operation.name": "chat"}
            ):
                submit_output(ANSWER, guard=guard)

    with pytest.raises(FactBoundaryError) as raised:
        agent()
    assert codes(raised.value) == ["value_mismatch", "not_ranked"]
    assert CLAIM in raised.value.diagnosis  # the application itself still gets the full message
    assert CLAIM not in str(raised.value)  # while str/repr are content-free
    assert sinks.leaks() == []


def test_a_crashing_check_leaks_no_fact_value_through_the_exception_chain(
    otel: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """A check that fails on incomplete data (check_error) propagates through the agent span
    without any fact value in its exception event."""
    config = GuardConfig(
        (FactSpec("accounts", "crm", kind="table", key="account", path="rows"),),
        (
            BoundarySpec(
                "accounts_report",
                ("accounts",),
                (row_integrity("accounts", "account", ["region"]),),  # FACT's row lacks it
                match=MatchSpec(agent_name="analyst"),
                report_mode="first",
            ),
        ),
    )
    sinks, _ = sinks_for(otel, config, caplog)
    rows = [{"account": FACT, "owner": CELL}, {"account": "acme", "owner": "bob", "region": "EU"}]
    output = {"account": FACT, "region": CLAIM}
    assert run_instrumented_agent(otel, {"rows": rows}, output) == "OutputUnchecked"
    sinks.exclude = APP_CAPTURED
    assert sinks.leaks() == []


@pytest.fixture
def app_logs(
    otel: Harness, caplog: pytest.LogCaptureFixture
) -> Iterator[tuple[Sinks, Callable[[str], Guard]]]:
    """Python logging exported as OTel log records too (a LoggingHandler on the root logger,
    the same LoggerProvider and in-memory exporter as the guard's events); yields the sinks and
    an installer of the canary guard (capture off, enforce) with a given report mode."""
    caplog.set_level(logging.DEBUG)
    logs = InMemoryLogRecordExporter()
    provider = LoggerProvider()
    provider.add_log_record_processor(SimpleLogRecordProcessor(logs))
    handler = LoggingHandler(level=logging.DEBUG, logger_provider=provider)
    logging.getLogger().addHandler(handler)
    sinks = Sinks(otel, logs, caplog, exclude=set(APP_CAPTURED))

    def installer(report_mode: str) -> Guard:
        config = canary_config(capture=False, report_mode=report_mode)
        return install_guard(otel, config, logger_provider=provider)

    try:
        yield sinks, installer
    finally:
        logging.getLogger().removeHandler(handler)
        provider.shutdown()


APP_LOG = logging.getLogger("app.requests")


def agent_run(otel: Harness) -> None:
    """The instrumented agent of ``run_instrumented_agent``, raising the guard's exception."""
    with otel.agent():
        otel.tool(
            TOOL_RESULT, name="crm", **{"gen_ai.tool.call.arguments": json.dumps({"query": ARG})}
        )
        otel.chat(answer(ANSWER))


def chained(otel: Harness) -> None:
    """The app wraps the violation: ``raise RuntimeError(...) from exc``."""
    try:
        agent_run(otel)
    except FactBoundaryError as exc:
        raise RuntimeError("agent step failed") from exc


def implicit_context(otel: Harness) -> None:
    """The app raises its own error while handling the violation (``__context__``)."""
    try:
        agent_run(otel)
    except FactBoundaryError:
        raise RuntimeError("agent step failed")  # noqa: B904 - the implicit context is the case


def task_group(otel: Harness) -> None:
    """The agent runs as a task of an ``asyncio.TaskGroup``: an ExceptionGroup wraps it."""

    async def step() -> None:
        agent_run(otel)

    async def main() -> None:
        async with asyncio.TaskGroup() as group:  # type: ignore[attr-defined]
            group.create_task(step())

    asyncio.run(main())


WRAPPERS: dict[str, Callable[[Harness], None]] = {
    "chained": chained,
    "implicit-context": implicit_context,
}
if sys.version_info >= (3, 11):  # asyncio.TaskGroup and ExceptionGroup
    WRAPPERS["task-group"] = task_group


def serve(otel: Harness, wrapper: Callable[[Harness], None]) -> None:
    """A request span around the wrapped agent; the app logs the failure with its traceback."""
    try:
        with otel.tracer.start_as_current_span("GET /report"):
            wrapper(otel)
    except BaseException:
        APP_LOG.exception("request failed")
        raise


def guard_error(error: BaseException) -> FactBoundaryError:
    """The guard's exception inside whatever the app wrapped it in."""
    grouped = getattr(error, "exceptions", None)  # an ExceptionGroup
    if grouped is not None:
        (error,) = grouped
    if isinstance(error, FactBoundaryError):
        return error
    inner = error.__cause__ or error.__context__
    assert isinstance(inner, FactBoundaryError)
    return inner


def assert_live_and_absent(sinks: Sinks, error: FactBoundaryError) -> None:
    """The canaries the app receives in ``diagnosis`` (all of them; the ranking's key only when
    its claim is reported too) reach no sink at all."""
    live = [canary for canary in CANARIES if canary in error.diagnosis]
    assert live == [c for c in CANARIES if c != KEY or isinstance(error, ClaimsUnsupported)]
    assert [canary for canary in CANARIES if canary in str(error) + repr(error)] == []
    assert sinks.leaks() == []


@pytest.mark.parametrize("report_mode", ["all", "first"])
@pytest.mark.parametrize("wrapper", sorted(WRAPPERS))
def test_no_canary_leaks_whatever_wraps_the_guards_exception(
    otel: Harness,
    app_logs: tuple[Sinks, Callable[[str], Guard]],
    wrapper: str,
    report_mode: str,
) -> None:
    """Capture off: the violation chained, raised implicitly in an ``except`` block, or wrapped
    in an ExceptionGroup by ``asyncio.TaskGroup``, propagates through an enclosing request span
    and is logged by the app with its traceback: no canary reaches any span (exception events,
    stacktraces, status), OTel log record, Python log line or metric."""
    sinks, installer = app_logs
    installer(report_mode)
    with pytest.raises(Exception) as raised:  # noqa: PT011 - RuntimeError or ExceptionGroup
        serve(otel, WRAPPERS[wrapper])
    assert type(raised.value).__name__ == (
        "ExceptionGroup" if wrapper == "task-group" else "RuntimeError"
    )
    error = guard_error(raised.value)
    assert type(error) is (ClaimsUnsupported if report_mode == "all" else UnsupportedClaim)
    (request,) = otel.spans("GET /report")
    (event,) = [event for event in request.events if event.name == "exception"]
    assert "reason value_mismatch" in str(event.attributes["exception.stacktrace"])  # type: ignore[index]
    assert any("request failed" in r.getMessage() for r in sinks.caplog.records)
    assert any("request failed" in str(d.log_record.body) for d in sinks.logs.get_finished_logs())
    assert_live_and_absent(sinks, error)


def test_langchain_logging_the_swallowed_violation_leaks_no_canary(
    otel: Harness, app_logs: tuple[Sinks, Callable[[str], Guard]]
) -> None:
    """A real LangChain callback handler ends the chat span in ``on_llm_end``; the guard raises
    there, LangChain's callback manager swallows it and logs its ``repr()`` at WARNING; the
    ``enforce()`` scope raises it to the app. Neither that log line nor anything else names a
    canary."""
    from langchain_core.callbacks import BaseCallbackHandler
    from langchain_core.language_models.fake import FakeListLLM
    from langchain_core.outputs import LLMResult

    sinks, installer = app_logs
    installer("all")

    class ChatSpans(BaseCallbackHandler):
        """An instrumentation-like handler: one chat span per LLM run, ended at its end."""

        def __init__(self) -> None:
            self.spans: dict[uuid.UUID, Any] = {}

        def on_llm_start(
            self, serialized: dict[str, Any], prompts: list[str], *, run_id: uuid.UUID, **kw: Any
        ) -> None:
            attributes = {"gen_ai.operation.name": "chat"}
            self.spans[run_id] = otel.tracer.start_span(CHAT_SPAN, attributes=attributes)

        def on_llm_end(self, response: LLMResult, *, run_id: uuid.UUID, **kw: Any) -> None:
            span = self.spans.pop(run_id)
            span.set_attribute(
                "gen_ai.output.messages", answer(json.loads(response.generations[0][0].text))
            )
            span.end()  # the guard raises here, inside LangChain's callback manager

    model = FakeListLLM(responses=[json.dumps(ANSWER)])

    @enforce()
    def agent() -> str:
        with otel.agent():
            otel.tool(
                TOOL_RESULT,
                name="crm",
                **{"gen_ai.tool.call.arguments": json.dumps({"query": ARG})},
            )
            return model.invoke("report", config={"callbacks": [ChatSpans()]})

    with pytest.raises(ClaimsUnsupported) as raised:
        agent()
    (warning,) = [
        r for r in sinks.caplog.records if r.getMessage().startswith("Error in ChatSpans")
    ]
    assert warning.levelno == logging.WARNING
    assert "ClaimsUnsupported(\"unsupported claim in field 'owner'" in warning.getMessage()
    assert any(
        "Error in ChatSpans" in str(d.log_record.body) for d in sinks.logs.get_finished_logs()
    )
    assert_live_and_absent(sinks, raised.value)


@pytest.mark.parametrize("report_mode", ["all", "first"])
def test_a_redacted_exception_survives_pickle_and_copy(
    otel: Harness, app_logs: tuple[Sinks, Callable[[str], Guard]], report_mode: str
) -> None:
    """Pickled, copied or deep-copied, the guard's exception keeps its content-free str/repr,
    its full diagnosis and every attribute."""
    _, installer = app_logs
    installer(report_mode)
    with pytest.raises(FactBoundaryError) as raised:
        agent_run(otel)
    error = raised.value
    for clone in (pickle.loads(pickle.dumps(error)), copy.copy(error), copy.deepcopy(error)):
        assert type(clone) is type(error)
        assert (str(clone), repr(clone), clone.args) == (str(error), repr(error), error.args)
        assert (clone.diagnosis, clone.redacted) == (error.diagnosis, True)
        assert codes(clone) == codes(error)


def test_an_unredacted_claim_pickles_with_its_full_message() -> None:
    """The core API's exception (never redacted) round-trips through pickle unchanged."""
    claim = UnsupportedClaim("winner", CLAIM, [FACT], fact="sales", reason="r", code="wrong")
    clone = pickle.loads(pickle.dumps(claim))
    assert (str(clone), clone.claimed, clone.supported, clone.code) == (
        str(claim),
        CLAIM,
        [FACT],
        "wrong",
    )
    assert clone.redacted is False


def series(reader: InMemoryMetricReader) -> dict[str, set[frozenset[tuple[str, Any]]]]:
    """Metric name -> its distinct attribute sets (one time series each)."""
    found: dict[str, set[frozenset[tuple[str, Any]]]] = {}
    for name, points in metric_points(reader).items():
        found[name] = {frozenset(attributes.items()) for attributes, _ in points}
    return found


def test_ten_thousand_tool_and_fact_names_make_a_fixed_number_of_series(otel: Harness) -> None:
    """10,000 tool spans with distinct unmatched names and 10,000 distinct facts recorded by
    decorated tools give one groundplane.facts series and one live-trace series, nothing else."""
    guard = install_guard(otel, sales_config())
    tools = [tool(f"lookup_{number}", guard=guard)(lambda: {"n": 1}) for number in range(10_000)]
    for batch in range(100):  # 100 traces x 100 tool spans no FactSpec matches
        with otel.tracer.start_as_current_span("request", context=Context()):
            for number in range(batch * 100, batch * 100 + 100):
                otel.tool({"n": number}, name=f"unmatched_{number}")
    for batch in range(200):  # 200 traces x 50 decorated tools: 50 facts each, all recorded
        with otel.tracer.start_as_current_span("request", context=Context()):
            for decorated in tools[batch * 50 : batch * 50 + 50]:
                decorated()
    found = series(otel.reader)
    assert found == {
        "groundplane.facts": {
            frozenset(
                {
                    ("groundplane.fact.kind", "value"),
                    ("groundplane.fact.source", "code"),
                    ("groundplane.fact.outcome", "recorded"),
                }
            )
        },
        "groundplane.traces.active": {frozenset()},
    }
    assert tally(metric_points(otel.reader), "groundplane.facts", "groundplane.fact.outcome") == {
        "recorded": 10_000
    }
    assert guard.processor.internal_errors == 0


def test_distinct_agent_and_boundary_names_from_traffic_add_no_series(
    otel: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """2,000 guarded answers under 2,000 agent names, and 2,000 spans naming unknown boundaries:
    one series per metric and outcome, and at most 64 warnings about unknown names."""
    config = sales_config(
        boundaries=(
            BoundarySpec(
                "answer",
                ("sales",),
                (superlative(fact="sales", winner_field="winner"),),
                match=MatchSpec(operation_name="chat"),
            ),
        )
    )
    guard = install_guard(otel, config)
    caplog.set_level(logging.WARNING, logger="groundplane_otel")
    for number in range(2_000):
        with otel.agent(f"agent-{number}"):
            otel.tool(SALES_ROWS)
            otel.chat(answer({"winner": "EU"}))
    for number in range(2_000):
        with otel.tracer.start_as_current_span(
            "step", context=Context(), attributes={"groundplane.boundary": f"unknown-{number}"}
        ):
            pass
    found = series(otel.reader)
    assert {name: len(sets) for name, sets in found.items()} == {
        "groundplane.facts": 1,
        "groundplane.claims": 1,
        "groundplane.outputs": 1,
        "groundplane.check.duration": 1,
        "groundplane.traces.active": 1,
        "groundplane.coverage": 1,  # boundary from the configuration, outcome matched
    }
    assert tally(metric_points(otel.reader), "groundplane.outputs", "groundplane.outcome") == {
        "passed": 2_000
    }
    unknown = [r for r in caplog.records if "unknown boundary" in r.getMessage()]
    assert 1 <= len(unknown) <= 64
    assert guard.processor.internal_errors == 0


def chat_in_own_trace(otel: Harness, winner: str) -> str | None:
    """The final answer of the current trace; returns the app's exception code, if any."""
    try:
        otel.chat(answer({"winner": winner}))
    except FactBoundaryError as error:
        return codes(error)[0]
    return None


def test_the_same_fact_name_in_concurrent_traces_never_conflicts(otel: Harness) -> None:
    """Eight traces at once each record 'sales' with their own winner in code, then check:
    no conflict is counted and each answer is judged against its own trace only."""
    guard = install_guard(otel, sales_config(report_mode="first"))
    recorded = threading.Barrier(8)
    got: dict[int, list[str | None]] = {}

    def worker(number: int) -> None:
        with otel.tracer.start_as_current_span(
            "invoke_agent analyst", context=Context(), attributes=AGENT
        ):
            registry = trace_registry(guard=guard)
            registry.record_ranking("sales", {f"R{number}": 10, "OTHER": 1}, tool="top_sales")
            recorded.wait(timeout=30)  # every trace holds its own 'sales' before any check
            got[number] = [
                chat_in_own_trace(otel, f"R{number}"),
                chat_in_own_trace(otel, f"R{(number + 1) % 8}"),  # another trace's winner
            ]

    threads = [threading.Thread(target=worker, args=(number,)) for number in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in threads)
    assert got == {number: [None, "not_ranked"] for number in range(8)}
    points = metric_points(otel.reader)
    assert tally(points, "groundplane.facts", "groundplane.fact.outcome") == {"recorded": 8}
    assert tally(points, "groundplane.outputs", "groundplane.outcome") == {
        "passed": 8,
        "blocked": 8,
    }
    assert len(guard.processor.engine.store) == 0


def test_a_registry_of_trace_a_used_inside_trace_b_never_reaches_b(otel: Harness) -> None:
    """Code in trace B writing through trace A's registry writes to A only: B's own registry
    does not show it, B's answer fails closed (fact_missing), A's answer is checked with it."""
    guard = install_guard(otel, sales_config(report_mode="first"))
    with otel.agent():
        registry_a = trace_registry(guard=guard)
        with otel.tracer.start_as_current_span(
            "invoke_agent analyst", context=Context(), attributes=AGENT
        ):
            registry_a.record_ranking("sales", {"EU": 10, "US": 7}, tool="top_sales")
            assert "sales" not in trace_registry(guard=guard)
            assert chat_in_own_trace(otel, "EU") == "fact_missing"
        assert chat_in_own_trace(otel, "EU") is None
        assert chat_in_own_trace(otel, "US") == "wrong_winner"
    assert tally(metric_points(otel.reader), "groundplane.facts", "groundplane.fact.outcome") == {
        "recorded": 1
    }
    assert len(guard.processor.engine.store) == 0


def test_a_stale_registry_handle_cannot_resurrect_its_ended_trace(otel: Harness) -> None:
    """Writing through a trace's registry after its root ended is refused with a clear error
    and leaves no live trace behind (regression: it used to re-create the trace)."""
    guard = install_guard(otel, sales_config())
    with otel.tracer.start_as_current_span("request"):
        registry = trace_registry(guard=guard)
    with pytest.raises(ValueError, match="request has ended") as refused:
        registry.record_ranking("sales", {"EU": 10}, tool="top_sales")
    assert not isinstance(refused.value, KeyError)  # not UnregisteredFact: that misleads
    assert len(guard.processor.engine.store) == 0
    assert metric_points(otel.reader)["groundplane.traces.active"] == [({}, 0)]
