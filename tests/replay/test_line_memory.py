"""A JSON line over ``--max-line-bytes`` costs the process that reads it no memory to speak of
(issue 36): it was read whole up to the limit (twice over, joined), ~130 MB for a line the
default limit refuses. Measured as the peak RSS of the real command in a fresh process, with
one job and with two (the workers' peak), against the same command on the file without it.
A compressed file cannot be read twice cheaply: there the line is held up to the limit, once."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest
from replay_recording import ALLOW_ITS_ERRORS, POLICY, live_and_recorded

LIMIT = 24 * 1024 * 1024  # --max-line-bytes: the old reader held ~2x this for the long line
LINE = 40 * 1024 * 1024
GROWTH_KB = 8 * 1024  # what reading the long line may add to the peak, at most

# The command in a fresh interpreter; then its peak RSS (its own memory's high-water mark:
# ``ru_maxrss`` would keep the test process's, copied at fork, across exec) and its workers'
# (the fork server is stopped: it reaped the workers and is reaped here, so their peak is
# ``RUSAGE_CHILDREN``'s; both forked from small processes).
MEASURE = """
import resource, sys
import multiprocessing.forkserver as forkserver
from groundplane_otel.cli import main

code = main(sys.argv[1:])
if forkserver._forkserver._forkserver_pid is not None:
    forkserver._forkserver._stop()
with open("/proc/self/status") as status:
    own = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
workers = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
print(f"peak {own} {workers}", file=sys.stderr)
sys.exit(code)
"""


def long_line(size: int) -> str:
    span = {
        "traceId": "ab" * 16,
        "spanId": "cd" * 8,
        "name": "big",
        "attributes": [{"key": "blob", "value": {"stringValue": "x" * size}}],
    }
    return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})


def peak(policy: Path, path: Path, jobs: str) -> tuple[int, int, str]:
    """The replay's exit code, the peak RSS (KiB) of the process that read the lines (the
    command with one job, its workers with more), and its report."""
    command = [sys.executable, "-c", MEASURE, "replay", "--policy", str(policy), str(path)]
    command += ["--max-line-bytes", str(LIMIT), "--jobs", jobs, "--quiet", *ALLOW_ITS_ERRORS]
    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
    own, workers = map(int, done.stderr.split("peak ")[1].split())
    return done.returncode, own if jobs == "1" else workers, done.stdout


@pytest.mark.parametrize(
    ("compressed", "jobs", "bound_kb"),
    [(False, "1", GROWTH_KB), (False, "2", GROWTH_KB), (True, "1", LIMIT // 1024 + GROWTH_KB)],
)
def test_a_line_over_the_limit_is_skipped_without_holding_it(
    tmp_path: Path, compressed: bool, jobs: str, bound_kb: int
) -> None:
    _, path = live_and_recorded(tmp_path)
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    lines = path.read_text().splitlines()
    code, without, _ = peak(policy, path, jobs)
    assert code == 0
    text = "\n".join([*lines[:3], long_line(LINE), *lines[3:]]) + "\n"
    if compressed:
        path = path.with_suffix(".jsonl.gz")
        path.write_bytes(gzip.compress(text.encode(), compresslevel=1))
    else:
        path.write_text(text)
    code, holding, report = peak(policy, path, jobs)
    assert code == 1
    assert (
        f"  unreadable {path}:4: line over the size limit of {LIMIT} bytes (--max-line-bytes): "
        "skipped"
    ) in report.splitlines()
    assert holding - without < bound_kb, f"{holding - without} KiB more at the peak"
