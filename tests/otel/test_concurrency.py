"""Many concurrent traces on threads and asyncio tasks: no fact leaks across traces and every
output is counted exactly once."""

from __future__ import annotations

import asyncio
import json
import threading
from concurrent.futures import ThreadPoolExecutor

from otel_harness import Harness, answer

from groundplane_otel.errors import ClaimsUnsupported

THREADS, PER_THREAD, TASKS = 16, 25, 400


def trace_rows(number: int) -> dict[str, object]:
    """Each trace has its own winner, so a leaked fact would change a verdict."""
    return {"rows": [{"region": f"R{number}", "total": 10}, {"region": "OTHER", "total": 1}]}


def expected(total: int) -> dict[str, int]:
    wrong = sum(1 for number in range(total) if number % 3 == 0)
    return {"blocked": wrong, "passed": total - wrong}


def outcomes(otel: Harness) -> dict[str, int]:
    return {
        attrs["groundplane.outcome"]: value
        for attrs, value in otel.metrics()["groundplane.outputs"]
    }


def one_trace(otel: Harness, number: int) -> bool:
    """Returns whether the guard raised; every third trace answers wrongly."""
    winner = "OTHER" if number % 3 == 0 else f"R{number}"
    try:
        with otel.agent():
            otel.tool(json.dumps(trace_rows(number)))
            otel.chat(answer({"winner": winner}))
    except ClaimsUnsupported:
        return True
    return False


def test_threads_do_not_leak_facts_and_count_each_output_once(otel: Harness) -> None:
    """16 threads x 25 traces: blocked exactly where the answer is wrong, counted once each."""
    guard = otel.install()
    barrier = threading.Barrier(THREADS)

    def worker(thread: int) -> list[bool]:
        barrier.wait()
        return [one_trace(otel, thread * PER_THREAD + i) for i in range(PER_THREAD)]

    with ThreadPoolExecutor(THREADS) as pool:
        raised = [flag for flags in pool.map(worker, range(THREADS)) for flag in flags]
    total = THREADS * PER_THREAD
    assert raised == [number % 3 == 0 for number in range(total)]
    assert outcomes(otel) == expected(total)
    assert len(guard.processor.engine.store) == 0
    assert guard.processor.internal_errors == 0


def test_asyncio_tasks_do_not_leak_facts_and_count_each_output_once(otel: Harness) -> None:
    """400 interleaved asyncio tasks: each trace sees only its own fact."""
    guard = otel.install()

    async def task(number: int) -> bool:
        winner = "OTHER" if number % 3 == 0 else f"R{number}"
        try:
            with otel.agent():
                await asyncio.sleep(0)
                otel.tool(json.dumps(trace_rows(number)))
                await asyncio.sleep(0)
                otel.chat(answer({"winner": winner}))
        except ClaimsUnsupported:
            return True
        return False

    async def main() -> list[bool]:
        return list(await asyncio.gather(*(task(number) for number in range(TASKS))))

    raised = asyncio.run(main())
    assert raised == [number % 3 == 0 for number in range(TASKS)]
    assert outcomes(otel) == expected(TASKS)
    assert len(guard.processor.engine.store) == 0
