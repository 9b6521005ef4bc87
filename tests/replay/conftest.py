"""The replay tests reuse the guard tests' harness (``tests/otel/otel_harness.py``) and share
a recording (``replay_recording.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "otel"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
