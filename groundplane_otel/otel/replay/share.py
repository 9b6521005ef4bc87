"""One share of a replay, in this process: worker ``index`` of ``count``'s traces decided
(``replay_share``; ``count == 1``: the whole replay), and the shares merged into one replay's
tally (``merge``). ``replay.parallel`` runs the shares in worker processes.

A share notes the input position of what it keeps (findings, unreadable locations): requests
fed, spans read and traces decided — the same in every share at the same place in the input —
so the merge orders the shares' by it, as one process kept them.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from groundplane_otel.otel.otlp_files import (
    DEFAULT_MAX_LINE_BYTES,
    BadInput,
    Batch,
    ReadProgress,
    Unreadable,
    located_requests,
)
from groundplane_otel.otel.replay import Replayer, split
from groundplane_otel.otel.replay.pacing import Pacer
from groundplane_otel.otel.replay.records import RecordedSpan
from groundplane_otel.otel.replay.stats import Position, ReplayStats, in_order

if TYPE_CHECKING:
    from groundplane_otel.otel.config import GuardConfig

__all__ = ["Progress", "ReplayJob", "Share", "ShareResult", "load_config", "merge", "replay_share"]

Progress = Callable[[float, int, int], None]  # fraction of the input read, spans, traces decided
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class ReplayJob:
    """What every worker replays, and how (the ``replay`` command's options)."""

    files: tuple[str, ...]
    policy: str
    capture_content: bool = False
    format: str = "auto"
    decision_wait: float = 10_000
    max_traces: int = 10_000
    max_spans_per_trace: int = 10_000
    max_findings: int = 10_000
    max_unreadable_shown: int = 100
    rematch: bool = False
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES


@dataclass(frozen=True, slots=True)
class Share:
    """Worker ``index`` of ``count``'s traces: ``crc32(trace id) % count == index``; input of no
    trace (``b""``) is worker 0's."""

    index: int
    count: int

    def __call__(self, trace_id: bytes) -> bool:
        return split.owner(trace_id, self.count) == self.index


@dataclass(slots=True)
class ShareResult:
    """One worker's tally, with the input positions of what it kept (in position order)."""

    stats: ReplayStats
    finding_positions: list[Position]
    unreadable: int
    located: list[tuple[Position, BadInput]]
    cpu: tuple[float, float] = (0.0, 0.0)  # a worker's CPU seconds splitting, then replaying


class _Noted(list[_T]):
    """A list that notes the input position (``where()``) of each item appended."""

    def __init__(self, where: Callable[[], Position]) -> None:
        super().__init__()
        self.where = where
        self.positions: list[Position] = []

    def append(self, item: _T, /) -> None:
        self.positions.append(self.where())
        super().append(item)


def replay_share(
    job: ReplayJob,
    index: int = 0,
    count: int = 1,
    progress: Progress | None = None,
    *,
    config: GuardConfig | None = None,
    spilled: Path | None = None,
) -> ShareResult:
    """Worker ``index`` of ``count``: its share of the traces decided (``count == 1``:
    everything, reading the input in this process). ``spilled``: the folder every worker has
    split the input into (``split.split``); without it every worker's split is made here first,
    in this process. ``progress`` is told as requests are fed, a few times a second
    (``pacing``). ``config``: the policy already loaded (else ``job.policy`` is read)."""
    if count > 1 and spilled is None:
        with tempfile.TemporaryDirectory(prefix="groundplane-replay-") as folder:
            for writer in range(count):
                split.split(job, writer, count, Path(folder))
            return replay_share(job, index, count, progress, config=config, spilled=Path(folder))
    if config is None:
        config = load_config(job.policy)
    if job.capture_content:
        config = dataclasses.replace(config, capture_content=True)
    bad = Unreadable(keep=job.max_unreadable_shown)
    replayer = Replayer(
        config,
        decision_wait=job.decision_wait,
        max_traces=job.max_traces,
        max_spans_per_trace=job.max_spans_per_trace,
        max_findings=job.max_findings,
        unreadable=bad,
        rematch=job.rematch,
        owns=Share(index, count) if count > 1 else None,
        note_names=True,
    )
    fed = [0]
    rank = 1 if index == 0 else 0  # at one position another worker's decision came first

    def where() -> Position:
        # requests fed, spans read (every worker's spans), traces decided (every worker's)
        return (fed[0], replayer.spans_read, replayer.decisions, rank)

    located: _Noted[BadInput] = _Noted(where)
    findings: _Noted[Any] = _Noted(where)
    bad.kept, replayer.stats.findings = located, findings
    read: ReadProgress | split.Spilled
    if spilled is None:
        read = ReadProgress(job.files)
        requests: Iterator[tuple[str, Batch | list[RecordedSpan | bytes]]] = located_requests(
            job.files, bad, format=job.format, progress=read, max_line_bytes=job.max_line_bytes
        )
    else:
        read = split.Spilled(job, spilled, index, count)
        requests = read.requests(bad)
    stats, feed = replayer.stats, replayer.assembler.feed  # a share's requests time others'
    pacer = Pacer()
    try:
        for place, request in requests:
            feed(request, place)
            fed[0] += 1
            if progress is not None and pacer.due():
                progress(read.fraction, stats.spans, stats.traces)
        replayer.finish()
    finally:
        replayer.close()
    if index:
        stats.requests = 0  # every worker is fed every request: worker 0 counts them
    stats.findings = list(findings)
    return ShareResult(
        stats, findings.positions, bad.count, list(zip(located.positions, located, strict=True))
    )


def load_config(policy: str) -> GuardConfig:
    """The policy file ``policy`` read (a ValueError says why it is not a valid one)."""
    from groundplane_otel.otel.policy import PolicyError, load_policy

    try:
        return load_policy(policy)
    except PolicyError as exc:
        raise ValueError(f"invalid policy: {exc}") from exc


def merge(results: Sequence[ShareResult], job: ReplayJob) -> tuple[ReplayStats, Unreadable]:
    """The workers' results as one replay's: its tally, and what could not be read."""
    stats = ReplayStats.merge(
        [(result.stats, result.finding_positions) for result in results],
        max_findings=job.max_findings,
    )
    bad = Unreadable(keep=job.max_unreadable_shown)
    bad.count = sum(result.unreadable for result in results)
    bad.kept = in_order([result.located for result in results], job.max_unreadable_shown)
    return stats, bad
