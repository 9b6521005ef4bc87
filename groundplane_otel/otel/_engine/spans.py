"""Reading a span: its ids, and the keys and names that make it an LLM, agent or tool span
(shared by the guard's hooks and its lineage). Its attributes are read by ``sdk.span_attributes``
(re-exported here), which knows the SDK's fields."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine.sdk import span_attributes

__all__ = [
    "LLM_KEYS",
    "LLM_PREFIXES",
    "TOOL_KEYS",
    "agent_names",
    "is_agent",
    "is_llm",
    "operation",
    "span_attributes",
    "span_ids",
]


def span_ids(span: ReadableSpan) -> tuple[int, int]:
    context = span.get_span_context()
    assert context is not None
    return context.trace_id, context.span_id


LLM_KEYS = frozenset(
    {
        sc.GEN_AI_OPERATION_NAME,
        sc.GEN_AI_AGENT_NAME,
        sc.OI_SPAN_KIND,
        sc.OI_AGENT_NAME,
        sc.BOUNDARY,
    }
)
LLM_PREFIXES = tuple(f"{operation} " for operation in sc.LLM_OPERATIONS)
TOOL_KEYS = frozenset(
    {
        sc.GEN_AI_TOOL_NAME,
        sc.GEN_AI_OPERATION_NAME,
        sc.OI_SPAN_KIND,
        sc.TRACELOOP_ENTITY_OUTPUT,
        sc.TRACELOOP_SPAN_KIND,
    }
)


def operation(name: str, attributes: Mapping[str, Any]) -> Any:
    return attributes.get(sc.GEN_AI_OPERATION_NAME) or name.partition(" ")[0]


def is_llm(name: str, attributes: Mapping[str, Any]) -> bool:
    """A model call's span, which may carry an answer: by its operation (attribute or the
    name's first word) or its OpenInference kind. (The guard also watches spans a policy names
    and those naming a boundary: ``processor._started``.)"""
    return (
        attributes.get(sc.GEN_AI_OPERATION_NAME) in sc.LLM_OPERATIONS
        or name.partition(" ")[0] in sc.LLM_OPERATIONS
        or attributes.get(sc.OI_SPAN_KIND) in sc.OI_LLM_KINDS
    )


def is_agent(name: str, attributes: Mapping[str, Any]) -> bool:
    """An agent run's span: by its operation or OpenInference kind when it has one (a ``chat``
    or tool span carrying ``gen_ai.agent.name``, as pydantic-ai writes them, is not), else by
    its name or an agent-name attribute."""
    operation = attributes.get(sc.GEN_AI_OPERATION_NAME)
    if operation is not None:
        return bool(operation == sc.OP_INVOKE_AGENT)
    kind = attributes.get(sc.OI_SPAN_KIND)
    if kind is not None:
        return bool(kind == sc.OI_KIND_AGENT)
    first = name.partition(" ")[0]
    return first == sc.OP_INVOKE_AGENT or (
        first not in sc.LLM_OPERATIONS
        and (sc.GEN_AI_AGENT_NAME in attributes or sc.OI_AGENT_NAME in attributes)
    )


def agent_names(attributes: Mapping[str, Any]) -> list[Any]:
    return [attributes[key] for key in sc.AGENT_NAME_KEYS if key in attributes]
