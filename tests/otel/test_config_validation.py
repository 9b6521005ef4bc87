"""The same validation in code as in YAML: GuardConfig, BoundarySpec and MatchSpec refuse at
construction what the policy loader refuses, with the loader's words (one rule, ``_rules.py``)."""

from __future__ import annotations

import pytest

from groundplane_otel import FactRegistry, boundary, superlative
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec
from groundplane_otel.otel.policy import policy_from_mapping

SALES = FactSpec("sales", "top_sales", kind="ranking", key="region", score="total", path="rows")
CHECK = superlative(fact="sales", winner_field="winner")


def test_a_string_for_facts_names_the_field_and_the_tuple_to_write() -> None:
    """Finding 6: ``facts="sales"`` (the ``("sales")`` slip) fails at construction."""
    with pytest.raises(TypeError) as raised:
        BoundarySpec("answer", facts="sales", checks=(CHECK,))  # type: ignore[arg-type]
    assert str(raised.value) == (
        "boundary 'answer': facts must be a sequence of names, got the string 'sales'. Fix: "
        "write facts=('sales',) (a one-element tuple needs the comma)"
    )


def test_a_boundary_fact_without_a_factspec_fails_like_the_policy_loader() -> None:
    """Finding 6: a boundary reading an undeclared fact: the loader's problem and fix."""
    spec = BoundarySpec("answer", ("sale",), (superlative(fact="sale", winner_field="w"),))
    with pytest.raises(ValueError) as raised:
        GuardConfig(facts=(SALES,), boundaries=(spec,))
    assert str(raised.value) == (
        "boundary 'answer': fact 'sale' is not declared under facts. Fix: did you mean 'sales'?"
    )
    policy = {
        "version": 1,
        "facts": {"sales": {"tool": "top_sales"}},
        "boundaries": {
            "answer": {
                "facts": ["sale"],
                "checks": [{"superlative": {"fact": "sale", "winner_field": "w"}}],
            }
        },
    }
    with pytest.raises(ValueError) as loaded:
        policy_from_mapping(policy)
    assert str(loaded.value) == (
        "<mapping>: boundaries.answer.facts[0]: fact 'sale' is not declared under facts. "
        "Fix: did you mean 'sales'?"
    )


def test_an_uncalled_check_builder_says_to_call_it() -> None:
    """``superlative`` passed as a check: at construction in code, and at check time in the
    core boundary (which takes any callable), the message says to call the builder."""
    with pytest.raises(TypeError) as raised:
        BoundarySpec("answer", ("sales",), (superlative,))  # type: ignore[arg-type]
    assert str(raised.value) == (
        "boundary 'answer': superlative was passed as a check without being called: it builds "
        'the check. Fix: call it with the fact it reads, e.g. superlative("fact", ...), and '
        "pass what it returns"
    )
    registry = FactRegistry()
    registry.record_ranking("sales", {"EU": 10}, key="region")
    declaration = boundary(registry, ["sales"], [superlative])  # type: ignore[list-item]
    with pytest.raises(TypeError) as core, declaration as declared:
        declared.submit({"winner": "EU"})
    assert str(core.value) == (
        "superlative was passed as a check without being called: it builds the check. Call it "
        'with the fact it reads, e.g. superlative("fact", ...), and pass what it returns'
    )


def test_a_check_named_by_a_string_is_refused() -> None:
    """A policy names checks by string; code must build them."""
    with pytest.raises(TypeError) as raised:
        BoundarySpec("answer", ("sales",), ("superlative",))  # type: ignore[arg-type]
    assert str(raised.value) == (
        "boundary 'answer': checks must be checks, got the string 'superlative'. Fix: build it: "
        "superlative(fact=..., ...) from groundplane_otel (a policy file names checks by "
        "string; code calls the builder)"
    )


def test_match_spec_values_are_validated() -> None:
    """An empty agent name or a list-valued attribute fails at construction."""
    with pytest.raises(TypeError) as empty:
        MatchSpec(agent_name="")
    assert str(empty.value) == (
        "MatchSpec: match.agent_name must be a non-empty string or None, got ''. Fix: write a "
        "name here, or leave it out"
    )
    with pytest.raises(TypeError) as listed:
        MatchSpec(attributes={"tier": ["a", "b"]})  # type: ignore[dict-item]
    assert str(listed.value) == (
        "MatchSpec: match.attributes['tier']: expected a string, integer or boolean, got "
        "['a', 'b']. Fix: match on a single attribute value"
    )


def test_lists_are_accepted_and_stored_as_tuples() -> None:
    """Lists (as YAML gives them) work in code too, stored as tuples (hashable, frozen)."""
    spec = BoundarySpec("answer", ["sales"], [CHECK])  # type: ignore[arg-type]
    config = GuardConfig(facts=[SALES], boundaries=[spec])  # type: ignore[arg-type]
    assert (spec.facts, spec.checks) == (("sales",), (CHECK,))
    assert (config.facts, config.boundaries) == ((SALES,), (spec,))
