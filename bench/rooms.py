"""The rooms a guarded span end walks through: ``python -m bench.rooms [--all]``.

A *room* is a ``groundplane_otel`` module; a *stop* is entering one on the call path (a Python
call from a frame of another room: frames outside the package — the SDK, the standard library —
belong to the room that called them). A stop into a room entered before is a *return* to a room
already left. One representative guarded span end is traced with ``sys.setprofile``: an
``invoke_agent`` span > an ``execute_tool`` span (a Table fact) + a ``chat`` span whose answer
names the wrong winner, enforce mode, the real SDK, the guard from ``groundplane_otel.otel.install``.
The walk is recorded from the live driver's ``_live/processor._end_watched`` for the chat span
until it returns (here: raises the refusal).

Printed: the stops of the whole walk, and of each visit into the engine (``otel/_engine``: a
call the driver makes into it), with the returns among them; ``--all`` lists every stop. A
visit's own rooms are those of the engine; the check core it runs (``checks/``, ``_runner``) is
counted apart: it is the checks' code, not the engine's. Asserts nothing.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any

__all__ = ["Walk", "main", "walk"]

PACKAGE = "groundplane_otel"
ENGINE = "groundplane_otel.otel._engine"
DRIVER = "groundplane_otel.otel._live.processor"


@dataclass(slots=True)
class Walk:
    """The stops of one traced call, in order: each as (room, depth of the call stack)."""

    stops: list[tuple[str, int]] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # the function each stop entered

    @staticmethod
    def returns(rooms: list[str]) -> list[str]:
        """The stops among ``rooms`` into a room entered before."""
        seen: set[str] = set()
        again = []
        for room in rooms:
            if room in seen:
                again.append(room)
            seen.add(room)
        return again

    def visits(self) -> list[list[str]]:
        """The engine's rooms of each call the driver makes into the engine, in order (a
        visit ends when the walk leaves the engine for the driver's own rooms again)."""
        found: list[list[str]] = []
        depth: int | None = None
        for room, at in self.stops:
            if depth is not None and at <= depth:
                depth = None
            if depth is None:
                if room.startswith(ENGINE):
                    depth = at
                    found.append([room])
            elif room.startswith(ENGINE):
                found[-1].append(room)
        return found


def _room(frame: FrameType | None) -> str | None:
    while frame is not None:
        name = frame.f_globals.get("__name__", "")
        if name == PACKAGE or name.startswith(PACKAGE + "."):
            return str(name)
        frame = frame.f_back
    return None


def _scenario() -> Callable[[], None]:
    """One guarded trace whose chat span's answer names the wrong winner (refused)."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.sampling import ALWAYS_ON

    from bench._scenario import make_output, make_rows
    from bench.guard import _answer, _config, _guarded_trace
    from groundplane_otel.otel import install

    provider = TracerProvider(sampler=ALWAYS_ON)
    install(_config(), tracer_provider=provider, meter_provider=MeterProvider())
    rows = make_rows(20)
    wrong = {**make_output(rows), "winner": rows[0]["region"]}
    if wrong["winner"] == make_output(rows)["winner"]:
        wrong["winner"] = rows[1]["region"]
    return _guarded_trace(provider.get_tracer("bench"), json.dumps({"rows": rows}), _answer(wrong))


def walk() -> tuple[Walk, BaseException | None]:
    """Trace the chat span's guarded end (the scenario run once before, untraced, to warm up)."""
    trace = _scenario()
    from groundplane_otel.errors import UnsupportedClaim

    try:
        trace()
    except UnsupportedClaim:
        pass
    found = Walk()
    state: dict[str, Any] = {"frame": None, "depth": 0, "done": False}

    def profile(frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return") or state["done"]:
            return
        if state["frame"] is None:
            if event == "call" and frame.f_code.co_name == "_end_watched":
                if frame.f_globals.get("__name__") == DRIVER and _is_chat(frame):
                    state["frame"] = frame
                    found.stops.append((DRIVER, 0))
                    found.names.append("_end_watched")
            return
        if event == "return":
            if frame is state["frame"]:
                state["done"] = True
            state["depth"] -= 1
            return
        state["depth"] += 1
        room, caller = _room(frame), _room(frame.f_back)
        if room is not None and room != caller:
            found.stops.append((room, state["depth"]))
            found.names.append(frame.f_code.co_qualname)

    raised: BaseException | None = None
    sys.setprofile(profile)
    try:
        trace()
    except UnsupportedClaim as exc:
        raised = exc
    finally:
        sys.setprofile(None)
    return found, raised


def _is_chat(frame: FrameType) -> bool:
    span = frame.f_locals.get("span")
    return str(getattr(span, "name", "")).startswith("chat ")


def _short(room: str) -> str:
    return room.removeprefix(PACKAGE + ".").replace(".", "/")


def main(argv: list[str]) -> int:
    found, raised = walk()
    rooms = [room for room, _ in found.stops]
    print(f"refused: {type(raised).__name__ if raised else 'no (expected a refusal)'}")
    again = Walk.returns(rooms)
    print(
        f"whole span end: {len(rooms)} stops in {len(set(rooms))} rooms, "
        f"{len(again)} returns to a room already left"
    )
    for number, visit in enumerate(found.visits(), 1):
        engine = [room for room in visit if not room.startswith(f"{PACKAGE}.checks")]
        back = Walk.returns(engine)
        print(
            f"engine visit {number} ({_short(visit[0])}): {len(engine)} stops in "
            f"{len(set(engine))} engine rooms, {len(back)} returns"
            + (f" ({', '.join(sorted({_short(r) for r in back}))})" if back else "")
        )
    if "--all" in argv:
        for (room, depth), name in zip(found.stops, found.names, strict=True):
            print(f"{'  ' * min(depth, 20)}{_short(room)} {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
