"""Sustained concurrent traffic through the real guard behind a BatchSpanProcessor, sized for a
2-core machine: threads and asyncio tasks at once, every output counted exactly once by outcome,
every trace judged on its own facts only, the store drained, and memory bounded."""

from __future__ import annotations

import asyncio
import gc
import threading
import tracemalloc
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hardening_kit import WRONG, Pipeline, agent_trace, metric_points, spans_by_trace, tally
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import StatusCode

THREADS, PER_THREAD, TASKS = 8, 40, 240
TASK_BASE = 100_000  # trace numbers of the asyncio tasks
PROSE = '[{"role": "assistant", "parts": [{"type": "text", "content": "R1 is best, I think"}]}]'


def plan(number: int) -> tuple[str, str | None, str | None]:
    """(expected outcome, winner, final messages) of trace ``number``: a quarter answer the
    wrong winner, a quarter answer in prose, half answer their own winner."""
    kind = number % 4
    if kind == 0:
        return "blocked", WRONG, None
    if kind == 3:
        return "error", None, PROSE
    return "passed", f"R{number}", None


EXPECTED_CODE = {"blocked": "wrong_winner", "error": "output_unreadable", "passed": None}


def run(pipeline: Pipeline, number: int) -> str | None:
    _, winner, final = plan(number)
    return agent_trace(pipeline.tracer, number, winner or "", final=final)


def traffic(pipeline: Pipeline, threads: int, per_thread: int, tasks: int, base: int = 0) -> dict:
    """``threads`` threads and one asyncio loop with ``tasks`` interleaved tasks, all at once.
    Returns {trace number: the code the app got (None: no exception)}."""
    results: dict[int, str | None] = {}
    lock = threading.Lock()
    start = threading.Barrier(threads + 1)

    async def task(number: int) -> tuple[int, str | None]:
        await asyncio.sleep(0)  # interleave the tasks on the loop
        return number, run(pipeline, number)

    async def all_tasks() -> list[tuple[int, str | None]]:
        numbers = range(base + TASK_BASE, base + TASK_BASE + tasks)
        return list(await asyncio.gather(*(task(number) for number in numbers)))

    def loop_thread() -> None:
        start.wait(timeout=30)
        done = asyncio.run(all_tasks())
        with lock:
            results.update(done)

    def worker(index: int) -> None:
        start.wait(timeout=30)
        for number in range(base + index * per_thread, base + (index + 1) * per_thread):
            code = run(pipeline, number)
            with lock:
                results[number] = code

    runner = threading.Thread(target=loop_thread, name="asyncio-traffic")
    runner.start()
    with ThreadPoolExecutor(threads) as pool:
        list(pool.map(worker, range(threads)))
    runner.join(timeout=60)
    assert not runner.is_alive()
    return results


def test_threads_and_asyncio_behind_a_batch_processor_count_every_output_once() -> None:
    """8 threads and 240 asyncio tasks at once: each app gets exactly its own verdict, every
    output is exported and counted once by outcome, and the store drains to zero."""
    exporter = InMemorySpanExporter()
    pipeline = Pipeline(exporter, max_queue_size=8192, schedule_delay_millis=50)
    try:
        results = traffic(pipeline, THREADS, PER_THREAD, TASKS)
        assert pipeline.tracer_provider.force_flush(timeout_millis=30_000)
        numbers = sorted(results)
        assert len(numbers) == THREADS * PER_THREAD + TASKS
        assert results == {number: EXPECTED_CODE[plan(number)[0]] for number in numbers}
        expected = Counter(plan(number)[0] for number in numbers)

        by_trace = spans_by_trace(exporter.get_finished_spans())
        assert len(by_trace) == len(numbers)
        for spans in by_trace.values():  # every span of every trace exported, nothing mixed
            assert sorted(spans) == [
                "chat gpt-test",
                "execute_tool top_sales",
                "invoke_agent analyst",
            ]
            number = spans["invoke_agent analyst"].attributes["app.trace"]
            outcome = plan(number)[0]
            chat, tool = spans["chat gpt-test"], spans["execute_tool top_sales"]
            assert chat.attributes["groundplane.outcome"] == outcome
            assert (chat.status.status_code is StatusCode.ERROR) == (outcome != "passed")
            assert [(link.context.trace_id, link.context.span_id) for link in chat.links] == [
                (tool.context.trace_id, tool.context.span_id)
            ]  # the fact this output was checked against came from its own trace
            tool_id = f"{tool.context.span_id:016x}"
            for event in chat.events:
                assert event.attributes.get("groundplane.fact.span_id", tool_id) == tool_id

        points = metric_points(pipeline.reader)
        assert tally(points, "groundplane.outputs", "groundplane.outcome") == dict(expected)
        assert tally(points, "groundplane.claims", "groundplane.verdict") == {
            "supported": expected["passed"],
            "unsupported": expected["blocked"],
        }
        assert tally(points, "groundplane.facts", "groundplane.fact.outcome") == {
            "recorded": len(numbers)
        }
        assert points["groundplane.traces.active"] == [({}, 0)]
        assert pipeline.guard is not None
        assert len(pipeline.guard.processor.engine.store) == 0
        assert pipeline.guard.processor.internal_errors == 0
    finally:
        pipeline.close()


ROUND = (4, 15, 60)  # threads, traces per thread, asyncio tasks: 120 traces a round


def measure_rounds(pipeline: Pipeline, exporter: InMemorySpanExporter, rounds: int) -> Any:
    """Traced memory (bytes) after each round and the highest per-round peak above the round's
    start; the exporter is flushed and emptied after every round (a shipping exporter)."""

    def one_round(index: int) -> None:
        traffic(pipeline, *ROUND, base=(index + 1) * 1_000_000)
        assert pipeline.tracer_provider.force_flush(timeout_millis=30_000)
        exporter.clear()
        gc.collect()

    one_round(-1)  # warm-up: imports, caches, thread-local allocator arenas, linecache
    tracemalloc.start()
    try:
        after: list[int] = []
        peak = 0
        for index in range(rounds):
            start = tracemalloc.get_traced_memory()[0]
            tracemalloc.reset_peak()
            one_round(index)
            current, round_peak = tracemalloc.get_traced_memory()
            after.append(current)
            peak = max(peak, round_peak - start)
            if pipeline.guard is not None:
                assert len(pipeline.guard.processor.engine.store) == 0
    finally:
        tracemalloc.stop()
    return after, peak


def test_memory_stays_bounded_across_rounds_of_traffic() -> None:
    """Rounds of 120 concurrent traces: the guard's peak stays within 3x the same traffic
    without the guard, and the memory it keeps does not grow from round to round."""
    results = {}
    for guarded, rounds in ((False, 1), (True, 4)):
        exporter = InMemorySpanExporter()
        pipeline = Pipeline(
            exporter, guarded=guarded, max_queue_size=8192, schedule_delay_millis=50
        )
        try:
            results[guarded] = measure_rounds(pipeline, exporter, rounds)
        finally:
            pipeline.close()
    (_, baseline_peak), (after, guarded_peak) = results[False], results[True]
    growth = after[-1] - after[0]
    print(
        f"\npeak per round: baseline {baseline_peak / 1024:.0f} KiB, guarded "
        f"{guarded_peak / 1024:.0f} KiB ({guarded_peak / baseline_peak:.2f}x); kept memory "
        f"after each round: {[round(value / 1024) for value in after]} KiB"
    )
    assert guarded_peak < 3 * baseline_peak
    # A trace's state left behind (its registry and fact, > 1 KiB) would keep > 120 KiB a round,
    # > 360 KiB over the three rounds compared; 192 KiB absorbs allocator and cache noise.
    assert growth < 192 * 1024
