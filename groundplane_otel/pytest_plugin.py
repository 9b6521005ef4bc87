"""The pytest plugin (entry point ``pytest11`` named ``groundplane``): grounded agent tests.

Opt-in: loading this module registers the ``groundplane`` marker and fixture and nothing else —
no core module (the package namespace loads its names on first use), no OpenTelemetry import, no
provider, no guard — until a test requests the fixture::

    @pytest.mark.groundplane(policy="policy.yaml", mode="observe", capture_content=True)
    def test_report_is_grounded(groundplane):
        run_agent(tracer_provider=groundplane.tracer_provider)
        groundplane.assert_grounded()

The fixture yields a :class:`groundplane_otel.otel.testing.CaptureGroundplane`: the test's own
SDK providers with in-memory exporters, and the guard installed from the marker (or later by
``groundplane.install(policy)``). The guard is uninstalled and the providers are shut down at
teardown. Disable the plugin with ``-p no:groundplane``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, Final, NoReturn

import pytest

if TYPE_CHECKING:
    from groundplane_otel.otel.testing import CaptureGroundplane

__all__ = ["groundplane", "pytest_configure", "pytest_runtest_setup"]

MARKER: Final = "groundplane"
_MARKER_ARGUMENTS: Final = ("policy", "mode", "capture_content")
_MARKER_HELP: Final = (
    "groundplane(policy, *, mode=None, capture_content=None): install a grounding guard from "
    "policy (a policy file, relative to the test file, or a GuardConfig) on the groundplane "
    "fixture's providers; mode/capture_content override the policy's."
)


def pytest_configure(config: pytest.Config) -> None:
    """Register the marker (so ``--strict-markers`` accepts it and ``--markers`` lists it)."""
    config.addinivalue_line("markers", _MARKER_HELP)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A marked test that does not request the fixture would check nothing: an error."""
    if item.get_closest_marker(MARKER) is None:
        return
    if "groundplane" not in getattr(item, "fixturenames", ()):
        pytest.fail(
            f"{item.nodeid}: @pytest.mark.groundplane needs the groundplane fixture "
            "(add a `groundplane` argument and call groundplane.assert_grounded())",
            pytrace=False,
        )


@pytest.fixture
def groundplane(request: pytest.FixtureRequest) -> Iterator[CaptureGroundplane]:
    """A grounding guard on this test's own tracer/meter/logger providers (never the global
    ones). Installed from ``@pytest.mark.groundplane(policy=...)`` when the test (or its class
    or module) is marked, else by ``groundplane.install(policy)``; ``assert_grounded()`` fails
    the test with the findings. Uninstalled and shut down at teardown."""
    from groundplane_otel.otel.testing import CaptureGroundplane

    capture = CaptureGroundplane(base_dir=request.path.parent)
    try:
        marker = request.node.get_closest_marker(MARKER)
        if marker is not None:
            policy, options = _marker_arguments(marker.args, marker.kwargs)
            try:
                capture.install(policy, **options)
            except (TypeError, ValueError) as exc:  # PolicyError is a ValueError
                _marker_error(str(exc))  # located already: no plugin traceback
        yield capture
    finally:
        capture.close()


def _marker_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    """``(policy, {mode, capture_content})`` from the marker, or a setup error naming it."""
    unknown = sorted(set(kwargs) - set(_MARKER_ARGUMENTS))
    if unknown:
        _marker_error(f"unknown argument(s) {unknown} (allowed: {', '.join(_MARKER_ARGUMENTS)})")
    if len(args) > 1:
        _marker_error(f"takes one positional argument (the policy), got {len(args)}")
    if args and "policy" in kwargs:
        _marker_error("policy given twice (positionally and as policy=)")
    if not args and "policy" not in kwargs:
        _marker_error("needs a policy: @pytest.mark.groundplane(policy='policy.yaml')")
    policy = args[0] if args else kwargs["policy"]
    options = {key: value for key, value in kwargs.items() if key != "policy"}
    return policy, options


def _marker_error(problem: str) -> NoReturn:
    pytest.fail(f"@pytest.mark.groundplane: {problem}", pytrace=False)
