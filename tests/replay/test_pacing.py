"""Progress is told a few times a second, not after every request (``replay.pacing``): finding
where the reading is costs a system call."""

from __future__ import annotations

from pathlib import Path

import pytest
from replay_recording import POLICY, live_and_recorded

from groundplane_otel.otel.replay import pacing, parallel, share
from groundplane_otel.otel.replay.pacing import TELL_EVERY_S, Pacer


def test_a_pacer_is_due_at_once_then_once_per_interval(monkeypatch: pytest.MonkeyPatch) -> None:
    now = [100.0]
    monkeypatch.setattr(pacing.time, "monotonic", lambda: now[0])
    pacer = Pacer()
    assert pacer.due()
    assert not pacer.due()
    now[0] += TELL_EVERY_S / 2
    assert not pacer.due()
    now[0] += TELL_EVERY_S / 2
    assert pacer.due()
    assert not pacer.due()


def test_a_replay_tells_progress_paced_and_its_totals_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With the clock standing still, a replay of many requests tells its progress once while
    reading (the first request), not once per request; the command's last word (``_told``)
    still carries the totals."""
    _, path = live_and_recorded(tmp_path)
    policy = path.parent / "policy.yaml"
    policy.write_text(POLICY)
    monkeypatch.setattr(pacing.time, "monotonic", lambda: 5.0)
    told: list[tuple[float, int, int]] = []
    job = share.ReplayJob((str(path),), str(policy))
    stats, _ = parallel.replay(job, 1, progress=lambda *args: told.append(args))
    requests = len([line for line in path.read_text().splitlines() if line.strip()])
    assert requests > 2
    assert len(told) == 2  # paced: once while reading, then the totals
    assert told[-1] == (1.0, stats.spans, stats.traces)
