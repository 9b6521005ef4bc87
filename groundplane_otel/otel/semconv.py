"""Every name the guard reads or writes, and every fixed vocabulary, in one place.

The ``groundplane.*`` names are a contract (DESIGN §4): dashboards and alert rules depend on them.
The GenAI guardrail names are not yet in the Python semconv package, so they are defined here.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

from groundplane_otel.report import Verdict as Verdict  # noqa: PLC0414 (the core's, re-exported)

# -- what the guard reads: GenAI semantic conventions ------------------------------------------
GEN_AI_OPERATION_NAME: Final = "gen_ai.operation.name"
GEN_AI_AGENT_NAME: Final = "gen_ai.agent.name"
GEN_AI_TOOL_NAME: Final = "gen_ai.tool.name"
GEN_AI_TOOL_TYPE: Final = "gen_ai.tool.type"
GEN_AI_TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
GEN_AI_TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
GEN_AI_TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
GEN_AI_OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
GEN_AI_RESPONSE_FINISH_REASONS: Final = "gen_ai.response.finish_reasons"
GEN_AI_COMPLETION_PREFIX: Final = "gen_ai.completion."  # legacy Traceloop flattening
GEN_AI_DATA_SOURCE_ID: Final = "gen_ai.data_source.id"
GEN_AI_RETRIEVAL_DOCUMENTS: Final = "gen_ai.retrieval.documents"  # JSON [{id, score}, ...]
GEN_AI_RETRIEVAL_QUERY_TEXT: Final = "gen_ai.retrieval.query.text"
GEN_AI_RETRIEVAL_TOP_K: Final = "gen_ai.retrieval.top_k"

OP_EXECUTE_TOOL: Final = "execute_tool"
OP_INVOKE_AGENT: Final = "invoke_agent"
OP_RETRIEVAL: Final = "retrieval"
LLM_OPERATIONS: Final = frozenset({"chat", "text_completion", "generate_content", OP_INVOKE_AGENT})
TOOL_CALL_FINISH_REASONS: Final = frozenset({"tool_calls", "tool_call", "function_call"})

# -- OpenInference ------------------------------------------------------------------------------
OI_SPAN_KIND: Final = "openinference.span.kind"
OI_TOOL_NAME: Final = "tool.name"
OI_TOOL_ID: Final = "tool.id"
OI_INPUT_VALUE: Final = "input.value"
OI_OUTPUT_VALUE: Final = "output.value"
OI_LLM_FINISH_REASON: Final = "llm.finish_reason"  # OpenInference (openai-agents) LLM spans
OI_OUTPUT_MESSAGES_PREFIX: Final = "llm.output_messages."
OI_AGENT_NAME: Final = "agent.name"  # on OpenInference AGENT spans
OI_LLM_KINDS: Final = frozenset({"LLM", "AGENT"})
OI_KIND_AGENT: Final = "AGENT"
OI_KIND_TOOL: Final = "TOOL"
OI_KIND_RETRIEVER: Final = "RETRIEVER"
OI_RETRIEVAL_DOCUMENTS_PREFIX: Final = "retrieval.documents."  # .{i}.document.id|content|score

OI_KIND_CHAIN: Final = "CHAIN"
OI_METADATA: Final = "metadata"  # JSON text: LangChain's run metadata (OpenInference LangChain)
LC_AGENT_NAME: Final = "lc_agent_name"  # in it: the agent LangChain's create_agent named
LANGGRAPH_NODE: Final = "langgraph_node"  # in it: the LangGraph node a span ran in
LANGGRAPH_GRAPHS: Final = frozenset({"langgraph", "langchain_create_agent"})  # ls_integration

# Where an agent's name is read (on the span or an ancestor), in this order.
AGENT_NAME_KEYS: Final = (GEN_AI_AGENT_NAME, OI_AGENT_NAME)

# -- Traceloop / OpenLLMetry (legacy) -----------------------------------------------------------
TRACELOOP_SPAN_KIND: Final = "traceloop.span.kind"
TRACELOOP_ENTITY_NAME: Final = "traceloop.entity.name"
TRACELOOP_ENTITY_INPUT: Final = "traceloop.entity.input"
TRACELOOP_ENTITY_OUTPUT: Final = "traceloop.entity.output"

# -- what the guard writes: span attributes -----------------------------------------------------
BOUNDARY: Final = "groundplane.boundary"
# ``true`` beside a ``groundplane.boundary`` the guard wrote (the span did not name one): replay
# and the verifier decide that span's boundary again instead of reading it back as the app's.
BOUNDARY_MATCHED: Final = "groundplane.boundary_matched"
OUTCOME: Final = "groundplane.outcome"
VIOLATIONS: Final = "groundplane.violations"
FACTS: Final = "groundplane.facts"
MODE: Final = "groundplane.mode"
CHECK: Final = "groundplane.check"
VERDICT: Final = "groundplane.verdict"
SKIP_REASON: Final = "groundplane.skip_reason"
FRAMEWORK: Final = "groundplane.framework"  # on groundplane.outputs.swallowed
FIELD: Final = "groundplane.field"
FACT: Final = "groundplane.fact"
FACT_TOOL: Final = "groundplane.fact.tool"
FACT_TRACE_ID: Final = "groundplane.fact.trace_id"
FACT_SPAN_ID: Final = "groundplane.fact.span_id"
FACT_KIND: Final = "groundplane.fact.kind"
FACT_SOURCE: Final = "groundplane.fact.source"
FACT_OUTCOME: Final = "groundplane.fact.outcome"
FACT_LINKS: Final = "groundplane.fact.links"  # fallback when the span API has no add_link
# On a span whose answer a stream gate decided: the answer characters the app had received
# when the outcome was decided (all of them for a passed answer; those before the cut else).
STREAM_RELEASED: Final = "groundplane.stream.released_chars"
CLAIMED: Final = "groundplane.claimed"  # content capture only
SUPPORTED: Final = "groundplane.supported"  # content capture only
MESSAGE: Final = "groundplane.message"  # content capture only

# -- the guardrail event ------------------------------------------------------------------------
# Source: the open proposal open-telemetry/semantic-conventions-genai PR #427 (status
# Development, revised through autumn 2026; not merged, not in the Python semconv package).
# Latest revision: ``result.type`` is conditionally required whenever ``result.value`` is set;
# ``policy.version`` whenever the policy has one; ``result.reason`` low-cardinality, no content.
GUARDRAIL_EVENT: Final = "gen_ai.guardrail.result"
GUARDRAIL_COMPONENT_NAME: Final = "gen_ai.guardrail.component.name"
GUARDRAIL_POLICY_ID: Final = "gen_ai.guardrail.policy.id"
GUARDRAIL_POLICY_VERSION: Final = "gen_ai.guardrail.policy.version"
GUARDRAIL_POLICY_RULE_ID: Final = "gen_ai.guardrail.policy.rule.id"
GUARDRAIL_RESULT_TYPE: Final = "gen_ai.guardrail.result.type"
GUARDRAIL_RESULT_VALUE: Final = "gen_ai.guardrail.result.value"
GUARDRAIL_RESULT_REASON: Final = "gen_ai.guardrail.result.reason"
GUARDRAIL_SOURCE: Final = "gen_ai.guardrail.source"
COMPONENT: Final = "groundplane"
RESULT_TYPE_VERDICT: Final = "verdict"  # the native name of our result field
SOURCE_MODEL_RESPONSE: Final = "model_response"
RESULT_UNSUPPORTED: Final = "unsupported"
RESULT_ERROR: Final = "error"

# -- the evaluation event -----------------------------------------------------------------------
# Source: the merged GenAI convention ``gen_ai.evaluation.result`` (semantic-conventions, status
# Development like every GenAI name): ``evaluation.name`` required, ``score.label`` when
# applicable, ``explanation`` recommended; SHOULD be parented to the evaluated operation's span.
EVALUATION_EVENT: Final = "gen_ai.evaluation.result"
EVALUATION_NAME: Final = "gen_ai.evaluation.name"  # the check family
EVALUATION_SCORE_LABEL: Final = "gen_ai.evaluation.score.label"  # supported/unsupported/error
EVALUATION_EXPLANATION: Final = "gen_ai.evaluation.explanation"  # content capture only
GEN_AI_RESPONSE_ID: Final = "gen_ai.response.id"

# -- metrics (name, unit) -----------------------------------------------------------------------
METER_NAME: Final = "groundplane_otel"
METRIC_CLAIMS: Final = "groundplane.claims"
METRIC_OUTPUTS: Final = "groundplane.outputs"
METRIC_SWALLOWED: Final = "groundplane.outputs.swallowed"  # blocks that never reached the app
METRIC_CHECK_DURATION: Final = "groundplane.check.duration"
METRIC_FACTS: Final = "groundplane.facts"
METRIC_VERIFIER_SPANS: Final = "groundplane.verifier.spans"  # received / dropped
METRIC_VERIFIER_TRACES: Final = "groundplane.verifier.traces"  # root_ended/idle/incomplete/failed
METRIC_VERIFIER_REQUESTS: Final = "groundplane.verifier.requests"  # received/oversize/unreadable
VERIFIER_OUTCOME: Final = "groundplane.verifier.outcome"
METRIC_TRACES_ACTIVE: Final = "groundplane.traces.active"
# requests that recorded a boundary's facts, by whether the boundary matched a span in them
METRIC_COVERAGE: Final = "groundplane.coverage"
COVERAGE_OUTCOME: Final = "groundplane.coverage.outcome"  # matched | unmatched
# summary attributes not written on a guarded span at its attribute limit (never evict the app's)
METRIC_SUMMARY_LEFT_OFF: Final = "groundplane.summary.left_off"
UNIT_CLAIM: Final = "{claim}"
UNIT_OUTPUT: Final = "{output}"
UNIT_SECONDS: Final = "s"
UNIT_FACT: Final = "{fact}"
UNIT_SPAN: Final = "{span}"
UNIT_TRACE: Final = "{trace}"
UNIT_REQUEST: Final = "{request}"
UNIT_ATTRIBUTE: Final = "{attribute}"
DURATION_BUCKETS: Final = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1)

# -- fixed vocabularies -------------------------------------------------------------------------
Outcome = Literal["passed", "blocked", "flagged", "skipped", "error"]
SkipReason = Literal["refusal", "span_error"]
FactSource = Literal[
    "genai",
    "openinference",
    "traceloop",
    "code",
    "mcp",
    "langgraph",
    "langchain",
    "openai_agents",
    "pydantic_ai",
]
FactOutcome = Literal["recorded", "conflict", "truncated", "unparseable", "rejected", "evicted"]
CoverageOutcome = Literal["matched", "unmatched"]
FactKindLabel = Literal["ranking", "table", "domain", "value", "documents", "unknown"]
FACT_SOURCES: Final = get_args(FactSource)

# Reason codes of error events (``gen_ai.guardrail.result.value="error"``).
REASON_OUTPUT_UNREADABLE: Final = "output_unreadable"
REASON_NO_OUTPUT: Final = "no_output"
REASON_FACT_MISSING: Final = "fact_missing"
REASON_FACT_CONFLICT: Final = "fact_conflict"
REASON_FACT_TRUNCATED: Final = "fact_truncated"
REASON_FACT_UNPARSEABLE: Final = "fact_unparseable"
REASON_FACT_REJECTED: Final = "fact_rejected"
REASON_CHECK_ERROR: Final = "check_error"
REASON_GUARD_ERROR: Final = "guard_error"
REASON_STREAM_FAILED: Final = "stream_failed"  # the model's stream raised before its end
REASON_STREAM_ABANDONED: Final = "stream_abandoned"  # the app stopped reading a guarded stream
REASON_STREAM_UNKNOWN: Final = "stream_chunk_unknown"  # a chunk whose text cannot be read
# strict: an answer in a trace that recorded a boundary's facts, the boundary matching nothing
REASON_BOUNDARY_UNMATCHED: Final = "boundary_unmatched"

# A fact that could not be stored -> the reason code of the checks that need it.
PROBLEM_REASONS: Final[dict[str, str]] = {
    "conflict": REASON_FACT_CONFLICT,
    "truncated": REASON_FACT_TRUNCATED,
    "unparseable": REASON_FACT_UNPARSEABLE,
    "rejected": REASON_FACT_REJECTED,
}
