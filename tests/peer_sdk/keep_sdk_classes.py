"""pytest plugin of both peer runs (``tests/peer_sdk/run.py``): after each test, the SDK's trace
module gets back the objects it held at session start.

Some SDK tests ``reload(opentelemetry.sdk.trace)`` in their ``tearDown``; every later test would
then make providers of a new ``TracerProvider`` class, which the guard (holding the classes it
imported) does not recognise as the SDK's, so the rest of the guarded run would not be guarded.
Loaded in the plain run too, so the two runs differ only by the guard. (A test's own reload,
inside the test, still makes providers of the new class: those stay unguarded.)
"""

from __future__ import annotations

from typing import Any

import opentelemetry.sdk.trace as sdk_trace
import pytest

_kept: dict[str, Any] = dict(vars(sdk_trace))


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    if sdk_trace.TracerProvider is not _kept["TracerProvider"]:  # reloaded by the test
        vars(sdk_trace).update(_kept)
