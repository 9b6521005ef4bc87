"""The OpenTelemetry layer: capture facts from tool spans, guard LLM output spans.

``install(config, tracer_provider=..., meter_provider=...)`` puts the guard on the SDK
providers; ``enforce()``, ``submit_output``, ``trace_registry``, ``boundary`` and ``tool`` are
for code the span-end path cannot reach on its own; ``guard_stream`` releases a streamed answer
unit by unit, each checked first.
"""

from groundplane_otel.otel._live.processor import (
    RAISE_INTERNAL_ERRORS_ENV,
    GroundplaneSpanProcessor,
)
from groundplane_otel.otel.config import BoundarySpec, FactSpec, GuardConfig, Limits, MatchSpec
from groundplane_otel.otel.install import Guard, active_guard, install
from groundplane_otel.otel.result import Evaluation, Finding, OutputUnchecked
from groundplane_otel.otel.scope import boundary, enforce, submit_output, trace_registry
from groundplane_otel.otel.stream import GuardedStream, guard_stream
from groundplane_otel.otel.tools import tool

__all__ = [
    "RAISE_INTERNAL_ERRORS_ENV",
    "BoundarySpec",
    "Evaluation",
    "FactSpec",
    "Finding",
    "GroundplaneSpanProcessor",
    "Guard",
    "GuardConfig",
    "GuardedStream",
    "Limits",
    "MatchSpec",
    "OutputUnchecked",
    "active_guard",
    "boundary",
    "enforce",
    "guard_stream",
    "install",
    "submit_output",
    "tool",
    "trace_registry",
]
