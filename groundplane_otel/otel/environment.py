"""Every environment variable groundplane_otel reads, documented where it is defined.

Each reader returns ``None`` when the variable is unset or empty, so the caller keeps its own
default. A value outside the allowed vocabulary is ignored with a warning (logger
``groundplane_otel``) that names the variable, echoes the value and lists what is allowed: a typo
in a deployment manifest must be visible, never silently change behaviour.
"""

from __future__ import annotations

import dataclasses
import logging
import os
from collections.abc import Mapping
from typing import Final

from groundplane_otel._echo import echo
from groundplane_otel.otel.config import EVENT_SINKS, MODES, EventSink, GuardConfig, Mode

__all__ = [
    "GUARD_LOGGER",
    "GROUNDPLANE_CAPTURE_CONTENT",
    "GROUNDPLANE_MODE",
    "GROUNDPLANE_OTEL_EVALUATION_EVENTS",
    "GROUNDPLANE_OTEL_EVENTS",
    "GROUNDPLANE_OTEL_RAISE_INTERNAL_ERRORS",
    "GROUNDPLANE_POLICY",
    "GROUNDPLANE_STRICT",
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT",
    "CONTENT_OFF_FIX",
    "apply_environment",
    "capture_content_from_env",
    "genai_content_on",
    "events_from_env",
    "mode_from_env",
    "policy_path_from_env",
    "raise_internal_errors_from_env",
    "strict_from_env",
]

logger = logging.getLogger("groundplane_otel")

# The logger of the guard's own decisions and bugs (internal errors, unknown boundaries,
# swallowed refusals): one name, whichever part of the engine or driver logs.
GUARD_LOGGER = "groundplane_otel.guard"

GROUNDPLANE_POLICY: Final = "GROUNDPLANE_POLICY"
"""Path of the YAML policy file the zero-code instrumentor loads (``opentelemetry-instrument``).

Unset: the ``groundplane`` instrumentor installs nothing and warns once at startup.
"""

GROUNDPLANE_MODE: Final = "GROUNDPLANE_MODE"
"""``enforce`` or ``observe``: overrides the policy's top-level ``mode`` (not a boundary's own).

Lets one policy file serve a shadow rollout (``observe``) and production (``enforce``).
"""

GROUNDPLANE_STRICT: Final = "GROUNDPLANE_STRICT"
"""``true`` or ``false`` (also ``1``/``0``, ``yes``/``no``, ``on``/``off``): strict mode, overriding
the policy's ``strict``. Under ``opentelemetry-instrument`` an invalid policy then stops the
process at start-up (exit status 2, the located PolicyError on stderr) instead of leaving the
app running unguarded; at run time a boundary that matched nothing in ``coverage_after``
requests that recorded its facts turns the answers of such requests into ``error`` outcomes
(refused in enforce mode). See ``GuardConfig.strict``.
"""

GROUNDPLANE_CAPTURE_CONTENT: Final = "GROUNDPLANE_CAPTURE_CONTENT"
"""``true`` or ``false`` (also ``1``/``0``, ``yes``/``no``, ``on``/``off``): put claimed and
supported values and the human message on the guardrail events. Overrides the policy's
``capture_content`` and the GenAI switch below. Off by default: values can be customer data.
"""

OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: Final = (
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
)
"""The OpenTelemetry GenAI content switch (``NO_CONTENT``, ``SPAN_ONLY``, ``EVENT_ONLY``,
``SPAN_AND_EVENT``). Honoured when ``GROUNDPLANE_CAPTURE_CONTENT`` is unset: ``SPAN_ONLY`` and
``SPAN_AND_EVENT`` switch content capture on (our events are span events), the other values
leave the policy's choice as it is. It never switches content off that the policy switched on.
"""

GROUNDPLANE_OTEL_RAISE_INTERNAL_ERRORS: Final = "GROUNDPLANE_OTEL_RAISE_INTERNAL_ERRORS"
"""``true`` or ``false`` (also ``1``/``0``, ``yes``/``no``, ``on``/``off``): a bug inside the
guard re-raises instead of being logged and counted. Anything else is ignored with a warning.

For the guard's own tests and debugging only; production keeps the default (off), so a guard bug
never breaks the application's spans or export. Read by ``guard.GroundplaneSpanProcessor``
(through ``raise_internal_errors_from_env``) when ``install`` is not given the flag.
"""

GROUNDPLANE_OTEL_EVENTS: Final = "GROUNDPLANE_OTEL_EVENTS"
"""``span`` or ``log`` (case-insensitive): where the guard writes its ``gen_ai.guardrail.result``
and ``gen_ai.evaluation.result`` events — span events (the default; also log records when
``install`` is given a ``logger_provider``) or log records only. Overrides the policy's
``events``. Anything else is ignored with a warning.
"""

GROUNDPLANE_OTEL_EVALUATION_EVENTS: Final = "GROUNDPLANE_OTEL_EVALUATION_EVENTS"
"""``true`` or ``false`` (also ``1``/``0``, ``yes``/``no``, ``on``/``off``): also write one
``gen_ai.evaluation.result`` event (the merged GenAI convention) per evaluated check, next to the
``gen_ai.guardrail.result`` events. Overrides the policy's ``evaluation_events`` (default on).
"""

CONTENT_OFF_FIX: Final = (
    "set OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY (util-genai "
    "instrumentations; true for the older ones), or "
    "OTEL_INSTRUMENTATION_GENAI_COMPLETION_HOOK=groundplane to hand the guard the messages with "
    "content capture off"
)
"""What to do when a span the guard needs carries no content: the switches of the
instrumentation (``GROUNDPLANE_CAPTURE_CONTENT`` only decides what the guard's own events
carry)."""

_TRUE: Final = ("true", "1", "yes", "on")
_FALSE: Final = ("false", "0", "no", "off")
_GENAI_ON: Final = ("SPAN_ONLY", "SPAN_AND_EVENT")
_GENAI_VALUES: Final = ("NO_CONTENT", "SPAN_ONLY", "EVENT_ONLY", "SPAN_AND_EVENT")


def _read(name: str, environ: Mapping[str, str] | None) -> str | None:
    value = (os.environ if environ is None else environ).get(name, "").strip()
    return value or None


def _ignored(name: str, value: str, allowed: tuple[str, ...]) -> None:
    logger.warning(
        "groundplane: ignoring %s=%s; allowed values: %s", name, echo(value), ", ".join(allowed)
    )


def policy_path_from_env(environ: Mapping[str, str] | None = None) -> str | None:
    """The policy file named by ``GROUNDPLANE_POLICY``, or None when unset."""
    return _read(GROUNDPLANE_POLICY, environ)


def mode_from_env(environ: Mapping[str, str] | None = None) -> Mode | None:
    """``GROUNDPLANE_MODE`` (case-insensitive), or None when unset or invalid (warns)."""
    value = _read(GROUNDPLANE_MODE, environ)
    if value is None:
        return None
    for mode in MODES:
        if value.lower() == mode:
            return mode
    _ignored(GROUNDPLANE_MODE, value, MODES)
    return None


def events_from_env(environ: Mapping[str, str] | None = None) -> EventSink | None:
    """``GROUNDPLANE_OTEL_EVENTS`` (case-insensitive), or None when unset or invalid (warns)."""
    value = _read(GROUNDPLANE_OTEL_EVENTS, environ)
    if value is None:
        return None
    for sink in EVENT_SINKS:
        if value.lower() == sink:
            return sink
    _ignored(GROUNDPLANE_OTEL_EVENTS, value, EVENT_SINKS)
    return None


def _switch(name: str, environ: Mapping[str, str] | None) -> bool | None:
    """A true/false variable: True, False, or None when unset or invalid (warns)."""
    value = _read(name, environ)
    if value is None:
        return None
    if value.lower() in _TRUE:
        return True
    if value.lower() in _FALSE:
        return False
    _ignored(name, value, _TRUE + _FALSE)
    return None


def raise_internal_errors_from_env(environ: Mapping[str, str] | None = None) -> bool:
    """``GROUNDPLANE_OTEL_RAISE_INTERNAL_ERRORS``: False when unset or invalid (warns)."""
    return _switch(GROUNDPLANE_OTEL_RAISE_INTERNAL_ERRORS, environ) is True


def strict_from_env(environ: Mapping[str, str] | None = None) -> bool | None:
    """``GROUNDPLANE_STRICT``: True, False, or None when unset or invalid (warns)."""
    return _switch(GROUNDPLANE_STRICT, environ)


def capture_content_from_env(environ: Mapping[str, str] | None = None) -> bool | None:
    """The content switch from the environment: True, False, or None (keep the policy's)."""
    capture = _switch(GROUNDPLANE_CAPTURE_CONTENT, environ)
    if capture is not None:
        return capture
    genai = _read(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, environ)
    if genai is None:
        return None
    if genai.upper() in _GENAI_ON:
        return True
    if genai.upper() not in _GENAI_VALUES:
        _ignored(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, genai, _GENAI_VALUES)
    return None


def genai_content_on(environ: Mapping[str, str] | None = None) -> bool:
    """Does ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` put content on spans, as the
    instrumentations read it (``SPAN_ONLY``/``SPAN_AND_EVENT``; ``true`` for the older ones)?
    What ``@tool`` follows to write a tool's arguments and result on its span."""
    value = _read(OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT, environ)
    return value is not None and value.upper() in (*_GENAI_ON, "TRUE")


def apply_environment(config: GuardConfig, environ: Mapping[str, str] | None = None) -> GuardConfig:
    """``config`` with the ``GROUNDPLANE_MODE``, content-capture, strict and evaluation-event
    overrides applied (and ``GROUNDPLANE_OTEL_EVENTS``)."""
    mode = mode_from_env(environ)
    if mode is not None:
        config = dataclasses.replace(config, mode=mode)
    capture = capture_content_from_env(environ)
    if capture is not None:
        config = dataclasses.replace(config, capture_content=capture)
    strict = strict_from_env(environ)
    if strict is not None:
        config = dataclasses.replace(config, strict=strict)
    evaluations = _switch(GROUNDPLANE_OTEL_EVALUATION_EVENTS, environ)
    if evaluations is not None:
        config = dataclasses.replace(config, evaluation_events=evaluations)
    events = events_from_env(environ)
    if events is not None:
        config = dataclasses.replace(config, events=events)
    return config
