"""``replay --jobs``' default: workers only where they pay for their start-up."""

from __future__ import annotations

from pathlib import Path

from groundplane_otel.otel.replay import parallel


def test_small_inputs_replay_in_one_process_and_large_ones_on_every_core(tmp_path: Path) -> None:
    """Files under ``AUTO_JOBS_MIN_BYTES`` in all (or that cannot be sized) give 1 job; files
    reaching it together give the cores this process may use."""
    small = tmp_path / "small.jsonl"
    small.write_bytes(b"{}\n")
    assert parallel.default_jobs([str(small), str(tmp_path / "missing.jsonl")]) == 1
    half = parallel.AUTO_JOBS_MIN_BYTES // 2
    first, second = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    for path in (first, second):
        with path.open("wb") as stream:  # sparse: sized, not written
            stream.truncate(half)
    assert parallel.default_jobs([str(first)]) == 1
    assert parallel.default_jobs([str(first), str(second)]) == parallel.cores()
    assert parallel.cores() >= 1
