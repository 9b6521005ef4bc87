"""One boundary per agent: its facts, its answer kind, its candidate checks and their tally.

An agent's boundary matches its name (``gen_ai.agent.name``, OpenInference's ``agent.name`` or
LangChain's ``lc_agent_name`` metadata, on the LLM span or an ancestor), else the LLM span's
name. Answers known only by their span's name are never merged silently: when they ran in two
LangGraph graphs (OpenInference LangChain: the graph's span), no boundary is written for them
and a note says how to name the agents; when their runs call disjoint sets of tools (two agents
no span names?), a note says so. A boundary is named as the agent's spans name their boundary
(``groundplane.boundary``, on the answer's span or, when an adapter ran the checks, the agent's
or guardrail's span: replay matches it by name), else after the agent. Its answer is ``json``
when most of its answers carry a JSON object, else ``text``. Candidates are proposed from the
kept runs (``candidates.proposals``; for ``text``, ``numbers_recorded`` over every fact), built
as the policy builds them, and tallied on every run.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from groundplane_otel.otel.suggest.candidates import proposals, subject
from groundplane_otel.otel.suggest.facts import InferredFact, matching
from groundplane_otel.otel.suggest.runs import RecordedTrace
from groundplane_otel.otel.suggest.verify import Candidate, build_check, run_facts

__all__ = ["BoundaryPlan", "plan_boundaries"]

MAX_CANDIDATES = 256  # per boundary: more distinct proposals are counted, not tried
_DIGIT = re.compile(r"\d")
# A check on these fields already requires the names to be recorded: entities_recorded is implied.
_NAMING = {"superlative": "winner_field", "ranking_prefix": "field", "row_integrity": "key_field"}


@dataclass(slots=True)
class BoundaryPlan:
    """A boundary being inferred: who it matches, what it reads, its candidates' tally."""

    name: str
    by: tuple[str, str]
    answer: str
    facts: list[InferredFact]
    candidates: list[Candidate] = field(default_factory=list)
    runs: int = 0
    without_answer: int = 0  # runs whose answers this boundary cannot read (no JSON object)
    proposals_dropped: int = 0

    def answers(self, run: RecordedTrace) -> list[Any]:
        """This boundary's answers in ``run``, as its checks receive them (distinct)."""
        found: list[Any] = []
        for answer in run.answers:
            if answer.by != self.by:
                continue
            read = answer.read
            value = read.value if self.answer == "json" else read.as_text().text
            if value is not None and value not in found:
                found.append(value)
        return found

    def tally(self, run: RecordedTrace) -> None:
        """Count ``run`` for every candidate that applies to it (its facts are in the run)."""
        if not any(answer.by == self.by for answer in run.answers):
            return
        self.runs += 1
        answers = self.answers(run)
        if not answers:
            self.without_answer += 1
            return
        found = run_facts(run, self.facts)
        for candidate in self.candidates:
            needs = candidate.check.facts
            if any(name in found.misshapen for name in needs):
                candidate.broken(run.trace_id)
            elif all(name in found.typed for name in needs):
                candidate.tally(found.registry, answers, run.trace_id)

    def kept(self, min_support: float) -> list[Candidate]:
        """The candidates that held in at least ``min_support`` of the runs they apply to, one
        per (family, subject): the best supported (then the first proposed)."""
        best: dict[tuple[str, str], Candidate] = {}
        for candidate in self.candidates:
            if candidate.applied == 0 or candidate.support < min_support:
                continue
            key = subject(candidate.family, candidate.arguments)
            if key not in best or candidate.support > best[key].support:
                best[key] = candidate
        named = {str(c.arguments[_NAMING[c.family]]) for c in best.values() if c.family in _NAMING}
        return [
            c
            for c in best.values()
            if not (c.family == "entities_recorded" and set(c.arguments["fields"]) <= named)
        ]

    def rejected(self, min_support: float) -> list[Candidate]:
        """The candidates that applied but held too rarely, best supported first."""
        low = [c for c in self.candidates if c.applied and c.support < min_support]
        return sorted(low, key=lambda c: -c.support)


def _boundary_name(by: tuple[str, str], named: Counter[str], used: set[str]) -> str:
    """The name the answers' spans give their boundary (replay matches it), else the agent's
    (or span's) name made an identifier."""
    common = named.most_common(1)
    if common and common[0][0] not in used:
        used.add(common[0][0])
        return common[0][0]
    name = re.sub(r"\W+", "_", by[1]).strip("_").lower() or "answer"
    while name in used:
        name += "_"
    used.add(name)
    return name


def _proposed(
    plan: BoundaryPlan, runs: Sequence[RecordedTrace]
) -> Iterator[tuple[str, dict[str, Any], list[InferredFact]]]:
    """Distinct proposals over the runs, with the facts each one reads."""
    by_name = {fact.spec.name: fact for fact in plan.facts}
    if plan.answer == "text":
        if any(_DIGIT.search(str(a)) for run in runs for a in plan.answers(run)):
            yield "numbers_recorded", {"fact": list(by_name)}, plan.facts
        return
    seen: set[str] = set()
    for run in runs:
        answers = plan.answers(run)
        if not answers:
            continue
        typed = run_facts(run, plan.facts).typed
        arguments = [result.arguments for result in run.tools]
        for answer in answers:
            if not isinstance(answer, dict):
                continue
            for family, arguments_ in proposals(typed, answer, arguments):
                key = repr((family, sorted(arguments_.items(), key=lambda item: item[0])))
                if key in seen:
                    continue
                seen.add(key)
                if len(seen) > MAX_CANDIDATES:
                    plan.proposals_dropped += 1
                    continue
                yield family, arguments_, [by_name[arguments_["fact"]]]


def _counted(counts: Counter[str], unit: str) -> str:
    return ", ".join(f"{name} in {count} {unit}" for name, count in counts.most_common())


def _tool_groups(tool_sets: Sequence[frozenset[str]]) -> list[set[str]]:
    """The runs' tool sets joined where they share a tool: one group per agent, as far as the
    tools tell."""
    groups: list[set[str]] = []
    for tools in tool_sets:
        joined = set(tools)
        for group in [g for g in groups if g & joined]:
            joined |= group
            groups.remove(group)
        groups.append(joined)
    return [group for group in groups if group]


def _merged(
    by: tuple[str, str], graphs: Counter[str], tool_sets: list[frozenset[str]]
) -> str | None:
    """Why answers known only by their span's name may be two agents' (None: nothing says so)."""
    if len(graphs) >= 2:
        return (
            f"the answers of LLM span {by[1]!r} ran in {len(graphs)} LangGraph graphs "
            f"({_counted(graphs, 'runs')}) and no span names their agent, so no boundary can tell "
            "them apart: none is suggested for them. Name each agent (LangChain's "
            "create_agent(name=...) writes lc_agent_name on every span; or set "
            "gen_ai.agent.name) and record again"
        )
    groups = _tool_groups(tool_sets)
    if len(groups) >= 2:
        seen = "; ".join(", ".join(sorted(group)) for group in groups)
        return (
            f"the answers of LLM span {by[1]!r} come from runs calling disjoint tools ({seen}): "
            "two agents that no span names? The boundary below matches every span of that name; "
            "name each agent (gen_ai.agent.name, or LangChain's create_agent(name=...)) to give "
            "each its own"
        )
    return None


def plan_boundaries(
    runs: Sequence[RecordedTrace], facts: Sequence[InferredFact], max_listed: int
) -> tuple[list[BoundaryPlan], list[str]]:
    """The boundaries the kept runs show, each with its candidates built (not yet tallied), and
    notes on answers that may be two agents' (``_merged``)."""
    reads: dict[tuple[str, str], list[bool]] = {}
    fed: dict[tuple[str, str], set[str]] = {}
    named: dict[tuple[str, str], Counter[str]] = {}
    graphs: dict[tuple[str, str], Counter[str]] = {}
    tool_sets: dict[tuple[str, str], list[frozenset[str]]] = {}
    for run in runs:
        names = {f.spec.name for result in run.tools for f in matching(facts, result)}
        tools = frozenset(result.tool for result in run.tools)
        for by in dict.fromkeys(answer.by for answer in run.answers):
            tool_sets.setdefault(by, []).append(tools)
        for by, graph in {(a.by, a.graph) for a in run.answers if a.graph is not None}:
            graphs.setdefault(by, Counter())[graph] += 1
        for answer in run.answers:
            reads.setdefault(answer.by, []).append(answer.read.value is not None)
            fed.setdefault(answer.by, set()).update(names)
        for by, name in run.named:
            named.setdefault(by, Counter())[name] += 1
    plans: list[BoundaryPlan] = []
    notes: list[str] = []
    used: set[str] = set()
    for by, json_reads in reads.items():
        boundary_facts = [fact for fact in facts if fact.spec.name in fed[by]]
        if not boundary_facts:
            continue
        if by[0] == "span_name":
            note = _merged(by, graphs.get(by, Counter()), tool_sets.get(by, []))
            if note is not None:
                notes.append(note)
                if len(graphs.get(by, ())) >= 2:
                    continue
        kind = "json" if sum(json_reads) * 2 >= len(json_reads) else "text"
        name = _boundary_name(by, named.get(by, Counter()), used)
        plan = BoundaryPlan(name, by, kind, boundary_facts)
        for family, arguments, needed in _proposed(plan, runs):
            check = build_check(family, arguments, needed, kind)
            if check is not None:
                plan.candidates.append(Candidate(family, arguments, check, max_listed))
        plans.append(plan)
    return plans, notes
