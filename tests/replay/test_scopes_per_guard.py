"""``enforce()`` scopes belong to the guards they wait for: a replay in the same process and
thread as a live guard with an open scope neither hands its refusals to that scope nor sees it,
and a second guard does not hand its refusals to a scope entered for the first."""

from __future__ import annotations

from pathlib import Path

import pytest
from otel_harness import SALES_ROWS, Harness, answer, sales_config
from replay_recording import CONFIG, live_and_recorded

from groundplane_otel.errors import ClaimsUnsupported, FactBoundaryError
from groundplane_otel.otel._live.handoff import Handoff
from groundplane_otel.otel.otlp_files import BadInput, read_requests
from groundplane_otel.otel.replay import Replayer
from groundplane_otel.otel.scope import enforce

BLOCKED = {("answer", "passed"): 4, ("answer", "blocked"): 1, ("answer", "error"): 2}


def replayed(path: Path) -> Replayer:
    """The recording replayed here, in this thread (its one wrong answer refused)."""
    replayer = Replayer(CONFIG)
    bad: list[BadInput] = []
    for request in read_requests([path], bad):
        replayer.feed(request)
    replayer.finish()
    assert bad == []
    return replayer


def wrong_turn(otel: Harness) -> None:
    with otel.agent():
        otel.tool(SALES_ROWS)
        otel.chat(answer({"winner": "US"}))


def test_a_replay_refusal_never_reaches_the_live_scope(tmp_path: Path) -> None:
    """A deferring scope of the live guard is open around a replay: the replay refuses its
    wrong answer on its own (counted blocked) and the scope exits with nothing to raise."""
    live, path = live_and_recorded(tmp_path)
    (guard,) = live.guards
    with enforce(defer=True):
        replayer = replayed(path)
        assert replayer.counts()["outputs"] == BLOCKED
        (state,) = guard.processor.handoff.current_scopes()
        assert state.pending == []  # the live scope saw nothing of the replay
        # the engine is driven directly: the replay holds no enforce() scopes of its own
        assert not any(isinstance(part, Handoff) for part in vars(replayer).values())
    replayer.close()


def test_a_replay_never_sees_the_live_scope_waiting_for_a_refusal(tmp_path: Path) -> None:
    """The reverse: the live guard's refusal waits in its scope while a replay runs; the replay
    refuses its own answer (not deferred to the live scope), and the scope raises exactly the
    live refusal on exit."""
    live, path = live_and_recorded(tmp_path)
    (guard,) = live.guards
    seen: dict[str, object] = {}

    @enforce(defer=True)
    def scope() -> None:
        wrong_turn(live)  # deferred: the scope raises it
        (state,) = guard.processor.handoff.current_scopes()
        (seen["waiting"],) = state.pending
        replayer = replayed(path)
        assert replayer.counts()["outputs"] == BLOCKED
        assert state.pending == [seen["waiting"]]  # nothing of the replay joined it
        replayer.close()

    with pytest.raises(ClaimsUnsupported) as raised:
        scope()
    assert raised.value is seen["waiting"]


def test_a_second_guard_does_not_hand_its_refusal_to_the_first_guards_scope() -> None:
    """Two guards on two providers; a scope entered for the first: the second guard's refusal
    is raised at its own span end, the first guard's scope exits with nothing."""
    first, second = Harness(), Harness()
    guard = first.install(sales_config())
    second.install(sales_config())
    with enforce(defer=True, guard=guard):
        with pytest.raises(FactBoundaryError):
            wrong_turn(second)
        (state,) = guard.processor.handoff.current_scopes()
        assert state.pending == []
    with pytest.raises(ClaimsUnsupported):  # the first guard's own refusal reaches its scope
        enforce(defer=True, guard=guard)(wrong_turn)(first)
    first.close()
    second.close()
