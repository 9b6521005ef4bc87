"""The framework-independent pieces of the adapters and hooks: finding the boundary by agent
name, normalising an answer, reading util-genai's typed messages, naming the framework whose
mechanism swallowed a refusal."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from pydantic import BaseModel

from groundplane_otel.adapters._guardrail import answer_of, boundary_name, find_guard
from groundplane_otel.checks.superlative import superlative
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec
from groundplane_otel.otel._live.swallowed import mechanism_for
from groundplane_otel.otel.completion_hook import answer_text, tool_results


@dataclass
class FakeGuard:
    config: GuardConfig


def guard(*agents: str | None) -> Any:
    specs = tuple(
        BoundarySpec(
            f"b{index}",
            ("f",),
            (superlative(fact="f"),),
            match=MatchSpec(agent_name=agent) if agent else MatchSpec(span_name="x"),
        )
        for index, agent in enumerate(agents)
    )
    return FakeGuard(GuardConfig(facts=(FactSpec("f", tool="t"),), boundaries=specs))


def test_the_boundary_is_found_by_agent_name() -> None:
    """No boundary= : the one boundary whose match.agent_name is the agent's name."""
    assert boundary_name(guard("a", "b"), None, "b") == "b1"


def test_an_explicit_boundary_must_exist() -> None:
    """boundary= names a declared boundary, or it is a ValueError listing them."""
    assert boundary_name(guard("a"), "b0", None) == "b0"
    with pytest.raises(ValueError, match=r"unknown boundary 'nope'; the guard declares \['b0'\]"):
        boundary_name(guard("a"), "nope", None)


def test_no_or_several_matching_boundaries_are_errors() -> None:
    """An agent no boundary names, or two boundaries name, needs boundary=."""
    with pytest.raises(ValueError, match=r"no boundary matches agent 'z' \(match.agent_name\)"):
        boundary_name(guard("a"), None, "z")
    with pytest.raises(ValueError, match=r"agent 'a' matches several boundaries \['b0', 'b1'\]"):
        boundary_name(guard("a", "a"), None, "a")


def test_a_long_agent_name_is_capped_in_the_error() -> None:
    """Echoed values are capped at 200 characters."""
    with pytest.raises(ValueError) as caught:
        boundary_name(guard("a"), None, "x" * 500)
    assert "x" * 199 in str(caught.value)
    assert "x" * 250 not in str(caught.value)
    assert "…" in str(caught.value)


def test_no_guard_is_a_runtime_error_saying_how_to_install() -> None:
    """An adapter with no guard installed refuses: an unchecked answer must not pass."""
    with pytest.raises(RuntimeError, match=r"adapters.demo: no guard is installed"):
        find_guard(None, "demo")


class Answer(BaseModel):
    winner: str


@dataclass
class Plain:
    winner: str


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ({"winner": "a"}, {"winner": "a"}),
        ('{"winner": "a"}', '{"winner": "a"}'),
        (Answer(winner="a"), {"winner": "a"}),
        (Plain("a"), {"winner": "a"}),
        (42, "42"),
    ],
    ids=["mapping", "text", "pydantic", "dataclass", "other"],
)
def test_answers_are_normalised(output: Any, expected: Any) -> None:
    """Mappings and text pass; models and dataclasses are dumped; anything else becomes text
    (which fails closed as unreadable)."""
    assert answer_of(output) == expected


@dataclass
class Part:
    type: str
    content: Any = None
    id: str | None = None
    name: str | None = None
    arguments: Any = None
    response: Any = None


@dataclass
class Message:
    role: str
    parts: list[Part]


def test_answer_text_is_the_last_assistant_text_and_tool_turns_are_not_answers() -> None:
    """Text parts of the last assistant message are joined; a tool-call turn is no answer."""
    text = [Message("assistant", [Part("text", '{"a": '), Part("text", "1}")])]
    assert answer_text(text) == '{"a": 1}'
    asks = [Message("assistant", [Part("tool_call", id="c1", name="t")])]
    assert answer_text(asks) is None
    assert answer_text([Message("user", [Part("text", "hi")])]) is None


def test_tool_results_join_responses_to_their_calls() -> None:
    """Each tool_call_response is paired with the tool_call of the same id; strays are ignored."""
    inputs = [
        Message("assistant", [Part("tool_call", id="c1", name="wq", arguments={"w": "7d"})]),
        Message("tool", [Part("tool_call_response", id="c1", response='{"x": 1}')]),
        Message("tool", [Part("tool_call_response", id="stray", response="{}")]),
    ]
    assert tool_results(inputs) == [("wq", {"w": "7d"}, '{"x": 1}', "c1")]


@pytest.mark.parametrize(
    ("modules", "framework"),
    [
        (["myapp", "langchain_core.callbacks.manager"], "langchain"),
        (["agents.tracing.provider"], "openai_agents"),
        (["opentelemetry.instrumentation.openai.utils"], "traceloop"),
    ],
)
def test_the_swallowing_framework_is_named_by_its_frame(modules: list[str], framework: str) -> None:
    """A known catching frame on the stack names the framework and the advice."""
    found = mechanism_for(modules)
    assert found is not None
    assert found[0] == framework
    assert "groundplane_otel" in found[1]


def test_no_catching_frame_no_swallow() -> None:
    """The app's own frames (or another instrumentation's) never count as swallowing."""
    assert mechanism_for(["myapp", "opentelemetry.instrumentation.genai.openai.patch"]) is None
    assert mechanism_for(["agentsx.tracing"]) is None
