"""Fixtures for the verifier tests: a loopback OTLP sink, and the guard tests' harness path."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "otel"))

from otlp_sink import Sink  # noqa: E402


@pytest.fixture
def sink() -> Iterator[Sink]:
    receiver = Sink()
    yield receiver
    receiver.close()
