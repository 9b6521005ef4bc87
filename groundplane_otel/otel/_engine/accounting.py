"""What a guarded span's end decides: which answers are checked, and how every matched run is
counted exactly once.

The accounting invariant: every run a boundary matches ends in exactly one counted outcome per
answer (passed / blocked / flagged / skipped with a reason / error with a reason). A *run* is a
matched agent span (the outermost one matching the boundary), or an LLM span with no matched
agent span around it.

- Every answer the model gives is one outcome. An LLM span's answer is checked as the span
  ends: a span around it carrying the same answer (an agent span, another instrumentation's LLM
  span of the same call) is *covered*; the same answer given again by another model call (a
  reask answered the same way) is another outcome.
- An LLM span with nothing to read (``absent``, or content capture off in one of two
  instrumentations of one call) leaves it to the enclosing span that matches the boundary.
- An LLM span that matches no boundary, under an agent span that has no name yet, holds its
  answer on that agent span (bounded): OpenInference names AGENT spans only as they end.
- A matched agent span that ends with nothing checked below it is ``error``/``no_output``
  (``skipped``/``span_error`` when the run itself failed). The run is then counted: an answer
  of an LLM span below it that ends later (its local root ended first) adds no outcome, and is
  refused with the run's own error in enforce mode.
- A boundary delegated to a framework adapter (``delegate``) is checked by the adapter
  (``check_output``); the span path then only keeps the run accounting. Each answer an adapter
  hands over is one outcome: it takes the span path's check of that answer, at most once.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from opentelemetry.sdk.trace import Span
from opentelemetry.trace import StatusCode

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine.coverage import Coverage
from groundplane_otel.otel._engine.evaluate import (
    CheckResults,
    Plan,
    UnitRunner,
    decide,
    evaluate,
    no_output,
    plan_checks,
    run_all,
    unmatched,
)
from groundplane_otel.otel._engine.lineage import (
    COVERED_ATTR,
    HANDED_ATTR,
    NO_DICT,
    OUTPUT_ATTR,
    STREAM_ATTR,
    Lineage,
    agents_of,
    attached,
    chain_of,
    same_answer,
    same_call,
    taken,
)
from groundplane_otel.otel._engine.output import OutputRead, parse_answer, read_output
from groundplane_otel.otel._engine.results import ErrorSink
from groundplane_otel.otel._engine.spans import agent_names, is_agent, span_attributes
from groundplane_otel.otel._engine.store import FactsView, RequestKey, TraceStore
from groundplane_otel.otel.config import BoundarySpec, GuardConfig, Limits, Mode
from groundplane_otel.otel.result import Evaluation, Finding, OutputUnchecked

__all__ = ["HELD_ATTR", "MAX_HELD", "Accounting", "Covered"]

logger = logging.getLogger("groundplane_otel")

HELD_ATTR = "_groundplane_held"  # {guard id: [Held]} on an agent span not yet named
MAX_HELD = 8  # answers held per agent span and guard; more fail closed


@dataclass(slots=True, eq=False)
class Covered:
    """An answer checked under a span: by which guard, for which boundary, with what result;
    ``call``: the model call it came from (its outermost LLM span's id; None at an agent span);
    ``handed``: an adapter's hand-over of this answer took it (each is taken once);
    ``unanswered``: the run's own outcome, counted as it ended with no answer below it."""

    guard: int
    boundary: str
    answer: Any
    evaluation: Evaluation
    call: int | None = None
    handed: bool = False
    unanswered: bool = False  # the run ended with no answer checked below it


@dataclass(frozen=True, slots=True)
class _Held:
    read: OutputRead
    failed: bool
    call: int | None  # the model call it came from (its outermost LLM span's id)


NO_CALL = -1  # the call of an answer that is no model call's (never a span id)


def _call_of(span: Any, chain: tuple[Any, ...]) -> int:
    """The model call an LLM span belongs to: the span id of its outermost enclosing LLM span of
    the same call (two instrumentations nest two spans for one call), else its own. An id, not
    the span: a ``Covered`` on an agent span holding its LLM span would be a reference cycle
    (the LLM span's chain holds the agent span)."""
    enclosing = same_call(span, chain)
    return int((enclosing[-1] if enclosing else span).get_span_context().span_id)


def _failed(span: Any) -> bool:
    status = getattr(span, "status", None)
    return getattr(status, "status_code", None) is StatusCode.ERROR


def _is_root(span: Any) -> bool:
    parent = getattr(span, "parent", None)
    return parent is None or bool(parent.is_remote)


class Accounting:
    """What one guard decides at a guarded span's end (``evaluate`` returns it), and the
    adapter entry points ``check_output`` / ``delegate``. Its parts: the guard's ``config``,
    the ``store`` of facts, the ``lineage`` reads, the ``errors`` sink for its own bugs, and the attribute
    ``length_limit`` of the provider (to read a truncated output as such)."""

    def __init__(
        self,
        config: GuardConfig,
        store: TraceStore,
        lineage: Lineage,
        errors: ErrorSink,
        *,
        length_limit: int | None = None,
        coverage: Coverage | None = None,
    ) -> None:
        self.config = config
        self.coverage = coverage
        self.store = store
        self.lineage = lineage
        self._internal_error = errors
        self.length_limit = length_limit
        self.guard = lineage.guard  # the guard's identity on span instances
        self.boundaries = lineage.boundaries
        self._match = lineage.match
        self._plans: dict[str, tuple[Mode, Plan]] = {  # each boundary's mode and checks
            spec.name: (spec.mode or config.mode, plan_checks(spec.checks, spec.facts))
            for spec in config.boundaries
        }
        self._capture_content = config.capture_content
        self.delegated: set[str] = set()  # boundaries checked by framework adapters
        self._by_agent_name = any(spec.match.agent_name for spec in config.boundaries)

    # -- the span path --------------------------------------------------------------------

    def evaluate(self, span: Span) -> list[Evaluation]:
        """Every outcome this span's end counts (usually none or one): the engine's result."""
        gates = getattr(span, STREAM_ATTR, None)
        if gates is not None and self.guard in gates:  # a stream gate decides its answer
            gate = gates[self.guard]()  # a weak reference: None once the gate is gone
            return [] if gate is None else list(gate.span_ended(span))
        attributes = dict(span_attributes(span))  # a snapshot: readers iterate it
        chain: tuple[Any, ...] = chain_of(span)
        agent = is_agent(span.name, attributes)
        spec = self._match(span, attributes, chain)
        if logger.isEnabledFor(logging.DEBUG):
            logger.debug("groundplane: %s", self.lineage.explain(span, attributes, chain, spec))
        coverage = self.coverage
        if spec is None:
            held = not agent and self._by_agent_name and self._hold(span, attributes, chain)
            if coverage is not None:
                if coverage.pending:
                    coverage.unmatched_span(span.name, agents_of(span, attributes, chain))
                if coverage.tripped and not agent and not held:
                    return self._tripped(span, attributes, coverage)
            return []
        if coverage is not None:
            coverage.matched(self.request_of(span), spec.name)
        evaluations: list[Evaluation] = []
        delegated = spec.name in self.delegated
        if agent and not delegated:
            for held in taken(span, HELD_ATTR, NO_DICT).get(self.guard, ()):
                evaluations += self._held_once(span, spec, held, chain)
        elif agent:
            taken(span, HELD_ATTR, None)
        if not delegated:
            read = self._read(span, attributes)
            if read.status != "not_output" and not self._left_above(
                span, chain, spec, read, agent=agent
            ):
                evaluations += self._once(span, spec, read, _failed(span), chain, itself=agent)
        if (
            agent
            and not evaluations
            and not self._covered(span, spec)
            and not any(self._agent_matches(ancestor, spec) for ancestor in chain[1:])
        ):  # an unanswered run, unless an enclosing agent span is the run and accounts for it
            evaluations.append(self._unanswered(span, spec, chain))
        return evaluations

    def _read(self, span: Span, attributes: Mapping[str, Any]) -> OutputRead:
        """The span's answer: submitted, else read from its attributes — inside the
        fail-closed path (a reader failure is an unreadable output, never a pass)."""
        submitted = getattr(span, OUTPUT_ATTR, None)
        limits: Limits = self.config.limits
        if isinstance(submitted, str):
            return parse_answer(submitted, limits)
        if submitted is not None:
            return OutputRead("output", submitted)
        try:
            return read_output(attributes, limits, self.length_limit)
        except Exception as exc:
            self._internal_error("reading an output")  # re-raised only by the debugging switch
            problem = f"the output reader failed: {type(exc).__name__}"
            return OutputRead("unreadable", problem=problem)

    def _left_above(
        self,
        span: Span,
        chain: tuple[Any, ...],
        spec: BoundarySpec,
        read: OutputRead,
        *,
        agent: bool,
    ) -> bool:
        """Is nothing to check here because an enclosing span reads it? An absent answer (or one
        whose content this instrumentation did not capture) is read by an enclosing LLM span
        of the same call that matches too; an absent one also by a matched agent span."""
        if read.status == "absent":
            if agent:
                return True  # the agent's accounting below decides
            return self.lineage.guarded_above(span, chain, spec) or any(
                self._agent_matches(ancestor, spec) for ancestor in chain if ancestor is not span
            )
        return read.missing_content and self.lineage.guarded_above(span, chain, spec)

    def _agent_matches(self, ancestor: Any, spec: BoundarySpec) -> bool:
        attributes = span_attributes(ancestor)
        if not is_agent(ancestor.name, attributes):
            return False
        return self._match(ancestor, attributes, chain_of(ancestor)) is spec

    def _once(
        self,
        span: Span,
        spec: BoundarySpec,
        read: OutputRead,
        failed: bool,
        chain: tuple[Any, ...],
        *,
        itself: bool,
    ) -> list[Evaluation]:
        """Check one answer unless it was checked below already (then nothing is counted)."""
        if spec.answer == "text":
            read = read.as_text()
        covered = self._covered(span, spec)
        if covered and (
            read.status != "output" or any(same_answer(c.answer, read.answer) for c in covered)
        ):
            return []
        if not itself and self._ended_unanswered(span, chain, spec):
            return []
        call = None if itself else _call_of(span, chain)
        return [self._check(span, spec, read, failed, chain, itself=itself, call=call)]

    def _held_once(
        self, span: Span, spec: BoundarySpec, held: _Held, chain: tuple[Any, ...]
    ) -> list[Evaluation]:
        """Check an answer held on this agent span, unless its model call was checked already
        (the other instrumentation's span of that call): each model call is one outcome."""
        read = held.read.as_text() if spec.answer == "text" else held.read
        for seen in self._covered(span, spec):
            if seen.call == held.call and (
                read.status != "output" or same_answer(seen.answer, read.answer)
            ):
                return []
        return [self._check(span, spec, read, held.failed, chain, itself=True, call=held.call)]

    def _ended_unanswered(self, span: Span, chain: tuple[Any, ...], spec: BoundarySpec) -> bool:
        """Did this span's run end (counted ``no_output``) before it? Then its answer adds no
        outcome: the run's refusal, if any, is raised again as this span ends."""
        for ancestor in chain:
            if ancestor is span or not getattr(ancestor, COVERED_ATTR, None):
                continue
            for entry in self._covered(ancestor, spec):
                if entry.unanswered:
                    error = entry.evaluation.error
                    if error is not None:
                        attached(span, HANDED_ATTR, dict).setdefault(self.guard, error)
                    return True
        return False

    def _covered(self, span: Any, spec: BoundarySpec) -> list[Covered]:
        entries: list[Covered] | None = getattr(span, COVERED_ATTR, None)
        if not entries:
            return []
        guard = self.guard
        return [c for c in entries if c.guard == guard and c.boundary == spec.name]

    def _check(
        self,
        span: Any,
        spec: BoundarySpec,
        read: OutputRead,
        failed: bool,
        chain: tuple[Any, ...],
        *,
        itself: bool,
        call: Any = None,
        handed: bool = False,
        run: CheckResults | None = None,
        duration: float = 0.0,
    ) -> Evaluation:
        """Evaluate one answer against its request's facts, and mark the spans above (and the
        span itself, for an agent span) as covered for it (``call``: the model call it came
        from; ``handed``: an adapter handed it over; ``run``: its checks already ran)."""
        mode, plan = self._plans[spec.name]
        try:
            store = self.store
            request = self.request_of(span)
            view = store.view(request, spec.facts)
            if run is not None:
                evaluation = decide(
                    spec.name,
                    mode,
                    spec.report_mode,
                    run,
                    facts=spec.facts,
                    view=view,
                    duration=duration,
                    capture_content=self._capture_content,
                )
            else:
                evaluation = evaluate(
                    spec,
                    mode,
                    read,
                    view,
                    span_failed=failed,
                    plan=plan,
                    capture_content=self._capture_content,
                    hint=_REQUEST_HINT_ROOT if _is_root(span) else _REQUEST_HINT,
                )
            store.account_derived(request, spec.facts)  # what the checks cached
        except Exception as exc:  # a guard bug: counted as an error output, never raised
            self._internal_error("checking")  # re-raised only by the debugging switch
            claim = OutputUnchecked(spec.name, sc.REASON_GUARD_ERROR, type(exc).__name__)
            finding = Finding("error", sc.REASON_GUARD_ERROR, claim)
            evaluation = Evaluation(spec.name, mode, "error", findings=(finding,), facts=spec.facts)
        answer = read.answer if read.status == "output" else None
        entry = Covered(self.guard, spec.name, answer, evaluation, call, handed)
        for above in chain:
            if above is not span or itself:
                attached(above, COVERED_ATTR, list).append(entry)
        return evaluation

    def _unanswered(self, span: Span, spec: BoundarySpec, chain: tuple[Any, ...]) -> Evaluation:
        """A matched agent span ended with nothing checked below it."""
        evaluation = no_output(spec, spec.mode or self.config.mode, span_failed=_failed(span))
        entry = Covered(self.guard, spec.name, None, evaluation, unanswered=True)
        for above in chain:
            attached(above, COVERED_ATTR, list).append(entry)
        return evaluation

    def _tripped(
        self, span: Span, attributes: Mapping[str, Any], coverage: Coverage
    ) -> list[Evaluation]:
        """Strict: an answer matching no boundary, in a request that recorded the facts of a
        boundary that never matched in ``coverage_after`` requests (tripped): counted
        ``error`` (``boundary_unmatched``) for that boundary, refused in enforce mode."""
        request = self.request_of(span)
        spec = coverage.tripped_for(self.store.fact_names(request))
        if spec is None:
            return []
        read = self._read(span, attributes)
        if read.status in ("not_output", "absent", "refusal"):
            return []
        evaluation = unmatched(spec, spec.mode or self.config.mode, coverage.after)
        entry = Covered(self.guard, spec.name, None, evaluation)
        attached(span, COVERED_ATTR, list).append(entry)
        return [evaluation]

    def _hold(self, span: Span, attributes: Mapping[str, Any], chain: tuple[Any, ...]) -> bool:
        """An unmatched LLM span's answer, held on each enclosing agent span that has no
        name yet (it may arrive as that span ends, and select a boundary then). True when
        it was held."""
        unnamed = [
            ancestor
            for ancestor in chain
            if ancestor is not span
            and is_agent(ancestor.name, (above := span_attributes(ancestor)))
            and not agent_names(above)
            and ancestor.is_recording()
        ]
        if not unnamed:
            return False
        read = self._read(span, attributes)
        if read.status in ("not_output", "absent"):
            return False
        held = _Held(read, _failed(span), _call_of(span, chain))
        for ancestor in unnamed:
            answers: list[_Held] = attached(ancestor, HELD_ATTR, dict).setdefault(self.guard, [])
            if len(answers) < MAX_HELD:
                answers.append(held)
            elif len(answers) == MAX_HELD:  # fail closed, once
                problem = f"more than {MAX_HELD} answers under one agent span"
                answers.append(_Held(OutputRead("unreadable", problem=problem), False, NO_CALL))
        return True

    # -- adapters -------------------------------------------------------------------------

    def request_of(self, span: Any) -> RequestKey:
        """The request (local root span) a live span belongs to: the key of its facts."""
        context = span.get_span_context()
        return self.store.span_request(context.trace_id, context.span_id)

    def delegate(self, boundary: str) -> None:
        """``boundary``'s answers are checked by a framework adapter (``check_output``)."""
        self._spec(boundary)
        self.delegated.add(boundary)

    def _spec(self, boundary: str) -> BoundarySpec:
        spec = self.boundaries.get(boundary)
        if spec is None:
            known = ", ".join(sorted(self.boundaries)) or "none"
            raise ValueError(f"unknown boundary {boundary!r} (configured: {known})")
        return spec

    def check_output(self, span: Any, output: Any, boundary: str) -> tuple[Evaluation, bool]:
        """Check an answer an adapter handed over, against the request of ``span``: its
        evaluation, and whether it is a new outcome (the driver then writes it). Each hand-over is one outcome: it takes the span path's check of
        the same answer in this run if one is not taken yet (counted then), else it is checked
        and counted now (a reask answered the same way again is another outcome)."""
        spec = self._spec(boundary)
        if self.coverage is not None:
            self.coverage.matched(self.request_of(span), spec.name)
        if isinstance(output, str):
            read = parse_answer(output, self.config.limits)
        elif isinstance(output, Mapping):
            read = OutputRead("output", output)
        else:
            kind = type(output).__name__
            raise TypeError(f"output must be a mapping or an answer text, got {kind}")
        if spec.answer == "text":
            read = read.as_text()
        chain: tuple[Any, ...] = chain_of(span)
        for seen in self._covered(span, spec) or [
            c for above in chain for c in self._covered(above, spec)
        ]:
            if (
                not seen.handed
                and read.status == "output"
                and same_answer(seen.answer, read.answer)
            ):
                seen.handed = True
                return seen.evaluation, False
        evaluation = self._check(
            span, spec, read, False, chain or (span,), itself=True, handed=True
        )
        return evaluation, True

    # -- the stream gate --------------------------------------------------------------------

    def stream_spec(self, span: Any, boundary: str | None) -> BoundarySpec | None:
        """The boundary a stream read under ``span`` is guarded by: ``boundary`` (it must
        exist), else the one ``span`` matches (None: not guarded)."""
        if boundary is not None:
            return self._spec(boundary)
        return self._match(span, span_attributes(span), chain_of(span) or (span,))

    def stream_mode(self, spec: BoundarySpec) -> Mode:
        return self._plans[spec.name][0]

    def stream_view(self, span: Any, spec: BoundarySpec) -> FactsView:
        """The facts a stream read under ``span`` is checked against (read once per stream:
        a fact recorded after it is missing for it, which fails closed)."""
        return self.store.view(self.request_of(span), spec.facts)

    def stream_unit(self, view: FactsView, spec: BoundarySpec, text: str) -> CheckResults:
        """Every check of ``spec`` on one release unit of a streamed answer (nothing counted)."""
        return run_all(spec.name, self._plans[spec.name][1], text, view)

    def stream_runner(self, view: FactsView, spec: BoundarySpec) -> UnitRunner:
        """``stream_unit`` for every release unit of one stream: its checks prepared once."""
        return UnitRunner(spec.name, self._plans[spec.name][1], view)

    def stream_rest(self, span: Any, spec: BoundarySpec, text: str) -> CheckResults:
        """The run of a streamed answer whose every unit was clean: its whole-answer checks
        (``min_citations``) on the whole text; every other check is supported (it ran on
        every unit). Nothing is checked twice."""
        plan = self._plans[spec.name][1]
        whole = [index for index, step in enumerate(plan) if whole_answer(step.check)]
        if not whole:
            return plan.all_supported, (), plan.names
        view = self.stream_view(span, spec)
        verdicts, findings, passed = run_all(spec.name, Plan(plan[i] for i in whole), text, view)
        merged = list(plan.all_supported)
        for index, verdict in zip(whole, verdicts, strict=True):
            merged[index] = verdict
        kept = [name for index, name in enumerate(plan.names) if index not in whole]
        return merged, findings, [*kept, *passed]

    def check_streamed(
        self,
        span: Any,
        spec: BoundarySpec,
        text: str,
        run: CheckResults | None = None,
        *,
        duration: float = 0.0,
    ) -> Evaluation:
        """A stream gate's one outcome for its answer (``text``, read as the span path reads
        an answer): ``run`` when its checks already ran (a refused unit, a failed stream),
        else checked now; the spans above are covered for it, as for an adapter's hand-over."""
        read = parse_answer(text, self.config.limits)
        if spec.answer == "text":
            read = read.as_text()
        chain: tuple[Any, ...] = chain_of(span) or (span,)
        return self._check(span, spec, read, False, chain, itself=True, run=run, duration=duration)


def whole_answer(check: Any) -> bool:
    """Does ``check`` make a claim about the answer as a whole (``min_citations``), which no
    single unit of a streamed answer can decide?"""
    return int(getattr(getattr(check, "fn", check), "min_citations", 0) or 0) > 0


_REQUEST_HINT = (
    "no tool span of this request recorded it (facts are per request: the spans under one "
    "local root span)"
)
_REQUEST_HINT_ROOT = (
    "no tool span of this request recorded it: the guarded span is itself a root span, so its "
    "request holds only facts recorded under it — run the tool and the model call under one "
    "root span"
)
