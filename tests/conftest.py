"""Isolation shared by every test: no guard outlives the test that installed it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from groundplane_otel.otel.install import active_guards


@pytest.fixture(autouse=True)
def _uninstall_leaked_guards() -> Iterator[None]:
    """Uninstall the guards a test left active (``active_guard()`` would otherwise hand them to
    later tests); guards of wider-scoped fixtures, installed before the test, are kept."""
    before = set(active_guards())
    yield
    for guard in active_guards():
        if guard not in before:
            guard.uninstall()
