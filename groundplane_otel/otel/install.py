"""install(): put the guard on the providers the application configured."""

from __future__ import annotations

import threading
import warnings
from typing import Any

from opentelemetry.metrics import MeterProvider
from opentelemetry.sdk.metrics import MeterProvider as SdkMeterProvider
from opentelemetry.sdk.trace import SpanLimits
from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
from opentelemetry.trace import Tracer, TracerProvider

from groundplane_otel.otel.config import GuardConfig
from groundplane_otel.otel.guard import GroundplaneSpanProcessor
from groundplane_otel.otel.telemetry import Telemetry

__all__ = ["Guard", "active_guard", "install"]

_lock = threading.Lock()
_active: list[Guard] = []


class Guard:
    """What ``install`` returns: the installed processor and its providers.

    ``uninstall()`` (or ``shutdown()``) switches the guard off: the SDK cannot remove a span
    processor, so the processor stays registered but does nothing.
    """

    def __init__(
        self,
        config: GuardConfig,
        processor: GroundplaneSpanProcessor,
        tracer_provider: TracerProvider,
        attached: bool,
    ) -> None:
        self.config = config
        self.processor = processor
        self.tracer_provider = tracer_provider
        self.attached = attached
        self.tracer: Tracer = tracer_provider.get_tracer("groundplane_otel")

    @property
    def active(self) -> bool:
        return self in _active

    def uninstall(self) -> None:
        self.processor.shutdown()
        with _lock:
            if self in _active:
                _active.remove(self)

    def shutdown(self) -> None:
        self.uninstall()

    def __repr__(self) -> str:
        names = [spec.name for spec in self.config.boundaries]
        return f"Guard(boundaries={names}, mode={self.config.mode!r}, active={self.active})"


def active_guard() -> Guard | None:
    """The most recently installed guard that is still active."""
    with _lock:
        return _active[-1] if _active else None


def _length_limit(tracer_provider: Any) -> int | None:
    limits = getattr(tracer_provider, "_span_limits", None)
    if not isinstance(limits, SpanLimits):
        limits = SpanLimits()  # what the SDK derives from OTEL_*ATTRIBUTE_VALUE_LENGTH_LIMIT
    length = limits.max_span_attribute_length
    return length if isinstance(length, int) else None


def install(
    config: GuardConfig,
    *,
    tracer_provider: TracerProvider,
    meter_provider: MeterProvider,
    logger_provider: Any = None,
    raise_internal_errors: bool | None = None,
) -> Guard:
    """Add the guard to an SDK ``TracerProvider``; metrics go to ``meter_provider``, and the
    guardrail events also to ``logger_provider`` as log events when one is given.

    A provider that is not the SDK's gets a RuntimeWarning: the guard cannot see spans of an
    API-only tracer provider (nothing is checked), nor export metrics through an API-only
    meter provider.
    """
    if not isinstance(config, GuardConfig):
        raise TypeError(f"config must be a GuardConfig, got {type(config).__name__}")
    attached = isinstance(tracer_provider, SdkTracerProvider)
    if not attached:
        warnings.warn(
            f"groundplane_otel: tracer_provider is a {type(tracer_provider).__name__}, not an "
            "opentelemetry.sdk.trace.TracerProvider: the guard cannot see spans, nothing will "
            "be checked. Configure the OpenTelemetry SDK first.",
            RuntimeWarning,
            stacklevel=2,
        )
    if not isinstance(meter_provider, SdkMeterProvider):
        warnings.warn(
            f"groundplane_otel: meter_provider is a {type(meter_provider).__name__}, not an "
            "opentelemetry.sdk.metrics.MeterProvider: groundplane metrics will not be exported.",
            RuntimeWarning,
            stacklevel=2,
        )
    telemetry = Telemetry(
        meter_provider, capture_content=config.capture_content, logger_provider=logger_provider
    )
    processor = GroundplaneSpanProcessor(
        config,
        telemetry,
        length_limit=_length_limit(tracer_provider),
        raise_internal_errors=raise_internal_errors,
    )
    if isinstance(tracer_provider, SdkTracerProvider):
        from groundplane_otel.otel.sampling import warn_if_sampler_drops

        warn_if_sampler_drops(tracer_provider)
        tracer_provider.add_span_processor(processor)
    guard = Guard(config, processor, tracer_provider, attached)
    if attached:
        with _lock:
            _active.append(guard)
    return guard
