"""What the pytest plugin adds to pytest's start-up: ``python -m bench --only plugin_import``.

pytest imports every installed ``pytest11`` plugin when it starts, so what loading ours costs is
paid by every test run on a machine with groundplane-otel installed; the goal is at most 10 ms
over bare pytest. Measured side by side in one run: whole ``python -m pytest`` runs of a
one-test suite in fresh processes, entry-point autoloading off so that nothing but our plugin
differs between the rows:

* bare pytest — the floor, given an empty plugin with ``-p`` so that it pays what ``-p`` costs
  any plugin (pytest's scan of the installed entry points, which every autoloading run pays
  anyway);
* ``-p groundplane_otel.pytest_plugin``, the test not using it — what every run pays (the
  module the ``groundplane`` entry point names);
* the same, the test requesting the ``groundplane`` fixture — the guard layer (OpenTelemetry
  SDK, the core) that a grounded test pays for.

A few milliseconds in a 250 ms process are below the load noise of a shared machine, so the
rows run interleaved and each cost is the median of per-round differences against the floor
run just before it (wall time, and the process's CPU time beside it).
"""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from bench import Section, fmt_time

__all__ = ["run"]

ROOT = Path(__file__).resolve().parent.parent
GOAL_S: Final = 0.010
PLUGIN: Final = ("-p", "groundplane_otel.pytest_plugin")
SUITE: Final = {
    "empty_plugin.py": '"""A plugin that adds nothing."""\n',
    "test_plain.py": "def test_plain():\n    pass\n",
    "test_grounded.py": "def test_grounded(groundplane):\n    pass\n",
}
FLOOR: Final = "bare pytest (the floor)"
PAID: Final = "+ the plugin, test not using it (what every run pays)"
VARIANTS: Final = {
    FLOOR: (("-p", "empty_plugin"), "test_plain.py"),
    PAID: (PLUGIN, "test_plain.py"),
    "+ the plugin, test using its fixture (the guard layer)": (PLUGIN, "test_grounded.py"),
}


@dataclass(frozen=True, slots=True)
class Added:
    """Seconds a variant adds over the floor: the median per-round wall difference, its
    quartiles (how far the load moved it), and the median CPU-time difference."""

    wall: float
    low: float
    high: float
    cpu: float


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _pytest(suite: Path, options: tuple[str, ...], test: str) -> tuple[float, float]:
    """(wall, CPU) seconds of one fresh ``python -m pytest`` run of ``test``."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *options, test]
    cpu, started = _children_cpu(), time.perf_counter()
    subprocess.run(command, check=True, cwd=suite, env=env, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started, _children_cpu() - cpu


def measure(rounds: int) -> dict[str, list[tuple[float, float]]]:
    """Each variant's (wall, CPU) per round, the variants interleaved, after one warm-up round
    (it writes the bytecode and assertion-rewrite caches)."""
    runs: dict[str, list[tuple[float, float]]] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="bench-plugin-") as directory:
        suite = Path(directory)
        for name, text in SUITE.items():
            (suite / name).write_text(text, "utf-8")
        for round_ in range(rounds + 1):
            for name, (options, test) in VARIANTS.items():
                sample = _pytest(suite, options, test)
                if round_:
                    runs[name].append(sample)
    return runs


def _added(samples: list[tuple[float, float]], floor: list[tuple[float, float]]) -> Added:
    """What a variant adds over the floor, from the per-round differences."""
    wall, cpu = (
        [one[part] - base[part] for one, base in zip(samples, floor, strict=True)]
        for part in (0, 1)
    )
    low, _, high = statistics.quantiles(wall, n=4) if len(wall) > 1 else (wall[0],) * 3
    return Added(statistics.median(wall), low, high, statistics.median(cpu))


def run(smoke: bool) -> list[Section]:
    runs = measure(2 if smoke else 31)
    floor = runs[FLOOR]
    section = Section(
        "plugin_import",
        "The pytest plugin at start-up (whole pytest runs, fresh processes)",
        ("pytest run", "median", "added: wall (quartiles)", "added: CPU", "goal", "status"),
    )
    for name, samples in runs.items():
        cells = ["—"] * 4
        if name != FLOOR:
            added = _added(samples, floor)
            cells[:2] = (
                f"{added.wall * 1e3:+.1f} ms ({added.low * 1e3:+.0f} … {added.high * 1e3:+.0f})",
                f"{added.cpu * 1e3:+.1f} ms",
            )
        if name == PAID:
            met = added.wall <= GOAL_S
            cells[2:] = (
                f"≤ {GOAL_S * 1e3:.0f} ms",
                "n/a (smoke)" if smoke else ("met" if met else "**MISSED**"),
            )
        wall = statistics.median(sample[0] for sample in samples)
        section.rows.append((name, fmt_time(wall), *cells))
    section.notes.append(
        f"{len(floor)} interleaved rounds; added = the median of per-round differences against "
        "the floor run just before. Autoloading is off in every row; the plugin is added with -p "
        "(the module its entry point loads), the floor's -p names an empty one."
    )
    return [section]
