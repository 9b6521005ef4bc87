"""The guard follows its provider's life: it never keeps a dropped provider alive, the
provider's ``shutdown()`` ends its ride, and many providers configured alike warn about their
sampler once."""

from __future__ import annotations

import gc
import logging
import weakref

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import (
    ConcurrentMultiSpanProcessor,
    SynchronousMultiSpanProcessor,
    TracerProvider,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import DEFAULT_ON, ParentBased, TraceIdRatioBased

from groundplane_otel.otel import install
from groundplane_otel.otel.install import active_guard, active_guards
from tests.otel.otel_harness import SALES_ROWS, Harness, answer, guardrail_events, sales_config


@pytest.mark.parametrize(
    "dispatcher",
    [SynchronousMultiSpanProcessor, ConcurrentMultiSpanProcessor],
    ids=["sync", "concurrent"],
)
def test_a_provider_the_app_drops_is_collected_and_its_guard_is_inactive(
    dispatcher: type[SynchronousMultiSpanProcessor | ConcurrentMultiSpanProcessor],
) -> None:
    """A ``TracerProvider(shutdown_on_exit=False)`` dropped without ``uninstall()`` is garbage
    collected after it traced a span, as without the guard; the guard then is not active, has
    no provider, and ``uninstall()`` still works."""
    provider = TracerProvider(shutdown_on_exit=False, active_span_processor=dispatcher())  # type: ignore[no-untyped-call]
    guard = install(
        sales_config(mode="observe"), tracer_provider=provider, meter_provider=MeterProvider()
    )
    assert guard.active
    assert guard.tracer_provider is provider
    with provider.get_tracer("app").start_as_current_span("chat gpt-test"):
        pass
    dropped = weakref.ref(provider)
    del provider
    gc.collect()
    assert dropped() is None
    assert (guard.active, guard.tracer_provider) == (False, None)
    assert guard not in active_guards()
    guard.uninstall()


def test_provider_shutdown_ends_the_ride_and_install_works_again() -> None:
    """After ``provider.shutdown()`` the guard is not active (nor ``active_guard()``), and a
    second ``install()`` on that provider is accepted and checks its spans."""
    harness = Harness()
    first = harness.install(sales_config(mode="observe"))
    harness.tracer_provider.shutdown()
    assert first.active is False
    assert active_guard() is not first
    harness.exporter = InMemorySpanExporter()  # the first one was shut down with the provider
    harness.export_added = False
    second = harness.install(sales_config(mode="observe"))
    assert second.active
    assert active_guard() is second
    with harness.agent():
        harness.tool(SALES_ROWS)
        harness.chat(answer({"winner": "US"}))
    (chat,) = harness.spans("chat gpt-test")
    (event,) = guardrail_events(chat)
    assert event.attributes["gen_ai.guardrail.result.value"] == "unsupported"
    harness.close()


def test_the_sampler_warning_is_logged_once_per_sampler_configuration(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Three providers with one sampler configuration and one with another: two warnings,
    one naming each sampler."""
    ratio = ParentBased(TraceIdRatioBased(0.123456))  # a configuration no other test uses
    other = ParentBased(TraceIdRatioBased(0.654321))
    meter_provider = MeterProvider()
    with caplog.at_level(logging.WARNING, logger="groundplane_otel"):
        for sampler in (ratio, ParentBased(TraceIdRatioBased(0.123456)), ratio, other):
            provider = TracerProvider(sampler=sampler, shutdown_on_exit=False)
            install(sales_config(), tracer_provider=provider, meter_provider=meter_provider)
    warned = [m for m in caplog.messages if m.startswith("groundplane: the tracer provider")]
    assert [ratio.get_description() in m for m in warned] == [True, False]
    assert [other.get_description() in m for m in warned] == [False, True]
    assert DEFAULT_ON.get_description() not in " ".join(warned)
