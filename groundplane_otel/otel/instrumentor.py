"""Zero-code setup: the ``groundplane`` entry point of ``opentelemetry_instrumentor``.

    GROUNDPLANE_POLICY=policy.yaml opentelemetry-instrument python app.py

``opentelemetry-instrument`` configures the SDK providers, then calls ``instrument()`` on every
installed instrumentor; this one loads the policy named by ``GROUNDPLANE_POLICY``, applies the
environment overrides and installs the guard on those providers.
``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=groundplane`` switches it off.

Startup problems are logged on the ``groundplane_otel`` logger and leave the application running
unguarded, like every instrumentation: no policy or no SDK tracer provider is a WARNING, an
invalid policy an ERROR carrying the PolicyError (file, line, key path, fix) that says the app
runs UNGUARDED. Strict (``GROUNDPLANE_STRICT=true``, or the policy's top level ``strict: true``
when the file reads that far): an invalid policy stops the process at start-up, exit status 2.
A guard already installed on the provider (in code) stays the only one: an ERROR says the
policy's is not. Run ``groundplane-otel check-policy`` in CI so an invalid policy never reaches
a deployment.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Collection
from typing import Any

from opentelemetry import metrics, trace
from opentelemetry._logs import get_logger_provider
from opentelemetry.instrumentation.instrumentor import BaseInstrumentor  # type: ignore[attr-defined]
from opentelemetry.sdk._logs import LoggerProvider as SdkLoggerProvider
from opentelemetry.sdk.trace import TracerProvider as SdkTracerProvider

from groundplane_otel.otel.environment import (
    GROUNDPLANE_POLICY,
    GROUNDPLANE_STRICT,
    apply_environment,
    policy_path_from_env,
    strict_from_env,
)
from groundplane_otel.otel.install import Guard, install
from groundplane_otel.otel.policy import PolicyError, load_policy
from groundplane_otel.otel.policy._yaml import read_yaml

__all__ = ["GroundplaneInstrumentor"]

logger = logging.getLogger("groundplane_otel")

_DISABLE = "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=groundplane"


class GroundplaneInstrumentor(BaseInstrumentor):  # type: ignore[misc]
    """Installs the guard from ``GROUNDPLANE_POLICY`` on the configured SDK providers."""

    guard: Guard | None = None

    def instrumentation_dependencies(self) -> Collection[str]:
        """None: the guard instruments the SDK pipeline, not a third-party library."""
        return ()

    def _instrument(self, **kwargs: Any) -> None:
        path = policy_path_from_env()
        if path is None:
            logger.warning(
                "groundplane: %s is not set, so no guard is installed and no output is checked. "
                "Set %s=/path/to/policy.yaml, or silence this with %s",
                GROUNDPLANE_POLICY,
                GROUNDPLANE_POLICY,
                _DISABLE,
            )
            return
        tracer_provider = kwargs.get("tracer_provider") or trace.get_tracer_provider()
        if not isinstance(tracer_provider, SdkTracerProvider):
            logger.warning(
                "groundplane: no OpenTelemetry SDK tracer provider is configured (found %s), so "
                "the guard from %s cannot see any span and is not installed. Run the app under "
                "opentelemetry-instrument with opentelemetry-distro installed, or call "
                "trace.set_tracer_provider(TracerProvider()) before instrumenting",
                type(tracer_provider).__name__,
                path,
            )
            return
        try:
            config = apply_environment(load_policy(path))
        except PolicyError as exc:
            if _strict(path):
                _exit_at_startup(exc)
            logger.error(
                "groundplane: invalid policy, the guard is NOT installed and the app runs "
                "UNGUARDED (no output is checked; set %s=true to stop at start-up instead): %s",
                GROUNDPLANE_STRICT,
                exc,
            )
            return
        logger_provider = kwargs.get("logger_provider") or get_logger_provider()
        try:
            self.guard = install(
                config,
                tracer_provider=tracer_provider,
                meter_provider=kwargs.get("meter_provider") or metrics.get_meter_provider(),
                logger_provider=(
                    logger_provider if isinstance(logger_provider, SdkLoggerProvider) else None
                ),
            )
        except (RuntimeError, ValueError) as exc:  # a guard in code already; events: log
            # with no SDK logger provider
            logger.error("groundplane: the guard from %s is NOT installed: %s", path, exc)
            return
        self.guard.origin = f"opentelemetry-instrument ({GROUNDPLANE_POLICY}={path})"
        logger.info(
            "groundplane: guard installed from %s (mode %s; boundaries: %s)",
            path,
            config.mode,
            ", ".join(spec.name for spec in config.boundaries),
        )

    def _uninstrument(self, **kwargs: Any) -> None:
        guard, self.guard = self.guard, None
        if guard is not None:
            guard.uninstall()


def _strict(path: str) -> bool:
    """Is start-up strict? ``GROUNDPLANE_STRICT`` when set, else the policy's own top-level
    ``strict: true`` if the file can be read that far (best effort: the policy is invalid)."""
    strict = strict_from_env()
    if strict is not None:
        return strict
    try:
        data, _ = read_yaml(path)  # the loader's safe reader (plain data, bounded)
    except PolicyError:  # not even YAML: only the environment can make it strict
        return False
    return isinstance(data, dict) and data.get("strict") is True


def _exit_at_startup(error: PolicyError) -> None:
    """Strict: stop the process before the app runs (exit status 2). ``opentelemetry-instrument``
    runs instrumentors inside ``sitecustomize``, where an exception is swallowed and a
    ``SystemExit`` is a "Fatal Python error" traceback: so the located error is logged and
    written to stderr, and the process exits at once."""
    message = (
        f"groundplane: invalid policy and strict mode is on, so the process stops before the "
        f"app runs (exit status 2): {error}"
    )
    logger.critical(message)
    for handler in logging.getLogger().handlers + logger.handlers:
        handler.flush()
    if not logger.hasHandlers() and logging.lastResort is None:  # nothing printed it
        sys.stderr.write(message + "\n")
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(2)
