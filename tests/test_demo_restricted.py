"""The evidence demo (`examples/demo_restricted.py`) does what it says, as a subprocess and
through its `main()`: a cited answer passes, a restricted value and a fabricated citation are
refused, and no exported span holds the restricted value."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "demo_restricted.py"


def test_the_demo_refuses_a_leak_and_a_fabricated_citation() -> None:
    """Exit 0, nothing on stderr; the three scenes print their verdicts and content-free event."""
    result = subprocess.run(
        [sys.executable, str(SCRIPT)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert (result.returncode, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    assert "  PASSED: the answer reached the application" in lines
    leak = next(line for line in lines if line.startswith("  REFUSED (restricted_value)"))
    assert "restricted fact 'wholesale' (row 0, column 'cost') as a number" in leak
    assert "1,234.50" not in leak
    events = [json.loads(line.split(": ", 1)[1]) for line in lines if "exported event" in line]
    assert events[0]["gen_ai.guardrail.result.reason"] == "restricted_value"
    assert "groundplane.claimed" not in events[0]
    assert events[1]["gen_ai.guardrail.result.reason"] == "citation_not_retrieved"
    assert events[1]["groundplane.claimed"] == '"policy-12"'
    assert "  the cost in any exported span (content capture on): False" in lines


def test_main_is_callable_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    """The lead's main demo calls main(): it returns 0 and uninstalls its guard."""
    spec = importlib.util.spec_from_file_location("demo_restricted", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from groundplane_otel.otel.install import active_guards

    assert module.main() == 0
    assert active_guards() == ()
    assert "REFUSED (citation_not_retrieved)" in capsys.readouterr().out
