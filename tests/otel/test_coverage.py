"""Coverage, live: a boundary whose match is one letter off, a fact whose tool never appears and
a tool span with no result are each named in one WARNING with what was seen, counted in
``groundplane.coverage``, and under ``strict`` the unmatched boundary's answers are refused."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from otel_harness import SALES_ROWS, Harness, answer, guardrail_events

from groundplane_otel import superlative
from groundplane_otel.errors import ClaimsUnsupported, UnsupportedClaim
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec
from groundplane_otel.otel.environment import apply_environment
from groundplane_otel.otel.policy import policy_from_mapping
from groundplane_otel.otel.result import OutputUnchecked

WRONG = answer({"winner": "US"})  # the facts say EU
UNMATCHED_WARNING = (
    "groundplane: boundary 'stock_answer' matched no LLM span in 3 traces that recorded its "
    "facts (stock); its match wants agent_name='inventry-bot'; agent names seen: inventory-bot "
    "(did you mean 'inventory-bot'?); its answers are NOT checked. Fix the match (or set "
    "groundplane.boundary='stock_answer' on the answer's span); DEBUG logging on "
    "groundplane_otel shows each span's match decision"
)


def config(agent: str = "inventry-bot", tool: str = "top_sales", **overrides: Any) -> GuardConfig:
    """The user's config: ``stock`` from ``tool``, boundary ``stock_answer`` on ``agent``."""
    fact = FactSpec("stock", tool, kind="ranking", key="region", score="total", path="rows")
    boundary = BoundarySpec(
        "stock_answer",
        ("stock",),
        (superlative(fact="stock", winner_field="winner"),),
        match=MatchSpec(agent_name=agent),
    )
    return GuardConfig(facts=(fact,), boundaries=(boundary,), coverage_after=3, **overrides)


def run(otel: Harness, traces: int, *, tool: str = "top_sales", result: Any = SALES_ROWS) -> None:
    """``traces`` requests of agent ``inventory-bot``: a tool call, then a wrong answer."""
    for _ in range(traces):
        with otel.agent("inventory-bot"):
            otel.tool(result, name=tool)
            otel.chat(WRONG)


def warnings_of(caplog: pytest.LogCaptureFixture) -> list[str]:
    """The coverage warnings (the harness's default sampler warns too, from sampling.py)."""
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == "groundplane_otel" and r.levelno == logging.WARNING and r.module == "coverage"
    ]


def coverage(otel: Harness) -> list[tuple[dict[str, Any], Any]]:
    return otel.metrics().get("groundplane.coverage", [])


def test_a_boundary_one_letter_off_warns_once_with_the_agent_names_seen(
    otel: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """Finding 2: wrong answers pass unchecked, and after 3 traces one WARNING says so, naming
    the agent seen with a did-you-mean; every trace counts ``unmatched``."""
    otel.install(config())
    with caplog.at_level(logging.WARNING, logger="groundplane_otel"):
        run(otel, 2)
        assert warnings_of(caplog) == []
        run(otel, 5)
    assert warnings_of(caplog) == [UNMATCHED_WARNING]
    assert coverage(otel) == [
        ({"groundplane.boundary": "stock_answer", "groundplane.coverage.outcome": "unmatched"}, 7)
    ]
    assert "groundplane.outputs" not in otel.metrics()  # nothing was checked


def test_a_matching_boundary_counts_matched_and_never_warns(
    otel: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """The right agent name: each trace counts ``matched``, no coverage warning."""
    otel.install(config(agent="inventory-bot", mode="observe"))
    with caplog.at_level(logging.WARNING, logger="groundplane_otel"):
        run(otel, 4)
    assert warnings_of(caplog) == []
    assert coverage(otel) == [
        ({"groundplane.boundary": "stock_answer", "groundplane.coverage.outcome": "matched"}, 4)
    ]


def test_debug_logs_each_match_decision_with_its_reason(
    otel: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """At DEBUG, every guardable span's match decision is logged with why."""
    otel.install(config())
    with caplog.at_level(logging.DEBUG, logger="groundplane_otel"):
        run(otel, 1)
    debug = [r.getMessage() for r in caplog.records if r.levelno == logging.DEBUG]
    assert (
        "groundplane: span 'chat gpt-test' (operation 'chat', agent names ['inventory-bot']) "
        "matched no boundary: 'stock_answer' wants agent_name='inventry-bot' on the span or an "
        "enclosing one"
    ) in debug


def test_a_fact_whose_tool_never_appears_names_the_tools_seen(
    otel: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """A FactSpec tool one letter off: after 3 calls to tools no fact reads, one WARNING."""
    otel.install(config(agent="inventory-bot", mode="observe"))
    with caplog.at_level(logging.WARNING, logger="groundplane_otel"):
        run(otel, 5, tool="top_sale")
    assert warnings_of(caplog) == [
        "groundplane: fact 'stock' (tool 'top_sales') was never recorded, while 3 calls to tools "
        "no fact reads were seen; tool names seen: top_sale (did you mean 'top_sale'?). Declare "
        "the tool by the name its spans carry (gen_ai.tool.name / tool.name)"
    ]


def test_a_tool_span_without_its_result_names_the_content_capture_switch(
    otel: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """Content capture off in the instrumentation: the declared tool's span has no result; the
    WARNING names the real cause and the exact variables, once."""
    otel.install(config(agent="inventory-bot", mode="observe"))
    with caplog.at_level(logging.WARNING, logger="groundplane_otel"):
        run(otel, 2, result=None)
    assert warnings_of(caplog) == [
        "groundplane: fact 'stock' was not recorded: a span of its tool 'top_sales' ended with "
        "no result on it (1 such traces so far), so every check reading it fails closed "
        "(fact_missing). The instrumentation did not capture content: set "
        "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY (util-genai; the older "
        "instrumentations take true), or OTEL_INSTRUMENTATION_GENAI_COMPLETION_HOOK=groundplane "
        "to hand the guard the tool results with content capture off, or record it in code with "
        "@tool('top_sales') (GROUNDPLANE_CAPTURE_CONTENT only decides what the guard's own "
        "events carry)"
    ]


def test_strict_refuses_the_answers_of_a_boundary_unmatched_after_n_traces(
    otel: Harness, caplog: pytest.LogCaptureFixture
) -> None:
    """Strict: after 3 unmatched traces the boundary is tripped; the next answer in a trace
    that recorded its facts is counted ``error`` (``boundary_unmatched``) and refused, and
    ``except UnsupportedClaim`` catches it."""
    otel.install(config(strict=True))
    with caplog.at_level(logging.WARNING, logger="groundplane_otel"):
        run(otel, 3)
    assert warnings_of(caplog) == [
        UNMATCHED_WARNING.replace(
            "its answers are NOT checked.",
            "its answers are NOT checked; strict: from now on an answer in a trace that "
            "recorded its facts is counted error (boundary_unmatched) and refused in enforce "
            "mode.",
        )
    ]
    with pytest.raises(UnsupportedClaim) as caught:
        run(otel, 1)
    error = caught.value  # report_mode "all": a ClaimsUnsupported, itself an UnsupportedClaim
    assert isinstance(error, ClaimsUnsupported)
    assert error.code == "boundary_unmatched"
    assert [type(claim) for claim in error.claims] == [OutputUnchecked]
    assert error.diagnosis == (
        "boundary 'stock_answer' could not check the output (boundary_unmatched): strict: "
        "the boundary matched no span in 3 traces that recorded its facts, and this answer "
        "matched no boundary; fix the boundary's match (see the coverage warning)"
    )
    (chat,) = otel.spans("chat gpt-test")[-1:]
    reasons = [e.attributes["gen_ai.guardrail.result.reason"] for e in guardrail_events(chat)]
    assert reasons == ["boundary_unmatched"]
    outputs = otel.metrics()["groundplane.outputs"]
    assert [(p["groundplane.outcome"], p["groundplane.boundary"], n) for p, n in outputs] == [
        ("error", "stock_answer", 1)
    ]


def test_strict_and_coverage_after_come_from_the_policy_file_and_the_environment() -> None:
    """``strict``/``coverage_after`` are policy keys; ``GROUNDPLANE_STRICT`` overrides."""
    policy = {
        "version": 1,
        "strict": True,
        "coverage_after": 5,
        "facts": {"stock": {"tool": "top_sales"}},
        "boundaries": {
            "stock_answer": {
                "facts": ["stock"],
                "checks": [{"field_matches_fact": {"fact": "stock", "field": "n"}}],
            }
        },
    }
    loaded = policy_from_mapping(policy)
    assert (loaded.strict, loaded.coverage_after) == (True, 5)
    assert apply_environment(loaded, {"GROUNDPLANE_STRICT": "false"}).strict is False
    with pytest.raises(ValueError) as bad:
        policy_from_mapping({**policy, "coverage_after": 0})
    assert str(bad.value) == (
        "<mapping>: coverage_after: expected an integer >= 1, got 0. Fix: set `coverage_after:` "
        "to the number of traces (default 20)"
    )
