"""Instructions per trace, guard vs plain SDK, counted by valgrind (callgrind):
``python -m bench.span_instructions [traces]``.

Timings on a shared 2-core machine move with load; instruction counts do not (the same binary,
inputs, environment — ``PYTHONHASHSEED=0`` — and script path give the same count to within a few
dozen instructions a trace). The script's path alone moves a trace's count by up to ~8 k (its
text lands in hashed dicts and on the heap), so each variant is counted at ``LAYOUTS`` fixed paths
and averaged: a run is reproducible, and no one path's luck decides a goal. Each variant runs
``traces`` and ``traces/6`` times under callgrind; the difference is the marginal cost of
``5/6 traces`` traces, so interpreter start-up and imports cancel out.

* unmatched: the plain request trace of ``bench.guard`` (a root and three children, no GenAI
  attributes), guard vs plain SDK. Goal: ratio <= 1.03. A third variant installs the guard and
  uninstalls it (its modules and objects alive, no hook on any span): what the process pays
  without any per-span work, from a bigger heap and more imports.
* guarded output: the guarded trace of ``bench.guard`` (a 100-row tool result, a JSON answer,
  six checks) with and without the guard, against the floor (the stdlib ``json.loads`` of both
  payloads, the Table, the six checks called directly). Goal: (guard - plain) / floor <= 1.5.

Prints; asserts nothing. Needs ``valgrind``. ``python -m bench --only instructions`` (in the
full ``python -m bench`` run) judges both goals from the same counts.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

_RUN = """
import json, sys
from bench.guard import _answer, _config, _floor, _guarded_trace, _sdk, _unmatched_trace
from bench._scenario import make_output, make_rows
provider_of, _, _ = _sdk()
scenario, variant, traces = sys.argv[1], sys.argv[2], int(sys.argv[3])
guarded = variant in ("guard", "inert")
provider = provider_of(guarded, _config() if guarded else None)
if variant == "inert":
    import importlib
    for guard in importlib.import_module("groundplane_otel.otel.install").active_guards():
        guard.uninstall()
tracer = provider.get_tracer("bench")
rows = make_rows(100)
result, messages = json.dumps({"rows": rows}), _answer(make_output(rows))
if scenario == "unmatched":
    run = _unmatched_trace(tracer)
elif variant == "floor":
    run = _floor(result, messages)
else:
    run = _guarded_trace(tracer, result, messages)
for _ in range(traces):
    run()
"""


_ROOT = os.pathsep.join(
    [str(Path(__file__).resolve().parent.parent), os.environ.get("PYTHONPATH", "")]
)


def counting(smoke: bool) -> bool:
    """Are instructions counted in this run (not a smoke run, and valgrind is installed)?"""
    return not smoke and shutil.which("valgrind") is not None


def uncounted(smoke: bool) -> str:
    """What a row says when ``counting(smoke)`` is False: never a silent blank."""
    return "n/a (smoke)" if smoke else "n/a (no valgrind: `make bench` installs it)"


def counted_env() -> dict[str, str]:
    """The environment a measured script runs in: a fixed hash seed, ``bench`` importable."""
    return {**os.environ, "PYTHONHASHSEED": "0", "PYTHONPATH": _ROOT}


def count_instructions(script: Path, *args: str) -> int:
    """The instructions ``python script args`` executes under callgrind (``PYTHONHASHSEED=0``,
    ``bench`` importable)."""
    with tempfile.TemporaryDirectory() as folder:
        done = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={folder}/out",
                sys.executable,
                str(script),
                *args,
            ],
            capture_output=True,
            text=True,
            check=True,
            env=counted_env(),
        )
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None:
        raise RuntimeError("callgrind printed no instruction count")
    return int(found.group(1))


def _marginal(script: Path, scenario: str, variant: str, traces: int) -> float:
    many = count_instructions(script, scenario, variant, str(traces))
    few = count_instructions(script, scenario, variant, str(traces // 6))
    return (many - few) / (traces - traces // 6)


@dataclass(frozen=True, slots=True)
class Counts:
    """Marginal instructions per trace of each variant."""

    traces: int
    unmatched: dict[str, float]  # plain, guard, inert
    guarded: dict[str, float]  # plain, guard, floor


def measure(traces: int = 600) -> Counts:
    """Count every variant under callgrind (needs ``valgrind``), the mean over ``LAYOUTS``."""
    unmatched: dict[str, list[float]] = {v: [] for v in ("plain", "guard", "inert")}
    guarded: dict[str, list[float]] = {v: [] for v in ("plain", "guard", "floor")}
    with tempfile.TemporaryDirectory() as folder:
        for layout in LAYOUTS:
            script = _fixed_script(Path(folder), layout)
            for variant, counts in unmatched.items():
                counts.append(_marginal(script, "unmatched", variant, traces))
            for variant, counts in guarded.items():
                counts.append(_marginal(script, "guarded", variant, traces // 4))
    return Counts(
        traces,
        {v: sum(c) / len(c) for v, c in unmatched.items()},
        {v: sum(c) / len(c) for v, c in guarded.items()},
    )


# The measured script's fixed paths (under the system's temporary folder, whatever a run's
# own folder is called): three, so a path's layout luck averages out.
LAYOUTS = ("groundplane-bench-a", "groundplane-bench-bb", "groundplane-bench-ccc")


def _fixed_script(scratch: Path, layout: str) -> Path:
    """The measured script at ``<tempdir>/<layout>/run.py`` (``scratch`` when that folder
    cannot be made)."""
    script = Path(tempfile.gettempdir()) / layout / "run.py"
    try:
        script.parent.mkdir(exist_ok=True)
        script.write_text(_RUN)
    except OSError:  # another user's folder, say: this run's own
        script = scratch / layout / "run.py"
        script.parent.mkdir()
        script.write_text(_RUN)
    return script


def run_once() -> None:
    """Run the measured script once per variant, without valgrind (does it still run?)."""
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "run.py"
        script.write_text(_RUN)
        for scenario, variants in (
            ("unmatched", ("plain", "guard", "inert")),
            ("guarded", ("plain", "guard", "floor")),
        ):
            for variant in variants:
                subprocess.run(
                    [sys.executable, str(script), scenario, variant, "2"],
                    check=True,
                    capture_output=True,
                    env=counted_env(),
                )


def main(argv: list[str]) -> int:
    """Print the ``instructions`` section of ``python -m bench`` (the same counts and goals)."""
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt-get install valgrind)")
        return 1
    from bench import render  # here: bench.instructions imports this module
    from bench.instructions import section

    print(render([section(measure(int(argv[0]) if argv else 600))]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
