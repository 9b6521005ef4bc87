"""The suggest tests record the example agents (``recordings.py``) with the fake OpenAI server
(``tests/integrations``) on the path."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integrations"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
