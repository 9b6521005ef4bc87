"""Benchmarks for groundplane_otel: ``python -m bench [--smoke]`` prints markdown tables.

Every comparison is measured side by side in one run: the compared variants are interleaved
(round-robin, the order rotating each round), each is warmed up first, and the figure reported is
the median over repeated runs of ``time.perf_counter_ns``. The garbage collector is paused inside
a timed run (as ``timeit`` does) and collected between runs. No benchmark asserts a time: the
smoke run (``--smoke``) only proves that every benchmark still runs and prints its rows.
"""

from __future__ import annotations

import gc
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Section",
    "Timing",
    "calls_for",
    "compare",
    "fmt_bytes",
    "fmt_ratio",
    "fmt_time",
    "loglog_slope",
    "render",
]


@dataclass(frozen=True, slots=True)
class Section:
    """One table of the report: a title, column headers, rows, and notes printed under it."""

    key: str
    title: str
    headers: tuple[str, ...]
    rows: list[tuple[str, ...]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Timing:
    """The median and spread of one variant's per-call time, in seconds."""

    median: float
    low: float
    high: float
    runs: int


def compare(
    variants: dict[str, Callable[[], Any]],
    *,
    repeats: int,
    number: int | dict[str, int] = 1,
    warmup: int = 1,
    setup: dict[str, Callable[[], Any]] | None = None,
) -> dict[str, Timing]:
    """Per-call time of each variant: interleaved, warmed up, median of ``repeats`` runs.

    A run calls the variant ``number`` times back to back (``number`` may differ per variant,
    so a fast and a slow variant each fill a similar time). With ``setup``, the variant's setup
    runs (untimed) before each call and its result is passed to the variant.
    """
    names = list(variants)
    counts = number if isinstance(number, dict) else dict.fromkeys(names, number)
    setups = setup or {}
    samples: dict[str, list[float]] = {name: [] for name in names}

    def one_run(name: str) -> float:
        fn = variants[name]
        calls = counts[name]
        prepare = setups.get(name)
        if prepare is None:
            gc.disable()
            try:
                start = time.perf_counter_ns()
                for _ in range(calls):
                    fn()
                elapsed = time.perf_counter_ns() - start
            finally:
                gc.enable()
            return elapsed / calls / 1e9
        total = 0
        for _ in range(calls):
            state = prepare()
            gc.disable()
            try:
                start = time.perf_counter_ns()
                fn(state)  # type: ignore[call-arg]
                total += time.perf_counter_ns() - start
            finally:
                gc.enable()
        return total / calls / 1e9

    for name in names:
        for _ in range(warmup):
            one_run(name)
    for round_no in range(repeats):
        shift = round_no % len(names)
        for name in names[shift:] + names[:shift]:
            gc.collect()
            samples[name].append(one_run(name))
    return {
        name: Timing(statistics.median(runs), min(runs), max(runs), len(runs))
        for name, runs in samples.items()
    }


def calls_for(fn: Callable[[], Any], budget_s: float, *, cap: int = 100_000) -> int:
    """How many back-to-back calls of ``fn`` fill about ``budget_s`` (at least 1)."""
    start = time.perf_counter_ns()
    fn()
    once = max(time.perf_counter_ns() - start, 1) / 1e9
    return max(1, min(cap, int(budget_s / once)))


def loglog_slope(sizes: Sequence[int], seconds: Sequence[float]) -> float:
    """Least-squares slope of log(time) against log(size): 1 is linear, 0 is constant."""
    xs = [math.log(size) for size in sizes]
    ys = [math.log(max(value, 1e-12)) for value in seconds]
    mean_x = statistics.fmean(xs)
    mean_y = statistics.fmean(ys)
    num = sum((x - mean_x) * (y - mean_y) for x, y in zip(xs, ys, strict=True))
    den = sum((x - mean_x) ** 2 for x in xs)
    return num / den if den else 0.0


def fmt_time(seconds: float) -> str:
    """A duration with a unit a reader takes in at a glance (ns, µs, ms, s)."""
    if seconds < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} µs"
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def fmt_ratio(ratio: float) -> str:
    """``33x`` for large ratios, ``1.04x`` near one."""
    if ratio >= 100:
        return f"{ratio:,.0f}x"
    if ratio >= 10:
        return f"{ratio:.1f}x"
    return f"{ratio:.2f}x"


def fmt_bytes(count: float) -> str:
    """A byte count in KiB/MiB."""
    if abs(count) >= 1024 * 1024:
        return f"{count / (1024 * 1024):.1f} MiB"
    if abs(count) >= 1024:
        return f"{count / 1024:.1f} KiB"
    return f"{count:.0f} B"


def render(sections: Sequence[Section]) -> str:
    """The markdown report: one ``###`` heading and one table per section."""
    out: list[str] = []
    for section in sections:
        out.append(f"### {section.title}")
        out.append("")
        out.append("| " + " | ".join(section.headers) + " |")
        out.append("|" + "|".join("---" for _ in section.headers) + "|")
        for row in section.rows:
            out.append("| " + " | ".join(row) + " |")
        if section.notes:
            out.append("")
            out.extend(f"{note}" for note in section.notes)
        out.append("")
    return "\n".join(out)
