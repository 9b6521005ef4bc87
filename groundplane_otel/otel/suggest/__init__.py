"""``groundplane-otel suggest``: infer the policy recorded traces support.

Recorded traces become runs (``runs.py``: tool results and answers, read by the engine's own
readers). The first ``max_runs_kept`` runs are kept in memory and, once that many are read (or
the input ends), they fix what is inferred: the facts (``facts.py``: each tool's result shape),
the boundaries (``boundaries.py``: one per agent, its answer kind) and their candidate checks
(``candidates.py``: what the answers do). Every run — the kept ones, then each later one as it is
read, without keeping it — is then tallied: the real check, built as the policy builds it, runs
on the run's facts and answers (``verify.py``). A check is kept when it held in at least
``min_support`` of the runs it applies to; the YAML (``render.py``) says how often, and which
runs broke it. Memory is bounded: ``max_runs_kept`` runs, the trace buffer of replay, and at
most ``max_listed`` trace ids per check. A boundary or tool first seen after the kept runs is
counted (``unplanned_runs``), not inferred.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from groundplane_otel.otel.replay.records import RecordedSpan
from groundplane_otel.otel.replay.unreadable import BadSink, Unreadable
from groundplane_otel.otel.suggest.boundaries import BoundaryPlan, plan_boundaries
from groundplane_otel.otel.suggest.facts import InferredFact, infer_facts
from groundplane_otel.otel.suggest.runs import ReadCounts, RecordedTrace, RunReader

__all__ = ["NothingToInfer", "Suggester", "Suggestion"]


class NothingToInfer(ValueError):
    """The input holds nothing a policy can be inferred from (the message says what is
    missing)."""


@dataclass(slots=True)
class Suggestion:
    """What was inferred: the facts and boundaries (with their tallies), and what was read."""

    facts: list[InferredFact]
    boundaries: list[BoundaryPlan]
    counts: ReadCounts
    runs: int
    kept_runs: int
    unplanned_runs: int
    min_support: float
    unreadable: int = 0
    without_content: int = 0  # runs with a tool result or an answer not captured
    notes: list[str] = field(default_factory=list)  # what the user must know (shapes, agents)
    undeclared: list[InferredFact] = field(default_factory=list)  # no kept check reads them


class Suggester:
    """Feed requests (``feed``, as replay does), then ``finish`` for the Suggestion."""

    def __init__(
        self,
        *,
        min_support: float = 0.8,
        max_runs_kept: int = 1_000,
        max_listed: int = 10,
        decision_wait: int = 10_000,
        max_traces: int = 10_000,
        max_spans_per_trace: int = 10_000,
        unreadable: BadSink | None = None,
    ) -> None:
        if not 0 < min_support <= 1:
            raise ValueError(f"min_support must be in (0, 1], got {min_support!r}")
        self.min_support = min_support
        self.max_runs_kept = max_runs_kept
        self.max_listed = max_listed
        self.unreadable: BadSink = unreadable if unreadable is not None else Unreadable()
        self.reader = RunReader(
            self._run,
            self.unreadable,
            decision_wait=decision_wait,
            max_traces=max_traces,
            max_spans_per_trace=max_spans_per_trace,
        )
        self._kept: list[RecordedTrace] = []
        self._facts: list[InferredFact] | None = None
        self._plans: list[BoundaryPlan] = []
        self._runs = 0
        self._kept_runs = 0
        self._unplanned = 0
        self._without_content = 0
        self._notes: list[str] = []

    def feed(
        self,
        request: ExportTraceServiceRequest | Sequence[RecordedSpan],
        location: str = "request",
    ) -> None:
        self.reader.feed(request, location)

    def _run(self, run: RecordedTrace) -> None:
        if not (run.tools or run.answers):
            return  # not an agent run (no tool call, no answer)
        self._runs += 1
        self._without_content += run.without_content
        if self._facts is None:
            self._kept.append(run)
            if len(self._kept) >= self.max_runs_kept:
                self._plan()
            return
        self._tally(run)

    def _tally(self, run: RecordedTrace) -> None:
        planned = False
        for plan in self._plans:
            before = plan.runs
            plan.tally(run)
            planned = planned or plan.runs > before
        if run.answers and not planned:
            self._unplanned += 1

    def _plan(self) -> None:
        kept, self._kept = self._kept, []
        self._kept_runs = len(kept)
        self._facts = infer_facts(result for run in kept for result in run.tools)
        self._plans, merged = plan_boundaries(kept, self._facts, self.max_listed)
        shapes = dict.fromkeys(fact.shapes for fact in self._facts if fact.shapes is not None)
        self._notes = [*shapes, *merged]
        for run in kept:
            self._tally(run)

    def finish(self) -> Suggestion:
        """End of input: the inferred policy and its tallies; NothingToInfer when there is
        nothing to infer from (no tool results, no answers, content not captured)."""
        self.reader.finish()
        if self._facts is None:
            self._plan()
        counts = self.reader.counts
        explain_nothing(counts, self._facts or [], self._plans, self.min_support, self._notes)
        used = {name for plan in self._plans for name in _kept_facts(plan, self.min_support)}
        facts = [fact for fact in self._facts or [] if fact.spec.name in used]
        unreadable = getattr(self.unreadable, "count", None)
        return Suggestion(
            facts,
            self._plans,
            counts,
            self._runs,
            self._kept_runs,
            self._unplanned,
            self.min_support,
            unreadable if isinstance(unreadable, int) else 0,
            self._without_content,
            self._notes,
            [fact for fact in self._facts or [] if fact.spec.name not in used],
        )


def _kept_facts(plan: BoundaryPlan, min_support: float) -> set[str]:
    return {name for candidate in plan.kept(min_support) for name in candidate.check.facts}


def _nothing(why: str, notes: Sequence[str]) -> NothingToInfer:
    return NothingToInfer("; ".join([why, *(f"note: {note}" for note in notes)]))


def explain_nothing(
    counts: ReadCounts,
    facts: Sequence[InferredFact],
    plans: Sequence[BoundaryPlan],
    support: float,
    notes: Sequence[str] = (),
) -> None:
    """Raise NothingToInfer saying why no policy can be written, or return (one can)."""
    spans = f"{counts.spans} span" + ("" if counts.spans == 1 else "s")
    if counts.spans == 0:
        raise NothingToInfer("0 spans read: the input holds no recorded span")
    if counts.tool_spans == 0:
        raise NothingToInfer(
            f"no tool spans among the {spans} read: no tool result to ground answers on"
        )
    if counts.tool_results == 0:
        raise NothingToInfer(
            f"none of the {counts.tool_spans} tool spans carries its result: content was not "
            "captured. An instrumentation writes tool results only with its content capture on "
            "(e.g. OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY); a tool the "
            "guard records in code (the tool decorator, call_and_record) writes its result only "
            "when the guard's capture_content is true (GuardConfig(capture_content=True), or "
            "capture_content: true in the policy). Record again with the one your tools use on"
        )
    if counts.llm_outputs == 0:
        if counts.outputs_without_content:
            raise NothingToInfer(
                f"{counts.outputs_without_content} LLM spans answered but carry no output "
                "content: the model instrumentation's content capture was off (e.g. "
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY); record again with "
                "it on"
            )
        raise NothingToInfer("no agent answers in the input (no LLM span carries an output)")
    if not plans:
        if notes:
            raise _nothing("no boundary can be suggested", notes)
        raise NothingToInfer("no agent answered in a run that called a tool: nothing to check")
    if not any(candidate.applied for plan in plans for candidate in plan.candidates):
        described = "; ".join(
            f"{fact.spec.name} from {fact.spec.tool}: {fact.why}"
            for fact in facts
            if any(fact in plan.facts for plan in plans)
        )
        raise _nothing(
            "no candidate check: no answer field equals anything the facts hold ("
            + described
            + ")",
            notes,
        )
    if not any(plan.kept(support) for plan in plans):
        best = max((c for plan in plans for c in plan.candidates), key=lambda c: c.support)
        raise _nothing(
            f"no check held in at least {support:.0%} of the runs it applies to (the best, "
            f"{best.family} on {', '.join(best.check.facts)}, held in {best.held} of "
            f"{best.applied}; "
            "lower --min-support to see weaker ones)",
            notes,
        )
