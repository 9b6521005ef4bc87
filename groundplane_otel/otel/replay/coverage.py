"""What a replay saw of the names its policy relies on, and what the policy expected but never
saw: a fact whose tool never appeared in the input, a fact whose tool's calls never carried a
result (content capture off), a boundary that matched no output.

``Seen.note`` reads each decided span's names into ``ReplayStats`` (``tools``,
``tool_results``, ``agents``, ``model_spans``): the policy's tools always, other names up to
``MAX_NAMES`` distinct per kind (the rest counted in ``names_left_out``), so hostile input
cannot grow it. ``expected_unseen`` compares them with the policy; the report lists the names
that *were* seen (the most frequent ``SHOWN``) with a did-you-mean (``difflib``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from groundplane_otel.otel import semconv as sc
from groundplane_otel.otel._engine import LLM_KEYS, LLM_PREFIXES, TOOL_KEYS, is_llm, read_tool_call
from groundplane_otel.otel._rules import close_to
from groundplane_otel.otel.config import GuardConfig
from groundplane_otel.otel.replay.stats import ReplayStats

__all__ = ["MAX_NAMES", "SHOWN", "Seen", "expected_unseen"]

MAX_NAMES = 1_000
SHOWN = 10
CAPTURE_HINT = (
    "record with content capture on: OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true "
    "for the GenAI instrumentations (for the guard's own @tool spans: capture_content: true in "
    "the policy, or GROUNDPLANE_CAPTURE_CONTENT=true)"
)


class Seen:
    """Notes the names of the spans a replay decides into ``stats``."""

    __slots__ = ("_policy_tools", "_stats")

    def __init__(self, config: GuardConfig, stats: ReplayStats) -> None:
        self._policy_tools = frozenset(spec.tool for spec in config.facts)
        self._stats = stats

    def note(self, name: str, attributes: Mapping[str, Any]) -> None:
        """One decided span (its name and recorded attributes)."""
        if (
            TOOL_KEYS.isdisjoint(attributes)
            and LLM_KEYS.isdisjoint(attributes)
            and not name.startswith(LLM_PREFIXES)
        ):
            return
        stats = self._stats
        if not TOOL_KEYS.isdisjoint(attributes):
            call = read_tool_call(attributes, name)
            if call is not None:
                self._count(stats.tools, call.tool)
                if call.tool in self._policy_tools and call.result is not None:
                    results = stats.tool_results
                    results[call.tool] = results.get(call.tool, 0) + 1
        for key in sc.AGENT_NAME_KEYS:
            agent = attributes.get(key)
            if isinstance(agent, str) and agent:
                self._count(stats.agents, agent)
        if is_llm(name, attributes):
            self._count(stats.model_spans, name)

    def _count(self, names: dict[str, int], name: str) -> None:
        if name in names:
            names[name] += 1
        elif len(names) < MAX_NAMES or name in self._policy_tools:
            names[name] = 1
        else:
            self._stats.names_left_out += 1


def _shown(names: Mapping[str, int]) -> list[str]:
    """The most frequent names (ties by name), at most ``SHOWN``."""
    ranked = sorted(names.items(), key=lambda item: (-item[1], item[0]))
    return [name for name, _ in ranked[:SHOWN]]


def _seen(what: str, names: Mapping[str, int], wanted: str | None) -> str:
    """``tools seen: a, b (and 3 more); did you mean 'a'?`` — or ``no tools seen``."""
    if not names:
        return f"no {what} in the input"
    shown = _shown(names)
    more = f" (and {len(names) - len(shown)} more)" if len(names) > len(shown) else ""
    text = f"{what} seen: {', '.join(shown)}{more}"
    if wanted is not None:
        close = close_to(wanted, list(names))
        if close is not None:
            text += f"; did you mean {close!r}?"
    return text


def expected_unseen(stats: ReplayStats, config: GuardConfig) -> dict[str, Any]:
    """What ``config`` expected that the replay never saw, each named with what was seen:
    ``facts`` (its tool never in the input), ``no_results`` (its tool called, never with a
    result: content capture off), ``boundaries`` (no output matched); and the names seen."""
    facts, no_results = [], []
    for spec in config.facts:
        calls = stats.tools.get(spec.tool, 0)
        if not calls:
            problem = f"its tool {spec.tool!r} never appeared in the input; "
            problem += _seen("tools", stats.tools, spec.tool)
            facts.append({"fact": spec.name, "tool": spec.tool, "problem": problem})
        elif not stats.tool_results.get(spec.tool, 0):
            problem = (
                f"{calls} calls of its tool {spec.tool!r}, none with its result on the span "
                "(content not captured)"
            )
            no_results.append({"fact": spec.name, "tool": spec.tool, "problem": problem})
    outputs = {boundary for boundary, _ in stats.outputs}
    boundaries = []
    for boundary in config.boundaries:
        if boundary.name in outputs:
            continue
        match = boundary.match
        parts = []
        if match.agent_name is not None:
            parts.append(_seen("agent names", stats.agents, match.agent_name))
        if match.span_name is not None:
            parts.append(_seen("model call span names", stats.model_spans, match.span_name))
        if not parts:
            parts.append(_seen("agent names", stats.agents, None))
            parts.append(_seen("model call span names", stats.model_spans, None))
        wanted = ", ".join(
            f"{key} {value!r}"
            for key, value in (
                ("agent_name", match.agent_name),
                ("span_name", match.span_name),
                ("operation_name", match.operation_name),
            )
            if value is not None
        )
        problem = f"matched no output ({wanted or 'no match criteria'}); " + "; ".join(parts)
        boundaries.append({"boundary": boundary.name, "problem": problem})
    return {
        "facts_unseen": facts,
        "facts_without_results": no_results,
        "boundaries_unmatched": boundaries,
        "tools_seen": _shown(stats.tools),
        "agent_names_seen": _shown(stats.agents),
        "model_span_names_seen": _shown(stats.model_spans),
        "names_left_out": stats.names_left_out,
    }
