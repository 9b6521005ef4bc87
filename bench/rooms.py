"""The rooms a guarded span end walks through: ``python -m bench.rooms [--all]``.

A *room* is a ``groundplane_otel`` module; a *stop* is entering one on the call path (a Python
call from a frame of another room: frames outside the package — the SDK, the standard library —
belong to the room that called them). A stop into a room entered before is a *return* to a room
already left. One representative trace runs under ``sys.setprofile``: an ``invoke_agent`` span >
an ``execute_tool`` span (a Table fact) + a ``chat`` span whose answer names the wrong winner,
enforce mode, the real SDK, the guard from ``groundplane_otel.otel.install``. Each guarded span
end is recorded from the live driver's ``_live/processor._end_watched`` until it returns (the
chat span's raises the refusal; the agent span's then counts nothing: its answer was checked).

Printed per span end: the stops of its whole walk (the driver, its telemetry, the SDK's end),
and those of the engine's decision (``Engine.decide``) among the engine's rooms
(``otel/_engine``; the check core it runs — ``checks/``, ``_runner`` — is the checks' code, not
the engine's), with the rooms returned to. ``--all`` lists every stop. Asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

__all__ = ["Walk", "main", "walks"]

PACKAGE = "groundplane_otel"
ENGINE = "groundplane_otel.otel._engine"
DRIVER = "groundplane_otel.otel._live.processor"


@dataclass(slots=True)
class Walk:
    """The stops of one guarded span end, in order: (room, function, depth of the stack)."""

    span: str
    stops: list[tuple[str, str, int]] = field(default_factory=list)

    decided: tuple[int, int] = (0, 0)  # the stops inside ``Engine.decide``: [start, end)

    def decision(self) -> list[str]:
        """The engine rooms entered inside ``Engine.decide`` (the engine's decision)."""
        start, end = self.decided
        return [room for room, _, _ in self.stops[start:end] if room.startswith(ENGINE)]


def returns(rooms: list[str]) -> list[str]:
    """The stops among ``rooms`` into a room entered before."""
    seen: set[str] = set()
    again = []
    for room in rooms:
        if room in seen:
            again.append(room)
        seen.add(room)
    return again


def _room(frame: FrameType | None) -> str | None:
    while frame is not None:
        name = str(frame.f_globals.get("__name__", ""))
        if name == PACKAGE or name.startswith(PACKAGE + "."):
            return name
        frame = frame.f_back
    return None


def _scenario() -> Callable[[], None]:
    """The trace: its chat span's answer names the wrong winner (refused)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON

    from bench._scenario import make_output, make_rows
    from bench.guard import _answer, _config, _guarded_trace
    from groundplane_otel.otel import install

    provider = TracerProvider(sampler=ALWAYS_ON)
    install(_config(), tracer_provider=provider, meter_provider=MeterProvider())
    rows = make_rows(20)
    right = make_output(rows)
    wrong = {**right, "winner": next(r["region"] for r in rows if r["region"] != right["winner"])}
    return _guarded_trace(provider.get_tracer("bench"), json.dumps({"rows": rows}), _answer(wrong))


def walks() -> tuple[list[Walk], BaseException | None]:
    """Trace every guarded span end of the trace (run once before, untraced, to warm up)."""
    from groundplane_otel.errors import FactBoundaryError

    trace = _scenario()
    with contextlib.suppress(FactBoundaryError):
        trace()
    found: list[Walk] = []
    ends: list[tuple[FrameType, int]] = []  # the _end_watched frames open, at their depth
    depth = 0

    deciding: list[FrameType] = []  # the Engine.decide frame open

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal depth
        if event == "return":
            depth -= 1
            if deciding and frame is deciding[0]:
                deciding.pop()
                found[-1].decided = (found[-1].decided[0], len(found[-1].stops))
            if ends and frame is ends[-1][0]:
                ends.pop()
        elif event == "call":
            depth += 1
            room, caller = _room(frame), _room(frame.f_back)
            name = frame.f_code.co_qualname
            if room == DRIVER and name.endswith("_end_watched") and not ends:
                ends.append((frame, depth))
                found.append(Walk(str(getattr(frame.f_locals.get("span"), "name", "?"))))
            if ends and room is not None and (room != caller or frame is ends[-1][0]):
                found[-1].stops.append((room, name, depth - ends[-1][1]))
                if name == "Engine.decide" and room != caller:
                    deciding.append(frame)
                    found[-1].decided = (len(found[-1].stops) - 1, len(found[-1].stops))

    raised: BaseException | None = None
    sys.setprofile(profile)
    try:
        trace()
    except FactBoundaryError as exc:
        raised = exc
    finally:
        sys.setprofile(None)
    return found, raised


def _short(room: str) -> str:
    return room.removeprefix(PACKAGE + ".").replace(".", "/")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.rooms", description=__doc__)
    parser.add_argument("--all", action="store_true", help="list every stop of each walk")
    args = parser.parse_args(argv)  # an unknown option exits 2, named
    found, raised = walks()
    print(f"the app got: {type(raised).__name__ if raised else 'no refusal (expected one)'}")
    for walk in found:
        rooms = [room for room, _, _ in walk.stops]
        decision = walk.decision()
        back = returns(decision)
        print(
            f"{walk.span!r} end: {len(rooms)} stops in {len(set(rooms))} rooms, "
            f"{len(returns(rooms))} returns; Engine.decide: {len(decision)} stops in "
            f"{len(set(decision))} engine rooms, {len(back)} returns"
            + (f" ({', '.join(_short(room) for room in back)})" if back else "")
        )
        if args.all:
            for room, function, depth in walk.stops:
                print(f"  {'  ' * min(depth, 20)}{_short(room)} {function}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
