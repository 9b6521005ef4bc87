"""The LangGraph adapter on a real compiled StateGraph: reask edge on a wrong argmax, pass on the
right one, sync and async nodes, misconfiguration propagating."""

from __future__ import annotations

import asyncio
import json
import operator
import subprocess
import sys
from typing import Annotated, Any, TypedDict

import pytest
from integration_harness import Otel, events
from langgraph.graph import END, START, StateGraph
from langgraph.types import Command
from opentelemetry.trace import StatusCode

from groundplane_otel.adapters.langgraph import goto_on_violation, guarded_node, record_state
from groundplane_otel.checks.superlative import superlative
from groundplane_otel.errors import ClaimsUnsupported, UnregisteredFact, UnsupportedClaim
from groundplane_otel.facts import Ranking, ranking_from_scores
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec
from groundplane_otel.registry import FactRegistry

CTR = {"north": 0.0412, "harbour": 0.0455, "delta": 0.0301}
RIGHT = {"winner": "harbour", "ctr": 0.0455}
WRONG = {"winner": "north", "ctr": 0.0412}


class AgentState(TypedDict, total=False):
    ranking: Ranking
    answer: dict[str, Any]
    violation: dict[str, Any] | None
    log: Annotated[list[str], operator.add]


def _violation(exc: UnsupportedClaim | ClaimsUnsupported, state: Any) -> dict[str, Any]:
    """on_violation: turn the claim into a state update the router reads."""
    assert isinstance(exc, UnsupportedClaim)
    return {"violation": exc.to_dict(), "log": ["violation"]}


def _build(
    answers: list[dict[str, Any]], *, use_async: bool, checks: list[Any] | None = None
) -> tuple[Any, FactRegistry]:
    """tool -> model (guarded) -> END, or -> reask -> model when on_violation fired."""
    registry = FactRegistry()
    script = iter(answers)

    def tool(state: AgentState) -> dict[str, Any]:
        update = {"ranking": ranking_from_scores("ctr", CTR), "log": ["tool"]}
        record_state(
            registry,
            update,
            keys={"ranking": "campaign_ctr"},
            tool="warehouse.query",
            args={"window": "7d"},
        )
        return update

    def model(state: AgentState) -> dict[str, Any]:
        return {"answer": next(script), "violation": None, "log": ["model"]}

    async def amodel(state: AgentState) -> dict[str, Any]:
        await asyncio.sleep(0)
        return {"answer": next(script), "violation": None, "log": ["model"]}

    def reask(state: AgentState) -> dict[str, Any]:
        return {"log": ["reask"]}

    def route(state: AgentState) -> str:
        return "reask" if state.get("violation") else END

    node = guarded_node(
        amodel if use_async else model,
        registry=registry,
        facts=["campaign_ctr"],
        checks=checks if checks is not None else [superlative(fact="campaign_ctr")],
        output_key="answer",
        on_violation=_violation,
        name="campaign_answer",
    )
    graph = StateGraph(AgentState)
    graph.add_node("tool", tool)
    graph.add_node("model", node)
    graph.add_node("reask", reask)
    graph.add_edge(START, "tool")
    graph.add_edge("tool", "model")
    graph.add_conditional_edges("model", route, ["reask", END])
    graph.add_edge("reask", "model")
    return graph.compile(), registry


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_wrong_argmax_takes_the_reask_edge_then_passes(use_async: bool) -> None:
    """A wrong winner routes to reask (its answer never reaches the state); the corrected answer
    ends the run with no violation."""
    app, registry = _build([WRONG, RIGHT], use_async=use_async)
    final = asyncio.run(app.ainvoke({})) if use_async else app.invoke({})
    assert final["log"] == ["tool", "violation", "reask", "model"]
    assert final["answer"] == RIGHT
    assert final["violation"] is None
    assert registry.provenance("campaign_ctr").tool == "warehouse.query"


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_right_argmax_passes_without_reask(use_async: bool) -> None:
    """The computed winner crosses the boundary on the first try: no reask node runs."""
    app, _ = _build([RIGHT], use_async=use_async)
    final = asyncio.run(app.ainvoke({})) if use_async else app.invoke({})
    assert final["log"] == ["tool", "model"]
    assert final["answer"] == RIGHT


def test_violation_state_carries_the_claim() -> None:
    """The state update on_violation builds holds the claim's JSON-safe fields."""
    app, _ = _build([WRONG, RIGHT], use_async=False)
    states = list(app.stream({}, stream_mode="updates"))
    violation = next(s["model"]["violation"] for s in states if "model" in s)
    assert violation == {
        "field": "winner",
        "claimed": "north",
        "supported": "harbour",
        "fact": "campaign_ctr",
        "provenance": "warehouse.query(window='7d')",
        "reason": violation["reason"],
    }
    assert violation["reason"].startswith("computed argmax on 'ctr' is 'harbour' (0.0455)")


def test_without_on_violation_the_claim_fails_the_run() -> None:
    """No on_violation: the UnsupportedClaim propagates out of graph.invoke."""
    registry = FactRegistry()
    registry.record_ranking("campaign_ctr", CTR, key="ctr", tool="warehouse.query")
    node = guarded_node(
        lambda state: {"answer": WRONG},
        registry=registry,
        facts=["campaign_ctr"],
        checks=[superlative(fact="campaign_ctr")],
        output_key="answer",
    )
    graph = StateGraph(AgentState)
    graph.add_node("model", node)
    graph.add_edge(START, "model")
    app = graph.compile()
    with pytest.raises(UnsupportedClaim) as caught:
        app.invoke({})
    assert (caught.value.field, caught.value.claimed, caught.value.supported) == (
        "winner",
        "north",
        "harbour",
    )


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_misconfigured_check_propagates_despite_on_violation(use_async: bool) -> None:
    """A check reading a column a Ranking does not have raises ValueError, not a reask."""
    app, _ = _build(
        [RIGHT],
        use_async=use_async,
        checks=[superlative(fact="campaign_ctr", column="ctr")],
    )
    with pytest.raises(ValueError) as caught:
        asyncio.run(app.ainvoke({})) if use_async else app.invoke({})
    assert not isinstance(caught.value, UnsupportedClaim)


def test_unregistered_fact_propagates() -> None:
    """A boundary over a fact nobody recorded raises UnregisteredFact out of the graph."""
    registry = FactRegistry()
    node = guarded_node(
        lambda state: {"answer": RIGHT},
        registry=registry,
        facts=["campaign_ctr"],
        checks=[superlative(fact="campaign_ctr")],
        output_key="answer",
        on_violation=_violation,
    )
    graph = StateGraph(AgentState)
    graph.add_node("model", node)
    graph.add_edge(START, "model")
    with pytest.raises(UnregisteredFact) as caught:
        graph.compile().invoke({})
    assert str(caught.value) == "fact 'campaign_ctr' is not registered; registry is empty"


def test_missing_output_key_is_a_developer_error() -> None:
    """A node whose update lacks output_key raises KeyError naming it (never checked = error)."""
    registry = FactRegistry()
    registry.record_ranking("campaign_ctr", CTR, key="ctr")
    node = guarded_node(
        lambda state: {"log": ["model"]},
        registry=registry,
        facts=["campaign_ctr"],
        checks=[superlative(fact="campaign_ctr")],
        output_key="answer",
        on_violation=_violation,
    )
    with pytest.raises(KeyError) as caught:
        node({})
    assert caught.value.args[0] == (
        "guarded node '<lambda>': the update has no 'answer' key (keys: ['log']); an output "
        "that is never checked is an error — fix output_key or make the node return it"
    )


def test_fresh_boundary_sees_facts_recorded_after_wrapping() -> None:
    """The node is wrapped before the fact exists; each call opens its own boundary view."""
    registry = FactRegistry()
    node = guarded_node(
        lambda state: {"answer": RIGHT},
        registry=registry,
        facts=["campaign_ctr"],
        checks=[superlative(fact="campaign_ctr")],
        output_key="answer",
    )
    registry.record_ranking("campaign_ctr", CTR, key="ctr")
    assert node({}) == {"answer": RIGHT}


def test_mode_all_hands_every_claim_to_on_violation() -> None:
    """mode="all": on_violation receives ClaimsUnsupported whose report lists both failures."""
    registry = FactRegistry()
    registry.record_ranking("campaign_ctr", CTR, key="ctr")
    seen: list[Any] = []
    node = guarded_node(
        lambda state: {"answer": {"winner": "north", "ctr": 0.05}},
        registry=registry,
        facts=["campaign_ctr"],
        checks=[
            superlative(fact="campaign_ctr"),
            superlative(fact="campaign_ctr", winner_field="winner", score_field="ctr"),
        ],
        output_key="answer",
        on_violation=lambda exc, state: seen.append(exc) or {"violation": "x"},
        mode="all",
    )
    assert node({"k": 1}) == {"violation": "x"}
    assert isinstance(seen[0], ClaimsUnsupported)
    assert len(seen[0].report.violations) == 2


def test_on_violation_receives_the_node_state() -> None:
    """on_violation gets the exact state object the node was called with."""
    registry = FactRegistry()
    registry.record_ranking("campaign_ctr", CTR, key="ctr")
    state = {"question": "best campaign?"}
    node = guarded_node(
        lambda s: {"answer": WRONG},
        registry=registry,
        facts=["campaign_ctr"],
        checks=[superlative(fact="campaign_ctr")],
        output_key="answer",
        on_violation=lambda exc, s: {"seen": s},
    )
    assert node(state)["seen"] is state


def test_goto_on_violation_routes_with_a_command() -> None:
    """goto_on_violation returns a LangGraph Command: the graph jumps to reask without an edge."""
    registry = FactRegistry()
    registry.record_ranking("campaign_ctr", CTR, key="ctr", tool="warehouse.query")
    script = iter([WRONG, RIGHT])

    def model(state: AgentState) -> dict[str, Any]:
        return {"answer": next(script), "violation": None, "log": ["model"]}

    node = guarded_node(
        model,
        registry=registry,
        facts=["campaign_ctr"],
        checks=[superlative(fact="campaign_ctr")],
        output_key="answer",
        on_violation=goto_on_violation("reask"),
    )
    update = guarded_node(
        lambda s: {"answer": WRONG},
        registry=registry,
        facts=["campaign_ctr"],
        checks=[superlative(fact="campaign_ctr")],
        output_key="answer",
        on_violation=goto_on_violation("reask"),
    )({})
    assert isinstance(update, Command)
    assert update.goto == "reask"
    graph = StateGraph(AgentState)
    graph.add_node("model", node, destinations=("reask",))
    graph.add_node("reask", lambda s: {"log": ["reask"]})
    graph.add_edge(START, "model")
    graph.add_edge("reask", "model")
    final = graph.compile().invoke({})
    assert final["log"] == ["reask", "model"]
    assert final["answer"] == RIGHT


def test_record_state_missing_key_records_nothing() -> None:
    """A missing state key raises KeyError naming it before any fact is recorded."""
    registry = FactRegistry()
    with pytest.raises(KeyError) as caught:
        record_state(registry, {"a": 1}, keys={"a": "fact_a", "b": "fact_b"}, tool="t")
    assert caught.value.args[0] == "record_state: state has no 'b' key (keys: ['a'])"
    assert registry.names() == []


def test_record_state_copies_and_keeps_provenance() -> None:
    """Recorded values are deep copies with the given tool and args as provenance."""
    registry = FactRegistry()
    state = {"rows": [{"id": 1, "v": 2}]}
    facts = record_state(registry, state, keys={"rows": "rows"}, tool="sql", args={"q": "x"})
    state["rows"][0]["v"] = 99
    assert registry.value("rows") == [{"id": 1, "v": 2}]
    assert str(facts["rows"].provenance) == "sql(q='x')"


# -- with the OpenTelemetry guard installed ------------------------------------------------------

RULE = "superlative(fact='campaign_ctr', field='winner')"


def _labels(verdict: str) -> dict[str, str]:
    return {
        "groundplane.check": "superlative",
        "groundplane.verdict": verdict,
        "groundplane.boundary": "campaign_answer",
        "groundplane.mode": "enforce",
    }


def _evaluation(verdict: str) -> dict[str, str]:
    return {
        "name": "gen_ai.evaluation.result",
        "gen_ai.evaluation.name": "superlative",
        "gen_ai.evaluation.score.label": verdict,
    }


@pytest.mark.parametrize("use_async", [False, True], ids=["sync", "async"])
def test_guard_records_every_check_of_a_guarded_node(otel: Otel, use_async: bool) -> None:
    """Each node call gets a guarded_node span with the guard's summary, one guardrail event per
    unsupported claim and ERROR when blocked; every check is counted by verdict."""
    otel.install(GuardConfig())
    app, _ = _build([WRONG, RIGHT], use_async=use_async)
    asyncio.run(app.ainvoke({})) if use_async else app.invoke({})
    node = "amodel" if use_async else "model"
    blocked, passed = otel.spans(f"guarded_node {node}")
    assert dict(blocked.attributes or {}) == {
        "groundplane.boundary": "campaign_answer",
        "groundplane.outcome": "blocked",
        "groundplane.violations": 1,
        "groundplane.facts": ("campaign_ctr",),
        "groundplane.mode": "enforce",
    }
    assert blocked.status.status_code is StatusCode.ERROR
    assert events(blocked) == [
        {
            "name": "gen_ai.guardrail.result",
            "gen_ai.guardrail.component.name": "groundplane",
            "gen_ai.guardrail.policy.id": "campaign_answer",
            "gen_ai.guardrail.result.type": "verdict",
            "gen_ai.guardrail.result.value": "unsupported",
            "gen_ai.guardrail.result.reason": "wrong_winner",
            "gen_ai.guardrail.source": "model_response",
            "gen_ai.guardrail.policy.rule.id": RULE,
            "groundplane.check": "superlative",
            "groundplane.field": "winner",
            "groundplane.fact": "campaign_ctr",
            "groundplane.fact.tool": "warehouse.query",
        },
        _evaluation("unsupported"),
    ]
    assert (passed.attributes or {})["groundplane.outcome"] == "passed"
    assert (passed.status.status_code, events(passed)) == (
        StatusCode.UNSET,
        [_evaluation("supported")],
    )
    metrics = otel.metrics()
    assert metrics["groundplane.claims"] == [(_labels("supported"), 1), (_labels("unsupported"), 1)]
    assert metrics["groundplane.outputs"] == [
        (
            {
                "groundplane.boundary": "campaign_answer",
                "groundplane.outcome": o,
                "groundplane.mode": "enforce",
            },
            1,
        )
        for o in ("blocked", "passed")
    ]
    assert metrics["groundplane.check.duration"] == [
        ({"groundplane.boundary": "campaign_answer"}, 2)
    ]


def test_guard_counts_a_misconfigured_check_as_error_and_it_still_propagates(otel: Otel) -> None:
    """A check raising ValueError: verdict error, an error event with reason check_error (no
    message: content stays off), and the ValueError reaches the caller after the span ended."""
    otel.install(GuardConfig())
    app, _ = _build(
        [RIGHT], use_async=False, checks=[superlative(fact="campaign_ctr", column="ctr")]
    )
    with pytest.raises(ValueError):
        app.invoke({})
    span = otel.span("guarded_node model")
    assert (span.attributes or {})["groundplane.outcome"] == "error"
    event, evaluation = events(span)
    assert evaluation == _evaluation("error")
    assert (event["gen_ai.guardrail.result.value"], event["gen_ai.guardrail.result.reason"]) == (
        "error",
        "check_error",
    )
    assert "groundplane.message" not in event
    assert otel.metrics()["groundplane.claims"] == [(_labels("error"), 1)]


def test_state_facts_reach_span_end_boundaries(otel: Otel) -> None:
    """record_state inside a traced run also records into the trace's registry, so a chat span
    in a later node is checked by the guard against it (and its UnsupportedClaim fails the run)."""
    boundary_spec = BoundarySpec(
        "chat_answer",
        ("campaign_ctr",),
        (superlative(fact="campaign_ctr"),),
        match=MatchSpec(agent_name="analyst"),
        report_mode="first",
    )
    fact = FactSpec("campaign_ctr", "warehouse.query", kind="ranking")  # recorded by the node
    otel.install(GuardConfig(facts=(fact,), boundaries=(boundary_spec,)))
    registry = FactRegistry()

    def tool(state: AgentState) -> dict[str, Any]:
        update = {"ranking": ranking_from_scores("ctr", CTR)}
        record_state(registry, update, keys={"ranking": "campaign_ctr"}, tool="warehouse.query")
        return update

    def model(state: AgentState) -> dict[str, Any]:
        message = {
            "role": "assistant",
            "parts": [{"type": "text", "content": '{"winner": "north"}'}],
        }
        with otel.tracer.start_as_current_span(
            "chat scripted", attributes={"gen_ai.operation.name": "chat"}
        ) as chat:
            chat.set_attribute("gen_ai.output.messages", json.dumps([message]))
        return {"answer": {"winner": "north"}}

    graph = StateGraph(AgentState)
    graph.add_node("tool", tool)
    graph.add_node("model", model)
    graph.add_edge(START, "tool")
    graph.add_edge("tool", "model")
    agent = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "analyst"}
    with (
        pytest.raises(UnsupportedClaim) as caught,
        otel.tracer.start_as_current_span("invoke_agent analyst", attributes=agent),
    ):
        graph.compile().invoke({})
    assert (caught.value.claimed, caught.value.supported) == ("north", "harbour")
    chat = otel.span("chat scripted")
    event, evaluation = events(chat)
    assert evaluation == _evaluation("unsupported")
    assert (event["groundplane.fact"], event["groundplane.fact.tool"]) == (
        "campaign_ctr",
        "warehouse.query",
    )
    assert otel.metrics()["groundplane.facts"] == [
        (
            {
                "groundplane.fact.kind": "ranking",
                "groundplane.fact.source": "langgraph",
                "groundplane.fact.outcome": "recorded",
            },
            1,
        )
    ]


_ABSENT = """
import sys
sys.modules["langgraph"] = None
import groundplane_otel.adapters.langgraph as adapter
try:
    adapter.goto_on_violation("reask")
except ImportError as exc:
    print(type(exc).__name__, exc.name)
    print(exc)
"""


def test_import_without_langgraph_and_exact_install_hint() -> None:
    """With langgraph absent the module imports; building a Command names the pip line."""
    result = subprocess.run(
        [sys.executable, "-c", _ABSENT], capture_output=True, text=True, check=True
    )
    assert result.stdout.splitlines() == [
        "ModuleNotFoundError langgraph",
        "groundplane_otel.adapters.langgraph needs 'langgraph', which is not installed; "
        "install it with: pip install 'groundplane-otel[langgraph]'",
    ]


def test_pydantic_output_is_checked_as_its_fields() -> None:
    """A structured-output pydantic model in the update is checked through model_dump()."""
    from pydantic import BaseModel

    class Answer(BaseModel):
        winner: str
        ctr: float

    registry = FactRegistry()
    registry.record_ranking("campaign_ctr", CTR, key="ctr")
    node = guarded_node(
        lambda state: {"answer": Answer(winner="north", ctr=0.0412)},
        registry=registry,
        facts=["campaign_ctr"],
        checks=[superlative(fact="campaign_ctr")],
        output_key="answer",
    )
    with pytest.raises(UnsupportedClaim) as caught:
        node({})
    assert caught.value.claimed == "north"


def test_guarded_node_defaults_to_no_facts_and_no_checks() -> None:
    """guarded_node(fn, registry=reg) works as in groundplane (facts=(), checks=()): the update
    still crosses a boundary (it must be a mapping) and is returned unchanged."""
    node = guarded_node(lambda state: {"answer": {"winner": "harbour"}}, registry=FactRegistry())
    assert node({}) == {"answer": {"winner": "harbour"}}
    prose = guarded_node(lambda state: "harbour won", registry=FactRegistry())
    with pytest.raises(TypeError, match="free prose is out of scope"):
        prose({})
