"""The pytest plugin's cost for a suite that never uses it: the imports it adds at startup.

pytest loads every installed ``pytest11`` plugin when it starts, so what loading ours imports is
paid by every test run on a machine with groundplane-otel installed. Measured in fresh
interpreters (``python -c ...``, wall time, interleaved, median), side by side:

* ``import pytest`` — the floor: what any test run imports before it collects a test;
* ``import pytest, groundplane_otel.pytest_plugin`` — plus our plugin module (and, since it lives
  in the package, the stdlib-only core that the package ``__init__`` imports);
* ``… , groundplane_otel.otel.testing`` — paid only once a test asks for the fixture
  (OpenTelemetry SDK and the guard layer).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bench import Section, compare, fmt_time

__all__ = ["run"]

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = {
    "import pytest (the floor)": "import pytest",
    "+ the plugin module (what every run pays)": "import pytest, groundplane_otel.pytest_plugin",
    "+ the fixture's guard layer (tests using it)": (
        "import pytest, groundplane_otel.pytest_plugin, groundplane_otel.otel.testing"
    ),
}


def _interpreter(code: str) -> None:
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = {**os.environ, "PYTHONPATH": path}
    subprocess.run([sys.executable, "-c", code], check=True, env=env)


def run(smoke: bool) -> list[Section]:
    timings = compare(
        {name: (lambda code=code: _interpreter(code)) for name, code in VARIANTS.items()},
        repeats=2 if smoke else 15,
    )
    floor = timings["import pytest (the floor)"].median
    section = Section(
        "plugin_import",
        "The pytest plugin at startup (fresh interpreters, wall time)",
        ("imports", "median", "added, as a share of the floor"),
    )
    for index, (name, timing) in enumerate(timings.items()):
        added = "—" if index == 0 else f"+{(timing.median - floor) / floor:.0%}"
        section.rows.append((name, fmt_time(timing.median), added))
    section.notes.append(
        "Interpreter start-up is in every row (so the shares understate the import alone)."
    )
    return [section]
