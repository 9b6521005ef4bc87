"""pytest plugin of the peer run (``tests/peer_sdk/run.py``): ``install()`` on every SDK
``TracerProvider`` the tests create — observe mode, one boundary per string literal of the test
sources, so every span a test names is matched and checked when it ends.

Loaded with ``-p groundplane_everywhere`` (this folder on ``PYTHONPATH``). At the end it writes
what it did to ``$GROUNDPLANE_PEER_SUMMARY`` (JSON): providers guarded, of them riding on the
provider's dispatch, outputs checked, internal errors.
"""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import TracerProvider

from groundplane_otel.checks.superlative import superlative
from groundplane_otel.otel import BoundarySpec, FactSpec, Guard, GuardConfig, MatchSpec, install
from groundplane_otel.otel._engine.sdk import sdk_layout

SUMMARY_ENV = "GROUNDPLANE_PEER_SUMMARY"
ROOTS_ENV = "GROUNDPLANE_PEER_NAME_ROOTS"  # more source folders to take span names from
_plain_init = TracerProvider.__init__
_reader = InMemoryMetricReader()
_guards: list[Guard] = []
_state: dict[str, Any] = {"config": None, "installing": False, "riding": 0}


def span_names(root: Path) -> list[str]:
    """Every one-line string literal of 1 to 80 characters in the ``.py`` files under
    ``root`` (an f-string's literal parts included): the span names the tests write out."""
    names: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            text = node.value if isinstance(node, ast.Constant) else None
            if isinstance(text, str) and 0 < len(text) <= 80 and "\n" not in text:
                names.add(text)
    return sorted(names)


def every_span(names: list[str]) -> GuardConfig:
    """One boundary per span name, each checking a ranking fact no test records."""
    fact = FactSpec("sales", "top_sales", kind="ranking", key="region", score="total")
    check = superlative(fact="sales", winner_field="winner")
    boundaries = tuple(
        BoundarySpec(f"b{i}", ("sales",), (check,), match=MatchSpec(span_name=name))
        for i, name in enumerate(names)
    )
    return GuardConfig(facts=(fact,), boundaries=boundaries, mode="observe")


def _guarded_init(self: TracerProvider, *args: Any, **kwargs: Any) -> None:
    _plain_init(self, *args, **kwargs)
    if _state["installing"]:  # a provider the guard itself makes (none today): left plain
        return
    _state["installing"] = True
    try:
        guard = install(
            _state["config"],
            tracer_provider=self,
            meter_provider=_state["meter_provider"],
            raise_internal_errors=True,
        )
    finally:
        _state["installing"] = False
    _guards.append(guard)
    _state["riding"] += guard.processor._leave_dispatch is not None


def pytest_configure(config: pytest.Config) -> None:
    """Build the policy from the test sources, then guard every provider made from now on."""
    extra = os.environ.get(ROOTS_ENV, "")
    roots = [config.rootpath / "tests", *(Path(p) for p in extra.split(os.pathsep) if p)]
    names = sorted({name for root in roots for name in span_names(root)})
    _state["config"] = every_span(names)
    _state["meter_provider"] = MeterProvider(metric_readers=[_reader], shutdown_on_exit=False)
    sdk_layout()  # probed before the patch: its throwaway provider stays plain
    TracerProvider.__init__ = _guarded_init  # type: ignore[method-assign]


def pytest_unconfigure(config: pytest.Config) -> None:
    TracerProvider.__init__ = _plain_init  # type: ignore[method-assign]
    target = os.environ.get(SUMMARY_ENV)
    if target:
        Path(target).write_text(json.dumps(summary(), indent=2), encoding="utf-8")


def summary() -> dict[str, int]:
    """What the guards did in this run."""
    outputs = 0
    data = _reader.get_metrics_data()
    for resource in data.resource_metrics if data else ():
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                if metric.name == "groundplane.outputs":
                    outputs += sum(int(point.value) for point in metric.data.data_points)
    return {
        "providers_guarded": len(_guards),
        "riding": _state["riding"],
        "boundaries": len(_state["config"].boundaries) if _state["config"] else 0,
        "outputs_checked": outputs,
        "internal_errors": sum(guard.processor.internal_errors for guard in _guards),
    }
