"""Reading a span: its ids, and the keys and names that make it an LLM, agent or tool span
(shared by the guard's hooks and its lineage). Its attributes are read by ``sdk.span_attributes``
(re-exported here), which knows the SDK's fields."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from opentelemetry.sdk.trace import ReadableSpan

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine.sdk import each_span_attributes, span_attributes

__all__ = [
    "LLM_KEYS",
    "LLM_PREFIXES",
    "TOOL_KEYS",
    "SpanView",
    "agent_names",
    "graph_name",
    "is_agent",
    "is_graph_node",
    "langchain_agent",
    "is_llm",
    "operation",
    "read_chain",
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


_MAX_METADATA = 65_536  # characters of OpenInference metadata read (it is the run's, unbounded)


def _metadata(attributes: Mapping[str, Any]) -> Mapping[str, Any]:
    """OpenInference LangChain's ``metadata`` (JSON text), or {} (absent, too long, not an
    object)."""
    text = attributes.get(sc.OI_METADATA)
    if not isinstance(text, str) or len(text) > _MAX_METADATA or "lang" not in text:
        return {}
    try:
        found = json.loads(text)
    except ValueError:
        return {}
    return found if isinstance(found, dict) else {}


def langchain_agent(attributes: Mapping[str, Any]) -> str | None:
    """The agent an OpenInference LangChain span belongs to, where the convention writes no
    agent name: the ``lc_agent_name`` LangChain's ``create_agent(name=...)`` puts in the
    metadata of every span it runs (the model's included)."""
    if sc.OI_METADATA not in attributes:
        return None
    named = _metadata(attributes).get(sc.LC_AGENT_NAME)
    return named if isinstance(named, str) and named else None


def graph_name(name: str, attributes: Mapping[str, Any]) -> str | None:
    """A LangGraph graph's own span under OpenInference LangChain (kind CHAIN, run by LangGraph,
    in no node): the graph's name (``create_react_agent(name=...)``, ``compile(name=...)``);
    None for any other span."""
    if attributes.get(sc.OI_SPAN_KIND) != sc.OI_KIND_CHAIN or not name:
        return None
    metadata = _metadata(attributes)
    if metadata.get("ls_integration") in sc.LANGGRAPH_GRAPHS and sc.LANGGRAPH_NODE not in metadata:
        return name
    return None


def is_graph_node(attributes: Mapping[str, Any]) -> bool:
    """A LangGraph node's span of kind AGENT, as OpenInference LangChain writes the ``agent``
    node of ``create_react_agent`` (its metadata names the node): it holds the graph's state,
    not a model's answer (the model's own span, inside it, is kind LLM)."""
    return (
        attributes.get(sc.OI_SPAN_KIND) == sc.OI_KIND_AGENT
        and sc.OI_METADATA in attributes
        and sc.LANGGRAPH_NODE in _metadata(attributes)
    )


class SpanView(NamedTuple):
    """One span of a lineage, read once for a decision: its ``name``, its ``attributes`` (the
    live mapping), its ``operation``, whether it is an ``agent`` span, and its ``agents``: the
    agent names it holds (a tuple) (the agent-name keys' values and the LangChain agent,
    ``langchain_agent``; ``None`` for one not set). A named tuple: its fields are read at C
    speed, and ``read_chain`` builds it with no Python ``__init__`` (one per span per decision)."""

    span: Any
    name: str
    attributes: Mapping[str, Any]
    operation: Any
    agent: bool
    agents: tuple[Any, ...]


# ``SpanView(...)`` without its generated Python ``__new__`` (a call less per span read).
_new_view: Callable[[type[SpanView], tuple[Any, ...]], SpanView] = tuple.__new__


def read_chain(spans: Sequence[Any]) -> list[SpanView]:
    """Every span of a lineage read once, in order (the lineage's one visit to this module;
    their attributes read in one visit to ``sdk``)."""
    first_key, second_key = _AGENT_KEYS
    views: list[SpanView] = []
    add = views.append
    # ``enumerate``, not ``zip(..., strict=True)``: zip parses a keyword argument the slow way.
    for index, attributes in enumerate(each_span_attributes(spans)):
        span = spans[index]
        name: str = span.name
        get = attributes.get
        agents = (  # a tuple: built cheaper than a set, and any value may be in it
            get(first_key),
            get(second_key),
            langchain_agent(attributes) if sc.OI_METADATA in attributes else None,
        )
        named = get(sc.GEN_AI_OPERATION_NAME)
        # ``is_agent``'s first rule inline (most spans name their operation: a call less).
        agent = named == sc.OP_INVOKE_AGENT if named is not None else is_agent(name, attributes)
        operation = named or name.partition(" ")[0]
        add(_new_view(SpanView, (span, name, attributes, operation, agent, agents)))
    return views


_AGENT_KEYS: tuple[str, str] = sc.AGENT_NAME_KEYS  # ``read_chain`` reads the two by name
