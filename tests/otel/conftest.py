"""Shared fixtures for the guard tests (helpers live in ``otel_harness``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from opentelemetry.sdk.trace import SpanLimits
from otel_harness import Harness


@pytest.fixture
def otel() -> Iterator[Harness]:
    """A fresh harness; guards installed through it are uninstalled afterwards."""
    harness = Harness()
    yield harness
    harness.close()


@pytest.fixture
def make_otel() -> Iterator[Any]:
    """Factory for harnesses with custom span limits."""
    made: list[Harness] = []

    def make(span_limits: SpanLimits | None = None) -> Harness:
        harness = Harness(span_limits)
        made.append(harness)
        return harness

    yield make
    for harness in made:
        harness.close()
