"""The core is groundplane's API and imports nothing beyond the standard library."""

from __future__ import annotations

import subprocess
import sys


def test_core_import_loads_no_third_party_module() -> None:
    """Importing every public name of groundplane_otel (the core) loads neither OpenTelemetry
    nor YAML."""
    code = (
        "import sys\nfrom groundplane_otel import *\n"
        "assert 'groundplane_otel.checks.numbers' in sys.modules\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'opentelemetry', 'yaml', 'langgraph', 'mcp', 'openai', 'google'})\n"
        "print(bad)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"
