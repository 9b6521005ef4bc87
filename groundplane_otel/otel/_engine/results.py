"""What a driver does with the engine's decisions: the one interface between them.

The engine decides (``Engine.decide`` returns the ``Evaluation``s of a span's end) and
hands every result to its driver's ``Results``: the live guard's ``Telemetry`` turns them into
span attributes, events, status, metrics and log records; replay tallies them into its report
(``replay.stats.Tally``), and the verifier's tally also exports them as OTLP metrics and log
records. Facts the store records are counted through the same interface.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from groundplane_otel.otel.result import Evaluation

__all__ = ["ErrorSink", "Observed", "Observer", "Results"]


class Results(Protocol):
    """The consumer of the engine's results (a guarded span's evaluations, fact outcomes)."""

    @property
    def count_fact(self) -> Callable[[str, str, str], None]:
        """Count one tool result: (fact kind, source, outcome)."""

    def annotate(self, span: Any, evaluation: Evaluation, *, matched: bool = False) -> None:
        """One evaluation of ``span``, while it still records (before its ``end()``);
        ``matched``: its boundary came from the policy's match rules (the span named none)."""

    def record(self, span: Any, evaluation: Evaluation) -> None:
        """One evaluation of ``span``, once it ended."""

    def watch_traces(self, store: Any) -> None:
        """The guard's store of live traces (``groundplane.traces.active``), until ``close``."""

    def close(self, store: Any) -> None:
        """The guard was shut down."""


class ErrorSink(Protocol):
    """Where a part of the engine reports a bug of its own (the processor counts and logs it;
    re-raises it under ``raise_internal_errors`` when ``reraise``)."""

    def __call__(self, where: str, *, reraise: bool = True) -> None: ...


Observer = Callable[[Any, Evaluation], None]
"""Called with (span, evaluation) for every guarded output a driver records."""


class Observed:
    """A driver's ``Results`` that also hands every recorded evaluation to ``observe``
    (before the driver writes it: what was decided is seen even if writing it fails)."""

    def __init__(self, inner: Results, observe: Observer) -> None:
        self.inner, self.observe = inner, observe

    @property
    def count_fact(self) -> Callable[[str, str, str], None]:
        return self.inner.count_fact

    def annotate(self, span: Any, evaluation: Evaluation, *, matched: bool = False) -> None:
        self.inner.annotate(span, evaluation, matched=matched)

    def record(self, span: Any, evaluation: Evaluation) -> None:
        self.observe(span, evaluation)
        self.inner.record(span, evaluation)

    def watch_traces(self, store: Any) -> None:
        self.inner.watch_traces(store)

    def close(self, store: Any) -> None:
        self.inner.close(store)
