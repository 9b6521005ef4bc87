"""Does a candidate check hold in a run? The real check decides, on the run's facts.

Each candidate is built exactly as a policy file builds it (``policy_from_mapping``: the same
validation, the same builder), so what is written is what was measured; a run's facts are
built by the engine's ``build_fact`` from the inferred declarations and recorded in a
``FactRegistry``, as the guard records them; the check runs on that registry and the answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from groundplane_otel.checks._base import NamedCheck
from groundplane_otel.otel._engine import build_fact
from groundplane_otel.otel.policy import PolicyError, policy_from_mapping
from groundplane_otel.otel.suggest.facts import InferredFact, matching
from groundplane_otel.otel.suggest.runs import RecordedTrace
from groundplane_otel.registry import FactRegistry

__all__ = ["Candidate", "RunFacts", "build_check", "run_facts"]


@dataclass(slots=True)
class Candidate:
    """One candidate check of a boundary and its tally over the runs it applies to."""

    family: str
    arguments: dict[str, Any]
    check: NamedCheck
    max_listed: int
    applied: int = 0
    held: int = 0
    broke: list[str] = field(default_factory=list)  # trace ids, the first ``max_listed``

    @property
    def broke_count(self) -> int:
        return self.applied - self.held

    @property
    def support(self) -> float:
        return self.held / self.applied if self.applied else 0.0

    def tally(self, registry: FactRegistry, answers: Sequence[Any], trace_id: str) -> None:
        """Run the check on each answer of one run; the run breaks it if any answer does."""
        for answer in answers:
            try:
                self.check(registry, answer)
            except Exception:  # an UnsupportedClaim, or an error the engine fails closed on
                break
        else:
            self.applied += 1
            self.held += 1
            return
        self.broken(trace_id)

    def broken(self, trace_id: str) -> None:
        """Count a run that breaks the check (also one whose fact the tool's result could not
        make: replay fails closed on it)."""
        self.applied += 1
        if len(self.broke) < self.max_listed:
            self.broke.append(trace_id)


def build_check(
    family: str,
    arguments: Mapping[str, Any],
    facts: Sequence[InferredFact],
    answer: str,
) -> NamedCheck | None:
    """The check a policy file with this entry builds, or None when the policy refuses it."""
    mapping = {
        "version": 1,
        "facts": {fact.spec.name: fact.as_mapping() for fact in facts},
        "boundaries": {
            "candidate": {
                "facts": [fact.spec.name for fact in facts],
                "match": {"span_name": "candidate"},
                "answer": answer,
                "checks": [{family: dict(arguments)}],
            }
        },
    }
    try:
        return policy_from_mapping(mapping).boundaries[0].checks[0]
    except (PolicyError, TypeError):
        return None


@dataclass(slots=True)
class RunFacts:
    """A run's facts: recorded (``registry``), typed by name (``typed``), and the names whose
    tool result did not have the declared shape (``misshapen``: replay cannot build them)."""

    registry: FactRegistry
    typed: dict[str, Any]
    misshapen: set[str]


def run_facts(run: RecordedTrace, facts: Sequence[InferredFact]) -> RunFacts:
    """The run's facts, typed and recorded; a fact two calls feed differently, or that does not
    have its declared shape, is left out (a check needing it does not apply to the run, or,
    when misshapen, is broken by it)."""
    typed: dict[str, Any] = {}
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    unusable: set[str] = set()
    misshapen: set[str] = set()
    for result in run.tools:
        if result.payload is None:
            continue
        for fact in matching(facts, result):
            name = fact.spec.name
            try:
                value = build_fact(fact.spec, result.payload)
            except (ValueError, TypeError):
                unusable.add(name)
                misshapen.add(name)
                continue
            if name in typed and typed[name] != value:
                unusable.add(name)
            typed.setdefault(name, value)
            calls.setdefault(name, (result.tool, result.arguments))
    registry = FactRegistry()
    for name, value in list(typed.items()):
        if name in unusable:
            del typed[name]
            continue
        tool, arguments = calls[name]
        try:
            registry.record(name, value, tool=tool, args=arguments)
        except (ValueError, TypeError):
            del typed[name]
            misshapen.add(name)
    return RunFacts(registry, typed, misshapen)
