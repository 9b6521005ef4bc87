"""Running a benchmark module as its command (``python -m bench...``) from the repository, the
way the docs tell users to: the tests of the bench's tables and counts share it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run_bench(
    module: str, *args: str, timeout: float, check: bool
) -> subprocess.CompletedProcess[str]:
    """``python -m <module> <args>`` in the repository root, with it first on ``PYTHONPATH``;
    its output captured as text."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=check,
    )
