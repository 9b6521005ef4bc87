"""OpenAI Agents SDK adapter: an output guardrail that checks the final output, and hooks that
turn tool results into facts.

    agent = guard(Agent(name="campaign-analyst", tools=[...], output_type=Answer))

``guard(agent)`` returns a clone with ``output_guardrail()`` appended to its output guardrails
and ``FactHooks`` as its hooks. The guardrail hands the final output to ``Guard.check_output``
(the event lands on the span current in the guardrail: ``invoke_agent`` with the OpenTelemetry
instrumentation, the ``GUARDRAIL`` span with OpenInference) and trips on a violation, so
``Runner.run`` raises the SDK's own ``OutputGuardrailTripwireTriggered``; the report is its
``output_info`` (``exc.guardrail_result.output.output_info``). ``FactHooks.on_tool_end``
records each tool result in process, with the ``execute_tool`` span current there and the
model's tool call id as provenance. Content capture off works: nothing is read from spans.
Verified against openai-agents 0.24.0; the SDK is imported when a guardrail or hooks are built.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from groundplane_otel.adapters._extras import require
from groundplane_otel.adapters._guardrail import (
    boundary_name,
    check_answer,
    find_guard,
    record_hook_result,
)
from groundplane_otel.adapters._otel import active_guard, current_span

if TYPE_CHECKING:
    from groundplane_otel.otel.install import Guard

__all__ = ["FactHooks", "RunFactHooks", "guard", "output_guardrail"]

_EXTRA = "openai-agents"


def _agents() -> Any:
    return require("agents", extra=_EXTRA)


def _delegate_now(installed: Guard | None, boundary: str | None, agent_name: str | None) -> None:
    """Tell the span path this boundary is checked here, as early as it is known."""
    if installed is not None and (boundary is not None or agent_name is not None):
        installed.delegate(boundary_name(installed, boundary, agent_name))


def output_guardrail(boundary: str | None = None, *, guard: Guard | None = None) -> Any:
    """An ``agents.OutputGuardrail`` named ``groundplane``: trips when the final output fails
    ``boundary`` (default: the boundary whose ``match.agent_name`` is the agent's name) in
    enforce mode — including an output that cannot be checked (fails closed). In observe mode it
    never trips; the report is the ``output_info`` either way."""
    agents = _agents()
    _delegate_now(guard if guard is not None else active_guard(), boundary, None)

    async def groundplane(context: Any, agent: Any, output: Any) -> Any:
        installed = find_guard(guard, "openai_agents")
        name = boundary_name(installed, boundary, getattr(agent, "name", None))
        installed.delegate(name)
        verdict = check_answer(installed, output, boundary=name, span=current_span())
        return agents.GuardrailFunctionOutput(
            output_info=verdict.report(), tripwire_triggered=verdict.error is not None
        )

    return agents.OutputGuardrail(guardrail_function=groundplane, name="groundplane")


def _record(guard: Guard | None, context: Any, tool: Any, result: Any) -> None:
    installed = find_guard(guard, "openai_agents")
    record_hook_result(
        installed,
        tool=str(getattr(tool, "name", None) or getattr(context, "tool_name", "tool")),
        arguments=getattr(context, "tool_arguments", None),
        result=result,
        tool_call_id=getattr(context, "tool_call_id", None),
        source="openai_agents",
    )


@functools.cache
def _build_hooks() -> Any:
    agents = _agents()

    class GroundplaneFactHooks(agents.AgentHooks):  # type: ignore[misc,name-defined]
        """Agent hooks: each tool result becomes a fact (``on_tool_end``), and the span path is
        told the agent's boundary is checked by the guardrail (``on_start``)."""

        def __init__(self, guard: Guard | None = None, boundary: str | None = None) -> None:
            self.guard = guard
            self.boundary = boundary

        async def on_start(self, context: Any, agent: Any) -> None:
            installed = find_guard(self.guard, "openai_agents")
            _delegate_now(installed, self.boundary, getattr(agent, "name", None))

        async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
            _record(self.guard, context, tool, result)

    return GroundplaneFactHooks


def FactHooks(guard: Guard | None = None, boundary: str | None = None) -> Any:
    """``agents.AgentHooks`` recording tool results as facts (pass as ``Agent(hooks=...)``)."""
    return _build_hooks()(guard, boundary)


@functools.cache
def _build_run_hooks() -> Any:
    agents = _agents()

    class GroundplaneRunHooks(agents.RunHooks):  # type: ignore[misc,name-defined]
        """Run hooks: the same as ``FactHooks``, for every agent of a run."""

        def __init__(self, guard: Guard | None = None, boundary: str | None = None) -> None:
            self.guard = guard
            self.boundary = boundary

        async def on_agent_start(self, context: Any, agent: Any) -> None:
            installed = find_guard(self.guard, "openai_agents")
            _delegate_now(installed, self.boundary, getattr(agent, "name", None))

        async def on_tool_end(self, context: Any, agent: Any, tool: Any, result: Any) -> None:
            _record(self.guard, context, tool, result)

    return GroundplaneRunHooks


def RunFactHooks(guard: Guard | None = None, boundary: str | None = None) -> Any:
    """``agents.RunHooks`` recording tool results as facts (``Runner.run(..., hooks=...)``),
    for agents that keep hooks of their own."""
    return _build_run_hooks()(guard, boundary)


def guard(agent: Any, boundary: str | None = None, *, guard: Guard | None = None) -> Any:
    """A clone of ``agent`` with the groundplane output guardrail and ``FactHooks``. An agent
    that already has hooks is a ValueError (use ``RunFactHooks`` and ``output_guardrail``)."""
    agents = _agents()
    if not isinstance(agent, agents.Agent):
        raise TypeError(f"guard() needs an agents.Agent, got {type(agent).__name__}")
    if agent.hooks is not None:
        raise ValueError(
            f"agent {agent.name!r} already has hooks ({type(agent.hooks).__name__}); pass "
            "RunFactHooks() to Runner.run(hooks=...), and add output_guardrail() to "
            "output_guardrails"
        )
    installed = guard if guard is not None else active_guard()
    _delegate_now(installed, boundary, agent.name)
    return agent.clone(
        output_guardrails=[*agent.output_guardrails, output_guardrail(boundary, guard=guard)],
        hooks=FactHooks(guard, boundary),
    )
