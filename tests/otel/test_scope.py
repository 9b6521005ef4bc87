"""enforce(), submit_output, trace_registry and boundary: the explicit paths for frameworks that
swallow exceptions or end spans on other threads — raising exactly once."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import threading
import weakref
from typing import Any

import pytest
from opentelemetry import context, trace
from opentelemetry.trace import StatusCode
from otel_harness import SALES_ROWS, Harness, answer, sales_config

from groundplane_otel.checks.superlative import superlative
from groundplane_otel.errors import ClaimsUnsupported, UnsupportedClaim
from groundplane_otel.otel import boundary, enforce, submit_output, trace_registry


def swallowing_chat(otel: Harness, winner: str) -> None:
    """A framework callback that ends the LLM span and swallows whatever it raises."""
    with contextlib.suppress(Exception):
        otel.chat(answer({"winner": winner}))


def agent_turn(otel: Harness, winner: str, *, swallow: bool = False) -> None:
    """invoke_agent -> tool -> chat; the chat's exception is swallowed when ``swallow``."""
    with otel.agent():
        otel.tool(SALES_ROWS)
        if swallow:
            swallowing_chat(otel, winner)
        else:
            otel.chat(answer({"winner": winner}))


class TestEnforce:
    def test_raises_on_exit_when_the_framework_swallowed_it(self, otel: Harness) -> None:
        """The violation swallowed at span end is raised when the scope exits."""
        otel.install()
        with pytest.raises(ClaimsUnsupported):
            enforce()(agent_turn)(otel, "US", swallow=True)

    def test_no_double_raise_when_the_exception_propagates(self, otel: Harness) -> None:
        """An exception already propagating through the scope is not raised a second time."""
        otel.install()
        with pytest.raises(ClaimsUnsupported) as raised:
            enforce()(agent_turn)(otel, "US")
        assert raised.value.__context__ is None

    def test_wrapped_exception_counts_as_propagated(self, otel: Harness) -> None:
        """A framework that re-raises the violation wrapped is not followed by a second raise."""
        otel.install()

        @enforce()
        def wrapping_framework() -> None:
            try:
                agent_turn(otel, "US")
            except ClaimsUnsupported as exc:
                raise RuntimeError("agent step failed") from exc

        with pytest.raises(RuntimeError) as raised:
            wrapping_framework()
        assert isinstance(raised.value.__cause__, ClaimsUnsupported)

    def test_nested_scopes_raise_once(self, otel: Harness) -> None:
        """The inner scope raises; the outer sees it propagate and does not raise again."""
        otel.install()
        with pytest.raises(ClaimsUnsupported) as raised:
            enforce()(enforce()(agent_turn))(otel, "US", swallow=True)
        assert raised.value.__context__ is None

    def test_span_ended_on_another_thread(self, otel: Harness) -> None:
        """A span ended (and its exception swallowed) on a worker thread still reaches the scope."""
        otel.install()

        @enforce()
        def run() -> None:
            with otel.agent() as agent:
                otel.tool(SALES_ROWS)
                parent = trace.set_span_in_context(agent)

                def worker() -> None:
                    token = context.attach(parent)
                    try:
                        swallowing_chat(otel, "US")
                    finally:
                        context.detach(token)

                thread = threading.Thread(target=worker)
                thread.start()
                thread.join()

        with pytest.raises(ClaimsUnsupported):
            run()

    def test_defer_leaves_the_raise_to_the_scope(self, otel: Harness) -> None:
        """With defer=True the span end does not raise; the scope does, after the span was
        exported with ERROR status."""
        otel.install()
        reached = []

        @enforce(defer=True)
        def run() -> None:
            agent_turn(otel, "US")
            reached.append(True)

        with pytest.raises(ClaimsUnsupported):
            run()
        assert reached == [True]
        (chat,) = [s for s in otel.spans("chat gpt-test") if "groundplane.outcome" in s.attributes]
        assert chat.status.status_code is StatusCode.ERROR

    def test_observe_mode_never_raises_from_a_scope(self, otel: Harness) -> None:
        """A flagged output in observe mode is not an exception, in a scope or not."""
        otel.install(sales_config(mode="observe"))
        with enforce():
            agent_turn(otel, "US")

    def test_decorator_sync_and_async(self, otel: Harness) -> None:
        """enforce() decorates sync and async functions."""
        otel.install()

        @enforce()
        async def run_async() -> None:
            await asyncio.sleep(0)
            agent_turn(otel, "US", swallow=True)

        with pytest.raises(ClaimsUnsupported):
            asyncio.run(run_async())

    def test_clean_scope_does_nothing(self, otel: Harness) -> None:
        """A supported answer leaves the scope silently."""
        otel.install()
        with enforce():
            agent_turn(otel, "EU")


class TestSubmitOutput:
    def test_submitted_output_is_checked_on_any_span(self, otel: Harness) -> None:
        """An app span that names the boundary and submits its output is guarded."""
        otel.install()

        def request() -> None:
            with otel.tracer.start_as_current_span("request"):
                otel.tool(SALES_ROWS)
                with otel.tracer.start_as_current_span("final answer"):
                    submit_output({"winner": "US"}, boundary="answer")

        with pytest.raises(ClaimsUnsupported):
            request()
        (span,) = otel.spans("final answer")
        assert (
            span.attributes["groundplane.boundary"],
            span.attributes["groundplane.outcome"],
        ) == (
            "answer",
            "blocked",
        )

    def test_submitted_output_wins_over_attributes(self, otel: Harness) -> None:
        """The explicit output is checked instead of the span's messages."""
        otel.install()
        with otel.agent():
            otel.tool(SALES_ROWS)
            with otel.tracer.start_as_current_span(
                "chat x", attributes={"gen_ai.operation.name": "chat"}
            ) as span:
                span.set_attribute("gen_ai.output.messages", answer({"winner": "US"}))
                submit_output({"winner": "EU"})
        assert otel.spans("chat x")[0].attributes["groundplane.outcome"] == "passed"

    def test_bad_arguments_fail_early(self, otel: Harness, monkeypatch: pytest.MonkeyPatch) -> None:
        """Bytes are refused (an answer is fields or text); no span or no guard is a RuntimeError
        naming the fix."""
        guard = otel.install()
        with (
            otel.tracer.start_as_current_span("x"),
            pytest.raises(TypeError, match="^output must be a mapping of fields or an answer text"),
        ):
            submit_output(b"EU", guard=guard)  # type: ignore[arg-type]
        with pytest.raises(RuntimeError, match="needs a span"):
            submit_output({"winner": "EU"}, guard=guard)
        install_module = importlib.import_module("groundplane_otel.otel.install")
        no_guards: weakref.WeakKeyDictionary[Any, Any] = weakref.WeakKeyDictionary()
        monkeypatch.setattr(install_module, "_active", no_guards)  # guards other suites left
        with (
            otel.tracer.start_as_current_span("x"),
            pytest.raises(RuntimeError, match="not installed"),
        ):
            submit_output({"winner": "EU"})


class TestTraceRegistryAndBoundary:
    def test_facts_recorded_in_code_feed_the_guard(self, otel: Harness) -> None:
        """trace_registry() records into the trace the guard checks (source code)."""
        otel.install()
        with otel.agent():
            trace_registry().record_ranking("sales", {"EU": 10, "US": 7}, key="total", tool="sql")
            otel.chat(answer({"winner": "EU"}))
        facts = otel.metrics()["groundplane.facts"]
        assert [attrs["groundplane.fact.source"] for attrs, _ in facts] == ["code"]

    def test_boundary_inside_an_llm_span_uses_the_trace_registry(self, otel: Harness) -> None:
        """groundplane's boundary(...) works inside the span with the trace's facts."""
        otel.install()
        with otel.tracer.start_as_current_span("request"):
            otel.tool(SALES_ROWS)
            with otel.tracer.start_as_current_span("llm"):
                declaration = boundary(facts=["sales"], checks=[superlative(fact="sales")])
                with declaration as entered:
                    assert entered.submit({"winner": "EU"}) == {"winner": "EU"}
                with pytest.raises(UnsupportedClaim), declaration as entered:
                    entered.submit({"winner": "US"})
