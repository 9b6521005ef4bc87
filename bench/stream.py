"""What guarding a stream costs and holds: ``python -m bench --only stream [--smoke]``.

A 4,000-token prose answer (sentences quoting amounts and rates recorded in a table), streamed
one token per chunk as ``str`` deltas, read three ways inside one span with the guard
installed: **plain** (the deltas iterated), **guarded** (``guard_stream`` with a
``numbers_recorded`` text boundary, enforce mode: every sentence checked before release, the
outcome counted), and **checked once** (the boundary's checks run once on the whole answer: what
the span path pays). Goal (issue 37): guarded minus plain at most 2x checked once (no quadratic
re-scan). Measured side by side in one run both as wall time (interleaved medians) and as
instructions (callgrind, ``PYTHONHASHSEED=0``, marginal over repetitions; needs ``valgrind``).
Then, on the bench corpus (the answer above, a list answer, a run with no sentence end), the
characters held after each chunk and the release delay of each text chunk in chunks (p50/p99).
Prints; asserts nothing.
"""

from __future__ import annotations

import random
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import Section, calls_for, compare, fmt_ratio, fmt_time, render
from bench.span_instructions import count_instructions, counting, uncounted

__all__ = ["GOAL", "corpus", "run", "setup"]

GOAL = 2.0  # guarded - plain <= GOAL x checked once
NAMES = ("plain", "guarded", "once", "units", "span", "split", "interleaved")
_ROWS = [
    {"id": f"INV-{i:03d}", "total": 1000 + 37 * i, "rate": round(1 + i / 10, 1)} for i in range(60)
]
_RUN = """
import sys
from bench.stream import setup
run = setup(sys.argv[1], int(sys.argv[2]))
for _ in range(int(sys.argv[3])):
    run()
"""


def _invoice_fact() -> Any:
    """The fact the answers read, recorded in code as a Table (a GuardConfig declares it)."""
    from groundplane_otel.otel import FactSpec

    return FactSpec("invoice", "invoice_query", kind="table", key="id")


def _prose(tokens: int, rng: random.Random) -> str:
    """Sentences quoting recorded values, about ``tokens`` tokens (words and punctuation)."""
    parts: list[str] = []
    count = 0
    while count < tokens:
        row = rng.choice(_ROWS)
        sentence = rng.choice(
            [
                f"Invoice {row['id']} totals {row['total']:,} dollars this quarter.",
                f"The rate on {row['id']} stood at {row['rate']}% at the close.",
                f"For {row['id']}, the team reports {row['total']:,} in billed work.",
            ]
        )
        parts.append(sentence)
        count += len(sentence.split()) + 2
    return " ".join(parts)


def _tokens(text: str) -> list[str]:
    """One token per word (with its leading space), the final punctuation apart."""
    out: list[str] = []
    for index, word in enumerate(text.split(" ")):
        lead = " " if index else ""
        if len(word) > 1 and word[-1] in ".,%":
            out += [lead + word[:-1], word[-1]]
        else:
            out.append(lead + word)
    return out


def corpus(tokens: int = 4000) -> dict[str, list[str]]:
    """The bench corpus: name -> the answer's chunks."""
    rng = random.Random(37)
    prose = _prose(tokens, rng)
    items = "".join(
        f"- {row['id']}: {row['total']:,} dollars at {row['rate']}%\n" for row in _ROWS[:40]
    )
    run_on = " ".join(
        f"and then {row['id']} came in at {row['total']:,} dollars" for row in _ROWS[:40]
    )
    return {
        f"prose, {len(_tokens(prose)):,} tokens": _tokens(prose),
        f"list, {len(_tokens(items)):,} tokens": _tokens(items),
        f"one run, no sentence end, {len(_tokens(run_on)):,} tokens": _tokens(run_on),
    }


def setup(variant: str, tokens: int) -> Callable[[], Any]:
    """One call of ``variant`` (plain / guarded / once) on the prose answer of ``tokens``."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON

    import groundplane_otel as gp
    from groundplane_otel.otel import (
        BoundarySpec,
        GuardConfig,
        guard_stream,
        install,
        trace_registry,
    )
    from groundplane_otel.otel._stream.units import DEFAULT_BOUND, Units

    spec = BoundarySpec("prose", ("invoice",), (gp.numbers_recorded("invoice"),), answer="text")
    provider = TracerProvider(sampler=ALWAYS_ON)
    guard = install(
        GuardConfig(facts=(_invoice_fact(),), boundaries=(spec,)),
        tracer_provider=provider,
        meter_provider=MeterProvider(),
    )
    tracer = provider.get_tracer("bench")
    chunks = next(iter(corpus(tokens).values()))
    text = "".join(chunks)
    accounting = guard.processor.engine.accounting

    def plain() -> None:
        with tracer.start_as_current_span("answer"):
            trace_registry(guard=guard).record_table("invoice", _ROWS, key="id")
            for _ in iter(chunks):
                pass

    def guarded() -> None:
        with tracer.start_as_current_span("answer"):
            trace_registry(guard=guard).record_table("invoice", _ROWS, key="id")
            for _ in guard_stream(iter(chunks), boundary="prose", guard=guard):
                pass

    units: list[str] = []
    splitter = Units(DEFAULT_BOUND)
    for chunk in chunks:
        units += splitter.feed(chunk)
    units.append(splitter.end())

    def by_unit() -> None:
        with tracer.start_as_current_span("answer") as span:
            trace_registry(guard=guard).record_table("invoice", _ROWS, key="id")
            runner = accounting.stream_runner(accounting.stream_view(span, spec), spec)
            for unit in units:
                runner(unit)

    def span() -> None:
        with tracer.start_as_current_span("answer"):
            trace_registry(guard=guard).record_table("invoice", _ROWS, key="id")

    def split() -> None:  # the unit splitter alone, over the chunks
        with tracer.start_as_current_span("answer"):
            trace_registry(guard=guard).record_table("invoice", _ROWS, key="id")
            splitter = Units(DEFAULT_BOUND)
            for chunk in chunks:
                splitter.feed(chunk)
            splitter.end()

    def interleaved() -> None:  # the splitter and the checks, alternating as in the gate
        with tracer.start_as_current_span("answer") as span:
            trace_registry(guard=guard).record_table("invoice", _ROWS, key="id")
            runner = accounting.stream_runner(accounting.stream_view(span, spec), spec)
            splitter = Units(DEFAULT_BOUND)
            for chunk in chunks:
                for unit in splitter.feed(chunk):
                    runner(unit)
            runner(splitter.end())

    def once() -> None:
        with tracer.start_as_current_span("answer") as span:
            trace_registry(guard=guard).record_table("invoice", _ROWS, key="id")
            view = accounting.stream_view(span, spec)
            findings = accounting.stream_unit(view, spec, text)[1]
            assert not findings, findings

    variants = {
        "plain": plain,
        "guarded": guarded,
        "once": once,
        "units": by_unit,
        "span": span,
        "split": split,
        "interleaved": interleaved,
    }
    return variants[variant]


def _held(chunks: list[str]) -> tuple[list[int], list[int]]:
    """(characters held after each chunk, release delay in chunks of each text chunk)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON

    import groundplane_otel as gp
    from groundplane_otel.otel import BoundarySpec, GuardConfig, guard_stream, install
    from groundplane_otel.otel import trace_registry as registry

    spec = BoundarySpec("prose", ("invoice",), (gp.numbers_recorded("invoice"),), answer="text")
    provider = TracerProvider(sampler=ALWAYS_ON)
    guard = install(
        GuardConfig(facts=(_invoice_fact(),), boundaries=(spec,)),
        tracer_provider=provider,
        meter_provider=MeterProvider(),
    )
    held: list[int] = []
    delays: list[int] = []
    try:
        with provider.get_tracer("bench").start_as_current_span("answer"):
            registry(guard=guard).record_table("invoice", _ROWS, key="id")
            gate = guard_stream(iter(()), boundary="prose", guard=guard).gate
            assert gate is not None
            released = 0
            for index, chunk in enumerate(chunks):
                out = gate.take(chunk)
                delays += [index - (released + offset) for offset in range(len(out))]
                released += len(out)
                held.append(gate.received - gate.released)
            out = gate.finish()
            delays += [len(chunks) - (released + offset) for offset in range(len(out))]
    finally:
        guard.uninstall()
    return held, delays


def _pct(values: list[int], q: float) -> int:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else 0


def _instructions(tokens: int, reps: int) -> dict[str, float] | None:
    """Marginal instructions per answer of each variant (None without valgrind)."""
    if not counting(smoke=False):
        return None
    counts: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "run.py"
        script.write_text(_RUN)
        for variant in NAMES:
            many = count_instructions(script, variant, str(tokens), str(reps + 1))
            few = count_instructions(script, variant, str(tokens), "1")
            counts[variant] = (many - few) / reps
    return counts


def run(smoke: bool) -> list[Section]:
    tokens = 200 if smoke else 4000
    variants = {name: setup(name, tokens) for name in NAMES}
    number = {name: calls_for(fn, 0.02 if smoke else 0.2, cap=500) for name, fn in variants.items()}
    timed = compare(variants, repeats=3 if smoke else 15, number=number)
    chunks = len(next(iter(corpus(tokens).values())))
    if smoke:
        for name in variants:  # the script runs (no valgrind in a smoke run)
            subprocess.run(
                [sys.executable, "-c", _RUN, name, str(tokens), "1"],
                check=True,
                capture_output=True,
            )
        counted = None
    else:
        counted = _instructions(tokens, 3)
    cost = Section(
        key="stream",
        title=f"Guarding a stream: a {chunks:,}-chunk answer (one token per chunk), "
        "guarded vs plain vs checked once",
        headers=(
            "measure",
            "plain",
            "guarded",
            "checked once",
            "checked unit by unit",
            "per chunk added",
            "ratio",
            "checks' ratio",
            "goal (ratio)",
        ),
    )
    plain, guarded, once, units, base, split, interleaved = (timed[name].median for name in NAMES)
    once -= base  # the check alone
    units -= base
    split -= base
    interleaved -= base
    ratio = (guarded - plain) / once
    cost.rows.append(
        (
            "wall time (median)",
            fmt_time(plain),
            fmt_time(guarded),
            fmt_time(once),
            fmt_time(units),
            fmt_time((guarded - plain) / chunks),
            fmt_ratio(ratio),
            fmt_ratio(units / once),
            f"<= {GOAL:g}x: {'met' if ratio <= GOAL else '**MISSED**'}",
        )
    )
    if counted is None:
        why = uncounted(smoke)
        cost.rows.append(("instructions", *(["—"] * 7), why))
    else:
        added = counted["guarded"] - counted["plain"]
        check = counted["once"] - counted["span"]
        by_units = counted["units"] - counted["span"]
        ratio_i = added / check
        cost.rows.append(
            (
                "instructions (callgrind)",
                f"{counted['plain']:,.0f}",
                f"{counted['guarded']:,.0f}",
                f"{check:,.0f}",
                f"{by_units:,.0f}",
                f"{added / chunks:,.0f}",
                fmt_ratio(ratio_i),
                fmt_ratio(by_units / check),
                f"<= {GOAL:g}x: {'met' if ratio_i <= GOAL else '**MISSED**'}",
            )
        )
    cost.notes.append(
        "ratio = (guarded - plain) / checked once; checks' ratio = the boundary's checks run on "
        "each release unit in turn (what the gate runs) / run once on the whole answer. Each "
        "variant opens one span and records the 60-row table first; the two checked columns "
        "are shown without that part (measured alone, subtracted). Reproduce: "
        "`python -m bench --only stream`."
    )
    where = Section(
        key="stream_where",
        title="Guarding a stream: where the added time goes, in units of checking the answer once",
        headers=(
            "measure",
            "added (guarded - plain)",
            "checks unit by unit",
            "unit splitter",
            "the two alternating, over their sum",
            "the rest (gate's hold queue, generator, outcome)",
        ),
    )
    where.rows.append(
        _where("wall time (median)", guarded - plain, once, units, split, interleaved)
    )
    if counted is not None:
        where.rows.append(
            _where(
                "instructions (callgrind)",
                counted["guarded"] - counted["plain"],
                counted["once"] - counted["span"],
                counted["units"] - counted["span"],
                counted["split"] - counted["span"],
                counted["interleaved"] - counted["span"],
            )
        )
    where.notes.append(
        "Each column / checking once. The splitter and the checks run alternating, chunk by "
        "chunk (as in the gate), cost more time than run one after the other, for the same "
        "instructions: that column shows it. The rest: the gate's own per-chunk work and the "
        "outcome (counted, telemetry written)."
    )
    held = Section(
        key="stream_held",
        title="Guarding a stream: text held and release delay on the bench corpus",
        headers=("answer", "chars held p50", "chars held p99", "delay p50 (chunks)", "delay p99"),
    )
    for name, pieces in corpus(tokens).items():
        chars, delays = _held(pieces)
        held.rows.append(
            (
                name,
                str(_pct(chars, 0.5)),
                str(_pct(chars, 0.99)),
                str(_pct(delays, 0.5)),
                str(_pct(delays, 0.99)),
            )
        )
    held.notes.append(
        "Held: answer characters received and not yet released, after each chunk. Delay: "
        "chunks read after a text chunk before it was released (0: released as it arrived). "
        "Default bound 400 characters (a run with no sentence end is cut at a safe whitespace "
        "past it)."
    )
    return [cost, where, held]


def _where(
    label: str, added: float, once: float, units: float, split: float, interleaved: float
) -> tuple[str, ...]:
    rest = added - interleaved
    return (
        label,
        fmt_ratio(added / once),
        fmt_ratio(units / once),
        fmt_ratio(split / once),
        fmt_ratio((interleaved - units - split) / once),
        fmt_ratio(rest / once),
    )


def main() -> int:
    print(render(run("--smoke" in sys.argv[1:])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
