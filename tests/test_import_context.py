"""Importing the checks sets no context variable: a module-level ``Decimal(100)`` sets the
thread's decimal context variable, and every OpenTelemetry context attach then copies a bigger
context for the life of the app (about 0.8 k instructions a plain trace, measured by callgrind)."""

from __future__ import annotations

import subprocess
import sys

_PROBE = """
import contextvars, importlib, pkgutil
import groundplane_otel.checks as checks
for module in pkgutil.walk_packages(checks.__path__, "groundplane_otel.checks."):
    importlib.import_module(module.name)
import groundplane_otel.otel
print(sorted(var.name for var in contextvars.copy_context()))
"""


def test_importing_every_check_sets_no_context_variable() -> None:
    done = subprocess.run(
        [sys.executable, "-c", _PROBE], capture_output=True, text=True, check=True, timeout=120
    )
    assert done.stdout.strip() == "[]"
