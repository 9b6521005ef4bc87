"""Where a replay's and a verifier intake's time goes, step by step, against their floors.

``python -m bench.replay_steps [--smoke]``: the recording of ``bench.replay`` (500 agent runs,
1,500 spans, every tool result different, half the answers wrong) replayed from its OTLP/JSON
lines and taken in by the verifier from the same requests in protobuf, as ``python -m bench
--only replay`` times them, each step in CPU time (``time.process_time``: the machine is shared,
wall time moves with its load). A timer around each step's function counts its exclusive time
(the steps nested in it subtracted); the timers' own cost, measured on an empty function, is
taken off the step that made each call. Best of ``ROUNDS`` runs (the run with the least total);
the totals and floors (``orjson.loads`` of each line, ``ParseFromString`` of each request) come
from runs without timers, in the same process, alternating.
"""

from __future__ import annotations

import argparse
import functools
import gc
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["STEPS", "main", "measure"]

ROUNDS = 9
# (label, [(module, owner attribute or None, function name)]): each function timed under its
# step; owner None is a module function (patched where it is looked up).
STEPS: tuple[tuple[str, tuple[tuple[str, str | None, str], ...]], ...] = (
    (
        "read: a JSON line as span records (orjson.loads included)",
        (("groundplane_otel.otel.otlp_files", None, "json_spans"),),
    ),
    (
        "read: ParseFromString of a request",
        (("groundplane_otel.otel.verifier", "Verifier", "read"),),
    ),
    (
        "read: a protobuf request as span records (proto_spans)",
        (
            ("groundplane_otel.otel.verifier", None, "proto_spans"),
            ("groundplane_otel.otel.replay.assemble", None, "proto_spans"),
        ),
    ),
    (
        "assemble: spans buffered by trace, idle traces timed",
        (("groundplane_otel.otel.replay.assemble", "Assembler", "feed"),),
    ),
    (
        "a decided trace's span records, linked, on a timeline",
        (
            ("groundplane_otel.otel.replay", None, "trace_records"),
            ("groundplane_otel.otel.replay.driving", None, "timeline"),
        ),
    ),
    (
        "driver: each start and end told to the engine (requests, lineage marks)",
        (
            ("groundplane_otel.otel.replay.driving", "Driver", "trace"),
            ("groundplane_otel.otel._engine.engine", "Engine", "root_ended"),
        ),
    ),
    (
        "capture: the tool result parsed, made a ranking fact, stored",
        (("groundplane_otel.otel._engine.engine", "Engine", "_tool_call"),),
    ),
    (
        "decide: handles read once, boundary matched, the outcome accounted, written back",
        (("groundplane_otel.otel._engine.engine", "Engine", "decide"),),
    ),
    (
        "decide: the answer read (output messages parsed, the JSON answer parsed)",
        (("groundplane_otel.otel._engine.accounting", "Accounting", "_read"),),
    ),
    (
        "decide: the check (facts viewed, superlative run, the evaluation built)",
        (("groundplane_otel.otel._engine.accounting", "Accounting", "_check"),),
    ),
    (
        "tally: outputs, claims and findings counted",
        (
            ("groundplane_otel.otel.replay.stats", "Tally", "record"),
            ("groundplane_otel.otel.replay.stats", "Tally", "settle"),
        ),
    ),
    (
        "metrics: the SDK's three measurements an output (verifier)",
        (("groundplane_otel.otel._telemetry.telemetry", "Telemetry", "record"),),
    ),
)
GLUE = "the rest: the replay / verifier loop (requests, ticks, the decision's bookkeeping)"


class _Timers:
    """Exclusive CPU time per step, and its calls: each timer's own cost falls partly inside
    the step it times (``own``) and partly in the step it was called from (``calls``; ``TOP``
    outside any), to be taken off each afterwards."""

    TOP = "TOP"

    def __init__(self) -> None:
        self.spent: dict[str, float] = {}
        self.calls: dict[str, int] = {}
        self.own: dict[str, int] = {}
        self._stack: list[list[Any]] = []  # [nested time, label]

    def clear(self) -> None:
        self.spent.clear()
        self.calls.clear()
        self.own.clear()

    def wrap(self, label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        """``function`` timed under ``label``."""
        stack, spent, calls, own = self._stack, self.spent, self.calls, self.own
        clock = time.process_time

        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            stack.append([0.0, label])
            started = clock()
            try:
                return function(*args, **kwargs)
            finally:
                took = clock() - started
                nested = stack.pop()[0]
                spent[label] = spent.get(label, 0.0) + took - nested
                own[label] = own.get(label, 0) + 1
                above = stack[-1] if stack else None
                parent = self.TOP if above is None else above[1]
                calls[parent] = calls.get(parent, 0) + 1
                if above is not None:
                    above[0] += took

        return timed

    def cost(self, calls: int = 200_000) -> tuple[float, float]:
        """One timer call's own cost, in seconds (a timed empty function less an untimed one),
        and of it the part inside the step it times (what the empty function's step got)."""

        def empty() -> None:
            return None

        timed = self.wrap("calibration", empty)
        started = time.process_time()
        for _ in range(calls):
            timed()
        with_timer = time.process_time() - started
        started = time.process_time()
        for _ in range(calls):
            empty()
        untimed = time.process_time() - started
        inside = self.spent["calibration"] / calls
        self.clear()
        return max(0.0, (with_timer - untimed) / calls), max(0.0, inside)


@contextmanager
def _timed(timers: _Timers) -> Iterator[None]:
    """Every function of ``STEPS`` wrapped in its step's timer, restored afterwards."""
    import importlib

    saved: list[tuple[Any, str, Any]] = []
    try:
        for label, targets in STEPS:
            for module_name, owner_name, name in targets:
                module = importlib.import_module(module_name)
                owner = module if owner_name is None else getattr(module, owner_name)
                original = owner.__dict__[name] if owner_name is not None else getattr(owner, name)
                saved.append((owner, name, original))
                setattr(owner, name, timers.wrap(label, getattr(owner, name)))
        yield
    finally:
        for owner, name, original in reversed(saved):
            setattr(owner, name, original)


def _workloads(traces: int, folder: Path) -> dict[str, Callable[[], None]]:
    """The floors and the two runs of ``bench.replay`` over one recording of ``traces``."""
    import orjson
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )
    from opentelemetry.sdk.metrics import MeterProvider

    from bench.replay import _config, _record
    from groundplane_otel.otel.otlp_files import read_requests, request_from_json
    from groundplane_otel.otel.replay import Replayer
    from groundplane_otel.otel.verifier import Verifier

    config = _config()
    path = folder / "traces.jsonl"
    _record(traces, path)
    payloads = [
        request_from_json(line).SerializeToString() for line in path.read_bytes().splitlines()
    ]

    def decode() -> None:
        with path.open("rb") as stream:
            for line in stream:
                orjson.loads(line)

    def parse() -> None:
        for body in payloads:
            ExportTraceServiceRequest().ParseFromString(body)

    def replay() -> None:
        replayer = Replayer(config)
        for request in read_requests([path], []):
            replayer.feed(request)
        replayer.finish()
        replayer.close()

    def intake() -> None:
        verifier = Verifier(config, meter_provider=MeterProvider(), root_wait_s=0.0)
        for body in payloads:
            verifier.Export(verifier.read(body), None)
            verifier.tick()
        if verifier.stats.root_ended != traces:
            raise RuntimeError(f"the verifier decided {verifier.stats}, not {traces} traces")
        verifier.drain()
        verifier.replayer.close()

    return {"decode": decode, "parse": parse, "replay": replay, "intake": intake}


def _best(run: Callable[[], None]) -> float:
    """One run's CPU seconds, garbage collection off (as ``bench.compare`` runs)."""
    gc.collect()
    gc.disable()
    try:
        started = time.process_time()
        run()
        return time.process_time() - started
    finally:
        gc.enable()


def measure(traces: int, rounds: int) -> dict[str, dict[str, float]]:
    """``{"floors": {...}, "replay": {step: seconds}, "intake": {step: seconds}}``: the
    untimed totals and floors (best of ``rounds``), and each run's steps (its best run)."""
    with tempfile.TemporaryDirectory(prefix="bench-steps-") as folder:
        runs = _workloads(traces, Path(folder))
        floors: dict[str, float] = {}
        for _ in range(rounds):
            for name, run in runs.items():
                took = _best(run)
                floors[name] = min(floors.get(name, took), took)
        timers = _Timers()
        cost = timers.cost()
        found: dict[str, dict[str, float]] = {"floors": floors}
        with _timed(timers):
            for name in ("replay", "intake"):
                found[name] = _steps(runs[name], timers, cost, rounds)
    return found


def _steps(
    run: Callable[[], None], timers: _Timers, cost: tuple[float, float], rounds: int
) -> dict[str, float]:
    """Each step's exclusive time in the best of ``rounds`` timed runs (the least total, the
    timers' cost taken off), and what no step holds (``GLUE``)."""
    whole, inside = cost
    best: dict[str, float] = {}
    least = float("inf")
    for _ in range(rounds):
        timers.clear()
        total = _best(run) - sum(timers.calls.values()) * whole
        if total < least:
            least = total
            best = {
                label: spent - timers.own[label] * inside for label, spent in timers.spent.items()
            }
            for label, calls in timers.calls.items():
                if label in best:
                    best[label] -= calls * (whole - inside)
    best[GLUE] = least - sum(best.values())
    return best


def _cell(seconds: float | None, floor: float) -> tuple[str, str]:
    if seconds is None:
        return "—", "—"
    return f"{seconds * 1000:.1f}", f"{seconds / floor:.1f}x"


def render(found: dict[str, dict[str, float]], traces: int, rounds: int) -> str:
    """The table: each step's ms and multiple of its floor, for replay and verifier intake."""
    floors = found["floors"]
    decode, parse = floors["decode"], floors["parse"]
    lines = [
        f"Where the time goes, {traces} traces ({3 * traces} spans), CPU time, best of "
        f"{rounds} runs: floors {decode * 1000:.2f} ms (orjson.loads "
        f"of each line) / {parse * 1000:.2f} ms (ParseFromString of each request)",
        "",
        "| step | replay ms | x JSON floor | verifier intake ms | x protobuf floor |",
        "|---|---|---|---|---|",
    ]
    labels = [label for label, _ in STEPS] + [GLUE]
    for label in labels:
        replayed = found["replay"].get(label)
        taken = found["intake"].get(label)
        if replayed is None and taken is None:
            continue
        lines.append(
            f"| {label} | {' | '.join(_cell(replayed, decode))} | "
            f"{' | '.join(_cell(taken, parse))} |"
        )
    steps_replay = sum(found["replay"].values())
    steps_intake = sum(found["intake"].values())
    lines.append(
        f"| **the steps' sum (timed run)** | {' | '.join(_cell(steps_replay, decode))} | "
        f"{' | '.join(_cell(steps_intake, parse))} |"
    )
    lines.append(
        f"| **untimed run** | {' | '.join(_cell(floors['replay'], decode))} | "
        f"{' | '.join(_cell(floors['intake'], parse))} |"
    )
    lines.append(
        f"| goal (issue 38) | {decode * 10 * 1000:.1f} | 10x | {parse * 35 * 1000:.1f} | 35x |"
    )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.replay_steps", description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="20 traces, 2 runs: proves it runs")
    args = parser.parse_args(argv)  # an unknown option exits 2, named
    traces, rounds = (20, 2) if args.smoke else (500, ROUNDS)
    print(render(measure(traces, rounds), traces, rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
