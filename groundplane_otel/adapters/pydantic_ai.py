"""pydantic-ai adapter: a capability that checks the run's final output and records tool facts.

    agent = Agent(model, output_type=Answer, name="campaign-analyst",
                  capabilities=[Groundplane()])          # or Groundplane(reask=True)

``after_tool_execute`` records each tool result (in process, the ``execute_tool`` span that is
current there as provenance); ``after_output_process`` hands the final output (text or
structured) to ``Guard.check_output`` (the event lands on the ``invoke_agent`` span, counted
once). A violation raises the guard's exception out of ``agent.run`` — or, with
``reask=True``, a ``ModelRetry`` carrying the violations, so the model tries again within the
agent's output retry budget (the last try's violation raises the guard's exception). Without
pydantic-ai's instrumentation the run gets an ``invoke_agent`` span of the guard's own.
Streamed runs (``run_stream``: ``stream_text``, ``stream_output``; ``run`` with an event
stream handler) are gated: the capability wraps the model (``get_wrapper_model``) so each
sentence is checked before it is released (``pydantic_ai_stream``), and the output check of a
right streamed answer takes the stream's (counted once). Content capture off works: nothing is
read from span attributes. Verified against
pydantic-ai-slim 2.68.0; pydantic-ai is imported when ``Groundplane`` is first built.
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

__all__ = ["Groundplane"]


@functools.cache
def _build_class() -> Any:
    """The capability class, built once pydantic-ai is importable (it subclasses
    ``AbstractCapability``)."""
    capabilities = require("pydantic_ai.capabilities", extra="pydantic-ai")
    model_retry = require("pydantic_ai.exceptions", extra="pydantic-ai").ModelRetry

    class GroundplaneCapability(capabilities.AbstractCapability):  # type: ignore[misc,name-defined]
        """Checks the final output against this request's facts (see the module docstring)."""

        def __init__(self, boundary: str | None, reask: bool, guard: Guard | None) -> None:
            self.boundary = boundary
            self.reask = reask
            self.guard = guard
            installed = guard if guard is not None else active_guard()
            if installed is not None and boundary is not None:
                installed.delegate(boundary_name(installed, boundary, None))

        def __repr__(self) -> str:
            return f"Groundplane(boundary={self.boundary!r}, reask={self.reask!r})"

        def _boundary(self, guard: Guard, ctx: Any) -> str:
            agent = getattr(ctx, "agent", None)
            name = boundary_name(guard, self.boundary, getattr(agent, "name", None))
            guard.delegate(name)
            return name

        async def before_run(self, ctx: Any) -> None:
            self._boundary(find_guard(self.guard, "pydantic_ai"), ctx)

        async def wrap_run(self, ctx: Any, *, handler: Any) -> Any:
            """Without pydantic-ai's instrumentation no span is current: the run gets an
            ``invoke_agent`` span of the guard's own, so its facts and its answer still belong
            to one request."""
            if current_span() is not None:
                return await handler()
            guard = find_guard(self.guard, "pydantic_ai")
            name = getattr(getattr(ctx, "agent", None), "name", None) or "agent"
            attributes = {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": name}
            with guard.tracer.start_as_current_span(f"invoke_agent {name}", attributes=attributes):
                return await handler()

        def get_wrapper_model(self, model: Any) -> Any:
            """Streamed requests pass the stream gate (``pydantic_ai_stream``): a wrong
            sentence never reaches ``stream_text`` / ``stream_output``."""
            from groundplane_otel.adapters.pydantic_ai_stream import guarded_model

            return guarded_model(model, boundary=self.boundary, guard=self.guard)

        async def after_tool_execute(
            self, ctx: Any, *, call: Any, tool_def: Any, args: Any, result: Any
        ) -> Any:
            guard = find_guard(self.guard, "pydantic_ai")
            record_hook_result(
                guard,
                tool=call.tool_name,
                arguments=args,
                result=result,
                tool_call_id=call.tool_call_id,
                source="pydantic_ai",
            )
            return result

        async def after_output_process(self, ctx: Any, *, output_context: Any, output: Any) -> Any:
            if getattr(ctx, "partial_output", False):
                return output  # a streamed partial: the final one is checked
            guard = find_guard(self.guard, "pydantic_ai")
            verdict = check_answer(
                guard, output, boundary=self._boundary(guard, ctx), span=current_span()
            )
            if verdict.error is None:
                return output
            retries_left = getattr(ctx, "retry", 0) < getattr(ctx, "max_retries", 0)
            if self.reask and verdict.violations and retries_left:
                raise model_retry(verdict.text())
            raise verdict.error  # the last try's violation is the guard's own exception

    return GroundplaneCapability


def Groundplane(
    boundary: str | None = None, *, reask: bool = False, guard: Guard | None = None
) -> Any:
    """A pydantic-ai capability guarding the agent's final output.

    ``boundary``: the boundary to check (default: the one whose ``match.agent_name`` is the
    agent's ``name``). ``reask=True``: a violation becomes ``ModelRetry`` with the violations
    (an answer that cannot be checked — a fact missing — still raises). ``guard``: default the
    installed guard. Raises ImportError with the install line when pydantic-ai is missing.
    """
    return _build_class()(boundary, reask, guard)
