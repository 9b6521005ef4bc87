"""``Replayer``'s public decision hook, the one the verifier uses: every decided trace reaches
``around_decision`` as a ``TraceToDecide`` to run, and ``decide(trace_id)`` decides one now."""

from __future__ import annotations

from pathlib import Path

from replay_recording import CONFIG, live_and_recorded

from groundplane_otel.otel.otlp_files import BadInput, read_requests
from groundplane_otel.otel.replay import Replayer, TraceToDecide


def test_every_decision_goes_through_the_hook_and_decide_takes_one_now(tmp_path: Path) -> None:
    """The hook sees each trace once, with its span count, before it is decided (its outputs
    are counted only once ``run()`` ran); ``decide`` decides a buffered trace at once and
    answers False for one not buffered; a trace the buffer had to give up is incomplete."""
    _, path = live_and_recorded(tmp_path)
    seen: list[TraceToDecide] = []
    outputs_before: list[int] = []

    def around(decision: TraceToDecide) -> None:
        seen.append(decision)
        outputs_before.append(sum(replayer.stats.outputs.values()))
        decision.run()

    replayer = Replayer(CONFIG, max_traces=5, around_decision=around)
    bad: list[BadInput] = []
    requests = list(read_requests([path], bad))
    for request in requests:
        replayer.feed(request)
    assert bad == []
    assert [decision.incomplete for decision in seen] == [True]  # six traces, room for five
    last = requests[-1][0].trace_id
    assert replayer.decide(last) is True
    assert replayer.decide(last) is False
    assert replayer.decide(b"\x01" * 16) is False
    assert seen[-1].trace_id == last
    assert seen[-1].incomplete is False
    replayer.finish()
    assert len(seen) == replayer.stats.traces == 6
    assert sum(decision.spans for decision in seen) == replayer.stats.spans == 19
    assert outputs_before[0] == 0
    assert replayer.counts()["outputs"] == {
        ("answer", "passed"): 4,
        ("answer", "blocked"): 1,
        ("answer", "error"): 2,
    }


def test_a_decision_runs_once(tmp_path: Path) -> None:
    """A hook that calls ``run()`` twice gets a RuntimeError naming the trace, and the trace's
    outputs are counted once."""
    _, path = live_and_recorded(tmp_path)
    errors: list[str] = []

    order: list[bytes] = []

    def twice(decision: TraceToDecide) -> None:
        order.append(decision.trace_id)
        decision.run()
        try:
            decision.run()
        except RuntimeError as exc:
            errors.append(str(exc))

    replayer = Replayer(CONFIG, around_decision=twice)
    for request in read_requests([path], []):
        replayer.feed(request)
    replayer.finish()
    assert len(errors) == replayer.stats.traces == 6
    assert errors == [f"trace {trace.hex()} was already decided" for trace in order]
    assert sum(replayer.stats.outputs.values()) == 7
