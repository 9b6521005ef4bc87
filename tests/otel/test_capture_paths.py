"""Two capture paths reading one tool call (the same tool and tool call id) never make a
recorded fact worse: a reading that cannot be a fact is counted but leaves the fact recorded
from that call — in either order — while a problem from another call, or from no call, still
poisons the name (checks that need it fail closed)."""

from __future__ import annotations

from collections import Counter

from groundplane_otel.facts import Provenance
from groundplane_otel.otel._engine.store import ToolCallKey, TraceStore
from groundplane_otel.otel.config import Limits

CALL: ToolCallKey = ("warehouse_query", "call_1")


def make() -> tuple[TraceStore, Counter[tuple[str, str, str]]]:
    counted: Counter[tuple[str, str, str]] = Counter()

    def count(kind: str, source: str, outcome: str) -> None:
        counted[(kind, source, outcome)] += 1

    return TraceStore(Limits(), count), counted


def good(store: TraceStore, call_id: str | None = "call_1", source: str = "openai_agents") -> str:
    """The adapter's reading: the tool's own dict, with the model's tool call id."""
    provenance = Provenance("warehouse_query", {}, "0" * 32, "1" * 16, call_id)
    return store.record(1, "ctr", {"harbour": 0.0455}, source=source, provenance=provenance)


def unreadable(store: TraceStore, call: ToolCallKey | None = CALL) -> None:
    """The completion hook's reading of a text it cannot read as a fact."""
    store.problem(1, "ctr", "unparseable", kind="value", source="genai", call=call)


def state(store: TraceStore) -> tuple[bool, dict[str, str]]:
    view = store.view(1, ("ctr",))
    return "ctr" in view.registry, dict(view.problems)


def test_an_unreadable_second_reading_of_the_call_keeps_the_fact() -> None:
    """Recorded by the adapter, then unreadable to the hook (same call): the fact stays; the
    hook's reading is counted as what it was."""
    store, counted = make()
    assert good(store) == "recorded"
    unreadable(store)
    assert state(store) == (True, {})
    assert counted == Counter(
        {("value", "openai_agents", "recorded"): 1, ("value", "genai", "unparseable"): 1}
    )


def test_a_good_reading_after_an_unreadable_one_of_the_same_call_is_recorded() -> None:
    """The other order: the hook's problem first, then the adapter's good reading of that call
    replaces it (and a later unreadable reading of it changes nothing)."""
    store, counted = make()
    unreadable(store)
    assert state(store) == (False, {"ctr": "unparseable"})
    assert good(store) == "recorded"
    unreadable(store)
    assert state(store) == (True, {})
    assert counted[("value", "genai", "unparseable")] == 2


def test_an_unreadable_result_of_another_call_still_poisons_the_fact() -> None:
    """A second call of the tool whose result cannot be read may hold a different result: the
    fact is withdrawn (fail closed), and a good reading of the first call does not revive it."""
    store, _ = make()
    good(store)
    unreadable(store, ("warehouse_query", "call_2"))
    assert state(store) == (False, {"ctr": "unparseable"})
    assert good(store) == "conflict"
    assert state(store) == (False, {"ctr": "conflict"})


def test_problems_from_two_calls_are_never_cleared_by_one_of_them() -> None:
    """Unreadable results of call_1 and call_2: a good reading of call_1 cannot vouch for
    call_2's, so it is a conflict."""
    store, _ = make()
    unreadable(store)
    unreadable(store, ("warehouse_query", "call_2"))
    assert good(store) == "conflict"


def test_without_a_tool_call_id_nothing_is_attributable() -> None:
    """No call id on either side: the rule of one result per name holds (poisoned, conflict)."""
    store, _ = make()
    good(store, call_id=None)
    unreadable(store, None)
    assert state(store) == (False, {"ctr": "unparseable"})
    store, _ = make()
    good(store)
    unreadable(store, None)
    assert state(store) == (False, {"ctr": "unparseable"})


def test_the_same_call_id_of_another_tool_is_another_call() -> None:
    """A call id is joined with its tool: another tool's call_1 is not this call."""
    store, _ = make()
    good(store)
    unreadable(store, ("other_tool", "call_1"))
    assert state(store) == (False, {"ctr": "unparseable"})


def test_a_different_good_reading_of_the_same_call_is_still_a_conflict() -> None:
    """Two readings of one call that disagree: one capture path misread it, and which is
    unknown — conflict, fail closed."""
    store, _ = make()
    good(store)
    provenance = Provenance("warehouse_query", {}, "0" * 32, "2" * 16, "call_1")
    assert store.record(1, "ctr", {"harbour": 0.05}, source="genai", provenance=provenance) == (
        "conflict"
    )
    assert state(store) == (False, {"ctr": "conflict"})
