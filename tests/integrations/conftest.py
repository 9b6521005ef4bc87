"""Fixtures for the integration tests (the harness lives in ``integration_harness``)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from integration_harness import Otel


@pytest.fixture
def otel() -> Iterator[Otel]:
    """Fresh SDK providers; every guard installed through them is uninstalled afterwards."""
    harness = Otel()
    yield harness
    harness.close()
