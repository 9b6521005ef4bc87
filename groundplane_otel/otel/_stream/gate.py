"""One guarded stream: the chunks held back, the text checked clean, and its one outcome.

Every chunk waits until every character of answer text received up to and including it lies
in checked-clean text (``clean``); a chunk with no answer text waits only for the text before
it. In enforce mode a prose answer (``answer: text`` whose checks are all prose families) is
checked unit by unit (``units``): a unit with an unsupported claim refuses the answer before
any chunk holding part of it is released. Other answers (JSON, custom checks) are held whole
until the stream ends and are checked then. Whole-answer checks (``min_citations``, counts
over the answer) run once on the whole text when the stream ends, before the last held text is
released. Observe mode holds nothing and checks the whole answer at the end.

The outcome is counted once, through the engine (``Accounting.check_streamed``): by the gate,
or, when the model call's span ends first (the instrumentation ends it as the provider's stream
is exhausted or fails), by that span's end through ``span_ended`` — the span path then counts
and raises nothing of its own for that span.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from time import perf_counter
from typing import TYPE_CHECKING, Any
from weakref import ref

from opentelemetry.trace import StatusCode

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine import (
    STREAM_ATTR,
    WATCHERS_ATTR,
    CheckResults,
    attached,
    failed_run,
    is_agent,
    span_attributes,
)
from groundplane_otel.otel._stream.chunks import UnknownChunk, read_chunk, shape_of
from groundplane_otel.otel._stream.units import Units
from groundplane_otel.otel.result import OutputUnchecked

if TYPE_CHECKING:
    from groundplane_otel.otel._engine import UnitRunner
    from groundplane_otel.otel._live.processor import GroundplaneSpanProcessor
    from groundplane_otel.otel.config import BoundarySpec
    from groundplane_otel.otel.result import Evaluation

__all__ = ["LOCAL_FAMILIES", "WHOLE_ANSWER_CODES", "Gate", "refusal_of"]

# Prose families whose verdict on a text is the verdict on each of its sentences.
LOCAL_FAMILIES = frozenset(
    {
        "numbers_recorded",
        "dates_recorded",
        "no_restricted_values",
        "entities_in_scope",
        "citations_retrieved",
        "quotes_anchored",
    }
)
# Claims about the answer as a whole: decided when the stream ends, never on one unit
# (``accounting.whole_answer`` says which checks make them).
WHOLE_ANSWER_CODES = frozenset({"no_citation"})


_REFUSAL_ATTR = "_groundplane_stream_evaluation"  # on a gate's refusal: its evaluation


def refusal_of(error: BaseException) -> Evaluation | None:
    """The evaluation of the stream refusal ``error`` (raised by a gate: an adapter that
    reasks reads the violations there), or None when ``error`` is not one. Kept on the
    exception itself: a framework may run the stream in another task or context."""
    evaluation: Evaluation | None = getattr(error, _REFUSAL_ATTR, None)
    return evaluation if evaluation is not None and evaluation.error is error else None


class Gate:
    """The state of one guarded stream over ``span`` (the model call's span, or the span the
    stream is read in), guarded by ``spec``. ``owns`` says ``span`` ends with the stream (a
    model call's span the guard watches): its end then counts the outcome if the gate has
    not."""

    def __init__(
        self,
        processor: GroundplaneSpanProcessor,
        span: Any,
        spec: BoundarySpec,
        *,
        bound: int,
        matched: bool,
    ) -> None:
        engine = processor.engine
        self.engine, self.results = engine, processor.results
        self.span, self.spec, self.matched = span, spec, matched
        self.mode = engine.stream_mode(spec)
        self.holding = self.mode == "enforce"
        local = spec.answer == "text" and all(c.family in LOCAL_FAMILIES for c in spec.checks)
        self.units: Units | None = Units(bound) if self.holding and local else None
        self.held: deque[tuple[Any, int]] = deque()  # (chunk, answer chars it needs clean)
        self.parts: list[str] = []  # the answer text (the whole-answer checks read it)
        self.shape: Any = None
        self.received = 0  # answer characters received
        self.clean = 0  # answer characters checked clean
        self.released = 0  # answer characters handed to the application
        self.tool_call = False
        self.outcome: Evaluation | None = None  # None when settled: a tool-call turn
        self.settled = False
        self.checking = 0.0  # seconds spent checking units (the outcome's duration)
        self._runner: UnitRunner | None = None  # the checks on the facts, at the first unit
        self.refusal: BaseException | None = None  # raised to the application (enforce)
        self.held_chars: list[int] = []  # answer chars held after each chunk (the bench reads)
        self.record_holding = False
        watchers = getattr(span, WATCHERS_ATTR, None)
        self.owns = bool(watchers and processor.guard in watchers) and not is_agent(
            span.name, span_attributes(span)
        )
        if self.owns:  # its end asks this gate (weakly: an abandoned gate is not kept alive)
            attached(span, STREAM_ATTR, dict)[engine.guard] = ref(self)

    def detach(self) -> None:
        """This gate will see nothing (another span was chosen): its span's end decides as
        usual again."""
        gates = getattr(self.span, STREAM_ATTR, None)
        if self.owns and gates is not None:
            gates.pop(self.engine.guard, None)
            if not gates:
                delattr(self.span, STREAM_ATTR)
        self.settled = True

    @property
    def done(self) -> bool:
        return self.settled

    # -- chunks in, chunks out ------------------------------------------------------------

    def take(self, chunk: Any) -> Sequence[Any]:
        """The chunks releasable once ``chunk`` arrived (in order); raises the refusal."""
        units = self.units
        if type(chunk) is str and units is not None and self.shape == "text" and not self.settled:
            # The hot path: a str delta of a prose answer checked unit by unit.
            self.parts.append(chunk)
            received = self.received = self.received + len(chunk)
            self.held.append((chunk, received))
            done = units.feed(chunk)
            if not done:  # nothing new checked: nothing new to release
                if self.record_holding:
                    self.held_chars.append(received - self.released)
                return ()
            for unit in done:
                self._unit(unit)
            if self.refusal is not None:
                raise self.refusal
            out = self._release()
            if self.record_holding:
                self.held_chars.append(self.received - self.released)
            return out
        try:
            if self.shape is None:
                self.shape = shape_of(chunk)
            text, tool = read_chunk(self.shape, chunk)
        except UnknownChunk as exc:
            return self._unknown(chunk, str(exc))
        if self.refusal is not None:  # refused already: nothing more comes out
            raise self.refusal
        if tool:
            self.tool_call = True
        if text:
            if self.done:  # text after the outcome was counted: never released unchecked
                return self._late(chunk)
            self.parts.append(text)
            self.received += len(text)
            if not self.holding:
                self.released += len(text)
                return [chunk]
            self.held.append((chunk, self.received))
            if self.units is not None:
                for unit in self.units.feed(text):
                    self._unit(unit)
                if self.refusal is not None:  # before any chunk of the refused unit
                    raise self.refusal
        elif not self.held:
            return [chunk]
        else:
            self.held.append((chunk, self.received))
        out = self._release()
        if self.record_holding:
            self.held_chars.append(self.received - self.released)
        return out

    def finish(self) -> list[Any]:
        """The source ended: decide (unless the span's end did), then release everything or
        raise the refusal."""
        if not self.done:
            self._conclude(telemetry=True)
        if self.refusal is not None:
            raise self.refusal
        self.clean = self.received
        return self._release()

    def _release(self) -> list[Any]:
        held, clean = self.held, self.clean
        out: list[Any] = []
        needs = self.released
        while held and held[0][1] <= clean:
            chunk, needs = held.popleft()
            out.append(chunk)
        self.released = needs
        return out

    # -- checking -------------------------------------------------------------------------

    def _unit(self, text: str, *, telemetry: bool = True) -> None:
        """Check one release unit; clean, or the answer is refused (counted now; its telemetry
        written here unless the span's end writes it)."""
        if self.done:
            return
        started = perf_counter()
        runner = self._runner
        if runner is None:
            view = self.engine.stream_view(self.span, self.spec)
            runner = self._runner = self.engine.stream_runner(view, self.spec)
        run = _local(runner(text))
        self.checking += perf_counter() - started
        if run is None:
            self.clean += len(text)
            return
        self._decide(run, telemetry=telemetry)

    def _conclude(self, *, telemetry: bool) -> Evaluation | None:
        """All the text arrived: the last unit, then the whole answer, checked once."""
        if self.units is not None:
            rest = self.units.end()
            if rest:
                self._unit(rest, telemetry=telemetry)
                if self.done:
                    return self.outcome
        if not self.parts and self.tool_call:  # a tool-call turn is not an answer
            self.settled = True
            return None
        if self.units is None:  # held whole (or observed): checked once, now
            return self._decide(None, telemetry=telemetry)
        started = perf_counter()
        run = self.engine.stream_rest(self.span, self.spec, "".join(self.parts))
        self.checking += perf_counter() - started
        return self._decide(run, telemetry=telemetry)

    def _decide(self, run: CheckResults | None, *, telemetry: bool) -> Evaluation:
        """Count the outcome (``run``: the checks already ran) and keep its refusal."""
        text = "".join(self.parts)
        evaluation = self.engine.check_streamed(
            self.span, self.spec, text, run, duration=self.checking
        )
        self.outcome, self.settled = evaluation, True
        released = self.received
        if evaluation.error is not None and self.mode == "enforce":
            self.refusal = evaluation.error
            setattr(self.refusal, _REFUSAL_ATTR, evaluation)
            self.held.clear()  # nothing of a refused answer stays in memory
            self.parts = []
            released = self.released
        span = self.span
        if span.is_recording():
            span.set_attribute(sc.STREAM_RELEASED, released)
        if telemetry:  # else the span's end writes it (``span_ended``)
            if span.is_recording():
                self.results.annotate(span, evaluation, matched=self.matched)
            self.results.record(span, evaluation)
        return evaluation

    def _failed(self, code: str, detail: str, *, telemetry: bool) -> Evaluation:
        return self._decide(failed_run(self.spec.name, code, detail), telemetry=telemetry)

    # -- faults ---------------------------------------------------------------------------

    def _unknown(self, chunk: Any, problem: str) -> list[Any]:
        """A chunk of unknown shape: the answer cannot be checked (fail closed)."""
        if not self.done:
            self._failed(sc.REASON_STREAM_UNKNOWN, problem, telemetry=True)
        if self.refusal is not None:
            raise self.refusal
        return [chunk]  # observe: it flows, the run was counted as an error

    def _late(self, chunk: Any) -> list[Any]:
        """Answer text after the outcome was counted (the span ended before the stream)."""
        if self.holding:
            raise _late_text(self.spec.name)
        return [chunk]

    def failed(self, error: BaseException) -> None:
        """The source raised ``error`` (the application gets it unchanged): counted once."""
        if not self.done:
            detail = f"the model's stream raised {type(error).__name__} before its end"
            self._failed(sc.REASON_STREAM_FAILED, detail, telemetry=True)
        self.held.clear()

    def abandoned(self) -> None:
        """The application stopped reading (break, close, garbage collection)."""
        if not self.done:
            detail = "the application stopped reading the stream before its end"
            self._failed(sc.REASON_STREAM_ABANDONED, detail, telemetry=True)
        self.held.clear()
        self.parts = []

    def span_ended(self, span: Any) -> tuple[Evaluation, ...]:
        """The model call's span ends (its instrumentation saw the stream end or fail): the
        outcome it writes, unless the gate counted one already."""
        if self.done:
            return ()
        status = getattr(getattr(span, "status", None), "status_code", None)
        if status is StatusCode.ERROR:
            detail = "the model call's span ended with an error before the stream's end"
            evaluation: Evaluation | None = self._failed(
                sc.REASON_STREAM_FAILED, detail, telemetry=False
            )
        else:
            evaluation = self._conclude(telemetry=False)
        return () if evaluation is None else (evaluation,)


def _local(run: CheckResults) -> CheckResults | None:
    """The run of one unit with its whole-answer claims left to the stream's end; None when
    nothing else failed."""
    verdicts, findings, passed = run
    if not findings:
        return None
    kept = [finding for finding in findings if finding.reason not in WHOLE_ANSWER_CODES]
    if not kept:
        return None
    if len(kept) == len(findings):
        return run
    left = {finding.family for finding in findings if finding.reason in WHOLE_ANSWER_CODES}
    verdicts = [
        (family, "supported") if family in left and verdict != "error" else (family, verdict)
        for family, verdict in verdicts
    ]
    return verdicts, kept, passed


def _late_text(boundary: str) -> BaseException:
    return OutputUnchecked(
        boundary,
        sc.REASON_STREAM_FAILED,
        "answer text arrived after the model call's span ended (not released)",
    )
