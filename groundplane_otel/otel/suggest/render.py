"""The suggested policy as YAML in the policy file's format, with what was measured as comments.

Each kept check carries its support ("held in 526 of 600 runs") and the trace ids of the runs
that broke it (the first few: the wrong answers it would have caught). A check not kept is
listed as a comment; a fact only such checks read is declared in a comment too, so that
uncommenting both gives a valid policy. The notes (a tool whose results changed shape, answers
that may be two agents') head the file. The policy is written in ``observe`` mode (shadow
first) and is valid for ``check-policy`` as written.
"""

from __future__ import annotations

import json
from typing import Any

import yaml

from groundplane_otel.otel.suggest import Suggestion
from groundplane_otel.otel.suggest.verify import Candidate

__all__ = ["render", "summary"]

MAX_REJECTED_SHOWN = 5


def _flow(value: Any) -> str:
    """One YAML flow value (a scalar, list or mapping) on one line, quoted as YAML needs (a
    value with a line break or an odd character is written as JSON, which YAML reads)."""
    text = yaml.safe_dump(value, default_flow_style=True, width=1_000_000, sort_keys=False)
    text = text.removesuffix("\n...\n").strip()
    return json.dumps(value) if "\n" in text or not text.isprintable() else text


def _note(text: str) -> str:
    """Text for a comment: kept on its line (a line break or odd character is escaped)."""
    return text if text.isprintable() else json.dumps(text)


def _support(candidate: Candidate) -> str:
    text = f"held in {candidate.held} of {candidate.applied} runs"
    if candidate.broke_count:
        listed = ", ".join(candidate.broke)
        more = candidate.broke_count - len(candidate.broke)
        text += f"; broke in {listed}" + (f" (and {more} more)" if more else "")
    return text


def _entry(candidate: Candidate) -> str:
    return f"{candidate.family}: {_flow(candidate.arguments)}"


def _count(count: int, singular: str, plural: str) -> str:
    return f"{count} {singular if count == 1 else plural}"


def summary(suggestion: Suggestion) -> str:
    """One line: what was read and what was inferred."""
    kept = [c for plan in suggestion.boundaries for c in plan.kept(suggestion.min_support)]
    boundaries = sum(1 for plan in suggestion.boundaries if plan.kept(suggestion.min_support))
    spans = _count(suggestion.counts.spans, "span", "spans")
    if suggestion.without_content:
        spans += f"; {suggestion.without_content} without content"
    return (
        f"{_count(suggestion.runs, 'run', 'runs')} read ({spans}): "
        f"{_count(len(suggestion.facts), 'fact', 'facts')}, "
        f"{_count(boundaries, 'boundary', 'boundaries')}, {_count(len(kept), 'check', 'checks')}"
    )


def _left_out(suggestion: Suggestion) -> list[str]:
    """What the bounds left out, counted (each only when it happened)."""
    counts = suggestion.counts
    proposals = sum(plan.proposals_dropped for plan in suggestion.boundaries)
    found = [
        (counts.dropped_spans, "spans over --max-spans-per-trace"),
        (counts.ambiguous_traces, "traces with two different spans of one id"),
        (counts.answers_dropped, "answers over 16 of one boundary in one run"),
        (proposals, "candidate checks over 256 of one boundary"),
    ]
    return [f"# Left out: {count} {what}." for count, what in found if count]


def _undeclared(suggestion: Suggestion) -> list[str]:
    """The facts only checks not kept read, declared in comments (their "not kept" lines name
    them)."""
    support = suggestion.min_support
    rejected = {
        name
        for plan in suggestion.boundaries
        for candidate in plan.rejected(support)[:MAX_REJECTED_SHOWN]
        for name in candidate.check.facts
    }
    facts = [fact for fact in suggestion.undeclared if fact.spec.name in rejected]
    if not facts:
        return []
    lines = ["  # Not declared: facts only the checks not kept below read."]
    for fact in facts:
        lines.append(f"  # {_flow(fact.spec.name)}:  # {_note(fact.why)}")
        lines += [f"  #   {key}: {_flow(value)}" for key, value in fact.as_mapping().items()]
    return lines


def render(suggestion: Suggestion) -> str:
    """The policy file's text."""
    support = suggestion.min_support
    lines = [
        f"# Suggested by `groundplane-otel suggest` from {suggestion.runs} recorded runs:",
        f"# every check held in at least {support:.0%} of the runs it applies to.",
        "# Review it, backtest it (groundplane-otel replay --policy THIS_FILE TRACES...),",
        "# then promote `mode: observe` to `mode: enforce`.",
    ]
    if suggestion.kept_runs < suggestion.runs:
        lines.append(
            f"# Inferred from the first {suggestion.kept_runs} runs, tallied over all of them"
            f" ({suggestion.unplanned_runs} later runs matched no boundary)."
        )
    if suggestion.unreadable:
        lines.append(f"# {suggestion.unreadable} unreadable inputs were skipped.")
    if suggestion.without_content:
        lines.append(
            f"# {suggestion.without_content} of the {suggestion.runs} runs had a tool result or "
            "an answer without content (not captured): what they lack was not inferred from."
        )
    lines += [f"# Note: {_note(note)}." for note in suggestion.notes]
    lines += _left_out(suggestion)
    lines += ["version: 1", "mode: observe", "capture_content: false", "facts:"]
    for fact in suggestion.facts:
        lines.append(f"  {_flow(fact.spec.name)}:  # {_note(fact.why)}")
        for key, value in fact.as_mapping().items():
            lines.append(f"    {key}: {_flow(value)}")
    lines += _undeclared(suggestion)
    lines.append("boundaries:")
    for plan in suggestion.boundaries:
        kept = plan.kept(support)
        who = "agent" if plan.by[0] == "agent_name" else "LLM span"
        if not kept:
            lines.append(
                f"  # {who} {_note(plan.by[1])}: no check held often enough ({plan.runs} runs)"
            )
            continue
        facts = sorted({name for c in kept for name in c.check.facts})
        answers = f"the answers of {who} {_note(plan.by[1])} in {plan.runs} runs"
        lines += [
            f"  {_flow(plan.name)}:  # {answers}",
            f"    facts: {_flow(facts)}",
            f"    match: {_flow({plan.by[0]: plan.by[1]})}",
            f"    answer: {plan.answer}",
            "    report_mode: all",
            "    checks:",
        ]
        for candidate in kept:
            lines += [f"      # {_support(candidate)}", f"      - {_entry(candidate)}"]
        rejected = plan.rejected(support)
        for candidate in rejected[:MAX_REJECTED_SHOWN]:
            lines.append(
                f"      # not kept ({candidate.held} of {candidate.applied} runs): "
                f"{_entry(candidate)}"
            )
        if len(rejected) > MAX_REJECTED_SHOWN:
            lines.append(f"      # ({len(rejected) - MAX_REJECTED_SHOWN} more not kept)")
    return "\n".join(lines) + "\n"
