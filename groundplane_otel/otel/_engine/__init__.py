"""The engine every driver shares, and its only door: ``Engine`` (built from a ``GuardConfig``,
it owns the store of facts per request, capture, lineage and accounting; drivers hand it span
starts and ends in plain fields, answers and facts, and get back ``Evaluation``s). It writes no
telemetry: each driver hands what it decided to its own ``Results`` (the live guard's writer is
``otel/_telemetry``, replay's ``replay.stats.Tally``). Private: import from
``groundplane_otel.otel``.

Besides ``Engine``, the names below are what drivers and readers share with it: the readers of
recorded tool calls and answers (replay, suggest), the span keys and lineage marks the drivers
(live and replay) and the stream gate read, the SDK contract's readers and writers (``sdk``,
a leaf), and the driver-side interfaces (``Results``, ``Observed``).
"""

from __future__ import annotations

from groundplane_otel.otel._engine.capture import (
    arguments_match,
    build_fact,
    parse_tool_result,
    read_arguments,
    read_tool_call,
)
from groundplane_otel.otel._engine.coverage import Coverage
from groundplane_otel.otel._engine.engine import COUNTED, Engine
from groundplane_otel.otel._engine.evaluate import CheckResults, UnitRunner, failed_run, plan_checks
from groundplane_otel.otel._engine.lineage import (
    CHAIN_ATTR,
    HANDED_ATTR,
    NO_DICT,
    OUTPUT_ATTR,
    STREAM_ATTR,
    WATCHERS_ATTR,
    attached,
)
from groundplane_otel.otel._engine.literal import parse_tool_text
from groundplane_otel.otel._engine.output import OutputRead, read_output
from groundplane_otel.otel._engine.reported import ReportOrError, reported_evaluation
from groundplane_otel.otel._engine.results import Observed, Observer, Results
from groundplane_otel.otel._engine.sdk import (
    fits,
    override_ok,
    sdk_layout,
    span_attributes,
    span_limits,
    unwrap_end,
    valid_span_context,
    wrap_end,
)
from groundplane_otel.otel._engine.sdk.dispatch import ride
from groundplane_otel.otel._engine.sdk.hooks import attach, detach
from groundplane_otel.otel._engine.spans import (
    LLM_KEYS,
    LLM_PREFIXES,
    TOOL_KEYS,
    agent_names,
    graph_name,
    is_agent,
    is_graph_node,
    is_llm,
    langchain_agent,
    span_ids,
)
from groundplane_otel.otel._engine.store import RequestKey
from groundplane_otel.otel._engine.withheld import is_withheld, reveals_restricted, scrub_output

__all__ = [
    "CHAIN_ATTR",
    "COUNTED",
    "HANDED_ATTR",
    "LLM_KEYS",
    "LLM_PREFIXES",
    "NO_DICT",
    "OUTPUT_ATTR",
    "STREAM_ATTR",
    "TOOL_KEYS",
    "WATCHERS_ATTR",
    "CheckResults",
    "Coverage",
    "Engine",
    "Observed",
    "Observer",
    "OutputRead",
    "ReportOrError",
    "RequestKey",
    "Results",
    "UnitRunner",
    "agent_names",
    "arguments_match",
    "attach",
    "attached",
    "build_fact",
    "detach",
    "failed_run",
    "fits",
    "graph_name",
    "is_agent",
    "is_graph_node",
    "is_llm",
    "is_withheld",
    "langchain_agent",
    "override_ok",
    "parse_tool_result",
    "parse_tool_text",
    "plan_checks",
    "read_arguments",
    "read_output",
    "read_tool_call",
    "reported_evaluation",
    "reveals_restricted",
    "ride",
    "scrub_output",
    "sdk_layout",
    "span_attributes",
    "span_ids",
    "span_limits",
    "unwrap_end",
    "valid_span_context",
    "wrap_end",
]
