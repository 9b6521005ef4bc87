"""Replay and the fleet verifier: throughput and memory, as ratios to merely decoding the input.

A recording of ``traces`` agent runs (invoke_agent > execute_tool with a 20-row result > chat with
the final answer, half right and half wrong; every trace's result differs) is made with the real
SDK and the Collector-format exporter. Compared side by side:

* replay — read the OTLP/JSON lines, assemble traces, decide each through the guard, vs the
  floor: ``orjson.loads`` of the same lines (what any consumer of the file must do at least).
  Goals: at most 10x (issue 38: the engine driven directly); issue 21's, at most 8x and at least
  30,000 spans/s.
* verifier intake — ``Verifier.read`` + ``Verifier.Export`` fed the protobuf bytes a Collector
  would send (parse + assemble + decide when the root span arrives), vs the floor:
  ``ParseFromString`` of the same bytes.
  Goals: at most 35x (issue 38); issue 21's, at most 8x.
* deciding alone — the replay above with its reading done beforehand (untimed): what the
  engine costs, as a ratio to either floor (a lower bound for both ratios above).
* reading alone — the input turned into the engine's span records (the JSON reader; the
  protobuf parse and ``proto_spans``), nothing assembled or decided — and parsing alone the
  texts the checks read (each tool result and answer), as ratios to each floor: what any
  Python consumer pays before the engine; and what the goals (issue 21's 8x, issue 38's 10x /
  35x) leave the engine after both, against what deciding alone takes.
* memory per live trace — traced memory held by the replay buffer with every trace waiting for
  its decision, divided by the number of traces.
* ``replay --jobs 2`` vs ``--jobs 1`` — the whole replay (``otel.replay.parallel.replay``, as the
  command runs it: worker start-up, the split reading, the merge) over a recording ten times as
  large (20,000 traces, copied with fresh trace ids and results), so that starting the worker
  processes does not dominate; as JSON lines and as the same requests in protobuf, each in two
  shapes: one span per request (the SDK's ``SimpleSpanProcessor``: the most requests per span,
  the split's worst case) and batches of up to 512 spans (the ``BatchSpanProcessor``'s default,
  as services export them and a Collector's file exporter writes them); with each process's CPU
  time while both ran (``--jobs 1``'s CPU time over the workers' critical path: the slower
  split, then the slower replay); and over the JSON lines, the
  command itself (``groundplane-otel replay`` in a new interpreter: in-process runs reuse the
  fork server that starts the workers, the command starts its own). Beside each, the workers'
  parts measured one at a time in this process (every worker's split, then every worker's
  share, CPU seconds: the slower split plus the slower share) — what two independent idle cores
  would show — and, once, this machine's own ceiling: the same CPU-bound work (``--jobs 1``
  replays) in two processes started together vs one alone (2.0x where the two cores are
  independent; virtual cores that share a physical one, or a busy host, give less).
"""

from __future__ import annotations

import gc
import hashlib
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench import Section, compare, fmt_bytes, fmt_ratio, fmt_time

__all__ = ["run"]


def _record(traces: int, path: Path, batch: int = 1) -> None:
    """``traces`` agent runs recorded to ``path``: one span per line (``batch`` 1), else
    exported in batches of up to ``batch`` spans (a trace's spans may straddle two)."""
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

    from groundplane_otel.otel.otlp_files import OtlpFileExporter

    provider = TracerProvider()
    exporter = OtlpFileExporter(path)
    processor: SpanProcessor = (
        SimpleSpanProcessor(exporter)
        if batch == 1
        else BatchSpanProcessor(
            exporter,
            max_queue_size=max(batch, 3 * traces),  # nothing dropped
            max_export_batch_size=batch,
            schedule_delay_millis=3_600_000,  # full batches only, then the rest at shutdown
        )
    )
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("bench.replay")
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "analyst"}
    for index in range(traces):
        # Every trace's result differs (no two tool results or answers alike: nothing may be
        # reused from one trace to the next); r0 always leads.
        rows = {
            "rows": [{"region": f"r{i}", "total": 10**6 - i * 10**4 + index} for i in range(20)]
        }
        winner = "r0" if index % 2 else "r1"
        message = [
            {
                "role": "assistant",
                "parts": [{"type": "text", "content": json.dumps({"winner": winner})}],
                "finish_reason": "stop",
            }
        ]
        with tracer.start_as_current_span("invoke_agent analyst", attributes=agent):
            with tracer.start_as_current_span(
                "execute_tool top_sales",
                attributes={
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": "top_sales",
                    "gen_ai.tool.call.result": json.dumps(rows),
                },
            ):
                pass
            with tracer.start_as_current_span(
                "chat m",
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.output.messages": json.dumps(message),
                },
            ):
                pass
    provider.shutdown()


def _config() -> Any:
    from groundplane_otel.checks.superlative import superlative
    from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec

    return GuardConfig(
        facts=(
            FactSpec(
                "sales", "top_sales", kind="ranking", key="region", score="total", path="rows"
            ),
        ),
        boundaries=(
            BoundarySpec(
                "answer",
                ("sales",),
                (superlative(fact="sales", winner_field="winner"),),
                match=MatchSpec(agent_name="analyst"),
                mode="observe",
            ),
        ),
    )


POLICY = """\
version: 1
mode: observe
facts:
  sales: {tool: top_sales, kind: ranking, path: rows, key: region, score: total}
boundaries:
  answer:
    facts: [sales]
    match: {agent_name: analyst}
    checks:
      - superlative: {winner_field: winner}
"""


_IDS = re.compile(rb'"traceId":"([0-9a-f]{32})"')
_TOTALS = re.compile(rb'(total\\?": )(\d+)')


def _copy_id(trace_id: bytes, copy: int) -> bytes:
    """Copy ``copy``'s trace id for ``trace_id`` (copy 0: the recorded one)."""
    if not copy:
        return trace_id
    return hashlib.blake2b(trace_id + copy.to_bytes(4, "big"), digest_size=16).digest()


def _raised(text: bytes, by: int) -> bytes:
    """``text`` with every tool-result total raised by ``by``."""
    return _TOTALS.sub(lambda match: match[1] + str(int(match[2]) + by).encode(), text)


def _copies(lines: Path, proto: Path, traces: int, copies: int) -> None:
    """The recording of ``traces`` traces in ``lines`` made ``copies`` times as large (recording
    through the SDK would take minutes), and the same requests in protobuf in ``proto``: copy
    ``c`` has every trace id rewritten (``_copy_id``) and every tool-result total raised by
    ``c * traces`` (every trace's result still differs; the same region leads)."""
    import struct

    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    from groundplane_otel.otel.otlp_files import request_from_json

    original = lines.read_bytes()
    bodies = [request_from_json(line).SerializeToString() for line in original.splitlines()]
    with lines.open("ab") as text, proto.open("wb") as binary:
        for copy in range(copies):
            if copy:

                def trace_id(match: re.Match[bytes], copy: int = copy) -> bytes:
                    new = _copy_id(bytes.fromhex(match[1].decode()), copy)
                    return b'"traceId":"' + new.hex().encode() + b'"'

                text.write(_raised(_IDS.sub(trace_id, original), copy * traces))
            for body in bodies:
                request = ExportTraceServiceRequest.FromString(body)
                for resource in request.resource_spans:
                    for scope in resource.scope_spans:
                        for span in scope.spans:
                            span.trace_id = _copy_id(span.trace_id, copy)
                            for pair in span.attributes:
                                value = pair.value.string_value.encode()
                                pair.value.string_value = _raised(value, copy * traces).decode()
                data = request.SerializeToString()
                binary.write(struct.pack(">I", len(data)) + data)


_SHAPES = (("one span per request", 1), ("batches of 512 spans", 512))
_FORMATS = ((".jsonl", "OTLP/JSON lines"), (".pb", "OTLP protobuf"))


def _jobs_rows(smoke: bool, folder: Path) -> list[tuple[str, ...]]:
    """``--jobs 2`` against ``--jobs 1`` on one recording per shape (``_SHAPES``), measured in
    the same run: as OTLP/JSON lines and as the same requests in the protobuf format (cheap to
    parse)."""
    from groundplane_otel.otel.replay import parallel

    recorded, copies = (20, 1) if smoke else (2_000, 10)
    traces = recorded * copies
    policy = folder / "policy.yaml"
    policy.write_text(POLICY)
    jobs: dict[str, parallel.ReplayJob] = {}
    for shape, batch in _SHAPES:
        lines, proto = folder / f"jobs-{batch}.jsonl", folder / f"jobs-{batch}.pb"
        _record(recorded, lines, batch)
        _copies(lines, proto, recorded, copies)
        for path in (lines, proto):
            jobs[f"{shape} {path.suffix}"] = parallel.ReplayJob((str(path),), str(policy))
    alone: dict[str, list[float]] = {key: [] for key in jobs}  # --jobs 1: CPU seconds
    paths: dict[str, list[float]] = {key: [] for key in jobs}  # the workers one at a time
    during: dict[str, list[list[tuple[float, float]]]] = {key: [] for key in jobs}
    busy = parallel.ReplayJob((str(folder / "busy.jsonl"),), str(policy))
    _record(recorded // 4, Path(busy.files[0]))
    ceiling: dict[int, list[float]] = {1: [], 2: []}
    rounds = 1 if smoke else 8

    def timed(key: str, count: int) -> None:
        if count == 1:
            gc.enable()  # as the command runs (compare() turns collection off in its runs)
            try:
                started = time.process_time()
                parallel.replay(jobs[key], 1)
                alone[key].append(time.process_time() - started)
            finally:
                gc.disable()
            return
        cpu: list[tuple[float, float]] = []
        parallel.replay(jobs[key], count, cpu=cpu)
        during[key].append(cpu)

    variants: dict[str, Callable[[], Any]] = {
        f"{key} {count}": (lambda key=key, count=count: timed(key, count))
        for key in jobs
        for count in (1, 2)
    }
    for key, job in jobs.items():
        variants[f"{key} one at a time"] = lambda key=key, job=job: paths[key].append(
            _one_at_a_time(job)
        )
    for count in (1, 2):
        variants[f"ceiling {count}"] = lambda count=count: ceiling[count].append(
            _at_once(busy, count, rounds)
        )
    for shape, _ in _SHAPES:
        for count in (1, 2):
            variants[f"{shape} command {count}"] = lambda shape=shape, count=count: _command(
                jobs[f"{shape} .jsonl"], count
            )
    timings = compare(variants, repeats=1 if smoke else 3, warmup=0)
    one, two = statistics.median(ceiling[1]), statistics.median(ceiling[2])
    rows: list[tuple[str, ...]] = [
        (
            "this machine's ceiling: the same CPU-bound work (a --jobs 1 replay of "
            f"{recorded // 4} traces, {rounds}x) in 2 processes at once vs in 1 alone "
            "(2.0x on two independent idle cores)",
            f"{fmt_time(one)} (1 process)",
            f"{fmt_time(two)} (2 at once, the slower)",
            f"{fmt_ratio(2 * one / two)} the work done",
            "—",
        )
    ]
    for shape, _ in _SHAPES:
        one, two = timings[f"{shape} command 1"].median, timings[f"{shape} command 2"].median
        rows.append(
            (
                f"the command end to end (interpreter and workers started, report printed), "
                f"{traces} traces, OTLP/JSON lines, {shape}",
                f"{fmt_time(one)} (--jobs 1)",
                f"{fmt_time(two)} (--jobs 2)",
                f"{fmt_ratio(one / two)} faster",
                f"{3 * traces / two:,.0f}",
            )
        )
    for shape, _ in _SHAPES:
        for suffix, form in _FORMATS:
            key = f"{shape} {suffix}"
            one, two = timings[f"{key} 1"].median, timings[f"{key} 2"].median
            rows.append(
                (
                    f"replay --jobs 2 vs --jobs 1, {traces} traces, {form}, {shape} "
                    f"({parallel.cores()} cores here)",
                    f"{fmt_time(one)} (--jobs 1)",
                    f"{fmt_time(two)} (--jobs 2)",
                    f"{fmt_ratio(one / two)} faster",
                    f"{3 * traces / two:,.0f}",
                )
            )
            rows.append(_cpu_row(statistics.median(alone[key]), during[key]))
            rows.append(_alone_row(statistics.median(alone[key]), paths[key]))
    return rows


def _command(job: Any, count: int) -> None:
    """``groundplane-otel replay`` run as a user runs it, in a new interpreter, as a gate that
    fails on any unsupported claim (half the answers are wrong: it must exit 1)."""
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "groundplane_otel.cli",
            "replay",
            *job.files,
            "--policy",
            job.policy,
            "--jobs",
            str(count),
            "--max-unsupported-rate",
            "0",
            "--quiet",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 1:
        raise RuntimeError(f"replay exited {done.returncode}: {done.stderr[-500:]}")


def _one_at_a_time(job: Any, count: int = 2) -> float:
    """``job``'s critical path on ``count`` idle cores, in CPU seconds: every worker's split,
    then every worker's share, run in this process one after another (nothing else running),
    the slower split plus the slower share."""
    from groundplane_otel.otel.replay import split
    from groundplane_otel.otel.replay.share import replay_share

    splits, shares = [], []
    gc.enable()  # as a worker runs
    try:
        with tempfile.TemporaryDirectory(prefix="bench-split-") as spill:
            for index in range(count):
                started = time.process_time()
                split.split(job, index, count, Path(spill))
                splits.append(time.process_time() - started)
            for index in range(count):
                started = time.process_time()
                replay_share(job, index, count, spilled=Path(spill))
                shares.append(time.process_time() - started)
    finally:
        gc.disable()
    return max(splits) + max(shares)


def _alone_row(single: float, paths: list[float]) -> tuple[str, ...]:
    """``--jobs 1``'s CPU time ``single`` over the workers' critical path measured one at a
    time (``_one_at_a_time``), the median of ``paths``."""
    path = statistics.median(paths)
    return (
        "  the --jobs 2 workers one at a time here (split, then replay; what 2 independent idle "
        "cores would show)",
        f"{single:.2f} s",
        f"{path:.2f} s (critical path)",
        f"{fmt_ratio(single / path)} on idle cores",
        "—",
    )


_BUSY_TIMEOUT_S = 600.0  # a ceiling process that died raises queue.Empty here, not a hang


def _busy(job: Any, rounds: int, start: Any, done: Any) -> None:
    """A process of ``_at_once``: ``rounds`` replays of ``job`` once every process is ready;
    their wall time put on ``done``."""
    from groundplane_otel.otel.replay.share import replay_share

    start.wait()
    started = time.perf_counter()
    for _ in range(rounds):
        replay_share(job, 0, 1)
    done.put(time.perf_counter() - started)


def _at_once(job: Any, count: int, rounds: int) -> float:
    """The wall time of the slowest of ``count`` processes started together (as ``--jobs``
    starts its workers), each doing the same ``rounds`` replays of ``job``."""
    from groundplane_otel.otel.replay import parallel

    context = parallel.start_context()
    start, done = context.Barrier(count), context.Queue()
    workers = [context.Process(target=_busy, args=(job, rounds, start, done)) for _ in range(count)]
    for worker in workers:
        worker.start()
    times = [done.get(timeout=_BUSY_TIMEOUT_S) for _ in workers]
    for worker in workers:
        worker.join()
    return float(max(times))


def _cpu_row(single: float, runs: list[list[tuple[float, float]]]) -> tuple[str, ...]:
    """What two idle cores would show: ``--jobs 1``'s CPU time ``single`` over the workers'
    critical path (the slower split, then the slower replay; start-up left out), the median
    over ``runs``."""
    path = statistics.median(
        max(split for split, _ in cpus) + max(replayed for _, replayed in cpus) for cpus in runs
    )
    per_worker = ", ".join(f"{split:.2f} + {replayed:.2f} s" for split, replayed in runs[-1])
    return (
        f"  CPU: --jobs 1 vs the --jobs 2 workers while both ran (split + replay: {per_worker})",
        f"{single:.2f} s",
        f"{path:.2f} s (critical path)",
        f"{fmt_ratio(single / path)} on idle cores",
        "—",
    )


GOAL = 8.0  # issue 21: replay and verifier intake at most 8x their floors
GOALS_38 = (10.0, 35.0)  # issue 38: replay at most 10x its floor, verifier intake at most 35x


def _check_inputs(batches: list[Any]) -> list[str]:
    """The JSON texts the guard parses to decide: every tool result and every answer."""
    from groundplane_otel.otel import semconv as sc

    keys = (sc.GEN_AI_TOOL_CALL_RESULT, sc.GEN_AI_OUTPUT_MESSAGES)
    return [
        span.attributes[key]
        for batch in batches
        for span in batch
        for key in keys
        if key in span.attributes
    ]


def _bound_rows(timings: Any, decode_t: float, parse_t: float, spans: int) -> list[tuple[str, ...]]:
    """What any reader of the input must pay before the engine, and what each goal leaves the
    engine: the goal minus reading the input into span records, minus parsing the texts the
    checks read, against what deciding alone takes minus that parsing (``GOAL``, issue 21's,
    for both; ``GOALS_38``, issue 38's, one per floor)."""
    json_t, proto_t = timings["json read"].median, timings["proto read"].median
    inputs_t, decide_t = timings["inputs"].median, timings["decide"].median
    floors = (decode_t, parse_t)
    engine = [(decide_t - inputs_t) / floor for floor in floors]

    def left(goals: tuple[float, float]) -> list[float]:
        return [
            goal - read / floor - inputs_t / floor
            for goal, read, floor in zip(goals, (json_t, proto_t), floors, strict=True)
        ]

    def needed(room: list[float]) -> str:
        return " / ".join(
            "no room left"
            if free <= 0
            else "within it"
            if spent <= free
            else f"{spent / free:.1f}x faster"
            for spent, free in zip(engine, room, strict=True)
        )

    old, new = left((GOAL, GOAL)), left(GOALS_38)
    return [
        (
            "  of each: reading alone (the input as the engine's span records: json_reader / "
            "proto_spans; nothing assembled or decided), vs its floor",
            f"{fmt_time(decode_t)} / {fmt_time(parse_t)}",
            f"{fmt_time(json_t)} / {fmt_time(proto_t)}",
            f"{fmt_ratio(json_t / decode_t)} / {fmt_ratio(proto_t / parse_t)}",
            f"{spans / json_t:,.0f} / {spans / proto_t:,.0f}",
        ),
        (
            "  of either: parsing the checks' inputs alone (orjson.loads of each tool result and "
            "answer), vs each floor",
            f"{fmt_time(decode_t)} / {fmt_time(parse_t)}",
            fmt_time(inputs_t),
            f"{fmt_ratio(inputs_t / decode_t)} / {fmt_ratio(inputs_t / parse_t)}",
            "—",
        ),
        (
            f"  what the {GOAL:.0f}x goal leaves the engine (assembling, deciding, counting; "
            f"{GOAL:.0f}x minus the two rows above) vs what it takes (deciding alone minus its "
            "inputs), as multiples of each floor",
            "—",
            f"{old[0]:.1f}x / {old[1]:.1f}x left; {engine[0]:.1f}x / {engine[1]:.1f}x taken",
            needed(old),
            "—",
        ),
        (
            f"  what issue 38's {GOALS_38[0]:.0f}x / {GOALS_38[1]:.0f}x goals leave the engine "
            "(the same, against each goal), as multiples of each floor",
            "—",
            f"{new[0]:.1f}x / {new[1]:.1f}x left; {engine[0]:.1f}x / {engine[1]:.1f}x taken",
            needed(new),
            "—",
        ),
    ]


def run(smoke: bool) -> list[Section]:
    import orjson
    from opentelemetry.sdk.metrics import MeterProvider

    from groundplane_otel.otel.otlp_files import BadInput, read_requests, request_from_json
    from groundplane_otel.otel.replay import Replayer
    from groundplane_otel.otel.replay.records import proto_spans
    from groundplane_otel.otel.verifier import Verifier

    traces = 20 if smoke else 500
    repeats = 3 if smoke else 7
    config = _config()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "traces.jsonl"
        _record(traces, path)
        lines = path.read_text().splitlines()
        spans = len(lines)  # SimpleSpanProcessor: one span per line
        payloads = [request_from_json(line).SerializeToString() for line in lines]

        def decode() -> None:
            with path.open("rb") as stream:
                for line in stream:
                    orjson.loads(line)

        def replay() -> None:
            replayer = Replayer(config)
            bad: list[BadInput] = []
            for request in read_requests([path], bad):
                replayer.feed(request)
            replayer.finish()
            replayer.close()

        from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
            ExportTraceServiceRequest,
        )

        def parse_only() -> None:
            for body in payloads:
                ExportTraceServiceRequest().ParseFromString(body)

        def intake() -> None:
            # Decided as the verifier does: when the root has arrived (the ticker's tick).
            verifier = Verifier(config, meter_provider=MeterProvider(), root_wait_s=0.0)
            for body in payloads:
                verifier.Export(verifier.read(body), None)
                verifier.tick()
            assert verifier.stats.root_ended == traces, verifier.stats
            verifier.drain()
            verifier.replayer.close()

        def read() -> list[Any]:
            return list(read_requests([path], []))

        resources: dict[bytes, Any] = {}  # shared across requests, as the verifier's are

        def proto_read() -> None:
            # What the verifier's intake must do before assembling: each request as records.
            for body in payloads:
                proto_spans(ExportTraceServiceRequest.FromString(body), resources)

        inputs = _check_inputs(read())

        def inputs_parse() -> None:
            for text in inputs:
                orjson.loads(text)

        def decide(requests: list[Any]) -> None:
            # Replay with its reading done beforehand (untimed): the engine deciding alone.
            replayer = Replayer(config)
            for request in requests:
                replayer.feed(request)
            replayer.finish()
            replayer.close()

        timings = compare(
            {
                "decode": decode,
                "replay": replay,
                "parse": parse_only,
                "intake": intake,
                "decide": decide,  # type: ignore[dict-item]
                "json read": read,
                "proto read": proto_read,
                "inputs": inputs_parse,
            },
            repeats=repeats,
            setup={"decide": read},
        )
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        waiting = Replayer(config, decision_wait=10**12)
        for request in read_requests([path], []):
            waiting.feed(request)
        held = tracemalloc.get_traced_memory()[0] - before
        tracemalloc.stop()
        waiting.finish()
        waiting.close()
        jobs_rows = _jobs_rows(smoke, Path(folder))
    replay_t, decode_t = timings["replay"].median, timings["decode"].median
    intake_t, parse_t = timings["intake"].median, timings["parse"].median
    section = Section(
        "replay",
        "Replay and the fleet verifier: throughput as a ratio to decoding the input",
        (
            "measure",
            "floor (orjson.loads / ParseFromString)",
            "with the guard",
            "ratio",
            "spans/s with the guard",
        ),
    )
    section.rows.append(
        (
            f"replay of {traces} recorded traces (OTLP/JSON lines)",
            fmt_time(decode_t),
            fmt_time(replay_t),
            f"{fmt_ratio(replay_t / decode_t)} (goal <= {GOALS_38[0]:.0f}x; issue 21: <= "
            f"{GOAL:.0f}x)",
            f"{spans / replay_t:,.0f}",
        )
    )
    section.rows.append(
        (
            f"verifier intake of {traces} traces (OTLP protobuf)",
            fmt_time(parse_t),
            fmt_time(intake_t),
            f"{fmt_ratio(intake_t / parse_t)} (goal <= {GOALS_38[1]:.0f}x; issue 21: <= "
            f"{GOAL:.0f}x)",
            f"{spans / intake_t:,.0f}",
        )
    )
    decide_t = timings["decide"].median
    section.rows.append(
        (
            "  of either: deciding alone (the spans already read; assembling, deciding and "
            "counting), vs each floor",
            f"{fmt_time(decode_t)} / {fmt_time(parse_t)}",
            fmt_time(decide_t),
            f"{fmt_ratio(decide_t / decode_t)} / {fmt_ratio(decide_t / parse_t)}",
            f"{spans / decide_t:,.0f}",
        )
    )
    section.rows.extend(_bound_rows(timings, decode_t, parse_t, spans))
    section.rows.append(
        (
            "memory per buffered trace (3 spans, 20-row result)",
            "—",
            fmt_bytes(held / traces),
            "—",
            "—",
        )
    )
    section.rows.extend(jobs_rows)
    section.notes.append(
        f"Median of {repeats} interleaved runs; {spans} spans ({spans // traces} per trace), "
        "half the answers wrong. Floor: decoding only, measured in the same run (each JSON "
        "line -> orjson.loads; protobuf bytes -> ParseFromString). Goals (issue 38, the engine "
        "driven directly): replay <= 10x its floor, verifier intake <= 35x its floor; (issue "
        "21): replay <= 8x its floor and >= 30,000 spans/s, verifier intake <= 8x. One process, "
        "one core, except the --jobs rows (median of 3 interleaved runs of the whole replay as "
        "the command runs it, worker start-up included, over a larger recording; each line or "
        "message is decoded by one worker; the same spans one per request and in batches of up "
        "to 512 as the BatchSpanProcessor exports them; the command rows: groundplane-otel "
        "replay run in a new interpreter, everything included (the fork server that starts the "
        "workers, ~0.2 s); the CPU rows: --jobs 1's CPU time over "
        "the workers' critical path, start-up left out; goal: --jobs 2 >= 1.7x --jobs 1 on 2 "
        "idle cores)."
    )
    return [section]
