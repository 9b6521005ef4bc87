"""The engine every driver shares (the live span processor, replay, the verifier): capture,
output reading, the per-request store, evaluation, accounting, lineage and the SDK contract.
It returns what it decided (``Evaluation``s) and writes no telemetry: each driver hands them to
its own ``Results`` (the live guard's writer is ``otel/_telemetry``). Private: import from
``groundplane_otel.otel``.

The names below are the door the driver-side telemetry writer reads the engine through: the
SDK span readers and writers it needs, and what restricted-value withholding decided.
"""

from __future__ import annotations

from groundplane_otel.otel._engine.sdk import fits, override_ok, span_attributes
from groundplane_otel.otel._engine.withheld import is_withheld, reveals_restricted, scrub_output

__all__ = [
    "fits",
    "is_withheld",
    "override_ok",
    "reveals_restricted",
    "scrub_output",
    "span_attributes",
]
