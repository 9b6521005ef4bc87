"""``python -m bench.replay_steps`` (docs/measured.md, "where the time goes"): every step it
names is a function replay or the verifier still calls, each run gets only its own steps, and
the timers come off again. No time is asserted (a loaded machine must not fail the build)."""

from __future__ import annotations

from bench_command import run_bench

from bench import replay_steps
from groundplane_otel.otel import otlp_files
from groundplane_otel.otel._engine.engine import Engine
from groundplane_otel.otel.replay.driving import Driver
from groundplane_otel.otel.replay.json_reader import json_spans

_JSON_ONLY = {"read: a JSON line as span records (orjson.loads included)"}
_PROTOBUF_ONLY = {
    "read: ParseFromString of a request",
    "read: a protobuf request as span records (proto_spans)",
    "metrics: the SDK's three measurements an output (verifier)",
}


def test_each_run_times_its_own_steps_and_the_timers_come_off() -> None:
    originals = (Engine.decide, Engine.tool_ended, Driver.trace, json_spans)
    found = replay_steps.measure(4, 1)
    labels = {label for label, _ in replay_steps.STEPS} | {replay_steps.GLUE}
    shared = labels - _JSON_ONLY - _PROTOBUF_ONLY
    assert set(found["replay"]) == shared | _JSON_ONLY  # every step was reached
    assert set(found["intake"]) == shared | _PROTOBUF_ONLY
    assert set(found["floors"]) == {"decode", "parse", "replay", "intake"}
    assert otlp_files.json_spans is json_spans
    assert (Engine.decide, Engine.tool_ended, Driver.trace, otlp_files.json_spans) == originals


def test_the_command_prints_the_table() -> None:
    done = run_bench("bench.replay_steps", "--smoke", timeout=300, check=True)
    lines = done.stdout.splitlines()
    assert lines[0].startswith("Where the time goes, 20 traces (60 spans), CPU time, best of 2")
    assert lines[2] == "| step | replay ms | x JSON floor | verifier intake ms | x protobuf floor |"
    rows = [line.split(" | ")[0].lstrip("| ") for line in lines[4:]]
    assert rows[-3:] == ["**the steps' sum (timed run)**", "**untimed run**", "goal (issue 38)"]
    assert set(rows[:-3]) == {label for label, _ in replay_steps.STEPS} | {replay_steps.GLUE}
