"""LangChain v1 / LangGraph adapter: check the agent's final answer in the agent's own loop.

    agent = create_agent(model, tools, name="campaign-analyst",
                         middleware=[GroundplaneMiddleware()])        # or on_violation="reask"

``GroundplaneMiddleware`` is a LangChain v1 ``AgentMiddleware``: ``wrap_tool_call`` records each
tool result (in process, with the span current there and the model's tool call id as
provenance), ``after_model`` hands the final answer (``structured_response``, else the last AI
message's text) to ``Guard.check_output``. A violation raises the guard's exception out of
``agent.invoke`` — it runs in the graph, not in a callback, so nothing swallows it — or, with
``on_violation="reask"``, jumps back to the model with the violations as a new human message.

For LangGraph's prebuilt ``create_react_agent``: ``post_model_hook(...)`` is the same check as a
node (``post_model_hook=``), and ``tool_call_wrapper(...)`` records facts from a
``ToolNode(tools, wrap_tool_call=...)``. With ``response_format=`` the run's answer is the
``structured_response`` a second model call makes after the hook: ``guard_structured_response``
wraps the compiled graph so that answer is the one checked. Verified against langchain 1.5.2,
langchain-core 1.8.3, langgraph 1.2.24. LangChain is imported when one of these is first built.
"""

from __future__ import annotations

import contextvars
import functools
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

from groundplane_otel.adapters._extras import require
from groundplane_otel.adapters._guardrail import (
    GuardDecision,
    boundary_name,
    check_answer,
    find_guard,
    record_hook_result,
)
from groundplane_otel.adapters._otel import active_guard, current_span

if TYPE_CHECKING:
    from opentelemetry.trace import Span

    from groundplane_otel.otel.install import Guard

__all__ = [
    "GroundplaneMiddleware",
    "ViolationMode",
    "guard_structured_response",
    "post_model_hook",
    "tool_call_wrapper",
]

ViolationMode = Literal["raise", "reask"]
_EXTRA = "langchain"
_ADAPTER = "langchain"
STREAM_REASKS = 2  # a model call whose stream was refused is asked again at most this often
_REASK = (
    "Your answer was rejected because it is not supported by the tool results:\n{report}\n"
    "Answer again, using only what the tools returned."
)
_STRUCTURED_NODE = "generate_structured_response"  # create_react_agent(response_format=...)
_STRUCTURED_GUARDED = contextvars.ContextVar("groundplane_structured_guarded", default=False)


def _messages() -> Any:
    return require("langchain_core.messages", extra=_EXTRA)


def _span() -> Span | None:
    """The span of this step: the current one (OpenTelemetry's LangChain instrumentation makes
    its spans current), else OpenInference's span of the running LangChain run (its callbacks
    never touch the OpenTelemetry context)."""
    span = current_span()
    if span is not None:
        return span
    try:
        from openinference.instrumentation.langchain import get_current_span
    except ImportError:
        return None
    found: Span | None = get_current_span()
    return found if found is not None and found.get_span_context().is_valid else None


def _agent_name() -> str | None:
    """The running agent's name: LangChain's ``lc_agent_name`` metadata, else the
    ``gen_ai.agent.name`` of the current span (OpenTelemetry's LangChain instrumentation)."""
    try:
        from langgraph.config import get_config

        name = get_config().get("metadata", {}).get("lc_agent_name")
        if isinstance(name, str):
            return name
    except (ImportError, RuntimeError):
        pass
    span = current_span()
    attributes = getattr(span, "attributes", None) or {}
    name = attributes.get("gen_ai.agent.name") or attributes.get("agent.name")
    return name if isinstance(name, str) else None


def _text(message: Any) -> str:
    text = getattr(message, "text", None)  # a property in langchain-core 1.x (a str)
    if isinstance(text, str):
        return str(text)
    if callable(text):
        text = text()
        if isinstance(text, str):
            return text
    content = getattr(message, "content", "")
    return content if isinstance(content, str) else str(content)


def final_answer(state: Mapping[str, Any]) -> Any | None:
    """The run's final answer after a model step, or None when the model asked for tools:
    ``structured_response`` when the step produced one, else the last AI message's text."""
    messages = _messages()
    history = state.get("messages") or []
    if not history:
        return None
    last = history[-1]
    structured = state.get("structured_response")
    if isinstance(last, messages.AIMessage):
        if last.tool_calls:
            return None
        return structured if structured is not None else _text(last)
    if isinstance(last, messages.ToolMessage) and structured is not None:
        return structured  # ToolStrategy: the answer came as a structured-output tool call
    return None


class _Checker:
    """The check shared by the middleware and the LangGraph post-model hook."""

    def __init__(
        self,
        boundary: str | None,
        on_violation: ViolationMode,
        guard: Guard | None,
        agent_name: str | None = None,
    ) -> None:
        if on_violation not in ("raise", "reask"):
            raise ValueError(f"on_violation must be 'raise' or 'reask', got {on_violation!r}")
        self.boundary = boundary
        self.agent_name = agent_name
        self.on_violation = on_violation
        self.guard = guard
        installed = guard if guard is not None else active_guard()
        if installed is not None and (boundary is not None or agent_name is not None):
            installed.delegate(boundary_name(installed, boundary, agent_name))

    def boundary_for(self, guard: Guard) -> str:
        agent = None if self.boundary else (self.agent_name or _agent_name())
        name = boundary_name(guard, self.boundary, agent)
        guard.delegate(name)
        return name

    def check(self, state: Mapping[str, Any]) -> GuardDecision | None:
        answer = final_answer(state)
        return None if answer is None else self.verdict(answer)

    def verdict(self, answer: Any) -> GuardDecision:
        guard = find_guard(self.guard, _ADAPTER)
        return check_answer(guard, answer, boundary=self.boundary_for(guard), span=_span())

    def reask_update(self, verdict: GuardDecision) -> dict[str, Any] | None:
        """None when the answer passes; the state update of a reask; raises otherwise."""
        if verdict.error is None:
            return None
        if self.on_violation == "reask" and verdict.violations:
            message = _messages().HumanMessage(content=_REASK.format(report=verdict.text()))
            return {"messages": [message]}
        raise verdict.error


def _record(guard: Guard | None, request: Any, result: Any) -> None:
    call = getattr(request, "tool_call", None) or {}
    content = getattr(result, "artifact", None)
    if content is None:
        content = getattr(result, "content", None)
    if content is None or getattr(result, "status", "success") == "error":
        return  # a Command, or a failed tool call: no result to hold answers to
    record_hook_result(
        find_guard(guard, _ADAPTER),
        tool=str(call.get("name") or "tool"),
        arguments=call.get("args"),
        result=content,
        tool_call_id=call.get("id"),
        source="langchain",
        span=_span(),
    )


ToolHandler = Callable[[Any], Any]


def tool_call_wrapper(guard: Guard | None = None) -> Callable[[Any, ToolHandler], Any]:
    """A ``wrap_tool_call`` for LangGraph's ``ToolNode``: each tool result becomes a fact."""

    def wrap_tool_call(request: Any, handler: ToolHandler) -> Any:
        result = handler(request)
        _record(guard, request, result)
        return result

    return wrap_tool_call


def async_tool_call_wrapper(
    guard: Guard | None = None,
) -> Callable[[Any, Callable[[Any], Awaitable[Any]]], Awaitable[Any]]:
    """The ``awrap_tool_call`` twin of ``tool_call_wrapper``."""

    async def awrap_tool_call(request: Any, handler: Callable[[Any], Awaitable[Any]]) -> Any:
        result = await handler(request)
        _record(guard, request, result)
        return result

    return awrap_tool_call


def post_model_hook(
    boundary: str | None = None,
    *,
    agent_name: str | None = None,
    on_violation: ViolationMode = "raise",
    guard: Guard | None = None,
    model_node: str = "agent",
) -> Callable[[Mapping[str, Any]], Any]:
    """A ``post_model_hook`` node for ``create_react_agent``: checks the final answer; a
    violation raises, or (``on_violation="reask"``) routes back to ``model_node`` with the
    violations as a human message (``Command(goto=model_node)``).

    Name the boundary, or the agent (``agent_name=``, the ``name`` given to
    ``create_react_agent``: its boundary is the one whose ``match.agent_name`` it is). A prebuilt
    graph has no hook before its first model call, so the guard must learn here, when the hook
    is built, that the span path is not to check this boundary's answers. In a
    ``response_format`` graph the answer is the structured response made after this hook:
    wrap the graph with ``guard_structured_response`` (unwrapped, the hook refuses the run)."""
    if boundary is None and agent_name is None:
        raise ValueError(
            "post_model_hook needs boundary= or agent_name= (the name given to create_react_agent)"
        )
    checker = _Checker(boundary, on_violation, guard, agent_name)
    command = require("langgraph.types", extra=_EXTRA).Command

    def groundplane_post_model_hook(state: Mapping[str, Any]) -> Any:
        if _structured_response_follows():
            return {}  # the run's answer is the structured response, checked where it is made
        verdict = checker.check(state)
        update = None if verdict is None else checker.reask_update(verdict)
        if update is None:
            return {}
        return command(goto=model_node, update=update)

    return groundplane_post_model_hook


def _structured_response_follows() -> bool:
    """Is the run's answer a structured response made after this hook? True when
    ``guard_structured_response`` checks it; a ValueError naming that fix when the graph makes
    one (``create_react_agent(response_format=...)``) and nothing would check it.

    LangGraph gives a node no public view of its graph: the task's channel reader (under
    ``__pregel_read``, verified against langgraph 1.2.24) tells whether the graph routes to a
    ``generate_structured_response`` node (a missing channel is a KeyError)."""
    if _STRUCTURED_GUARDED.get():
        return True
    try:
        config = require("langgraph.config", extra=_EXTRA).get_config()
    except RuntimeError:
        return False  # called outside a graph run: no node follows
    read = (config.get("configurable") or {}).get("__pregel_read")
    if not callable(read):
        return False
    try:
        read([f"branch:to:{_STRUCTURED_NODE}"])
    except KeyError:
        return False
    raise ValueError(
        "post_model_hook: this graph was built with create_react_agent(response_format=...), "
        "whose structured response is made by a second model call after this hook, so the hook "
        "cannot check the answer the app receives; wrap the compiled graph: "
        "agent = guard_structured_response(create_react_agent(...)) "
        "(from groundplane_otel.adapters.langchain)"
    )


@functools.cache
def _guarded_runnable() -> Any:
    runnables = require("langchain_core.runnables", extra=_EXTRA)

    class _Guarded(runnables.Runnable):  # type: ignore[misc,name-defined]
        """A node's runnable run inside "the structured response is guarded", with ``tags``
        added to its runs, its result passed through ``after``. Untraced: the node's own run
        stays the one that is traced."""

        def __init__(self, inner: Any, after: Callable[[Any], Any], tags: list[str]) -> None:
            self.inner = inner
            self.after = after
            self.tags = tags

        def _config(self, config: Any) -> Any:
            if not self.tags:
                return config
            config = dict(config or {})
            config["tags"] = [*(config.get("tags") or []), *self.tags]
            return config

        def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
            token = _STRUCTURED_GUARDED.set(True)
            try:
                return self.after(self.inner.invoke(input, self._config(config), **kwargs))
            finally:
                _STRUCTURED_GUARDED.reset(token)

        async def ainvoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
            token = _STRUCTURED_GUARDED.set(True)
            try:
                update = await self.inner.ainvoke(input, self._config(config), **kwargs)
                return self.after(update)
            finally:
                _STRUCTURED_GUARDED.reset(token)

    return _Guarded


def guard_structured_response(
    agent: Any,
    boundary: str | None = None,
    *,
    on_violation: ViolationMode = "raise",
    guard: Guard | None = None,
    model_node: str = "agent",
) -> Any:
    """Guard a compiled ``create_react_agent(..., response_format=...)`` graph, in place (and
    return it): its ``structured_response`` is checked as the run's answer when the node that
    makes it returns.

    A violation raises out of ``invoke``/``ainvoke``/``stream`` before the structured response
    reaches the state (its model call's tokens are not streamed; observe mode: flagged and
    returned), or (``on_violation="reask"``) routes back to ``model_node`` with the violations
    as a human message. A ``post_model_hook(...)`` in the graph then leaves the prose final
    message alone: one answer, one outcome. The boundary is ``boundary``, else the one whose
    ``match.agent_name`` is the graph's ``name``."""
    nodes = getattr(agent, "nodes", None)
    if not isinstance(nodes, dict) or _STRUCTURED_NODE not in nodes:
        raise ValueError(
            "guard_structured_response needs a compiled create_react_agent graph with a "
            f"{_STRUCTURED_NODE!r} node (built with response_format=...), got "
            f"{type(agent).__name__}; without response_format, post_model_hook(...) alone checks "
            "the answer"
        )
    wrapper = _guarded_runnable()
    if isinstance(nodes[_STRUCTURED_NODE].bound, wrapper):
        raise ValueError("guard_structured_response: this graph is already guarded")
    agent_name = None if boundary is not None else getattr(agent, "name", None)
    checker = _Checker(boundary, on_violation, guard, agent_name)
    command = require("langgraph.types", extra=_EXTRA).Command

    def checked(update: Any) -> Any:
        answer = update.get("structured_response") if isinstance(update, Mapping) else update
        reask = checker.reask_update(checker.verdict(answer))
        return update if reask is None else command(goto=model_node, update=reask)

    # The structured call's tokens are not streamed (stream_mode="messages"): the answer
    # reaches the app only after the check, through the state.
    nostream = require("langgraph.constants", extra=_EXTRA).TAG_NOSTREAM
    guarded: dict[str, tuple[Callable[[Any], Any], list[str]]] = {
        _STRUCTURED_NODE: (checked, [nostream])
    }
    if "post_model_hook" in nodes:
        guarded["post_model_hook"] = (lambda update: update, [])
    for name, (after, tags) in guarded.items():  # in place: no unguarded original to keep
        nodes[name] = nodes[name].copy({"bound": wrapper(nodes[name].bound, after, tags)})
    return agent


@functools.cache
def _build_middleware() -> Any:
    middleware = require("langchain.agents.middleware", extra=_EXTRA)

    class _GroundplaneMiddleware(middleware.AgentMiddleware):  # type: ignore[misc,name-defined]
        """See ``GroundplaneMiddleware``."""

        def __init__(self, checker: _Checker) -> None:
            super().__init__()
            self.checker = checker

        @property
        def name(self) -> str:
            return "GroundplaneMiddleware"

        def before_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            self.checker.boundary_for(find_guard(self.checker.guard, _ADAPTER))
            return None

        async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            return self.before_agent(state, runtime)

        @middleware.hook_config(can_jump_to=["model"])  # type: ignore[untyped-decorator]
        def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            verdict = self.checker.check(state)
            update = None if verdict is None else self.checker.reask_update(verdict)
            return None if update is None else {**update, "jump_to": "model"}

        @middleware.hook_config(can_jump_to=["model"])  # type: ignore[untyped-decorator]
        async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
            update: dict[str, Any] | None = self.after_model(state, runtime)
            return update

        def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
            """A streamed answer refused mid-stream (``guarded_chat_model``) is reasked here
            with ``on_violation="reask"``: the model is asked again, its new stream gated."""
            for attempt in range(STREAM_REASKS + 1):
                try:
                    return handler(request)
                except Exception as error:
                    request = self._reask(request, error, attempt)
            raise AssertionError("unreachable")  # pragma: no cover

        async def awrap_model_call(
            self, request: Any, handler: Callable[[Any], Awaitable[Any]]
        ) -> Any:
            for attempt in range(STREAM_REASKS + 1):
                try:
                    return await handler(request)
                except Exception as error:
                    request = self._reask(request, error, attempt)
            raise AssertionError("unreachable")  # pragma: no cover

        def _reask(self, request: Any, error: Exception, attempt: int) -> Any:
            """The request asked again after the stream refusal ``error``; raises ``error``
            when it is not one, is not reasked, or the reasks are spent."""
            from groundplane_otel.otel._stream.gate import refusal_of  # OpenTelemetry on use

            evaluation = refusal_of(error)
            if (
                evaluation is None
                or self.checker.on_violation != "reask"
                or not evaluation.violations
                or attempt == STREAM_REASKS
            ):
                raise error
            text = GuardDecision(evaluation).text()
            message = _messages().HumanMessage(content=_REASK.format(report=text))
            return request.override(messages=[*request.messages, message])

        def wrap_tool_call(self, request: Any, handler: ToolHandler) -> Any:
            return tool_call_wrapper(self.checker.guard)(request, handler)

        async def awrap_tool_call(
            self, request: Any, handler: Callable[[Any], Awaitable[Any]]
        ) -> Any:
            return await async_tool_call_wrapper(self.checker.guard)(request, handler)

    return _GroundplaneMiddleware


def GroundplaneMiddleware(
    boundary: str | None = None,
    *,
    on_violation: ViolationMode = "raise",
    guard: Guard | None = None,
) -> Any:
    """A LangChain v1 ``AgentMiddleware`` guarding the agent's final answer.

    ``boundary``: default the one whose ``match.agent_name`` is the agent's ``name``.
    ``on_violation``: ``"raise"`` (the guard's exception leaves ``agent.invoke``) or
    ``"reask"`` (back to the model with the violations; an answer that cannot be checked still
    raises). ``guard``: default the installed guard.
    """
    return _build_middleware()(_Checker(boundary, on_violation, guard))
