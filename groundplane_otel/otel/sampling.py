"""Sampling that never switches the guard off.

An unsampled span is non-recording: no span processor sees it, so a guard behind a 1% sampler
would check 1% of the outputs. ``GuardSampler`` keeps the inner sampler's export decision but
turns its DROP into RECORD_ONLY: every span is recorded (the guard sees it and counts it), only
the sampled ones are exported. The cost is recording every span in process, not exporting it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from typing import Final

from opentelemetry.context import Context
from opentelemetry.sdk.trace.sampling import (
    DEFAULT_ON,
    Decision,
    ParentBased,
    Sampler,
    SamplingResult,
    TraceIdRatioBased,
)
from opentelemetry.trace import Link, SpanKind, TracerProvider
from opentelemetry.trace.span import TraceState
from opentelemetry.util.types import Attributes

__all__ = ["SAMPLER_ENTRY_POINT", "GuardSampler", "sampler_from_env", "warn_if_sampler_drops"]

logger = logging.getLogger("groundplane_otel")

SAMPLER_ENTRY_POINT: Final = "groundplane_parentbased_traceidratio"
"""The ``OTEL_TRACES_SAMPLER`` value that selects ``sampler_from_env`` under zero-code setup."""

_ALWAYS_ON: Final = "AlwaysOnSampler"
_SDK_DEFAULT: Final[str] = DEFAULT_ON.get_description()  # type: ignore[no-untyped-call]


class GuardSampler(Sampler):
    """Delegate to ``inner``; where it drops a span, record it without sampling it instead.

    Unlike the SDK's ``AlwaysRecordSampler``, the record-only span keeps the attributes it was
    started with (the SDK's samplers discard them with a DROP decision).
    """

    def __init__(self, inner: Sampler) -> None:
        if not isinstance(inner, Sampler):
            raise TypeError(f"GuardSampler wraps a Sampler, got {type(inner).__name__}")
        self.inner = inner

    def should_sample(
        self,
        parent_context: Context | None,
        trace_id: int,
        name: str,
        kind: SpanKind | None = None,
        attributes: Attributes = None,
        links: Sequence[Link] | None = None,
        trace_state: TraceState | None = None,
    ) -> SamplingResult:
        result = self.inner.should_sample(
            parent_context, trace_id, name, kind, attributes, links, trace_state
        )
        if result.decision is not Decision.DROP:
            return result
        # The SDK's samplers return no attributes with DROP, and the span is created with the
        # result's attributes only: keep the start attributes (gen_ai.agent.name,
        # gen_ai.operation.name …) or the guard could not match the recorded span.
        kept = {**(attributes or {}), **result.attributes}
        return SamplingResult(Decision.RECORD_ONLY, kept, result.trace_state)

    def get_description(self) -> str:
        return f"GuardSampler{{{self.inner.get_description()}}}"


def _rate(arg: float | str | None) -> float:
    """The ratio from ``OTEL_TRACES_SAMPLER_ARG``: 1.0 when unset, warn and 1.0 when invalid."""
    if arg is None or (isinstance(arg, str) and not arg.strip()):
        return 1.0
    try:
        rate = float(arg)
    except ValueError:
        rate = -1.0
    if not 0.0 <= rate <= 1.0:
        logger.warning(
            "groundplane: ignoring OTEL_TRACES_SAMPLER_ARG=%r for %s; allowed values: a number "
            "from 0.0 to 1.0 (the fraction of traces exported); using 1.0",
            arg,
            SAMPLER_ENTRY_POINT,
        )
        return 1.0
    return rate


def sampler_from_env(arg: float | str | None = None) -> GuardSampler:
    """``GuardSampler(ParentBased(TraceIdRatioBased(arg)))``: the ``opentelemetry_traces_sampler``
    factory behind ``OTEL_TRACES_SAMPLER=groundplane_parentbased_traceidratio``.

    The SDK passes ``OTEL_TRACES_SAMPLER_ARG`` as a string (None when unset): the fraction of
    traces to export, default 1.0. Every span is recorded for the guard either way.
    """
    return GuardSampler(ParentBased(TraceIdRatioBased(_rate(arg))))


def _never_drops(sampler: Sampler) -> bool:
    return isinstance(sampler, GuardSampler) or sampler.get_description() == _ALWAYS_ON


_warned: set[tuple[str, str]] = set()  # (sampler class, description) warned about once
_warned_lock = threading.Lock()


def warn_if_sampler_drops(tracer_provider: TracerProvider, *, once: bool = False) -> bool:
    """Warn (and return True) when the provider's sampler can drop spans the guard must see;
    with ``once`` (``install()``), logged once per process per sampler configuration (its class
    and description), True again without a log line after that.

    Safe: ALWAYS_ON or a ``GuardSampler``. Anything else, including the SDK default
    ``parentbased_always_on`` (it drops every span whose remote parent was not sampled upstream)
    and the SDK's ``AlwaysRecordSampler`` (it records a dropped span without its start
    attributes, so no boundary matches it), leaves outputs unchecked. A provider without a
    sampler (not the SDK's) is not judged here.
    """
    sampler = getattr(tracer_provider, "sampler", None)
    if not isinstance(sampler, Sampler) or _never_drops(sampler):
        return False
    if once:
        key = (type(sampler).__qualname__, sampler.get_description())
        with _warned_lock:
            if key in _warned:
                return True
            _warned.add(key)
    if type(sampler).__name__ == "AlwaysRecordSampler":
        logger.warning(
            "groundplane: the tracer provider's sampler %s records the spans it drops without "
            "their start attributes (gen_ai.agent.name, gen_ai.operation.name …), so the guard "
            "cannot match them. Use TracerProvider(sampler=GuardSampler(inner)) instead",
            sampler.get_description(),
        )
        return True
    if sampler.get_description() == _SDK_DEFAULT:
        logger.warning(
            "groundplane: the tracer provider's sampler is the SDK default, ParentBased(AlwaysOn): "
            "it drops every span of a request whose incoming traceparent says not sampled (an "
            "upstream service sampled it out), and the guard never sees a dropped span (its "
            "output goes unchecked and uncounted). Wrap it: "
            "TracerProvider(sampler=GuardSampler(ParentBased(ALWAYS_ON))), or set "
            "OTEL_TRACES_SAMPLER=%s; every span is then recorded for the guard and only the "
            "sampled ones are exported",
            SAMPLER_ENTRY_POINT,
        )
        return True
    logger.warning(
        "groundplane: the tracer provider's sampler %s can drop spans, and the guard never sees "
        "a dropped span (its output goes unchecked and uncounted). Wrap it: "
        "TracerProvider(sampler=GuardSampler(sampler)), or set OTEL_TRACES_SAMPLER=%s "
        "(OTEL_TRACES_SAMPLER_ARG = the fraction to export); every span is then recorded for "
        "the guard and only the sampled ones are exported",
        sampler.get_description(),
        SAMPLER_ENTRY_POINT,
    )
    return True
