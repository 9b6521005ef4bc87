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
from functools import partial
from typing import Any

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
    HELD_ATTR,
    MAX_HELD,
    Cover,
    Lineage,
    Reading,
    chain_of,
)
from groundplane_otel.otel._engine.output import OutputRead, parse_answer, read_output
from groundplane_otel.otel._engine.results import ErrorSink
from groundplane_otel.otel._engine.spans import span_attributes
from groundplane_otel.otel._engine.store import FactsView, RequestKey, TraceStore
from groundplane_otel.otel.config import BoundarySpec, GuardConfig, Limits, Mode
from groundplane_otel.otel.result import Evaluation, Finding, OutputUnchecked

__all__ = ["HELD_ATTR", "MAX_HELD", "Accounting", "Covered"]

logger = logging.getLogger("groundplane_otel")


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
# What an agent span holds past ``MAX_HELD`` answers: one unreadable answer (fails closed).
_OVERFLOW = _Held(
    OutputRead("unreadable", problem=f"more than {MAX_HELD} answers under one agent span"),
    False,
    NO_CALL,
)


def same_answer(left: Any, right: Any) -> bool:
    """Is ``right`` the answer ``left`` (checked below) again? Equal JSON values are; a value
    that cannot even be compared (a cycle) is only itself."""
    if left is right:
        return True
    try:
        return bool(left == right)
    except (RecursionError, TypeError, ValueError):
        return False


def _failed(span: Any) -> bool:
    status = getattr(span, "status", None)
    return getattr(status, "status_code", None) is StatusCode.ERROR


def _request_hint(span: Any) -> str:
    """Where the facts of ``span``'s request come from (a missing fact's hint)."""
    parent = getattr(span, "parent", None)
    return _REQUEST_HINT_ROOT if parent is None or parent.is_remote else _REQUEST_HINT


def _covering(entry: Covered, chain: tuple[Any, ...], span: Any, itself: bool) -> Cover:
    """``entry`` written on the spans above ``span`` (and on ``span`` itself, ``itself``): the
    chain, without its first span when that is ``span`` (a chain holds itself first)."""
    return entry, chain[1:] if not itself and chain and chain[0] is span else chain


class Accounting:
    """What one guard decides at a guarded span's end (``decide``, over the ``Reading`` its
    lineage made of the span handles: it touches no handle itself), and the adapter entry
    points ``check_output`` / ``delegate``. Its parts: the guard's ``config``, the ``store`` of
    facts, the ``lineage``, the ``errors`` sink for its own bugs, and the attribute
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

    # -- the span path --------------------------------------------------------------------

    def decide(self, reading: Reading) -> None:
        """Decide a guarded span's end over what its handles hold (``reading``): its outcomes
        and what they write, filled into ``reading``."""
        spec, agent = reading.spec, reading.agent
        coverage = self.coverage
        if spec is None:
            held = bool(reading.unnamed) and self._hold(reading)
            if coverage is not None:
                if coverage.pending:
                    coverage.unmatched_span(reading.name, reading.agents)
                if coverage.tripped and not agent and not held:
                    reading.evaluations += self._tripped(reading, coverage)
            return
        if coverage is not None:
            coverage.matched(self.request_of(reading.span), spec.name)
        evaluations = reading.evaluations
        delegated = spec.name in self.delegated
        if agent and not delegated:
            for held in reading.held:
                evaluations += self._held_once(reading, spec, held)
        if not delegated:
            read = self._read(reading.submitted, reading.attributes)
            status = read.status
            if status == "output":  # an answer read is never left above: no call for it
                left = False
            elif status == "absent" and agent:  # the agent's accounting below decides
                left = True
            else:
                left = status == "not_output" or self._left_above(reading, read)
            if not left:
                evaluations += self._once(reading, spec, read)
        if agent and not evaluations and not reading.covered and not reading.above()[1]:
            # an unanswered run, unless an enclosing agent span is the run and accounts for it
            evaluations.append(self._unanswered(reading, spec))

    def _read(self, submitted: Any, attributes: Mapping[str, Any]) -> OutputRead:
        """The span's answer: ``submitted``, else read from its attributes — inside the
        fail-closed path (a reader failure is an unreadable output, never a pass)."""
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

    @staticmethod
    def _left_above(reading: Reading, read: OutputRead) -> bool:
        """Is nothing to check here because an enclosing span reads it? An absent answer (or one
        whose content this instrumentation did not capture) is read by an enclosing LLM span
        of the same call that matches too; an absent one also by a matched agent span."""
        if read.status == "absent":
            if reading.agent:
                return True  # the agent's accounting below decides
            return any(reading.above())  # guarded_above or agent_above
        return read.missing_content and reading.above()[0]

    def _once(self, reading: Reading, spec: BoundarySpec, read: OutputRead) -> list[Evaluation]:
        """Check one answer unless it was checked below already (then nothing is counted)."""
        if spec.answer == "text":
            read = read.as_text()
        covered = reading.covered
        if covered and (
            read.status != "output" or any(same_answer(c.answer, read.answer) for c in covered)
        ):
            return []
        itself = reading.agent
        if not itself and reading.unanswered_above is not None:
            # The run ended (counted ``no_output``) before this span: its answer adds no
            # outcome, and the run's refusal, if any, is raised again as this span ends.
            error = reading.unanswered_above.evaluation.error
            if error is not None:
                reading.handed = error
            return []
        call = None if itself else reading.call
        # Whether the span failed decides only an answer that is none (``evaluate``).
        failed = (read.status != "output" or read.answer is None) and _failed(reading.span)
        return [self._span_check(reading, spec, read, failed, itself=itself, call=call)]

    def _held_once(self, reading: Reading, spec: BoundarySpec, held: _Held) -> list[Evaluation]:
        """Check an answer held on this agent span, unless its model call was checked already
        (the other instrumentation's span of that call): each model call is one outcome."""
        read = held.read.as_text() if spec.answer == "text" else held.read
        for seen in reading.covered:
            if seen.call == held.call and (
                read.status != "output" or same_answer(seen.answer, read.answer)
            ):
                return []
        return [self._span_check(reading, spec, read, held.failed, itself=True, call=held.call)]

    def _span_check(
        self,
        reading: Reading,
        spec: BoundarySpec,
        read: OutputRead,
        failed: bool,
        *,
        itself: bool,
        call: int | None,
    ) -> Evaluation:
        """``_check`` on the span path, against the span's request: the spans it covers are
        written back by lineage (the span itself among them, ``itself``, is covered for the
        rest of this decision too)."""
        span, chain = reading.span, reading.chain
        request = self.request_of(span)
        evaluation, entry = self._check(span, spec, read, failed, request, call=call)
        reading.covers.append(_covering(entry, chain, span, itself))
        if itself and chain and chain[0] is span:
            reading.covered = [*reading.covered, entry]
        return evaluation

    def _check(
        self,
        span: Any,
        spec: BoundarySpec,
        read: OutputRead,
        failed: bool,
        request: RequestKey,
        *,
        call: Any = None,
        handed: bool = False,
        run: CheckResults | None = None,
        duration: float = 0.0,
    ) -> tuple[Evaluation, Covered]:
        """Evaluate one answer against its request's facts (``call``: the model call it came
        from; ``handed``: an adapter handed it over; ``run``: its checks already ran): its
        evaluation, and the entry that covers the spans above for it."""
        mode, plan = self._plans[spec.name]
        try:
            if run is not None:
                check = partial(
                    decide,
                    spec.name,
                    mode,
                    spec.report_mode,
                    run,
                    facts=spec.facts,
                    duration=duration,
                    capture_content=self._capture_content,
                )
            else:  # positional: the store's ``check(view=...)`` then calls it the fast way
                hint = partial(_request_hint, span)  # worded only for a missing fact
                check = partial(
                    evaluate, spec, mode, read, failed, plan, self._capture_content, hint
                )
            evaluation = self.store.checked(request, spec.facts, check)
        except Exception as exc:  # a guard bug: counted as an error output, never raised
            self._internal_error("checking")  # re-raised only by the debugging switch
            claim = OutputUnchecked(spec.name, sc.REASON_GUARD_ERROR, type(exc).__name__)
            finding = Finding("error", sc.REASON_GUARD_ERROR, claim)
            evaluation = Evaluation(spec.name, mode, "error", findings=(finding,), facts=spec.facts)
        answer = read.answer if read.status == "output" else None
        return evaluation, Covered(self.guard, spec.name, answer, evaluation, call, handed)

    def _unanswered(self, reading: Reading, spec: BoundarySpec) -> Evaluation:
        """A matched agent span ended with nothing checked below it."""
        evaluation = no_output(
            spec, spec.mode or self.config.mode, span_failed=_failed(reading.span)
        )
        entry = Covered(self.guard, spec.name, None, evaluation, unanswered=True)
        reading.covers.append((entry, reading.chain))
        return evaluation

    def _tripped(self, reading: Reading, coverage: Coverage) -> list[Evaluation]:
        """Strict: an answer matching no boundary, in a request that recorded the facts of a
        boundary that never matched in ``coverage_after`` requests (tripped): counted
        ``error`` (``boundary_unmatched``) for that boundary, refused in enforce mode."""
        span = reading.span
        spec = coverage.tripped_for(self.store.fact_names(self.request_of(span)))
        if spec is None:
            return []
        read = self._read(reading.submitted, reading.attributes)
        if read.status in ("not_output", "absent", "refusal"):
            return []
        evaluation = unmatched(spec, spec.mode or self.config.mode, coverage.after)
        reading.covers.append((Covered(self.guard, spec.name, None, evaluation), (span,)))
        return [evaluation]

    def _hold(self, reading: Reading) -> bool:
        """An unmatched LLM span's answer, held on each enclosing agent span that has no
        name yet (``reading.unnamed``: it may arrive as that span ends, and select a boundary
        then). True when it was held."""
        read = self._read(reading.submitted, reading.attributes)
        if read.status in ("not_output", "absent"):
            return False
        reading.hold = _Held(read, _failed(reading.span), reading.call), _OVERFLOW
        return True

    # -- adapters -------------------------------------------------------------------------

    def request_of(self, span: Any) -> RequestKey:
        """The request (local root span) a live span belongs to: the key of its facts
        (``TraceStore.span_request``, read inline: a decision visits the store once)."""
        context = span.get_span_context()  # a SpanContext: a tuple (trace id, span id, ...)
        store, trace_id = self.store, int(context[0])
        if trace_id in store.shared:
            return store.spans.get(int(context[1]), trace_id)
        return trace_id

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
        evaluation, and whether it is a new outcome (the driver then writes it). Each hand-over
        is one outcome: it takes the span path's check of the same answer in this run if one is
        not taken yet (counted then), else it is checked and counted now (a reask answered the
        same way again is another outcome)."""
        spec = self._spec(boundary)
        request = self.request_of(span)
        if self.coverage is not None:
            self.coverage.matched(request, spec.name)
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
        lineage = self.lineage
        for seen in lineage.covered((span,), spec.name) or lineage.covered(chain, spec.name):
            if (
                not seen.handed
                and read.status == "output"
                and same_answer(seen.answer, read.answer)
            ):
                seen.handed = True
                return seen.evaluation, False
        evaluation, entry = self._check(span, spec, read, False, request, handed=True)
        lineage.cover(_covering(entry, chain or (span,), span, True))
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
        request = self.request_of(span)
        evaluation, entry = self._check(
            span, spec, read, False, request, run=run, duration=duration
        )
        self.lineage.cover(_covering(entry, chain_of(span) or (span,), span, True))
        return evaluation


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
