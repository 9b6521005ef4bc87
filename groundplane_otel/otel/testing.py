"""A grounding guard for one test: its own SDK providers, in-memory telemetry, and an assertion.

This is what the pytest plugin's ``groundplane`` fixture yields; it works without pytest too
(``assert_grounded`` then raises ``AssertionError``). Nothing global is touched: the tracer,
meter and logger providers are created here, and the guard is installed on them only::

    capture = CaptureGroundplane()
    capture.install("policy.yaml", mode="observe", capture_content=True)
    run_agent(tracer_provider=capture.tracer_provider)
    capture.assert_grounded()
    capture.close()

Counts and findings come from the guard's ``Evaluation``s, collected as each output is decided
(``install(on_evaluation=...)``), with the guarded span's trace and span ids. The
``groundplane.outputs`` metric is an extra check: reading the counts fails (``AssertionError``)
when the metric does not count exactly the collected evaluations.
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any, NoReturn

from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import InMemoryLogRecordExporter, SimpleLogRecordProcessor
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.sampling import ALWAYS_ON
from opentelemetry.trace import Tracer

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._grounded import Counts, SeenFinding, cap, failure_text, outcome_table
from groundplane_otel.otel._telemetry.metric_counts import counter_totals
from groundplane_otel.otel._telemetry.telemetry import finding_seen
from groundplane_otel.otel.config import MODES, GuardConfig, Mode
from groundplane_otel.otel.install import Guard, install
from groundplane_otel.otel.policy import load_policy
from groundplane_otel.otel.result import Evaluation

__all__ = ["CaptureGroundplane", "SeenFinding"]

Policy = GuardConfig | str | os.PathLike[str]


class CaptureGroundplane:
    """Providers, exporters and (once ``install`` is called) a guard, for one test.

    ``tracer_provider`` / ``tracer`` are what the agent under test must be traced with (hand
    them to its framework or instrumentor); ``meter_provider`` and ``logger_provider`` likewise
    when it wants them. ``span_exporter``, ``metric_reader`` and ``log_exporter`` hold
    everything emitted. A relative policy path is resolved from ``base_dir`` (the plugin passes
    the test file's directory), else from the working directory.
    """

    def __init__(self, *, base_dir: str | os.PathLike[str] | None = None) -> None:
        self.base_dir = Path(base_dir) if base_dir is not None else None
        self.span_exporter = InMemorySpanExporter()
        self.metric_reader = InMemoryMetricReader()
        self.log_exporter = InMemoryLogRecordExporter()  # type: ignore[no-untyped-call]
        # ALWAYS_ON: a test must see every span (no sampler may hide an output from the guard).
        self.tracer_provider = TracerProvider(sampler=ALWAYS_ON, shutdown_on_exit=False)
        self.tracer_provider.add_span_processor(SimpleSpanProcessor(self.span_exporter))
        self.meter_provider = MeterProvider(
            metric_readers=[self.metric_reader], shutdown_on_exit=False
        )
        self.logger_provider = LoggerProvider(shutdown_on_exit=False)
        self.logger_provider.add_log_record_processor(SimpleLogRecordProcessor(self.log_exporter))
        self.tracer: Tracer = self.tracer_provider.get_tracer("groundplane_otel.testing")
        self._guard: Guard | None = None
        self._closed = False
        # (trace id, span id, evaluation) of every guarded output, in the order decided
        self._evaluations: list[tuple[int, int, Evaluation]] = []

    # -- setting up ---------------------------------------------------------------------------

    def install(
        self, policy: Policy, *, mode: Mode | None = None, capture_content: bool | None = None
    ) -> Guard:
        """Install the guard of ``policy`` (a ``GuardConfig`` or a policy file path) on this
        test's providers; ``mode`` overrides the policy's and every boundary's own mode,
        ``capture_content`` the policy's switch. Internal guard errors are raised, not only
        logged (a test should see a guard bug). One guard per test."""
        self._check_open()
        if self._guard is not None:
            raise RuntimeError(
                "groundplane: a guard is already installed for this test (one policy per test)"
            )
        if mode is not None and mode not in MODES:
            raise ValueError(f"mode must be one of {MODES} or None, got {_show(mode)}")
        if capture_content is not None and not isinstance(capture_content, bool):
            raise TypeError(f"capture_content must be a bool or None, got {_show(capture_content)}")
        config = self._config(policy)
        if mode is not None:
            boundaries = tuple(dataclasses.replace(b, mode=None) for b in config.boundaries)
            config = dataclasses.replace(config, mode=mode, boundaries=boundaries)
        if capture_content is not None:
            config = dataclasses.replace(config, capture_content=capture_content)
        self._guard = install(
            config,
            tracer_provider=self.tracer_provider,
            meter_provider=self.meter_provider,
            logger_provider=self.logger_provider,
            raise_internal_errors=True,
            on_evaluation=self._collect,
        )
        return self._guard

    @property
    def guard(self) -> Guard:
        """The installed guard (``check_output``, ``record_fact``, ``delegate`` ...)."""
        if self._guard is None:
            raise RuntimeError(
                "groundplane: no guard installed; mark the test "
                "@pytest.mark.groundplane(policy=...) or call groundplane.install(policy)"
            )
        return self._guard

    # -- reading back -------------------------------------------------------------------------

    def spans(self) -> tuple[ReadableSpan, ...]:
        """Every span that ended so far, in end order."""
        return tuple(self.span_exporter.get_finished_spans())

    def evaluations(self) -> tuple[Evaluation, ...]:
        """Every guarded output's ``Evaluation`` so far, in the order the guard decided them."""
        return tuple(evaluation for _, _, evaluation in self._evaluations)

    def outcomes(self) -> dict[str, dict[str, int]]:
        """Guarded outputs decided so far: ``{boundary: {outcome: count}}``, e.g.
        ``{"answer": {"passed": 2, "blocked": 1}}`` (checked against ``groundplane.outputs``)."""
        return outcome_table(self._counts())

    def findings(self) -> tuple[SeenFinding, ...]:
        """Every guardrail finding so far, in the order the guard decided them; the values
        are those of its ``gen_ai.guardrail.result`` events (claimed/supported values and the
        message only with content capture on)."""
        names = {span.context.span_id: span.name for span in self.spans() if span.context}
        capture_content = self._guard is not None and self._guard.config.capture_content
        return tuple(
            finding_seen(
                evaluation,
                finding,
                capture_content=capture_content,
                trace_id=trace_id,
                span_id=span_id,
                span_name=names.get(span_id),
            )
            for trace_id, span_id, evaluation in tuple(self._evaluations)
            for finding in evaluation.findings
        )

    def assert_grounded(
        self,
        *,
        at_least: int | None = None,
        expect_outputs: int | None = None,
        boundary: str | None = None,
    ) -> None:
        """Fail the test (``pytest.fail``, or ``AssertionError`` without pytest) when any
        guarded output so far was blocked, flagged or an error, or when fewer than
        ``at_least`` (default 1) outputs were checked — ``expect_outputs``: exactly that many.
        Skipped outputs (refusals, failed spans) count neither way. ``boundary`` restricts all
        of it to one boundary. The message lists the counts and the findings (boundary, check,
        reason code, trace/span ids; claimed/supported values with content capture on)."""
        __tracebackhide__ = True
        if at_least is not None and expect_outputs is not None:
            raise ValueError("give at_least or expect_outputs, not both")
        for name, value in (("at_least", at_least), ("expect_outputs", expect_outputs)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
                raise TypeError(f"{name} must be an int >= 0, got {_show(value)}")
            if value is not None and value < 0:
                raise ValueError(f"{name} must be an int >= 0, got {value}")
        guard = self.guard
        if boundary is not None:
            names = [spec.name for spec in guard.config.boundaries]
            if boundary not in names:
                raise ValueError(
                    f"unknown boundary {_show(boundary)} (configured: {', '.join(names)})"
                )
        text = failure_text(
            self._counts(),
            self.findings(),
            at_least=1 if at_least is None else at_least,
            exact=expect_outputs,
            boundary=boundary,
            capture_content=guard.config.capture_content,
        )
        if text is not None:
            _fail(text)

    # -- tearing down -------------------------------------------------------------------------

    def close(self) -> None:
        """Uninstall the guard and shut the providers down (idempotent)."""
        if self._closed:
            return
        self._closed = True
        if self._guard is not None:
            self._guard.uninstall()
        self.tracer_provider.shutdown()
        self.meter_provider.shutdown()
        self.logger_provider.shutdown()

    @property
    def closed(self) -> bool:
        return self._closed

    # -- internals ----------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("groundplane: this test's providers are already shut down")

    def _config(self, policy: Policy) -> GuardConfig:
        if isinstance(policy, GuardConfig):
            return policy
        if not isinstance(policy, (str, os.PathLike)):
            raise TypeError(
                "policy must be a GuardConfig or the path of a policy file, got "
                f"{type(policy).__name__}"
            )
        path = Path(policy)
        if not path.is_absolute() and self.base_dir is not None:
            path = self.base_dir / path
        return load_policy(path)

    def _collect(self, span: Any, evaluation: Evaluation) -> None:
        """The guard decided one output (``install``'s ``on_evaluation``)."""
        context = getattr(span, "context", None) or span.get_span_context()
        self._evaluations.append((context.trace_id, context.span_id, evaluation))

    def _counts(self) -> Counts:
        """The collected evaluations, counted; an ``AssertionError`` when the guard's
        ``groundplane.outputs`` metric counts anything else."""
        __tracebackhide__ = True
        self._check_open()
        decided: Counter[tuple[str, str, str | None]] = Counter()
        for _, _, evaluation in tuple(self._evaluations):
            decided[evaluation.boundary, evaluation.outcome, evaluation.skip_reason] += 1
        counts = dict(decided)
        totals = counter_totals(
            self.metric_reader, sc.METRIC_OUTPUTS, sc.BOUNDARY, sc.OUTCOME, sc.SKIP_REASON
        )
        metric = {
            (boundary, outcome, reason or None): n
            for (boundary, outcome, reason), n in totals.items()
        }
        if metric != counts:
            raise AssertionError(
                "groundplane: the guard's metrics disagree with its evaluations: "
                f"{sc.METRIC_OUTPUTS} counts {cap(repr(_table(metric)))}, the evaluations "
                f"{cap(repr(_table(counts)))}"
            )
        return counts

    def __repr__(self) -> str:
        return f"CaptureGroundplane(guard={self._guard!r}, closed={self._closed})"


def _table(counts: Counts) -> dict[str, int]:
    """``{"boundary/outcome[/skip reason]": n}``, sorted: a mismatch's readable form."""
    return {"/".join(part for part in key if part): n for key, n in sorted(counts.items(), key=str)}


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _show(value: object) -> str:
    return cap(repr(value))


def _fail(text: str) -> NoReturn:
    """``pytest.fail`` under pytest (imported lazily: the package never needs pytest), else
    ``AssertionError``."""
    __tracebackhide__ = True
    pytest = sys.modules.get("pytest")
    if pytest is None:
        raise AssertionError(text)
    pytest.fail(text)
    raise AssertionError(text)  # pytest.fail always raises; this keeps NoReturn honest
