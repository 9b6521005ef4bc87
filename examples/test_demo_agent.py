"""The demo agent as a grounded pytest suite (the ``groundplane`` plugin, installed with the
package): ``pytest examples/test_demo_agent.py``.

One test passes; the other fails on purpose — its failure is what your CI shows when the agent
starts naming the runner-up as the winner: the boundary, check, reason code, span and trace ids,
and (content capture on, in a test) the claimed and supported values.
"""

from __future__ import annotations

import pytest
from demo_agent import ScriptedModel, build_warehouse, right_answer, run_agent, wrong_winner

from groundplane_otel.otel.testing import CaptureGroundplane

# Every test in this file: the demo's policy, in observe mode so the agent runs to its answer
# and the assertion reports every finding; values shown (test data, not customer data).
pytestmark = pytest.mark.groundplane("policy.yaml", mode="observe", capture_content=True)


def test_the_campaign_report_is_grounded(groundplane: CaptureGroundplane) -> None:
    """The right answer: exactly one guarded output, and it passed."""
    run_agent(groundplane.tracer, ScriptedModel(right_answer), build_warehouse())
    assert groundplane.outcomes() == {"campaign_report": {"passed": 1}}
    groundplane.assert_grounded(expect_outputs=1)


def test_a_regression_fails_the_suite(groundplane: CaptureGroundplane) -> None:
    """Fails on purpose: the runner-up named as the winner (with its real CTR)."""
    run_agent(groundplane.tracer, ScriptedModel(wrong_winner), build_warehouse())
    groundplane.assert_grounded()
