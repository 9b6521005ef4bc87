"""Environment variables: each reader's vocabulary, the warning on a bad value (naming the
variable and the allowed values), and how the overrides apply to a loaded policy."""

from __future__ import annotations

import logging

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.sampling import ALWAYS_ON

from groundplane_otel.otel import install
from groundplane_otel.otel.config import GuardConfig
from groundplane_otel.otel.environment import (
    apply_environment,
    capture_content_from_env,
    mode_from_env,
    policy_path_from_env,
    raise_internal_errors_from_env,
)


def test_policy_path_is_read_trimmed_and_empty_means_unset() -> None:
    """GROUNDPLANE_POLICY gives the path; unset or blank is None."""
    assert policy_path_from_env({"GROUNDPLANE_POLICY": " /etc/gp.yaml "}) == "/etc/gp.yaml"
    assert policy_path_from_env({"GROUNDPLANE_POLICY": "  "}) is None
    assert policy_path_from_env({}) is None


@pytest.mark.parametrize(("value", "mode"), [("observe", "observe"), ("ENFORCE", "enforce")])
def test_mode_is_case_insensitive(value: str, mode: str) -> None:
    """GROUNDPLANE_MODE accepts enforce/observe in any case."""
    assert mode_from_env({"GROUNDPLANE_MODE": value}) == mode


def test_bad_mode_warns_naming_variable_and_allowed_values(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A typo is ignored (None: the policy's mode stays) with a warning saying what is allowed."""
    with caplog.at_level(logging.WARNING, logger="groundplane_otel"):
        assert mode_from_env({"GROUNDPLANE_MODE": "shadow"}) is None
    assert caplog.messages == [
        "groundplane: ignoring GROUNDPLANE_MODE='shadow'; allowed values: enforce, observe"
    ]


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        ({}, None),
        ({"GROUNDPLANE_CAPTURE_CONTENT": "true"}, True),
        ({"GROUNDPLANE_CAPTURE_CONTENT": "Off"}, False),
        ({"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"}, True),
        ({"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "span_and_event"}, True),
        ({"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "EVENT_ONLY"}, None),
        ({"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "NO_CONTENT"}, None),
        (
            {
                "GROUNDPLANE_CAPTURE_CONTENT": "false",
                "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
            },
            False,
        ),
    ],
)
def test_content_capture_sources_and_precedence(
    environ: dict[str, str], expected: bool | None
) -> None:
    """GROUNDPLANE_CAPTURE_CONTENT wins; the GenAI switch only turns content on (SPAN_*)."""
    assert capture_content_from_env(environ) is expected


def test_bad_content_values_warn_for_each_variable(caplog: pytest.LogCaptureFixture) -> None:
    """Each unreadable switch is named with its allowed values, and content stays off."""
    environ = {
        "GROUNDPLANE_CAPTURE_CONTENT": "maybe",
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true",
    }
    with caplog.at_level(logging.WARNING, logger="groundplane_otel"):
        assert capture_content_from_env(environ) is None
    assert caplog.messages == [
        "groundplane: ignoring GROUNDPLANE_CAPTURE_CONTENT='maybe'; allowed values: true, 1, "
        "yes, on, false, 0, no, off",
        "groundplane: ignoring OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT='true'; "
        "allowed values: NO_CONTENT, SPAN_ONLY, EVENT_ONLY, SPAN_AND_EVENT",
    ]


def test_apply_environment_overrides_mode_and_content_only_when_set() -> None:
    """Overrides replace the policy's top-level mode and content switch; unset keeps both."""
    config = GuardConfig(mode="enforce", capture_content=True)
    assert apply_environment(config, {}) is config
    changed = apply_environment(
        config, {"GROUNDPLANE_MODE": "observe", "GROUNDPLANE_CAPTURE_CONTENT": "0"}
    )
    assert (changed.mode, changed.capture_content) == ("observe", False)
    assert apply_environment(config, {"GROUNDPLANE_MODE": "observe"}).capture_content is True


@pytest.mark.parametrize(
    ("value", "raises"),
    [("1", True), ("TRUE", True), ("on", True), ("yes", True), ("0", False), ("off", False)],
)
def test_raise_internal_errors_reads_the_boolean_vocabulary(
    monkeypatch: pytest.MonkeyPatch, value: str, raises: bool
) -> None:
    """GROUNDPLANE_OTEL_RAISE_INTERNAL_ERRORS takes the true/false words of every switch, and
    the guard ``install`` builds without the flag follows it."""
    monkeypatch.setenv("GROUNDPLANE_OTEL_RAISE_INTERNAL_ERRORS", value)
    assert raise_internal_errors_from_env() is raises
    assert installed_guard_raises() is raises


@pytest.mark.parametrize("value", ["treu", "enabled", "2"])
def test_a_typo_in_raise_internal_errors_warns_with_the_allowed_values(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, value: str
) -> None:
    """A typo is off (production's safe default) and no longer silent: installing the guard
    warns, naming the variable, echoing the value and listing what is allowed."""
    monkeypatch.setenv("GROUNDPLANE_OTEL_RAISE_INTERNAL_ERRORS", value)
    with caplog.at_level(logging.WARNING, logger="groundplane_otel"):
        assert installed_guard_raises() is False
    assert [m for m in caplog.messages if "RAISE_INTERNAL" in m] == [
        f"groundplane: ignoring GROUNDPLANE_OTEL_RAISE_INTERNAL_ERRORS={value!r}; allowed "
        "values: true, 1, yes, on, false, 0, no, off"
    ]


def installed_guard_raises() -> bool:
    """``raise_internal_errors`` of a guard installed on real SDK providers without the flag."""
    tracer_provider = TracerProvider(sampler=ALWAYS_ON)
    guard = install(GuardConfig(), tracer_provider=tracer_provider, meter_provider=MeterProvider())
    try:
        return guard.processor.raise_internal_errors
    finally:
        guard.uninstall()
        tracer_provider.shutdown()
