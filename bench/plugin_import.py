"""What the pytest plugin adds to pytest's start-up: ``python -m bench --only plugin_import``.

pytest imports every installed ``pytest11`` plugin when it starts, so what loading ours costs is
paid by every test run on a machine with groundplane-otel installed; the goal is at most 10 ms
over bare pytest. Measured side by side in one run, in fresh processes, interleaved, entry-point
autoloading off so that nothing but our plugin differs:

* whole ``python -m pytest`` runs of a one-test suite: bare pytest (the floor, given an empty
  plugin with ``-p`` so that it pays what ``-p`` costs any plugin: pytest's scan of the
  installed entry points, which every autoloading run pays anyway); ``-p
  groundplane_otel.pytest_plugin`` (the module the ``groundplane`` entry point names) with the
  test not using it — what every run pays; the same with the test requesting the fixture — the
  guard layer (OpenTelemetry SDK, the core) a grounded test pays for;
* the plugin's load alone, timed inside pytest (``import_plugin``: import and register, what
  ``-p`` and the entry point do) against the empty plugin's — the same work as the whole-run
  difference without the whole process's load noise, which on a shared machine is larger
  than the goal; the goal is judged on it.

Each cost is the median of per-round differences against the floor run just before it.
"""

from __future__ import annotations

import os
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
PLUGIN: Final = "groundplane_otel.pytest_plugin"
EMPTY: Final = "empty_plugin"
SUITE: Final = {
    f"{EMPTY}.py": '"""A plugin that adds nothing."""\n',
    "test_plain.py": "def test_plain():\n    pass\n",
    "test_grounded.py": "def test_grounded(groundplane):\n    pass\n",
}
# In a fresh interpreter: pytest's own configuration (its built-in plugins), then one plugin
# loaded as -p loads it (less the entry-point scan, paid by every run); prints the seconds.
LOAD: Final = (
    "import sys, time\n"
    "from _pytest.config import get_config\n"
    "manager = get_config().pluginmanager\n"
    "started = time.perf_counter()\n"
    "manager.import_plugin(sys.argv[1])\n"
    "print(time.perf_counter() - started)\n"
)
FLOOR: Final = "whole run: bare pytest (the floor)"
RUNS: Final = {
    FLOOR: (EMPTY, "test_plain.py"),
    "whole run: + the plugin, test not using it": (PLUGIN, "test_plain.py"),
    "whole run: + the plugin, test using its fixture (the guard layer)": (
        PLUGIN,
        "test_grounded.py",
    ),
}
LOADED: Final = "the plugin's load inside pytest, vs an empty plugin's (what every run pays)"


@dataclass(frozen=True, slots=True)
class Added:
    """Seconds a variant adds over its floor: the median per-round difference and its
    quartiles (how far the load moved it)."""

    median: float
    low: float
    high: float

    @classmethod
    def of(cls, samples: list[float], floor: list[float]) -> Added:
        added = [one - base for one, base in zip(samples, floor, strict=True)]
        low, _, high = statistics.quantiles(added, n=4) if len(added) > 1 else (added[0],) * 3
        return cls(statistics.median(added), low, high)

    def __str__(self) -> str:
        spread = f"{self.low * 1e3:+.1f} … {self.high * 1e3:+.1f}"
        return f"{self.median * 1e3:+.1f} ms ({spread})"


def _python(suite: Path, *arguments: str) -> tuple[float, str]:
    """Wall seconds and stdout of one fresh ``python`` process in ``suite``, this checkout's
    package first on its path, plugin autoloading off."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path, "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, *arguments], check=True, cwd=suite, env=env, capture_output=True
    )
    return time.perf_counter() - started, done.stdout.decode()


def measure(rounds: int) -> dict[str, list[float]]:
    """Seconds per round: each whole run's wall time, and each plugin's in-process load time,
    interleaved, after one warm-up round (it writes the bytecode and assertion-rewrite caches)."""
    samples: dict[str, list[float]] = {name: [] for name in [*RUNS, EMPTY, PLUGIN]}
    with tempfile.TemporaryDirectory(prefix="bench-plugin-") as directory:
        suite = Path(directory)
        for name, text in SUITE.items():
            (suite / name).write_text(text, "utf-8")
        for round_ in range(rounds + 1):
            seconds = {
                name: _python(suite, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                              "-p", plugin, test)[0]
                for name, (plugin, test) in RUNS.items()
            }  # fmt: skip
            for plugin in (EMPTY, PLUGIN):
                seconds[plugin] = float(_python(suite, "-c", LOAD, plugin)[1])
            if round_:
                for name, value in seconds.items():
                    samples[name].append(value)
    return samples


def run(smoke: bool) -> list[Section]:
    samples = measure(2 if smoke else 31)
    section = Section(
        "plugin_import",
        "The pytest plugin at start-up (fresh processes, wall time)",
        ("measure", "median", "added over the floor (quartiles)", "goal", "status"),
    )
    for name in RUNS:
        added = "—" if name == FLOOR else str(Added.of(samples[name], samples[FLOOR]))
        section.rows.append((name, fmt_time(statistics.median(samples[name])), added, "—", "—"))
    loaded = Added.of(samples[PLUGIN], samples[EMPTY])
    status = "n/a (smoke)" if smoke else ("met" if loaded.median <= GOAL_S else "**MISSED**")
    median = fmt_time(statistics.median(samples[PLUGIN]))
    section.rows.append((LOADED, median, str(loaded), f"≤ {GOAL_S * 1e3:.0f} ms", status))
    section.notes.append(
        f"{len(samples[FLOOR])} interleaved rounds; added = the median of per-round differences "
        "against the floor (the first row; for the last, the empty plugin's load). Autoloading "
        "is off in every run, the plugin added with -p; a whole run's difference moves with the "
        "machine's load by more than the goal, the in-process load does not."
    )
    return [section]
