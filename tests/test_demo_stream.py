"""``make demo``'s streamed scene (examples/demo_stream.py) as a subprocess: the right answer is
shown whole, the wrong one is cut after its first sentence, each run counted once."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_streamed_scene_cuts_the_answer_before_its_wrong_sentence() -> None:
    """The reader's line of the wrong answer holds exactly the first sentence, then BLOCKED
    with the receipt; outcomes passed then blocked, with the characters released."""
    result = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "demo_stream.py")],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)},
    )
    assert (result.returncode, result.stderr) == (0, "")
    lines = result.stdout.splitlines()
    assert lines[:4] == [
        "  streaming the right answer:",
        "    reader sees: Invoice A totals 10,000 dollars. Its rate was 3.9% last month. "
        "Invoice B totals 250 dollars.",
        "    PASSED: every sentence checked, then shown",
        "    counted once: outcome passed, 92 characters released",
    ]
    assert lines[4:7] == [
        "  streaming a wrong rate in sentence 2:",
        "    reader sees: Invoice A totals 10,000 dollars.",
        "    BLOCKED before the next sentence: UnrecordedNumbers",
    ]
    assert lines[7].startswith("      unsupported claim in field '*': 1 number is not recorded")
    assert lines[8] == "    counted once: outcome blocked, 32 characters released"
    assert "4.7" not in lines[5]
