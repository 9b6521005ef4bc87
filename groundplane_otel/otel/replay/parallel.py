"""Replay on every core (``groundplane-otel replay --jobs N``): the traces are shared out by
trace id over ``N`` worker processes, and their reports merged into the one a single process
would print.

The reading is split (``replay.split``): each JSON line is decoded by one worker, which spills
its spans to the workers that own them — a trace belongs to worker ``crc32(trace id) % N``
(``Share``), so the spans of one trace meet in one worker whatever file or line they are in —
and only their trace ids to the others; a protobuf file is parsed by every worker, each reading
whole only its own spans. Once every worker has split its part, each is fed every request in
input order from the spill (and its protobuf files), so each still times every trace
(``Replayer(owns=…)``) and a trace is decided at exactly the moment a single replay would decide
it — the same spans, the same early decisions when the buffer is full. Input that belongs to no
trace (unreadable lines, messages, files and spans) is counted and told by worker 0 alone. Each
worker notes the input position of what it keeps (findings, unreadable locations): the place in
the input at the moment it was kept, the same in every worker; the merge orders by it, so the
first ``max_findings`` findings and the first ``max_unreadable_shown`` locations are those, in
that order, one process keeps, and every count is the sum of the shares'.

Workers start with the ``forkserver`` context (``spawn`` where there is none, as on Windows):
a fresh server process imports replay once and forks each worker from that clean,
single-threaded state, so no worker inherits a thread, lock or open file of the parent (the
live guard's parts hold locks; ``fork`` from the parent could copy one held), and the workers
do not each pay the imports (``spawn``'s start-up: measured ~2 s for two workers on a loaded
2-core machine, ~0.75 s with the server). The spill lives in one temporary folder, removed when
the replay ends. A worker that raises or dies fails the run (``WorkerFailed``, naming the
worker), never a partial report; the parent ends every worker when it stops (an error, Ctrl-C,
SIGTERM), and a worker whose parent is gone (killed, so it could not clean up) removes the
spill folder and ends itself.
"""

from __future__ import annotations

import contextlib
import gc
import multiprocessing
import os
import pickle
import select
import shutil
import signal
import tempfile
import time
from collections.abc import Sequence
from multiprocessing.connection import Connection, wait
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from groundplane_otel._echo import capped
from groundplane_otel.otel.otlp_files import Unreadable
from groundplane_otel.otel.replay import split
from groundplane_otel.otel.replay.share import (
    Progress,
    ReplayJob,
    Share,
    ShareResult,
    load_config,
    merge,
    replay_share,
)
from groundplane_otel.otel.replay.stats import ReplayStats

if TYPE_CHECKING:
    from groundplane_otel.otel.config import GuardConfig

__all__ = [
    "PRELOADED",
    "Interrupted",
    "ReplayJob",
    "Share",
    "ShareResult",
    "WorkerFailed",
    "cores",
    "default_jobs",
    "load_config",
    "merge",
    "replay",
    "replay_share",
    "start_context",
]

_STOP_WAIT_S = 5.0

# What the fork server imports once, before it forks any worker.
PRELOADED = (__name__, "groundplane_otel.otel.policy")


# Below this much input (bytes on disk, all files) one process is faster than starting workers
# (~0.2 s idle, ~0.75 s on a loaded machine, and the spill to write and read back;
# docs/beyond.md, "On every core").
AUTO_JOBS_MIN_BYTES = 32 * 1024 * 1024


def default_jobs(files: Sequence[str] = ()) -> int:
    """``--jobs``' default: the cores this process may use when ``files`` hold at least
    ``AUTO_JOBS_MIN_BYTES`` (a file that cannot be sized counts as none), else 1."""
    total = 0
    for name in files:
        with contextlib.suppress(OSError):
            total += os.stat(name).st_size
    if total < AUTO_JOBS_MIN_BYTES:
        return 1
    return cores()


def cores() -> int:
    """The cores this process may run on."""
    count = getattr(os, "process_cpu_count", None)  # Python 3.13+
    if count is not None:
        return max(1, count() or 1)
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


class WorkerFailed(RuntimeError):
    """A worker raised or died: the replay has no report."""


class Interrupted(Exception):
    """SIGTERM reached the parent of a parallel replay (its workers were ended)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"interrupted by {signal.Signals(signum).name}")
        self.signum = signum


def replay(
    job: ReplayJob,
    jobs: int,
    *,
    progress: Progress | None = None,
    config: GuardConfig | None = None,
    cpu: list[tuple[float, float]] | None = None,
) -> tuple[ReplayStats, Unreadable]:
    """Replay ``job`` over ``jobs`` worker processes (1: in this process) and merge.
    ``config``: the policy already loaded (else ``job.policy`` is read once, here: every worker
    decides by the same policy, sent to it). Raises ValueError for bad usage (a missing file,
    an invalid policy), ``WorkerFailed`` when a worker raised or died, ``Interrupted`` on
    SIGTERM (Ctrl-C: ``KeyboardInterrupt``); the workers are ended in every case. ``cpu`` (for
    measuring) gets each worker's CPU seconds splitting and replaying, in worker order."""
    if jobs == 1:
        return _told(merge([replay_share(job, 0, 1, progress, config=config)], job), progress)
    if config is None:
        config = load_config(job.policy)  # once: every worker decides by the same policy
    policy = _pickled(config)  # pickled once, here, for every worker
    context = start_context()
    board = context.Array("d", 3 * jobs, lock=False)  # per worker: fraction, spans, traces
    split_done = context.Value("i", 0)  # workers whose split is written
    spilled = Path(tempfile.mkdtemp(prefix="groundplane-replay-"))
    workers: list[Any] = []
    pipes: list[Connection] = []
    results: dict[int, ShareResult] = {}
    previous = _on_sigterm()
    try:
        for index in range(jobs):
            receive, send = context.Pipe(duplex=False)
            worker = context.Process(
                target=_work,
                args=(job, policy, index, jobs, send, board, spilled, split_done),
                name=f"groundplane-replay-{index}",
                daemon=True,
            )
            worker.start()
            send.close()
            workers.append(worker)
            pipes.append(receive)
        while len(results) < jobs:
            waiting = [i for i in range(jobs) if i not in results]
            ready = set(
                wait([pipes[i] for i in waiting] + [workers[i].sentinel for i in waiting], 0.5)
            )
            for index in waiting:
                pipe, worker = pipes[index], workers[index]
                if pipe in ready or (worker.sentinel in ready and pipe.poll()):
                    results[index] = _received(pipe, index, jobs, worker)
                elif worker.sentinel in ready:
                    worker.join(_STOP_WAIT_S)  # its exit code is known once it is reaped
                    raise WorkerFailed(
                        f"replay worker {index} of {jobs} died ({_exit(worker.exitcode)}) "
                        "before its report: no report"
                    )
            if progress is not None:
                fractions = [board[3 * i] for i in range(jobs)]
                spans = sum(int(board[3 * i + 1]) for i in range(jobs))
                progress(min(fractions), spans, sum(int(board[3 * i + 2]) for i in range(jobs)))
    finally:
        _stop(workers)
        for pipe in pipes:
            pipe.close()
        shutil.rmtree(spilled, ignore_errors=True)
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    if cpu is not None:
        cpu.extend(results[index].cpu for index in range(jobs))
    return _told(merge([results[index] for index in range(jobs)], job), progress)


def _pickled(config: GuardConfig) -> bytes:
    """``config`` as it is sent to every worker; a ValueError when it cannot be (a policy built
    in code holding something pickle cannot carry, such as a lambda)."""
    try:
        return pickle.dumps(config, protocol=pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, TypeError, AttributeError) as exc:
        raise ValueError(
            f"the policy cannot be sent to the worker processes ({capped(str(exc), 120)}): "
            "replay it in one process (jobs 1)"
        ) from None


def _told(
    merged: tuple[ReplayStats, Unreadable], progress: Progress | None
) -> tuple[ReplayStats, Unreadable]:
    """``merged``, its totals told to ``progress`` as the last word (everything read)."""
    if progress is not None:
        progress(1.0, merged[0].spans, merged[0].traces)
    return merged


def start_context() -> Any:
    """``forkserver`` (a fresh server process imports replay once, then forks each worker from
    that clean, single-threaded state), where it exists; else ``spawn``."""
    if "forkserver" not in multiprocessing.get_all_start_methods():
        return multiprocessing.get_context("spawn")
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(list(PRELOADED))
    return context


def _received(pipe: Connection, index: int, jobs: int, worker: Any) -> ShareResult:
    """A worker's message: its result, or what went wrong (raised)."""
    try:
        kind, value = pipe.recv()
    except (EOFError, OSError):
        worker.join(_STOP_WAIT_S)
        raise WorkerFailed(
            f"replay worker {index} of {jobs} died ({_exit(worker.exitcode)}) before its "
            "report: no report"
        ) from None
    if kind == "usage":
        raise ValueError(value)
    if kind == "failed":
        raise WorkerFailed(f"replay worker {index} of {jobs} failed: {value}: no report")
    result: ShareResult = value
    return result


def _exit(code: int | None) -> str:
    if code is not None and code < 0:
        return f"killed by {signal.Signals(-code).name}"
    return f"exit code {code}"


def _on_sigterm() -> Any:
    """SIGTERM raises ``Interrupted`` here while the workers run (main thread only)."""

    def interrupted(signum: int, frame: Any) -> None:
        raise Interrupted(signum)

    try:
        return signal.signal(signal.SIGTERM, interrupted)
    except ValueError:  # not the main thread: the default stays
        return None


def _stop(workers: Sequence[Any]) -> None:
    """End every worker still running (SIGTERM, then SIGKILL) and reap them all."""
    for worker in workers:
        if worker.is_alive():
            worker.terminate()
    for worker in workers:
        worker.join(_STOP_WAIT_S)
        if worker.is_alive():
            worker.kill()
            worker.join()


def _unread(send: Connection) -> bool:
    """Whether nobody holds the other end of ``send`` any more (the command died); where
    ``select.poll`` is missing (Windows), never."""
    if not hasattr(select, "poll"):
        return False
    poller = select.poll()
    poller.register(send.fileno(), select.POLLOUT)
    return any(event & (select.POLLERR | select.POLLHUP) for _, event in poller.poll(0))


def _work(
    job: ReplayJob,
    policy: bytes,
    index: int,
    jobs: int,
    send: Connection,
    board: Any,
    spilled: Path,
    split_done: Any,
) -> None:
    """A worker process: its part of the input split, then (once every worker's is written)
    its share replayed; the result (or what went wrong) sent back."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the parent, which ends us
    gc.freeze()  # what the server imported lives as long as we do: no collection scans it

    def alive() -> None:  # told a few times a second (``pacing``)
        if _unread(send):
            _orphaned(spilled)

    def splitting(fraction: float) -> None:
        board[3 * index] = fraction / 2
        alive()

    def progress(fraction: float, spans: int, traces: int) -> None:
        board[3 * index], board[3 * index + 1], board[3 * index + 2] = (
            0.5 + fraction / 2,
            spans,
            traces,
        )
        alive()

    try:
        config: GuardConfig = pickle.loads(policy)  # the command's, from ``_pickled``
        started = time.process_time()
        split.split(job, index, jobs, spilled, splitting)
        splitting_cpu = time.process_time() - started
        with split_done.get_lock():
            split_done.value += 1
        while split_done.value < jobs:
            time.sleep(0.002)
            alive()
        started = time.process_time()
        result = replay_share(job, index, jobs, progress, config=config, spilled=spilled)
        result.cpu = (splitting_cpu, time.process_time() - started)
        message: tuple[str, Any] = ("done", result)
    except ValueError as exc:
        message = ("usage", str(exc))
    except Exception as exc:  # told to the parent, which fails the run
        message = ("failed", f"{type(exc).__name__}: {exc}")
    try:
        send.send(message)
    except OSError:  # the command is gone (the other worker may have removed the spill)
        _orphaned(spilled)
    send.close()


def _orphaned(spilled: Path) -> NoReturn:
    """The command is gone (killed: it could not clean up): nobody would read the result, so
    the spill folder is removed and the worker exits at once."""
    shutil.rmtree(spilled, ignore_errors=True)
    os._exit(1)
