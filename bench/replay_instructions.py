"""Replay and verifier intake in instructions: ``python -m bench --only replay_instructions``.

The timed ratios of ``bench.replay`` move by a tenth or more between runs on a shared 2-core
VM; the instructions a trace costs do not (callgrind, ``PYTHONHASHSEED=0``). Over the same
recording as ``bench.replay`` (agent runs: a 20-row tool result, a JSON answer, half wrong),
each workload runs in its own process over 600 and over 100 traces; the difference over 500 is
its marginal cost per trace, start-up and imports cancelled out. Floors as in the timed bench:
``orjson.loads`` of each line (replay) and ``ParseFromString`` of each request (verifier
intake). An instruction is not a nanosecond: orjson and upb retire several per cycle where the
interpreter retires fewer, so a timed ratio is larger than its count in instructions (by
about 1.6x for replay and 2.3x for intake on this machine); the goals stay judged on time
(``bench.replay``), and this table says where a change moved the work. The smoke run executes
every workload once without valgrind.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

from bench import Section, fmt_ratio
from bench.span_instructions import count_instructions, counted_env, counting, uncounted

__all__ = ["run"]

_COUNTED = (600, 100)  # the marginal cost per trace is their difference over 500 traces
_SMOKE = (2,)  # each workload once, uncounted

_PREPARE = """
import pickle
import sys
from pathlib import Path
from bench.replay import _record
from groundplane_otel.otel.otlp_files import request_from_json
folder, traces = Path(sys.argv[1]), int(sys.argv[2])
_record(traces, folder / "traces.jsonl")
lines = (folder / "traces.jsonl").read_bytes().splitlines()
bodies = [request_from_json(line).SerializeToString() for line in lines]
(folder / "requests.pickle").write_bytes(pickle.dumps(bodies))
"""

_RUN = """
import pickle
import sys
from pathlib import Path
workload, folder = sys.argv[1], Path(sys.argv[2])
import orjson
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.sdk.metrics import MeterProvider
from bench.replay import _config
from groundplane_otel.otel.otlp_files import read_requests
from groundplane_otel.otel.replay import Replayer
from groundplane_otel.otel.verifier import Verifier
lines = folder / "traces.jsonl"
# The requests in protobuf, unpickled in C (no Python loop per request: it would count as
# every workload's own cost), read only by the workloads that take them.
bodies = []
if workload in ("parse", "intake"):
    bodies = pickle.loads((folder / "requests.pickle").read_bytes())
config = _config()
if workload == "decode":
    with lines.open("rb") as stream:
        for line in stream:
            orjson.loads(line)
elif workload == "parse":
    for body in bodies:
        ExportTraceServiceRequest().ParseFromString(body)
elif workload == "replay":
    replayer = Replayer(config)
    for request in read_requests([lines], []):
        replayer.feed(request)
    replayer.finish()
    replayer.close()
elif workload == "intake":
    verifier = Verifier(config, meter_provider=MeterProvider(), root_wait_s=0.0)
    for body in bodies:
        verifier.Export(verifier.read(body), None)
        verifier.tick()
    if verifier.stats.root_ended != int(sys.argv[3]):
        raise SystemExit(f"the verifier decided {verifier.stats}")
    verifier.drain()
    verifier.replayer.close()
else:
    raise SystemExit(f"unknown workload {workload!r}")
"""

_WORKLOADS = ("decode", "replay", "parse", "intake")


def _prepare(folder: Path, sizes: tuple[int, ...]) -> dict[int, Path]:
    """One recording per size, each a JSON lines file and the same requests in protobuf."""
    script = folder / "prepare.py"
    script.write_text(_PREPARE)
    made: dict[int, Path] = {}
    for traces in sizes:
        made[traces] = folder / str(traces)
        made[traces].mkdir()
        subprocess.run(
            [sys.executable, str(script), str(made[traces]), str(traces)],
            check=True,
            env=counted_env(),
        )
    return made


def _per_trace(script: Path, workload: str, made: dict[int, Path]) -> float:
    many, few = _COUNTED
    counts = {n: count_instructions(script, workload, str(made[n]), str(n)) for n in _COUNTED}
    return (counts[many] - counts[few]) / (many - few)


def run(smoke: bool) -> list[Section]:
    section = Section(
        key="replay_instructions",
        title="Replay and verifier intake in instructions (callgrind): per trace, vs their floors",
        headers=("workload", "per trace", "floor per trace", "ratio"),
    )
    counted = counting(smoke)
    with tempfile.TemporaryDirectory() as folder:
        made = _prepare(Path(folder), _COUNTED if counted else _SMOKE)
        script = Path(folder) / "run.py"
        script.write_text(_RUN)
        if not counted:
            for workload in _WORKLOADS:
                for traces, recorded in made.items():
                    subprocess.run(
                        [sys.executable, str(script), workload, str(recorded), str(traces)],
                        check=True,
                        env=counted_env(),
                    )
            why = uncounted(smoke)
            for label in ("replay (OTLP/JSON lines)", "verifier intake (OTLP protobuf)"):
                section.rows.append((label, "—", "—", why))
            return [section]
        per = {workload: _per_trace(script, workload, made) for workload in _WORKLOADS}
    for label, workload, floor in (
        ("replay (OTLP/JSON lines)", "replay", "decode"),
        ("verifier intake (OTLP protobuf)", "intake", "parse"),
    ):
        section.rows.append(
            (
                label,
                f"{per[workload] / 1e3:,.1f} k",
                f"{per[floor] / 1e3:,.1f} k",
                fmt_ratio(per[workload] / per[floor]),
            )
        )
    section.notes.append(
        "Marginal instructions per trace: each workload in its own process over 600 and over 100 "
        "traces of bench.replay's recording (PYTHONHASHSEED=0), the difference over 500. Floors: "
        "orjson.loads of each line, ParseFromString of each request. The goals (replay <= 10x, "
        "intake <= 35x, issue 38) are judged on time by --only replay."
    )
    return [section]
