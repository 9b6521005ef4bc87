"""The guard's adapter interface (``Guard.check_output``, ``Guard.delegate``), called through
one place so the adapters never reach into the guard.

TEMPORARY: until the lead's interface lands on main, a guard without these methods gets a
stand-in built from the same engine pieces (evaluate, telemetry); it goes away at the merge.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from groundplane_otel.adapters._otel import current_span

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from groundplane_otel.otel.install import Guard
    from groundplane_otel.otel.result import Evaluation

__all__ = ["check_output", "delegate"]

_DELEGATED = "_groundplane_delegated_specs"


def delegate(guard: Guard, boundary: str) -> None:
    """The span path stops checking ``boundary``'s LLM outputs: an adapter checks them."""
    method = getattr(guard, "delegate", None)
    if callable(method):
        method(boundary)
        return
    processor: Any = guard.processor
    specs: dict[str, Any] = vars(processor).setdefault(_DELEGATED, {})
    if boundary in specs:
        return
    config = processor.config
    spec = next(spec for spec in config.boundaries if spec.name == boundary)
    specs[boundary] = spec
    kept = tuple(s for s in config.boundaries if s.name != boundary)
    processor.config = dataclasses.replace(config, boundaries=kept)


def check_output(
    guard: Guard, output: Mapping[str, Any] | str, *, boundary: str, span: Span | None
) -> Evaluation:
    method = getattr(guard, "check_output", None)
    if callable(method):
        result: Evaluation = method(output, boundary=boundary, span=span)
        return result
    from groundplane_otel.otel.evaluate import evaluate
    from groundplane_otel.otel.output import OutputRead, parse_answer

    processor: Any = guard.processor
    where = span if span is not None else current_span()
    spec = vars(processor).get(_DELEGATED, {}).get(boundary) or processor.boundaries.get(boundary)
    if spec is None:
        raise ValueError(f"unknown boundary {boundary!r}")
    read = (
        parse_answer(output, guard.config.limits, processor.length_limit)
        if isinstance(output, str)
        else OutputRead("output", output)
    )
    trace_id = where.get_span_context().trace_id if where is not None else 0
    evaluation = evaluate(
        spec,
        spec.mode or guard.config.mode,
        read,
        processor.store.view(trace_id, spec.facts),
        span_failed=False,
        plan=processor._plans[spec.name],
        capture_content=guard.config.capture_content,
    )
    if where is not None:
        if where.is_recording():
            processor.telemetry.annotate(where, evaluation)
        processor.telemetry.record(where, evaluation)
    return evaluation
