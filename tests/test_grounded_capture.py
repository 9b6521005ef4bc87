"""``CaptureGroundplane`` (what the pytest ``groundplane`` fixture yields): a guard on a test's
own providers, its counts and findings, and the exact text ``assert_grounded`` fails with."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest
from grounded_agent import POLICY_YAML, run_agent
from opentelemetry import metrics, trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from groundplane_otel.errors import ClaimsUnsupported
from groundplane_otel.otel import GuardConfig
from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel.install import active_guards
from groundplane_otel.otel.policy import PolicyError, load_policy
from groundplane_otel.otel.testing import CaptureGroundplane

Failed = pytest.fail.Exception
CHECK = "check superlative(fact='sales', field='winner'), field 'winner', fact 'sales'"
HINT = (
    "(content capture is off: install with capture_content=True to see the claimed and "
    "supported values)"
)


@pytest.fixture
def policy_file(tmp_path: Path) -> Path:
    path = tmp_path / "policy.yaml"
    path.write_text(POLICY_YAML, encoding="utf-8")
    return path


@pytest.fixture
def config(policy_file: Path) -> GuardConfig:
    return load_policy(policy_file)


@pytest.fixture
def capture(policy_file: Path) -> Iterator[CaptureGroundplane]:
    made = CaptureGroundplane(base_dir=policy_file.parent)
    yield made
    made.close()


def failure(capture: CaptureGroundplane, **kwargs: object) -> str:
    with pytest.raises(Failed) as raised:
        capture.assert_grounded(**kwargs)  # type: ignore[arg-type]
    return raised.value.msg or ""


def ids(capture: CaptureGroundplane, name: str) -> list[str]:
    return [
        f"(trace {span.context.trace_id:032x}, span {span.context.span_id:016x})"
        for span in capture.spans()
        if span.name == name and span.context is not None
    ]


def test_a_grounded_run_passes_and_is_counted(capture: CaptureGroundplane) -> None:
    """A policy file (relative to base_dir) installs; a right answer passes, counted once."""
    capture.install("policy.yaml")
    run_agent(capture.tracer, "EU")
    assert capture.outcomes() == {"answer": {"passed": 1}}
    assert capture.findings() == ()
    capture.assert_grounded()
    capture.assert_grounded(expect_outputs=1, boundary="answer")


def test_a_wrong_answer_fails_with_values_when_content_is_captured(
    capture: CaptureGroundplane, config: GuardConfig
) -> None:
    """Observe + content capture: the agent runs on; the failure names the boundary, check,
    reason, span and ids, and the claimed and supported values — exactly."""
    capture.install(config, mode="observe", capture_content=True)
    run_agent(capture.tracer, "US")
    assert capture.outcomes() == {"answer": {"flagged": 1}}
    (where,) = ids(capture, "chat gpt-test")
    assert failure(capture) == "\n".join(
        [
            "groundplane: 1 of 1 checked output(s) not grounded",
            "outputs: boundary 'answer': 1 flagged",
            "finding 1 of 1: unsupported (wrong_winner) at boundary 'answer'",
            f"  {CHECK}",
            f"  on span 'chat gpt-test' {where}",
            '  claimed "US", supported "EU"',
            "  unsupported claim in field 'winner': model said 'US', registered facts support "
            "'EU' | fact='sales' | provenance=top_sales() | computed argmax on 'total' is 'EU' "
            "(10); 'US' ranked #2 at 7",
        ]
    )


def test_an_enforced_block_raises_in_the_agent_and_fails_without_values(
    capture: CaptureGroundplane, config: GuardConfig
) -> None:
    """Enforce (the policy's mode): the agent gets ClaimsUnsupported; the assertion reports
    the blocked output with no content, and says how to see it."""
    capture.install(config)
    with pytest.raises(ClaimsUnsupported):
        run_agent(capture.tracer, "US")
    (where,) = ids(capture, "chat gpt-test")
    assert failure(capture) == "\n".join(
        [
            "groundplane: 1 of 1 checked output(s) not grounded",
            "outputs: boundary 'answer': 1 blocked",
            "finding 1 of 1: unsupported (wrong_winner) at boundary 'answer'",
            f"  {CHECK}",
            f"  on span 'chat gpt-test' {where}",
            HINT,
        ]
    )


def test_no_guarded_output_fails_unless_none_is_expected(
    capture: CaptureGroundplane, config: GuardConfig
) -> None:
    """An agent traced with another (here the global, no-op) provider is never seen: the
    assertion fails saying so; at_least=0 accepts it."""
    capture.install(config)
    run_agent(trace.get_tracer("elsewhere"), "EU")
    assert capture.outcomes() == {}
    assert failure(capture) == (
        "groundplane: expected at least 1 checked output(s), saw 0\n"
        "outputs: none counted — is the agent traced with groundplane.tracer_provider, and "
        "does a boundary of the policy match its spans?"
    )
    capture.assert_grounded(at_least=0)


def test_expect_outputs_is_an_exact_count(capture: CaptureGroundplane, config: GuardConfig) -> None:
    """Two grounded answers where one is expected fail; at_least=2 passes, 3 does not."""
    capture.install(config)
    run_agent(capture.tracer, "EU")
    run_agent(capture.tracer, "EU")
    assert failure(capture, expect_outputs=1) == (
        "groundplane: expected 1 checked output(s), saw 2\noutputs: boundary 'answer': 2 passed"
    )
    capture.assert_grounded(at_least=2)
    assert failure(capture, at_least=3).startswith(
        "groundplane: expected at least 3 checked output(s), saw 2\n"
    )


def test_an_agent_that_never_answers_is_an_error_finding(
    capture: CaptureGroundplane, config: GuardConfig
) -> None:
    """A matched agent run with no answer is error/no_output (never silence), on the agent
    span, and it does not count as a checked-and-grounded output."""
    capture.install(config, mode="observe")
    run_agent(capture.tracer, None)
    (where,) = ids(capture, "invoke_agent analyst")
    assert failure(capture) == "\n".join(
        [
            "groundplane: 1 of 1 checked output(s) not grounded",
            "outputs: boundary 'answer': 1 error",
            "finding 1 of 1: error (no_output) at boundary 'answer'",
            f"  on span 'invoke_agent analyst' {where}",
            HINT,
        ]
    )


def test_echoed_values_are_capped_and_at_most_ten_findings_listed(
    capture: CaptureGroundplane, config: GuardConfig
) -> None:
    """A 300-character claim is shown as 200 characters and an ellipsis; past ten findings
    the rest are summed up, and findings() still has them all."""
    capture.install(config, mode="observe", capture_content=True)
    long_claim = "X" * 300
    for _ in range(12):
        run_agent(capture.tracer, long_claim)
    text = failure(capture)
    shown = '"' + "X" * 199 + "…"
    assert text.count(f'  claimed {shown}, supported "EU"') == 10
    assert text.splitlines()[-1] == "… and 2 more finding(s) (groundplane.findings() has all)"
    assert text.startswith("groundplane: 12 of 12 checked output(s) not grounded\n")
    assert len(capture.findings()) == 12
    assert all(len(line) < 320 for line in text.splitlines())


def test_a_boundary_filter_counts_only_that_boundary(
    capture: CaptureGroundplane, config: GuardConfig
) -> None:
    """boundary= restricts counts and findings; an unknown boundary is a ValueError."""
    capture.install(config)
    run_agent(capture.tracer, "EU")
    capture.assert_grounded(boundary="answer", expect_outputs=1)
    with pytest.raises(ValueError, match=r"^unknown boundary 'nope' \(configured: answer\)$"):
        capture.assert_grounded(boundary="nope")


def test_mode_overrides_every_boundary_and_content_overrides_the_policy(
    capture: CaptureGroundplane, config: GuardConfig
) -> None:
    """mode= wins over a boundary's own mode (no exception reaches the agent);
    capture_content= over the policy's switch."""
    enforced = tuple(dataclasses.replace(b, mode="enforce") for b in config.boundaries)
    guard = capture.install(dataclasses.replace(config, boundaries=enforced), mode="observe")
    run_agent(capture.tracer, "US")
    assert capture.outcomes() == {"answer": {"flagged": 1}}
    assert [spec.mode for spec in guard.config.boundaries] == [None]
    assert (guard.config.mode, guard.config.capture_content) == ("observe", False)


def test_bad_arguments_are_clear_errors(capture: CaptureGroundplane, config: GuardConfig) -> None:
    """Each misuse is an early, exact error: no guard yet, bad policy, mode, content switch,
    counts, a second install, a missing policy file (named by its resolved path)."""
    with pytest.raises(RuntimeError, match=r"^groundplane: no guard installed; mark the test "):
        capture.assert_grounded()
    with pytest.raises(TypeError, match="^policy must be a GuardConfig or the path of a policy "):
        capture.install(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"^mode must be one of \('enforce', 'observe'\) or "):
        capture.install(config, mode="loud")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="^capture_content must be a bool or None, got 'yes'$"):
        capture.install(config, capture_content="yes")  # type: ignore[arg-type]
    with pytest.raises(PolicyError) as missing:
        capture.install("missing.yaml")
    assert str(missing.value).startswith(f"{capture.base_dir}/missing.yaml: <top level>: ")
    capture.install(config)
    with pytest.raises(RuntimeError, match="^groundplane: a guard is already installed"):
        capture.install(config)
    with pytest.raises(ValueError, match="^give at_least or expect_outputs, not both$"):
        capture.assert_grounded(at_least=1, expect_outputs=1)
    with pytest.raises(ValueError, match="^at_least must be an int >= 0, got -1$"):
        capture.assert_grounded(at_least=-1)
    with pytest.raises(TypeError, match="^expect_outputs must be an int >= 0, got True$"):
        capture.assert_grounded(expect_outputs=True)


def test_close_uninstalls_and_shuts_the_providers_down(tmp_path: Path, config: GuardConfig) -> None:
    """After close() the guard is inactive, spans reach no exporter, reading is refused;
    close() twice is fine."""
    capture = CaptureGroundplane(base_dir=tmp_path)
    guard = capture.install(config)
    assert guard in active_guards()
    capture.close()
    capture.close()
    assert guard not in active_guards()
    assert capture.closed
    run_agent(capture.tracer, "US")  # no guard, no exporter: nothing raised, nothing kept
    assert capture.spans() == ()
    with pytest.raises(RuntimeError, match="already shut down"):
        capture.outcomes()


def test_the_global_providers_are_never_touched(capture: CaptureGroundplane) -> None:
    """Installing and running leaves the global tracer and meter providers as they were."""
    before = (trace.get_tracer_provider(), metrics.get_meter_provider())
    capture.install("policy.yaml")
    run_agent(capture.tracer, "EU")
    assert (trace.get_tracer_provider(), metrics.get_meter_provider()) == before
    assert capture.tracer_provider is not before[0]


def test_outcomes_and_findings_come_from_the_evaluations(capture: CaptureGroundplane) -> None:
    """The fixture collects the guard's Evaluations as they are decided: its outcomes and
    findings are theirs, on the guarded span's ids, and the metric agrees."""
    capture.install("policy.yaml", mode="observe", capture_content=True)
    run_agent(capture.tracer, "EU")
    run_agent(capture.tracer, "US")
    evaluations = capture.evaluations()
    assert [(e.boundary, e.outcome) for e in evaluations] == [
        ("answer", "passed"),
        ("answer", "flagged"),
    ]
    assert capture.outcomes() == {"answer": {"passed": 1, "flagged": 1}}
    (finding,) = capture.findings()
    (claim,) = evaluations[1].findings
    assert (finding.boundary, finding.result, finding.reason) == (
        "answer",
        claim.result,
        claim.reason,
    )
    assert finding.span_name == "chat gpt-test"
    assert (finding.claimed, finding.supported) == ('"US"', '"EU"')
    assert f"(trace {finding.trace_id}, span {finding.span_id})" == ids(capture, "chat gpt-test")[1]


def test_a_metric_counting_an_output_no_evaluation_decided_fails(
    capture: CaptureGroundplane,
) -> None:
    """``groundplane.outputs`` counting one output more than the evaluations: reading the
    counts fails, naming both."""
    capture.install("policy.yaml")
    run_agent(capture.tracer, "EU")
    meter = capture.meter_provider.get_meter(sc.METER_NAME)
    meter.create_counter(sc.METRIC_OUTPUTS).add(1, {sc.BOUNDARY: "answer", sc.OUTCOME: "passed"})
    message = (
        "groundplane: the guard's metrics disagree with its evaluations: groundplane.outputs "
        "counts {'answer/passed': 2}, the evaluations {'answer/passed': 1}"
    )
    with pytest.raises(AssertionError) as raised:
        capture.outcomes()
    assert str(raised.value) == message
    with pytest.raises(AssertionError) as raised:
        capture.assert_grounded()
    assert str(raised.value) == message


def test_an_evaluation_the_metric_missed_fails(capture: CaptureGroundplane) -> None:
    """A metric reader that saw none of the guard's counts: the evaluations say one output."""
    capture.install("policy.yaml")
    run_agent(capture.tracer, "EU")
    capture.metric_reader = InMemoryMetricReader()
    MeterProvider(metric_readers=[capture.metric_reader], shutdown_on_exit=False)
    with pytest.raises(AssertionError) as raised:
        capture.outcomes()
    assert str(raised.value) == (
        "groundplane: the guard's metrics disagree with its evaluations: groundplane.outputs "
        "counts {}, the evaluations {'answer/passed': 1}"
    )
