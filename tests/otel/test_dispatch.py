"""The guard rides on the provider's span-processor dispatch: every processor still sees every
span once and in order, the guard acts after them, and uninstall / shutdown give the dispatcher
its own class back. Other dispatchers get the guard as a regular span processor."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.context import Context
from opentelemetry.sdk.trace import (
    ConcurrentMultiSpanProcessor,
    ReadableSpan,
    SpanProcessor,
    SynchronousMultiSpanProcessor,
    TracerProvider,
)

from tests.otel.otel_harness import SALES_ROWS, Harness, answer, guardrail_events, sales_config

WRONG = answer({"winner": "US"})


class Recorder(SpanProcessor):
    """Writes down every hook call it gets, into a log shared by several recorders."""

    def __init__(self, name: str, log: list[tuple[str, str, str]]) -> None:
        self.name, self.log = name, log
        self.shut = False

    def on_start(self, span: Any, parent_context: Context | None = None) -> None:
        self.log.append((self.name, "start", span.name))

    def on_end(self, span: ReadableSpan) -> None:
        self.log.append((self.name, "end", span.name))

    def shutdown(self) -> None:
        self.shut = True


def _run(harness: Harness) -> None:
    with harness.agent():
        harness.tool(SALES_ROWS)
        harness.chat(WRONG)


def test_the_guard_rides_on_the_default_dispatch_and_every_processor_sees_each_span_once() -> None:
    """On the SDK's default dispatcher the guard is not one more processor; processors added
    before and after it get each span's start and end exactly once, in their order, and the
    guard still checks (a wrong winner gets its guardrail event on the exported span)."""
    harness, log = Harness(), []
    before = Recorder("before", log)
    harness.tracer_provider.add_span_processor(before)
    harness.install(sales_config(mode="observe"))
    after = Recorder("after", log)
    harness.tracer_provider.add_span_processor(after)
    dispatch = harness.tracer_provider._active_span_processor
    assert isinstance(dispatch, SynchronousMultiSpanProcessor)
    assert type(dispatch).__name__ == "GuardedSpanDispatch"
    assert all(type(p).__name__ != "GroundplaneSpanProcessor" for p in dispatch._span_processors)
    _run(harness)
    names = ["invoke_agent analyst", "execute_tool top_sales", "chat gpt-test"]
    starts = [(who, name) for who, hook, name in log if hook == "start"]
    assert starts == [(who, name) for name in names for who in ("before", "after")]
    assert sorted(log) == sorted(
        [
            (who, hook, name)
            for name in names
            for who in ("before", "after")
            for hook in ("start", "end")
        ]
    )
    (chat,) = harness.spans("chat gpt-test")
    assert len(guardrail_events(chat)) == 1
    harness.close()


def test_uninstall_gives_the_dispatcher_its_class_back_and_the_guard_stops() -> None:
    """After ``uninstall()`` the dispatcher is a plain SynchronousMultiSpanProcessor again,
    processors still get every span, and nothing is checked any more."""
    harness, log = Harness(), []
    harness.tracer_provider.add_span_processor(Recorder("p", log))
    guard = harness.install(sales_config(mode="observe"))
    guard.uninstall()
    assert type(harness.tracer_provider._active_span_processor) is SynchronousMultiSpanProcessor
    _run(harness)
    assert [hook for _, hook, _ in log].count("start") == 3
    (chat,) = harness.spans("chat gpt-test")
    assert guardrail_events(chat) == []
    harness.close()


def test_tracers_handed_out_before_install_are_guarded_and_a_processor_added_meanwhile_stays() -> (
    None
):
    """A tracer obtained before ``install`` gets the riding dispatcher too (its spans are
    checked); a processor added while the guard is installed still gets every span after
    ``uninstall()``, and so does a span started before ``install``."""
    harness, log = Harness(), []
    early = harness.tracer_provider.get_tracer("early")
    before = early.start_span("started before install")
    guard = harness.install(sales_config(mode="observe"))
    assert early.span_processor is harness.tracer_provider._active_span_processor
    harness.tracer_provider.add_span_processor(Recorder("added", log))
    _run(harness)
    (chat,) = harness.spans("chat gpt-test")
    assert len(guardrail_events(chat)) == 1
    guard.uninstall()
    assert type(early.span_processor) is SynchronousMultiSpanProcessor
    with early.start_as_current_span("after uninstall"):
        pass
    before.end()
    ends = [name for _, hook, name in log if hook == "end"]
    assert ends[3:] == ["after uninstall", "started before install"]
    assert harness.spans("started before install")
    harness.close()


def test_provider_shutdown_shuts_the_guard_and_every_processor_down() -> None:
    """``TracerProvider.shutdown()`` reaches the registered processors and the guard (which
    then gives the dispatcher its class back)."""
    harness = Harness()
    recorder = Recorder("p", [])
    harness.tracer_provider.add_span_processor(recorder)
    guard = harness.install(sales_config(mode="observe"))
    harness.tracer_provider.shutdown()
    assert recorder.shut
    assert guard.processor._enabled is False
    assert type(harness.tracer_provider._active_span_processor) is SynchronousMultiSpanProcessor


def test_a_concurrent_dispatcher_is_ridden_too_and_the_guard_sees_the_enclosing_agent() -> None:
    """Under ConcurrentMultiSpanProcessor the processors run on worker threads; the guard's
    part runs on the caller's thread, so the chat span's enclosing agent is found and the wrong
    winner is checked (added as a processor, the agent run would fail closed as no_output)."""
    harness, log = Harness(), []
    harness.tracer_provider = TracerProvider(active_span_processor=ConcurrentMultiSpanProcessor())
    harness.tracer = harness.tracer_provider.get_tracer("test-app")
    harness.tracer_provider.add_span_processor(Recorder("p", log))
    guard = harness.install(sales_config(mode="observe"))
    dispatch = harness.tracer_provider._active_span_processor
    assert isinstance(dispatch, ConcurrentMultiSpanProcessor)
    assert guard.processor not in dispatch._span_processors
    _run(harness)
    (chat,) = harness.spans("chat gpt-test")
    assert len(guardrail_events(chat)) == 1
    assert [hook for _, hook, _ in log].count("end") == 3
    guard.uninstall()
    assert type(harness.tracer_provider._active_span_processor) is ConcurrentMultiSpanProcessor
    harness.close()


class CustomDispatch(SynchronousMultiSpanProcessor):
    """A dispatcher class of the application's own."""


def test_a_custom_dispatcher_gets_the_guard_as_a_span_processor() -> None:
    """A dispatcher of another class is left alone: the guard is one more span processor."""
    harness = Harness()
    harness.tracer_provider = TracerProvider(active_span_processor=CustomDispatch())
    harness.tracer = harness.tracer_provider.get_tracer("test-app")
    guard = harness.install(sales_config(mode="observe"))
    dispatch = harness.tracer_provider._active_span_processor
    assert type(dispatch) is CustomDispatch
    assert guard.processor in dispatch._span_processors
    _run(harness)
    (chat,) = harness.spans("chat gpt-test")
    assert len(guardrail_events(chat)) == 1
    harness.close()


def test_a_hook_kept_by_someone_after_uninstall_only_hands_spans_over() -> None:
    """A reference to the riding hook kept past ``uninstall()`` (a wrapper another library put
    around it) still hands spans to the processors, and the guard's part no longer runs."""
    harness, log = Harness(), []
    harness.tracer_provider.add_span_processor(Recorder("p", log))
    guard = harness.install(sales_config(mode="observe"))
    dispatch = harness.tracer_provider._active_span_processor
    kept_start, kept_end = type(dispatch).on_start, type(dispatch).on_end
    guard.uninstall()
    span = harness.tracer.start_span("chat gpt-test", attributes={"gen_ai.operation.name": "chat"})
    kept_start(dispatch, span, None)
    span.set_attribute("gen_ai.output.messages", WRONG)
    kept_end(dispatch, span)
    assert [hook for who, hook, _ in log if who == "p"] == ["start", "start", "end"]
    assert "end" not in vars(span)  # the guard wrapped nothing
    harness.close()


@pytest.mark.parametrize("riding", [True, False])
def test_the_guard_checks_the_same_either_way(riding: bool) -> None:
    """Riding or added as a processor, a wrong winner is the same one finding."""
    harness = Harness()
    if not riding:
        harness.tracer_provider = TracerProvider(active_span_processor=CustomDispatch())
        harness.tracer = harness.tracer_provider.get_tracer("test-app")
    harness.install(sales_config(mode="observe"))
    _run(harness)
    (chat,) = harness.spans("chat gpt-test")
    (event,) = guardrail_events(chat)
    assert event.attributes["gen_ai.guardrail.result.value"] == "unsupported"
    harness.close()


@pytest.mark.parametrize(
    "dispatcher",
    [SynchronousMultiSpanProcessor, ConcurrentMultiSpanProcessor],
    ids=["sync", "concurrent"],
)
def test_a_processor_added_to_the_apps_own_dispatcher_is_called_and_stays_after_uninstall(
    dispatcher: type[SynchronousMultiSpanProcessor | ConcurrentMultiSpanProcessor],
) -> None:
    """With ``TracerProvider(active_span_processor=mine)``, a processor added to ``mine`` while
    the guard rides gets every span, as does one added through the provider; after
    ``uninstall()`` the provider has ``mine`` back with all three processors, as a tuple, and
    each of them gets the spans started then."""
    harness, log = Harness(), []
    mine = dispatcher()  # type: ignore[no-untyped-call]
    harness.tracer_provider = TracerProvider(active_span_processor=mine)
    harness.tracer = harness.tracer_provider.get_tracer("test-app")
    guard = harness.install(sales_config(mode="observe"))
    mine.add_span_processor(Recorder("mine", log))
    harness.tracer_provider.add_span_processor(Recorder("provider", log))
    riding = harness.tracer_provider._active_span_processor
    assert riding is not mine  # the guard rides, on a dispatcher that stands for mine:
    assert riding == mine
    assert mine == riding
    assert hash(riding) == hash(mine)
    assert riding != dispatcher()  # type: ignore[no-untyped-call]
    _run(harness)
    (chat,) = harness.spans("chat gpt-test")
    assert len(guardrail_events(chat)) == 1
    assert sorted(who for who, hook, _ in log if hook == "end") == ["mine"] * 3 + ["provider"] * 3
    guard.uninstall()
    assert harness.tracer_provider._active_span_processor is mine
    assert type(mine) is dispatcher
    assert type(mine._span_processors) is tuple
    assert [type(p).__name__ for p in mine._span_processors] == [
        "SimpleSpanProcessor",
        "Recorder",
        "Recorder",
    ]
    log.clear()
    with harness.tracer.start_as_current_span("after uninstall"):
        pass
    assert sorted(log) == [
        ("mine", "end", "after uninstall"),
        ("mine", "start", "after uninstall"),
        ("provider", "end", "after uninstall"),
        ("provider", "start", "after uninstall"),
    ]
    assert len(harness.spans("after uninstall")) == 1
    harness.close()


def test_a_processor_added_to_the_apps_dispatcher_after_uninstall_is_called() -> None:
    """After ``uninstall()`` the application's own dispatcher is the provider's again: a
    processor added to it then gets the spans (nothing kept a copy of its processors)."""
    harness, log = Harness(), []
    mine = SynchronousMultiSpanProcessor()
    harness.tracer_provider = TracerProvider(active_span_processor=mine)
    harness.tracer = harness.tracer_provider.get_tracer("test-app")
    harness.install(sales_config(mode="observe")).uninstall()
    mine.add_span_processor(Recorder("late", log))
    _run(harness)
    assert log == [
        ("late", "start", "invoke_agent analyst"),
        ("late", "start", "execute_tool top_sales"),
        ("late", "end", "execute_tool top_sales"),
        ("late", "start", "chat gpt-test"),
        ("late", "end", "chat gpt-test"),
        ("late", "end", "invoke_agent analyst"),
    ]
    harness.close()


class FailingOnce(SpanProcessor):
    """A processor that raises at the first span end it sees (the tool span's)."""

    def __init__(self) -> None:
        self.failed = False

    def on_end(self, span: ReadableSpan) -> None:
        if not self.failed:
            self.failed = True
            raise RuntimeError("processor failed")


@pytest.mark.parametrize(
    "dispatcher",
    [SynchronousMultiSpanProcessor, ConcurrentMultiSpanProcessor],
    ids=["sync", "concurrent"],
)
def test_a_processor_raising_at_a_span_end_does_not_keep_the_guard_from_its_part(
    dispatcher: type[SynchronousMultiSpanProcessor],
) -> None:
    """Riding, a processor that raises at the tool span's end: the exception goes on to whoever
    ended the span (as the SDK's own dispatch lets it), and the guard still records the tool's
    result, so the wrong winner is checked against it (not refused as fact_missing)."""
    harness = Harness()
    harness.tracer_provider = TracerProvider(active_span_processor=dispatcher())
    harness.tracer = harness.tracer_provider.get_tracer("test-app")
    harness.tracer_provider.add_span_processor(FailingOnce())
    harness.install(sales_config(mode="observe"))
    with harness.agent():
        with pytest.raises(RuntimeError, match="^processor failed$"):
            harness.tool(SALES_ROWS)
        harness.chat(WRONG)
    (chat,) = harness.spans("chat gpt-test")
    (event,) = guardrail_events(chat)
    assert event.attributes["gen_ai.guardrail.result.reason"] == "wrong_winner"
    harness.close()
