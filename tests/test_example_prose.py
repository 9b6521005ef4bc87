"""examples/demo_prose.py does what it says: the right summary passes, the wrong one is blocked
with one receipt per wrong number, and the exported span carries only the reason code."""

from __future__ import annotations

import importlib.util
import io
import subprocess
import sys
from pathlib import Path

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.sampling import ALWAYS_ON

from groundplane_otel.otel.sampling import GuardSampler

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "examples" / "demo_prose.py"
RECEIPTS = [
    "    receipt '$1,000' at 17..23 of 'summary': the same digits are recorded at another power "
    "of ten; nearest recorded 10000 (fact 'invoice', row 'A', column 'total')",
    "    receipt '4.75%' at 27..32 of 'summary': only the question holds it (the question is not "
    "a source); nearest recorded 3.9 (fact 'invoice', row 'A', column 'rate')",
    "    receipt '45' at 49..51 of 'summary': no fact records it; nearest recorded 30 "
    "(fact 'invoice', row 'A', column 'term_days')",
]


def test_demo_prose_blocks_the_wrong_number_and_prints_its_receipts() -> None:
    """As a subprocess: pass, block with three receipts, ERROR span with the reason code only
    and the check's evaluation label."""
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
    assert "  PASSED: every number in the summary is recorded" in lines
    blocked = lines.index("  BLOCKED: UnrecordedNumbers, reason number_scale_mismatch")
    assert lines[blocked + 1 : blocked + 4] == RECEIPTS
    assert lines[-3:] == [
        "  exported span 'chat scripted-assistant-1': status ERROR",
        "    event gen_ai.guardrail.result: reason number_scale_mismatch (no content: capture "
        "is off)",
        "    event gen_ai.evaluation.result: numbers_recorded unsupported (no explanation: "
        "capture is off)",
    ]


def test_run_works_on_the_callers_providers_and_uninstalls() -> None:
    """``run(tracer_provider, meter_provider)`` prints the scenes and leaves no guard behind:
    a second run on the same providers prints the same."""
    spec = importlib.util.spec_from_file_location("demo_prose", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tracer_provider = TracerProvider(sampler=GuardSampler(ALWAYS_ON))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    outputs = []
    for _ in range(2):
        out = io.StringIO()
        module.run(tracer_provider, meter_provider, out)
        outputs.append(out.getvalue().splitlines())
    assert outputs[0] == outputs[1]
    assert outputs[0][-3:] == RECEIPTS
    tracer_provider.shutdown()
    meter_provider.shutdown()
