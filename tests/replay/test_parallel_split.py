"""``replay --jobs N`` with the reading split (``replay/split.py``): every line or message
decoded by exactly one worker, and the report still byte for byte one process's — when the
buffer evicts, when traces are decided after a short wait, over protobuf and compressed files
(issue 21)."""

from __future__ import annotations

import dataclasses
import gzip
import json
import pickle
import struct
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest
import zstandard
from replay_recording import POLICY, live_and_recorded
from shuffled_recording import GARBAGE, shuffled

from groundplane_otel.otel import otlp_files
from groundplane_otel.otel.otlp_files import BadInput, located_requests, request_from_json
from groundplane_otel.otel.replay import parallel, records, split
from groundplane_otel.otel.replay.records import bad_ids, proto_spans
from groundplane_otel.otel.replay.report import Gate, build_report, render_json


def _recording(tmp_path: Path, *, clones: int, seed: int = 3) -> tuple[Path, list[Path]]:
    _, path = live_and_recorded(tmp_path)
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    folder = tmp_path / "shuffled"
    folder.mkdir()
    return policy, shuffled(path.read_text().splitlines(), folder, clones=clones, seed=seed)


def _runs(
    policy: Path, files: Sequence[Path], *args: str
) -> list[subprocess.CompletedProcess[str]]:
    """The real command over ``files`` with 1, 2 and 3 jobs."""
    command = [sys.executable, "-m", "groundplane_otel.cli", "replay", "--policy", str(policy)]
    return [
        subprocess.run(
            [*command, *map(str, files), "--quiet", "--json", "--jobs", str(jobs), *args],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        for jobs in (1, 2, 3)
    ]


def _same(runs: list[subprocess.CompletedProcess[str]]) -> dict[str, object]:
    """The one report every run printed (asserted byte-identical, exit 1, nothing on stderr)."""
    assert [run.returncode for run in runs] == [1, 1, 1], runs[0].stderr
    assert [run.stderr for run in runs] == ["", "", ""]
    assert runs[0].stdout == runs[1].stdout == runs[2].stdout
    report: dict[str, object] = json.loads(runs[0].stdout)
    return report


def test_a_buffer_that_evicts_decides_the_same_for_any_jobs(tmp_path: Path) -> None:
    """With ``--max-traces 2`` the buffer evicts the longest idle trace (over all workers'
    traces) again and again; 1, 2 and 3 jobs print the same ``--json`` report, byte for byte."""
    clones = 4
    policy, files = _recording(tmp_path, clones=clones)
    report = _same(_runs(policy, files, "--max-traces", "2"))
    data = report["input"]
    assert isinstance(data, dict)
    assert data["traces"] > clones * 6  # traces decided in pieces: evicted before complete
    assert data["incomplete_traces"] > data["conflicting_traces"]  # evicted: incomplete


def test_a_short_decision_wait_decides_the_same_for_any_jobs(tmp_path: Path) -> None:
    """With ``--decision-wait 3`` traces are decided three spans after their last one (the
    clock counts every worker's spans); 1, 2 and 3 jobs print the same ``--json`` report."""
    clones = 4
    policy, files = _recording(tmp_path, clones=clones)
    report = _same(_runs(policy, files, "--decision-wait", "3"))
    data = report["input"]
    assert isinstance(data, dict)
    assert data["traces"] > clones * 6  # decided before their later spans arrived
    # none evicted: the conflicting trace, and the one that lost its span with an empty id
    assert data["incomplete_traces"] == data["conflicting_traces"] + 1


def _mixed(files: list[Path]) -> list[Path]:
    """The shuffled files as gzip JSON, protobuf (garbage lines as messages that are not
    requests, a truncated message at the end) and zstd JSON."""
    first, second, third = files
    zipped = first.with_suffix(".jsonl.gz")
    zipped.write_bytes(gzip.compress(first.read_bytes()))
    messages = []
    for line in second.read_text().splitlines():
        body = line.encode() if line in GARBAGE else request_from_json(line).SerializeToString()
        messages.append(struct.pack(">I", len(body)) + body)
    proto = second.with_suffix(".pb")
    proto.write_bytes(b"".join(messages) + struct.pack(">I", 99) + b"cut")
    packed = third.with_suffix(".jsonl.zst")
    packed.write_bytes(zstandard.ZstdCompressor().compress(third.read_bytes()))
    return [zipped, proto, packed]


@pytest.mark.parametrize("limits", [{}, {"decision_wait": 4, "max_traces": 3, "max_findings": 2}])
def test_protobuf_and_compressed_files_merge_into_the_single_replay(
    tmp_path: Path, limits: dict[str, int]
) -> None:
    """Over gzip and zstd JSON files and a protobuf file with unreadable and truncated
    messages, the shares of 2 and 3 workers (split and replayed in this process) merge into one
    replay's report, also under small limits."""
    policy, files = _recording(tmp_path, clones=3)
    job = parallel.ReplayJob(tuple(map(str, _mixed(files))), str(policy), **limits)
    gate = Gate()

    def printed(results: list[parallel.ShareResult]) -> str:
        stats, bad = parallel.merge(results, job)
        return render_json(build_report(stats, bad, gate, capture_content=False))

    alone = printed([parallel.replay_share(job)])
    locations = json.loads(alone)["input"]["unreadable_locations"]
    assert sum("truncated message (3/99 bytes)" in item for item in locations) == 1
    for count in (2, 3):
        assert (
            printed([parallel.replay_share(job, index, count) for index in range(count)]) == alone
        )


def _parts(path: Path, parts: int) -> list[list[bytes]]:
    """``path``'s non-blank lines, by the byte range (of ``parts`` equal ones) each starts in."""
    data = path.read_bytes()
    lines: list[list[bytes]] = [[] for _ in range(parts)]
    at = 0
    for line in data.splitlines(keepends=True):
        if line.strip():
            part = next(p for p in range(parts) if at < len(data) * (p + 1) // parts)
            lines[part].append(line.strip())
        at += len(line)
    return lines


def test_mixed_files_replay_the_same_for_any_jobs(tmp_path: Path) -> None:
    """Through the real command, gzip and zstd JSON lines and a protobuf file that every share
    reads itself, under an evicting buffer: 1, 2 and 3 jobs print the same report."""
    policy, files = _recording(tmp_path, clones=3)
    report = _same(_runs(policy, _mixed(files), "--max-traces", "3"))
    data = report["input"]
    assert isinstance(data, dict)
    assert data["unreadable"] > 0  # the garbage messages and the cut one, told once


def test_a_protobuf_file_is_read_by_every_share_not_spilled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An uncompressed protobuf file is only marked in the spill (``Direct``); each share
    parses its messages and reads whole just the spans it keeps (worker 0 also those with bad
    ids), every other span as its trace id: over the shares, each span read whole once (a bad
    one with a usable trace id: also by its trace's owner)."""
    policy, files = _recording(tmp_path, clones=2)
    proto = tmp_path / "all.pb"  # every file's requests (the bad spans among them)
    lines = [line for path in files for line in path.read_text().splitlines()]
    bodies = [request_from_json(line).SerializeToString() for line in lines if line not in GARBAGE]
    proto.write_bytes(b"".join(struct.pack(">I", len(body)) + body for body in bodies))
    job = parallel.ReplayJob((str(proto),), str(policy))
    for index in range(2):
        split.split(job, index, 2, tmp_path)
    with split.spill_name(tmp_path, 1, 0).open("rb") as spill:
        assert pickle.load(spill) == [split.Direct(0, proto.stat().st_size)]
        assert pickle.load(spill) == 0  # nothing framed round robin
    alone = [span for _, batch in located_requests([proto], []) for span in proto_spans(batch)]  # type: ignore[arg-type]
    read = [0]
    real = records.proto_span

    def counted(*args: object) -> object:
        read[0] += 1
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(records, "proto_span", counted)
    whole = []
    for index in range(2):
        read[0] = 0
        items = [
            item
            for _, request in split.Spilled(job, tmp_path, index, 2).requests([])
            for item in request
        ]
        kept = [item for item in items if not isinstance(item, bytes)]
        assert read[0] == len(kept)  # no other span read whole
        assert all(split.owner(span.trace_id, 2) == index for span in kept if not bad_ids(span))
        assert {split.owner(item, 2) for item in items if isinstance(item, bytes)} == {1 - index}
        whole += kept
    # a span with bad ids is read whole by worker 0 (which tells it) and, when its trace id is
    # usable, by its trace's owner too (which marks that trace incomplete)
    lost = [
        span
        for span in alone
        if bad_ids(span) and records.lost_from(span.trace_id) and split.owner(span.trace_id, 2)
    ]
    assert sorted(map(repr, whole)) == sorted(map(repr, alone + lost))
    assert any(bad_ids(span) for span in alone)


def test_a_protobuf_file_that_changed_after_the_split_fails_the_replay(tmp_path: Path) -> None:
    """A protobuf file every share reads itself that is not the size it was when split fails
    the share's reading with ``InputChanged``."""
    policy, files = _recording(tmp_path, clones=1)
    proto = _mixed(files)[1]
    job = parallel.ReplayJob((str(proto),), str(policy))
    for index in range(2):
        split.split(job, index, 2, tmp_path)
    proto.write_bytes(proto.read_bytes()[:-7])  # the cut message at its end, cut shorter
    with pytest.raises(split.InputChanged):
        list(split.Spilled(job, tmp_path, 1, 2).requests([]))


def test_every_line_is_decoded_by_exactly_one_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Splitting for 3 workers decodes each readable or unreadable line once over all three:
    worker ``k`` the lines that start in the ``k``-th third of each file's bytes (it frames no
    other), in order."""
    policy, files = _recording(tmp_path, clones=2)
    job = parallel.ReplayJob(tuple(map(str, files)), str(policy))
    decoded: dict[int, list[bytes]] = {0: [], 1: [], 2: []}
    worker = [0]
    real = split.decode_unit

    def counted(unit: split.Unit, bad: object, limit: int) -> object:
        decoded[worker[0]].append(unit.body)
        return real(unit, bad, limit)  # type: ignore[arg-type]

    monkeypatch.setattr(split, "decode_unit", counted)
    for index in range(3):
        worker[0] = index
        assert split.split(job, index, 3, tmp_path) == 0  # nothing framed round robin
    thirds = [_parts(path, 3) for path in files]
    assert all(third for parts in thirds for third in parts)  # every worker has lines of each
    for index in range(3):
        assert decoded[index] == [where for parts in thirds for where in parts[index]]


@pytest.mark.parametrize("parts", [2, 3, 7, 0])
def test_the_byte_ranges_of_a_file_frame_every_line_once(tmp_path: Path, parts: int) -> None:
    """A JSON lines file cut into byte ranges yields every line once, as one reading of the
    whole file locates and refuses it, numbered from each part's first line (the parts before
    it tell how many lines they had); 0: as many ranges as bytes, so that a range starts at
    every byte (a line's start, inside one, between the ``\\r`` and ``\\n`` of one, in blank
    lines, inside an oversize line)."""
    recording = tmp_path / "cut.jsonl"
    lines = [b'{"a":1}', b"", b'{"bb":2}\r', b"  ", b"x" * 300, b'{"c":3}', b'{"d":4}']
    recording.write_bytes(b"\n".join(lines) + b"\n")
    assert otlp_files.plain_file(recording) == ("json", recording.stat().st_size)
    size = recording.stat().st_size
    parts = parts or size

    def framed(units: Iterable[otlp_files.Unit], bad: list[BadInput], before: int) -> list[str]:
        """Each line's location (its number moved on by ``before``) and body; then what was
        told, alike."""
        path = f"{recording}:"
        return [f"{path}{int(u.location[len(path) :]) + before} {u.body!r}" for u in units] + [
            f"{path}{int(b.location[len(path) :]) + before} {b.problem}" for b in bad
        ]

    alone: list[BadInput] = []
    whole = framed(otlp_files.located_units([recording], alone, max_line_bytes=200), alone, 0)
    cut: list[str] = []
    before = 0  # the lines of the parts before
    for index in range(parts):
        told: list[BadInput] = []
        part = otlp_files.JsonPart(recording, size, index, parts, told, max_line_bytes=200)
        cut += framed(part, told, before)
        before += part.lines
    assert before == len(lines)
    assert sorted(cut) == sorted(whole)
    assert len(cut) == 5  # four lines to decode and the oversize one, told


def test_a_spill_holds_bounded_chunks_and_ends_with_its_count(tmp_path: Path) -> None:
    """A worker's spill file is a stream of chunks of at most ``_CHUNK_ITEMS`` records (never
    the whole input as one list): for each file split by bytes, its start, one record per line
    of the worker's part, its end; then the count of items framed round robin (none here)."""
    policy, files = _recording(tmp_path, clones=150)
    job = parallel.ReplayJob(tuple(map(str, files)), str(policy))
    assert split.split(job, 1, 2, tmp_path) == 0
    chunks = []
    with split.spill_name(tmp_path, 1, 0).open("rb") as spill:
        while not isinstance(chunk := pickle.load(spill), int):
            chunks.append(chunk)
    assert chunk == 0
    assert len(chunks) > 1
    assert max(len(chunk) for chunk in chunks) <= split._CHUNK_ITEMS
    records = [record for chunk in chunks for record in chunk]
    starts = [record for record in records if isinstance(record, split.Part) and record.size >= 0]
    assert starts == [split.Part(path.stat().st_size) for path in files]
    ends = [record for record in records if isinstance(record, split.PartEnd)]
    second = []  # the lines (blank ones too) that start in each file's second half
    for path in files:
        data = path.read_bytes()
        starts = [0] + [at + 1 for at in range(len(data) - 1) if data[at] == ord("\n")]
        second.append(sum(start >= len(data) // 2 for start in starts))
    assert ends == [split.PartEnd(lines) for lines in second]
    assert len(records) == sum(len(_parts(path, 2)[1]) + 2 for path in files)


def test_a_share_reads_other_workers_spans_as_their_trace_ids(tmp_path: Path) -> None:
    """Read back from the spill, worker 0's requests hold its own spans whole and every other
    worker's span as its bare trace id (all it needs to time that trace), in input order: as
    many items as one process reads spans, owned by exactly the workers ``owner`` names."""
    policy, files = _recording(tmp_path, clones=3)
    job = parallel.ReplayJob(tuple(map(str, files)), str(policy))
    for index in range(2):
        split.split(job, index, 2, tmp_path)
    alone = [span for _, batch in located_requests(files, []) for span in batch]
    items = [
        item for _, request in split.Spilled(job, tmp_path, 0, 2).requests([]) for item in request
    ]
    assert len(items) == len(alone)
    own = [item for item in items if not isinstance(item, bytes)]
    others = [item for item in items if isinstance(item, bytes)]
    assert others
    assert own
    assert {split.owner(trace_id, 2) for trace_id in others} == {1}
    assert {split.owner(span.trace_id, 2) for span in own if bad_ids(span) is None} == {0}
    assert [item if isinstance(item, bytes) else item.trace_id for item in items] == [
        span.trace_id for span in alone
    ]
    bad = [span for span in alone if bad_ids(span) is not None]  # worker 0 tells them: whole
    assert [span for span in own if bad_ids(span) is not None] == bad


def test_a_file_that_grows_while_a_worker_splits_it_fails_the_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file split by bytes that is not the size it was when its split began (a recorder
    still appending) fails the split with ``InputChanged``: one process would read more."""
    policy, files = _recording(tmp_path, clones=1)
    job = parallel.ReplayJob(tuple(map(str, files)), str(policy))
    sized = split.plain_file

    def grown_after(path: Path, format: str = "auto") -> tuple[str, int] | None:
        size = sized(path, format)
        with path.open("ab") as out:
            out.write(path.read_bytes().splitlines(keepends=True)[0])
        return size

    monkeypatch.setattr(split, "plain_file", grown_after)
    with pytest.raises(split.InputChanged) as raised:
        split.split(job, 1, 2, tmp_path)
    assert str(raised.value) == (
        "the input changed while it was read (the workers read different lines or messages): "
        "no report"
    )


def test_a_spilled_request_carries_its_location_only_to_tell_a_bad_span(tmp_path: Path) -> None:
    """Worker 0 reads back the location of each request that has a span with bad ids (it tells
    that span, located); no other request's location is spilled (nothing reads it)."""
    policy, files = _recording(tmp_path, clones=2)
    job = parallel.ReplayJob(tuple(map(str, files)), str(policy))
    for index in range(2):
        split.split(job, index, 2, tmp_path)
    requests = list(located_requests(files, []))
    told = [where for where, batch in requests if any(bad_ids(span) for span in batch)]
    assert len(told) == 3  # the recording's three bad spans, each in its own request
    first = [where for where, _ in split.Spilled(job, tmp_path, 0, 2).requests([])]
    assert len(first) == len(requests)
    assert [where for where in first if where] == told
    assert {where for where, _ in split.Spilled(job, tmp_path, 1, 2).requests([])} == {""}


@pytest.mark.parametrize("grown_before", [0, 1])
def test_input_that_changed_between_workers_fails_the_replay(
    tmp_path: Path, grown_before: int
) -> None:
    """When one worker framed more lines than another (the file grew while it was read; the
    worker that framed more comes first or last), reading the spill back raises
    ``InputChanged``: no report from mismatched shares."""
    policy, files = _recording(tmp_path, clones=2)
    job = parallel.ReplayJob(tuple(map(str, files)), str(policy))
    split.split(job, 1 - grown_before, 2, tmp_path)
    files[-1].write_text(files[-1].read_text() + files[0].read_text())
    split.split(job, grown_before, 2, tmp_path)
    with pytest.raises(split.InputChanged) as raised:
        list(split.Spilled(job, tmp_path, 0, 2).requests([]))
    assert str(raised.value) == (
        "the input changed while it was read (the workers read different lines or messages): "
        "no report"
    )


def test_a_parallel_replay_removes_its_spill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A 2-job replay spills into one folder of the temporary directory, removed when it ends
    (also when a worker failed)."""
    policy, files = _recording(tmp_path, clones=2)
    spills = tmp_path / "tmp"
    spills.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(spills))
    seen: list[Path] = []

    def progress(fraction: float, spans: int, traces: int) -> None:
        seen.extend(spills.glob("groundplane-replay-*"))

    job = parallel.ReplayJob(tuple(map(str, files)), str(policy))
    stats, _ = parallel.replay(job, 2, progress=progress)
    assert stats.traces == 12
    assert len(set(seen)) == 1  # the spill, there while the workers ran
    assert list(spills.glob("groundplane-replay-*")) == []
    broken = parallel.ReplayJob(tuple(map(str, files)), str(policy), max_spans_per_trace=None)  # type: ignore[arg-type]
    with pytest.raises(parallel.WorkerFailed):
        parallel.replay(broken, 2)
    assert list(spills.glob("groundplane-replay-*")) == []


def test_a_parallel_replay_tells_each_workers_cpu_time(tmp_path: Path) -> None:
    """``replay(cpu=...)`` gets one (split, replay) pair of CPU seconds per worker, in worker
    order, each part measured (above zero) for a replay that reads and decides traces."""
    policy, files = _recording(tmp_path, clones=2)
    cpu: list[tuple[float, float]] = []
    stats, _ = parallel.replay(parallel.ReplayJob(tuple(map(str, files)), str(policy)), 2, cpu=cpu)
    assert stats.traces == 12
    assert len(cpu) == 2
    assert all(splitting > 0 and replaying > 0 for splitting, replaying in cpu)


def test_every_worker_decides_by_the_policy_the_command_read(tmp_path: Path) -> None:
    """The policy is read once, by the command, and sent to every worker: a policy file gone
    (or rewritten) once the command has read it changes nothing; without a config, an invalid
    policy fails the replay before any worker starts (a usage error, named)."""
    policy, files = _recording(tmp_path, clones=2)
    job = parallel.ReplayJob(tuple(map(str, files)), str(policy))
    alone, _ = parallel.replay(job, 1)
    config = parallel.load_config(str(policy))
    policy.unlink()
    stats, _ = parallel.replay(job, 2, config=config)
    assert (stats.traces, stats.findings) == (alone.traces, alone.findings)
    assert stats.traces == 12
    with pytest.raises(ValueError) as raised:
        parallel.replay(job, 2)
    assert str(raised.value) == (
        f"invalid policy: {policy}: <top level>: cannot read the policy file (No such file or "
        "directory). Fix: check the path (GROUNDPLANE_POLICY, if set from the environment)"
    )


def test_a_policy_that_cannot_reach_the_workers_is_a_usage_error(tmp_path: Path) -> None:
    """A policy built in code that pickle cannot carry to a worker (a lambda in a fact's
    arguments) fails a parallel replay before any worker starts, with a ValueError that says
    so (capped) and what to do; one process replays it."""
    policy, files = _recording(tmp_path, clones=1)
    job = parallel.ReplayJob(tuple(map(str, files)), str(policy))
    loaded = parallel.load_config(str(policy))
    fact = dataclasses.replace(loaded.facts[0], arguments={"made": lambda: 0})
    config = dataclasses.replace(loaded, facts=(fact,))
    with pytest.raises(ValueError) as raised:
        parallel.replay(job, 2, config=config)
    message = str(raised.value)
    assert message.startswith("the policy cannot be sent to the worker processes (Can't pickle ")
    assert message.endswith("): replay it in one process (jobs 1)")
    assert len(message) < 220
    stats, _ = parallel.replay(job, 1, config=config)
    assert stats.traces == 6
