"""``groundplane-otel replay --jobs N``: traces shared out by trace id over worker processes,
the merged report byte for byte the one process's, and a worker that fails or dies failing
the run loudly (issue 21)."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import zlib
from collections.abc import Sequence
from pathlib import Path

import pytest
from replay_recording import POLICY, live_and_recorded
from shuffled_recording import BAD_SPANS, GARBAGE, shuffled

from groundplane_otel.cli import main
from groundplane_otel.otel.replay import parallel
from groundplane_otel.otel.replay.report import Gate, build_report, render_json

STRESS = ("--decision-wait", "7", "--max-traces", "4", "--max-findings", "3")
STRESS += ("--max-unreadable-shown", "2")


def _recording(tmp_path: Path, *, clones: int, seed: int = 1) -> tuple[Path, list[Path]]:
    _, path = live_and_recorded(tmp_path)
    lines = path.read_text().splitlines()
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    folder = tmp_path / "shuffled"
    folder.mkdir()
    return policy, shuffled(lines, folder, clones=clones, seed=seed)


def _command(policy: Path, files: Sequence[Path], *args: str) -> list[str]:
    return [
        sys.executable,
        "-m",
        "groundplane_otel.cli",
        "replay",
        "--policy",
        str(policy),
        *map(str, files),
        *args,
    ]


def _cli(policy: Path, files: Sequence[Path], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _command(policy, files, *args), capture_output=True, text=True, timeout=300, check=False
    )


def test_jobs_1_2_and_3_print_the_same_report_byte_for_byte(tmp_path: Path) -> None:
    """Over a shuffled three-file recording (traces split over files and lines, right and wrong
    answers, unreadable lines and spans, a duplicate, a conflicting trace), the real command
    prints the same text and ``--json`` reports, with the same exit code, for 1, 2 and 3 jobs —
    also with a small buffer, decision wait and report limits, and with receipts."""
    clones = 6
    policy, files = _recording(tmp_path, clones=clones)
    for options in [("--json",), (), ("--json", *STRESS), (*STRESS, "--capture-content")]:
        runs = [_cli(policy, files, "--quiet", "--jobs", str(jobs), *options) for jobs in (1, 2, 3)]
        assert [run.returncode for run in runs] == [1, 1, 1], runs[0].stderr
        assert runs[0].stderr == runs[1].stderr == runs[2].stderr == ""
        assert runs[0].stdout == runs[1].stdout == runs[2].stdout
        if options == ("--json",):
            report = json.loads(runs[0].stdout)
            data = report["input"]
            spans = clones * 19 + 2 + len(BAD_SPANS)
            assert (data["spans"], data["bad_spans"], data["traces"]) == (spans, 3, clones * 6)
            assert (data["duplicate_spans"], data["conflicting_traces"]) == (1, 1)
            assert data["unreadable"] == len(GARBAGE) + len(BAD_SPANS) + 1
            assert len(data["unreadable_locations"]) == 6
            outcomes = {"passed": 4 * clones - 1, "blocked": clones, "error": 2 * clones}
            assert report["boundaries"]["answer"]["outcomes"] == outcomes
            assert len(report["findings"]) == 3 * clones
        if options == ("--json", *STRESS):
            report = json.loads(runs[0].stdout)
            data = report["input"]
            assert len(report["findings"]) == 3
            assert report["findings_left_out"] > 3 * clones  # traces decided in pieces
            assert data["traces"] > clones * 6
            assert len(data["unreadable_locations"]) == 2  # of 5 (6 if the conflict meets)
            assert data["unreadable_left_out"] == data["unreadable"] - 2 >= 3


LIMITS = {
    "small": {"decision_wait": 5, "max_traces": 3, "max_findings": 4, "max_unreadable_shown": 3},
    "at the end": {"decision_wait": 10**9},  # every trace decided at the end: one position
    "mid-stream": {"decision_wait": 12},  # many traces due at once, after one request
}


@pytest.mark.parametrize("limits", LIMITS)
@pytest.mark.parametrize("seed", range(8))
def test_merged_shares_are_the_single_replay_in_process(
    tmp_path: Path, seed: int, limits: str
) -> None:
    """For random shuffles, the shares of 2 and 3 workers (run in this process) merge into the
    report of one replay of everything: under a small buffer and small report limits, with
    every trace decided at the end, and with many traces decided at once mid-stream."""
    policy, files = _recording(tmp_path, clones=3, seed=seed)
    job = parallel.ReplayJob(tuple(map(str, files)), str(policy), **LIMITS[limits])
    gate = Gate()

    def printed(results: list[parallel.ShareResult]) -> str:
        stats, bad = parallel.merge(results, job)
        return render_json(build_report(stats, bad, gate, capture_content=False))

    alone = printed([parallel.replay_share(job)])
    assert json.loads(alone)["input"]["unreadable"] in (5, 6)  # 6 when the conflict meets
    for count in (2, 3):
        shares = [parallel.replay_share(job, index, count) for index in range(count)]
        assert printed(shares) == alone
        assert sum(share.stats.requests > 0 for share in shares) == 1


def test_an_early_conflict_stays_before_the_bad_span_read_after_it(tmp_path: Path) -> None:
    """A conflicting trace of worker 1, decided early (the buffer is full) while one request is
    read, and a bad span later in that request (worker 0's to tell) are located in the order a
    single replay reads them, though both are noted at the same input position."""
    _, path = live_and_recorded(tmp_path)
    tree = json.loads(path.read_text().splitlines()[0])
    span = tree["resourceSpans"][0]["scopeSpans"][0]["spans"][0]
    first = next(
        f"{number:032x}"
        for number in range(1, 100)
        if zlib.crc32(bytes.fromhex(f"{number:032x}")) % 2 == 1
    )

    def line(*spans: dict[str, str]) -> str:
        tree["resourceSpans"][0]["scopeSpans"][0]["spans"] = [{**span, **s} for s in spans]
        return json.dumps(tree)

    recording = tmp_path / "early.jsonl"
    recording.write_text(
        "\n".join(
            [
                line({"traceId": first}),
                line({"traceId": first, "name": "another span, same id"}),
                line({"traceId": "ab" * 16}, {"spanId": ""}),
            ]
        )
        + "\n"
    )
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    job = parallel.ReplayJob((str(recording),), str(policy), max_traces=1)
    expected = [
        f"trace {first}: span id {span['spanId']} used by 2 different spans: trace not decided",
        f"{recording}:3 span 1 'execute_tool top_sales': invalid span id (0 bytes, need 8, not "
        "all zero)",
    ]
    for count in (1, 2):
        _, bad = parallel.merge([parallel.replay_share(job, i, count) for i in range(count)], job)
        assert [str(item) for item in bad.kept] == expected


def test_every_trace_id_has_exactly_one_share() -> None:
    """Each trace id is owned by exactly one of N shares, and input of no trace by share 0."""
    ids = [os.urandom(16) for _ in range(300)] + [b"", b"\x00" * 16, b"cd"]
    for count in (1, 2, 3, 5):
        shares = [parallel.Share(index, count) for index in range(count)]
        assert all(sum(share(trace_id) for share in shares) == 1 for trace_id in ids)
        assert [share(b"") for share in shares] == [True] + [False] * (count - 1)


def test_a_parallel_replay_reports_its_final_progress(tmp_path: Path) -> None:
    """With 2 workers, the last progress told is the whole input read and the merged spans and
    traces decided."""
    policy, files = _recording(tmp_path, clones=2)
    told: list[tuple[float, int, int]] = []
    job = parallel.ReplayJob(tuple(map(str, files)), str(policy))
    stats, _ = parallel.replay(job, 2, progress=lambda *args: told.append(args))
    assert told[-1] == (1.0, stats.spans, stats.traces)
    assert stats.traces == 12


def test_a_worker_that_raises_fails_the_run_naming_it(tmp_path: Path) -> None:
    """A worker whose replay raises fails the whole run with ``WorkerFailed`` naming the worker
    and the error; no report is returned."""
    policy, files = _recording(tmp_path, clones=2)
    job = parallel.ReplayJob(
        tuple(map(str, files)),
        str(policy),
        max_spans_per_trace=None,  # type: ignore[arg-type]
    )
    with pytest.raises(parallel.WorkerFailed) as raised:
        parallel.replay(job, 2)
    assert str(raised.value) in {
        f"replay worker {index} of 2 failed: TypeError: '>=' not supported between instances "
        "of 'int' and 'NoneType': no report"
        for index in (0, 1)
    }


def test_a_missing_file_is_a_usage_error_with_any_jobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A missing input file exits 2 with the same message for 1 and 2 jobs; ``--jobs 0`` is a
    usage error."""
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    missing = tmp_path / "missing.jsonl"
    for jobs in ("1", "2"):
        assert main(["replay", "--policy", str(policy), "--jobs", jobs, str(missing)]) == 2
        assert capsys.readouterr().err == f"groundplane-otel: {missing}: no such file\n"
    with pytest.raises(SystemExit) as usage:
        main(["replay", "--policy", str(policy), "--jobs", "0", str(missing)])
    assert usage.value.code == 2
    assert "argument --jobs: must be a whole number >= 1, got '0'" in capsys.readouterr().err


def _processes() -> list[tuple[int, int, int, bytes]]:
    """Every process: (start time, pid, parent pid, command line)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        found.append((int(fields[19]), int(entry.name), int(fields[1]), command))
    return sorted(found)


def _workers(parent: int) -> list[int]:
    """The parent's replay workers, oldest first: the children of its fork server (or, with
    ``spawn``, its own ``spawn_main`` children)."""
    processes = _processes()
    servers = {pid for _, pid, ppid, cmd in processes if ppid == parent and b"forkserver" in cmd}
    return [
        pid
        for _, pid, ppid, cmd in processes
        if ppid in servers or (ppid == parent and b"spawn_main" in cmd)
    ]


def _started(
    tmp_path: Path, clones: int = 1_500, temp: Path | None = None
) -> tuple[subprocess.Popen[str], list[int]]:
    """A 2-worker replay of a recording big enough to run for seconds, and its workers
    (``temp``: the command's TMPDIR, where its spill folder goes). ``clones=1_500``: with 300 the
    whole 2-worker run now takes only ~1.2 s, start-up included, too little margin on a loaded
    machine for the workers to be held before they finish."""
    policy, files = _recording(tmp_path, clones=clones)
    # Started with Ctrl-C at its default even when this process ignores SIGINT (as a
    # background job of a non-interactive shell does): an ignored signal is inherited, a
    # handler is not.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        process = subprocess.Popen(
            _command(policy, files, "--jobs", "2"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=None if temp is None else {**os.environ, "TMPDIR": str(temp)},
        )
    finally:
        signal.signal(signal.SIGINT, previous)
    deadline = time.monotonic() + 60
    while len(workers := _workers(process.pid)) < 2:
        assert time.monotonic() < deadline
        assert process.poll() is None
        time.sleep(0.01)
    for pid in workers:  # held mid-replay: the test acts before either can finish
        os.kill(pid, signal.SIGSTOP)
    return process, workers


def _resume(workers: list[int]) -> None:
    """Let the held workers (those still there) run on."""
    for pid in workers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGCONT)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_a_killed_worker_fails_the_run_loudly(tmp_path: Path) -> None:
    """SIGKILL to worker 1 of a running 2-job replay: exit 3, stderr names the worker and the
    signal, nothing on stdout (no partial report), and the other worker is ended."""
    process, workers = _started(tmp_path)
    os.kill(workers[1], signal.SIGKILL)
    _resume(workers[:1])
    out, err = process.communicate(timeout=120)
    assert process.returncode == 3
    assert err == (
        "groundplane-otel: replay worker 1 of 2 died (killed by SIGKILL) before its report: "
        "no report\n"
    )
    assert out == ""
    assert not Path(f"/proc/{workers[0]}").exists()


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_or_ctrl_c_ends_the_workers_and_prints_no_report(
    tmp_path: Path, signum: signal.Signals
) -> None:
    """SIGTERM or SIGINT (Ctrl-C) to a running 2-job replay: exit 128 + the signal number,
    "interrupted: no report" on stderr, nothing on stdout, and both workers are gone."""
    process, workers = _started(tmp_path)
    process.send_signal(signum)
    _resume(workers)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 128 + signum
    assert err == "groundplane-otel: interrupted: no report\n"
    assert out == ""
    assert [pid for pid in workers if _running(pid)] == []


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc")
def test_workers_end_themselves_when_the_command_is_killed(tmp_path: Path) -> None:
    """SIGKILL to the command itself (no chance to clean up): its workers notice their parent
    is gone and exit within seconds instead of replaying for nobody (the recording, ~28,500
    spans, takes each of them far longer), removing the spill folder the command made (the
    fork server's own socket folder is Python's), and print no report."""
    temp = tmp_path / "temp"
    temp.mkdir()
    process, workers = _started(tmp_path, temp=temp)
    spill = [path for path in temp.iterdir() if path.name.startswith("groundplane-replay-")]
    assert len(spill) == 1
    process.kill()
    process.wait(timeout=60)
    _resume(workers)
    deadline = time.monotonic() + 10
    while alive := [pid for pid in workers if _running(pid)]:
        assert time.monotonic() < deadline, alive
        time.sleep(0.1)
    out, _ = process.communicate(timeout=60)
    assert out == ""  # (stderr may hold Python's resource tracker's warning of a semaphore)
    assert not spill[0].exists()


def _running(pid: int) -> bool:
    """``pid`` exists and is not a zombie waiting to be reaped."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def test_the_help_documents_jobs_and_exit_code_3(capsys: pytest.CaptureFixture[str]) -> None:
    """``replay --help`` lists ``--jobs`` and exit code 3 (a failed or killed worker)."""
    with pytest.raises(SystemExit) as exit_info:
        main(["replay", "--help"])
    assert exit_info.value.code == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--jobs N worker processes, each deciding the traces whose id hashes to it" in out
    assert "3 internal failure: a --jobs worker process failed or was killed" in out
