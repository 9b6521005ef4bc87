"""install(): put the guard on the providers the application configured."""

from __future__ import annotations

import threading
import warnings
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry.metrics import MeterProvider
from opentelemetry.sdk.metrics import MeterProvider as SdkMeterProvider
from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider
from opentelemetry.trace import Span, Tracer, TracerProvider

from groundplane_otel.facts import Provenance
from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine import (
    Coverage,
    Observed,
    Observer,
    ReportOrError,
    Results,
    plan_checks,
    reported_evaluation,
    ride,
    span_limits,
)
from groundplane_otel.otel._live.processor import GroundplaneSpanProcessor
from groundplane_otel.otel._telemetry.telemetry import Telemetry
from groundplane_otel.otel.config import MODES, GuardConfig, Mode
from groundplane_otel.otel.result import Evaluation
from groundplane_otel.registry import FactRegistry

__all__ = ["Guard", "active_guard", "active_guards", "install"]

_lock = threading.Lock()
# The active guard of each SDK TracerProvider, oldest first. Keyed weakly: a provider the
# application drops takes its guard's entry with it (the guard holds its provider weakly too).
_active: weakref.WeakKeyDictionary[Any, Guard] = weakref.WeakKeyDictionary()


class Guard:
    """What ``install`` returns: the installed processor and its providers.

    ``uninstall()`` (or ``shutdown()``) switches the guard off: the SDK cannot remove a span
    processor, so the processor stays registered but does nothing. The provider's own
    ``shutdown()`` switches it off too (``install()`` on that provider then works again), and
    the guard holds its provider weakly: a provider the application drops is collected, and
    its guard is no longer active.

    ``record_fact`` and ``record_evaluation`` are for adapters and application code that
    capture facts or run boundaries themselves: they write the guard's telemetry without
    reaching into its internals, and never raise into the application (a bug inside them is
    logged and counted, and re-raised only under ``raise_internal_errors``).
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
        try:
            self._provider: Callable[[], TracerProvider | None] = weakref.ref(tracer_provider)
        except TypeError:  # a provider that cannot be weakly referenced (not the SDK's)
            self._provider = lambda: tracer_provider
        self.attached = attached
        self._tracer: Tracer | None = None
        self.origin = "install()"  # who installed it, for the refusal of a second guard

    @property
    def tracer_provider(self) -> TracerProvider | None:
        """The provider the guard was installed on (None once the application dropped it)."""
        return self._provider()

    @property
    def tracer(self) -> Tracer:
        """The guard's own tracer (for the spans adapters open), from its provider; made on
        first use, so ``install()`` adds no tracer to the provider."""
        if self._tracer is None:
            provider = self._provider()
            self._tracer = (
                provider.get_tracer("groundplane_otel")
                if provider is not None
                else trace.get_tracer("groundplane_otel")
            )
        return self._tracer

    @property
    def active(self) -> bool:
        with _lock:
            return self in _live()

    def uninstall(self) -> None:
        self.processor.shutdown()
        with _lock:
            provider = self._provider()
            if self.attached and provider is not None and _active.get(provider) is self:
                del _active[provider]

    def shutdown(self) -> None:
        self.uninstall()

    def record_fact(
        self,
        span: Span | None,
        *,
        tool: str,
        fact: str | None,
        value: Any,
        arguments: Mapping[str, Any],
        source: str = "code",
        tool_call_id: str | None = None,
    ) -> None:
        """Record a tool result for ``span``'s trace, with ``span`` as provenance (plus
        ``tool``, ``arguments`` and ``tool_call_id``), typed by this guard's FactSpecs for
        ``tool`` (restricted to ``fact`` when given), else stored as a value under ``fact`` (or
        ``tool``). Counted in ``groundplane.facts`` with ``source`` (one of
        ``semconv.FACT_SOURCES``; anything else is a ValueError). A value that cannot be a fact
        (NaN, too deep, over a limit, a conflicting second result) is counted and makes the
        checks that need it fail closed. No-op without a valid span."""
        if source not in sc.FACT_SOURCES:
            raise ValueError(f"source must be one of {sc.FACT_SOURCES}, got {source!r}")
        if span is None or not span.get_span_context().is_valid:
            return
        try:
            context = span.get_span_context()
            provenance = Provenance(
                tool,
                dict(arguments),
                f"{context.trace_id:032x}",
                f"{context.span_id:016x}",
                tool_call_id,
            )
            self.processor.engine.record_fact(
                span, fact, value, provenance=provenance, source=source
            )
        except Exception:
            self.processor._internal_error(f"record_fact ({source})")

    def record_evaluation(
        self,
        span: Span | None,
        *,
        boundary: str,
        checks: Sequence[Callable[..., Any]],
        output: Mapping[str, Any] | None,
        report_or_error: ReportOrError,
        duration_s: float,
        registry: FactRegistry,
        facts: Sequence[str] = (),
        mode: Mode = "enforce",
    ) -> None:
        """Write the guard's telemetry for a boundary that other code ran on ``output``.

        ``report_or_error`` is what that boundary produced: a ``Report`` (mode "all"), the
        exception it raised (``UnsupportedClaim``, ``ClaimsUnsupported``, or anything else), or
        None when every check passed. ``checks`` are all the checks of the boundary, in order,
        and ``registry``/``facts`` the facts they read. One ``groundplane.claims`` is counted
        per check whatever stopped the boundary: checks the report does not account for are
        evaluated here on ``output`` for telemetry only. On ``span`` (still recording): the
        summary attributes, one ``gen_ai.guardrail.result`` event per finding, links to the
        fact spans, ERROR when blocked in ``mode`` "enforce"; then ``groundplane.outputs`` and
        ``groundplane.check.duration`` (``duration_s``). With content capture off, an
        ``UnsupportedClaim``/``ClaimsUnsupported`` passed in is redacted: its ``str()``,
        ``repr()`` and ``args`` become a content-free summary (``diagnosis`` keeps the full
        message), so the spans and logs it later reaches carry no content. Nothing is raised
        here."""
        if mode not in MODES:
            raise ValueError(f"mode must be one of {MODES}, got {mode!r}")
        if span is None:
            return
        try:
            evaluation = reported_evaluation(
                boundary,
                plan_checks(checks, facts),
                output=output,
                report_or_error=report_or_error,
                registry=registry,
                facts=tuple(facts),
                duration=duration_s,
                mode=mode,
                capture_content=self.config.capture_content,
            )
            self.processor.write(span, evaluation)
        except Exception:
            self.processor._internal_error(f"record_evaluation ({boundary})")

    def check_output(
        self, output: Mapping[str, Any] | str, *, boundary: str, span: Span | None = None
    ) -> Evaluation:
        """Check an answer a framework adapter holds (its guardrail or validator hook) against
        the facts of ``span``'s request (default: the current span), exactly like the span
        path: the same telemetry on ``span``, counted once (an answer the span path already
        checked in this run returns that evaluation, not counted again), the run marked as
        answered. Returns the Evaluation; ``.error`` is what enforce mode would raise — the
        adapter raises it (or asks for a retry) the framework's way. Never raises for a bad
        answer; an unknown ``boundary`` is a ValueError."""
        target = span if span is not None else trace.get_current_span()
        return self.processor.check_output(target, output, boundary)

    def mark_handled(self, span: Span) -> None:
        """An adapter checked ``span``'s answer (``check_output``) and delivers the verdict
        through its framework's own mechanism (a tripwire, a retry): a refusal raised at that
        span's end is then not counted in ``groundplane.outputs.swallowed``."""
        self.processor.swallow.handled(span)

    def delegate(self, boundary: str) -> None:
        """``boundary``'s answers are checked by a framework adapter through ``check_output``:
        the span path stops reading LLM outputs for it and only keeps the run accounting (a
        matched agent span that ends with no ``check_output`` below it is error/no_output)."""
        self.processor.delegate(boundary)

    def __repr__(self) -> str:
        names = [spec.name for spec in self.config.boundaries]
        return f"Guard(boundaries={names}, mode={self.config.mode!r}, active={self.active})"


def active_guard() -> Guard | None:
    """The most recently installed guard that is still active."""
    with _lock:
        live = _live()
        return live[-1] if live else None


def active_guards() -> tuple[Guard, ...]:
    """Every installed guard that is still active, oldest first."""
    with _lock:
        return _live()


def _live() -> tuple[Guard, ...]:
    """The active guards, oldest first, after dropping those whose provider was shut down
    (``TracerProvider.shutdown()`` shuts the guard's processor down). Called under ``_lock``."""
    for provider, guard in list(_active.items()):
        if not guard.processor._enabled:
            del _active[provider]
    return tuple(_active.values())


def _length_limit(tracer_provider: Any) -> int | None:
    length = span_limits(tracer_provider).max_span_attribute_length
    return length if isinstance(length, int) else None


def install(
    config: GuardConfig,
    *,
    tracer_provider: TracerProvider,
    meter_provider: MeterProvider,
    logger_provider: Any = None,
    raise_internal_errors: bool | None = None,
    on_evaluation: Observer | None = None,
) -> Guard:
    """Add the guard to an SDK ``TracerProvider``; metrics go to ``meter_provider``, and the
    guardrail events also to ``logger_provider`` as log events when one is given.

    A provider that is not the SDK's gets a RuntimeWarning: the guard cannot see spans of an
    API-only tracer provider (nothing is checked), nor export metrics through an API-only
    meter provider. One guard per TracerProvider: installing a second one while the first is
    active (e.g. ``install()`` under the zero-code instrumentor) is a RuntimeError.

    On the SDK's own span dispatchers (synchronous, the default, and concurrent) the guard's
    hooks *are* the provider's span hooks (``otel/_engine/sdk/dispatch.py``: no call of its own
    per span); on any other it is added as a span processor. No SDK class is patched. With
    content capture off, the exceptions the guard raises are redacted (``str()``/``repr()``/``args``
    content-free, ``diagnosis`` full): whatever records or logs them writes no claimed or
    supported value. See ``otel/_engine/redaction.py``.

    ``on_evaluation(span, evaluation)`` is called with every guarded output's ``Evaluation`` as
    it is decided, before its telemetry is written (the pytest fixture collects them).
    """
    if not isinstance(config, GuardConfig):
        raise TypeError(f"config must be a GuardConfig, got {type(config).__name__}")
    attached = isinstance(tracer_provider, SdkTracerProvider)
    if attached:
        with _lock:
            _refuse_second(tracer_provider)  # before building anything (checked again below)
    else:
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
    telemetry = Telemetry(meter_provider, config, logger_provider=logger_provider)
    results: Results = telemetry if on_evaluation is None else Observed(telemetry, on_evaluation)
    processor = GroundplaneSpanProcessor(
        config,
        results,
        meter_provider=meter_provider,
        length_limit=_length_limit(tracer_provider),
        raise_internal_errors=raise_internal_errors,
        coverage=Coverage(config, telemetry.count_coverage),
    )
    guard = Guard(config, processor, tracer_provider, attached)
    if isinstance(tracer_provider, SdkTracerProvider):
        from groundplane_otel.otel.sampling import warn_if_sampler_drops

        with _lock:
            _refuse_second(tracer_provider)
            processor._leave_dispatch = ride(processor, tracer_provider)
            if processor._leave_dispatch is None:
                tracer_provider.add_span_processor(processor)
            _active[tracer_provider] = guard
        warn_if_sampler_drops(tracer_provider, once=True)
    return guard


def _refuse_second(tracer_provider: TracerProvider) -> None:
    """One guard per TracerProvider: a second would check and count every output twice, and
    of two exceptions raised at one span end the application would get only one."""
    _live()  # a guard the provider's shutdown switched off does not count
    installed = _active.get(tracer_provider)
    if installed is not None:
        raise RuntimeError(
            f"groundplane_otel: a guard is already installed on this TracerProvider (by "
            f"{installed.origin}); a second one would check and count every output twice. "
            "Keep one: call uninstall() on the first, put every boundary in one config, or "
            "under opentelemetry-instrument set OTEL_PYTHON_DISABLED_INSTRUMENTATIONS="
            "groundplane to install in code only"
        )
