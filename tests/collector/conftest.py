"""The Collector tests run the built distribution (``make collector``) with real processes; they
reuse the verifier tests' services and sink (``tests/verifier``) and the guard tests' harness."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "otel"))
sys.path.insert(0, str(HERE.parent / "verifier"))
sys.path.insert(0, str(HERE))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this folder is marked ``collector`` (``pytest -m collector`` runs them)."""
    for item in items:
        if HERE in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.collector)


@pytest.fixture
def teardown() -> Iterator[ExitStack]:
    """Callbacks that stop every process a test started (by PID), in reverse order."""
    with ExitStack() as stack:
        yield stack
