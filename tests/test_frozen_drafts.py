"""A frozen dataclass built from a draft (``_frozen``) is the object its ``__init__`` builds.

The hot paths fill a mutable twin with the same slots and switch its class; each law pins one
fast constructor against the public one: equal, same repr and hash, frozen, and it pickles
(replay's parallel workers pickle results) and deep-copies the same.
"""

from __future__ import annotations

import copy
import dataclasses
import pickle
from typing import Any

import pytest

from groundplane_otel._frozen import draft_class
from groundplane_otel._provenance import new_provenance
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.facts import Fact, Provenance, Ranking
from groundplane_otel.otel._engine.capture import ToolCall, _tool_call
from groundplane_otel.otel._engine.evaluate import _evaluation, _finding
from groundplane_otel.otel._engine.output import OutputRead, parse_answer
from groundplane_otel.otel._engine.payload import Parsed, parse_payload
from groundplane_otel.otel._telemetry.metric_counts import SeenFinding, seen_finding
from groundplane_otel.otel.config import Limits
from groundplane_otel.otel.result import Evaluation, Finding
from groundplane_otel.ranking import ranking_from_columns
from groundplane_otel.registry import FactRegistry

PROVENANCE = Provenance("search", {"q": 1}, "ab" * 16, "cd" * 8, "call_1")
CLAIM = UnsupportedClaim("winner", "a", "b", fact="scores", reason="not the leader")


def _same(built: Any, expected: Any) -> None:
    assert type(built) is type(expected)
    assert built == expected
    assert repr(built) == repr(expected)
    assert pickle.dumps(built) == pickle.dumps(expected)  # the same pickled bytes
    assert repr(copy.deepcopy(built)) == repr(expected)
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.__setattr__(dataclasses.fields(built)[0].name, "changed")
    assert _hash(built) == _hash(expected)


def _hash(value: Any) -> int | str:
    """The hash, or the error hashing raises (a field may hold a dict)."""
    try:
        return hash(value)
    except TypeError as error:
        return str(error)


def test_new_provenance_is_provenance() -> None:
    built = new_provenance("search", {"q": 1}, "ab" * 16, "cd" * 8, "call_1")
    _same(built, PROVENANCE)
    _same(new_provenance(None, {}, None, None, None), Provenance(None))


def test_tool_call_is_tool_call() -> None:
    _same(_tool_call("genai", "t", None, "{}", "[]"), ToolCall("genai", "t", None, "{}", "[]"))
    retrieval = ToolCall("genai", "t", "c", {}, [], retrieval=True)
    _same(_tool_call("genai", "t", "c", {}, [], retrieval=True), retrieval)


def test_finding_is_finding() -> None:
    expected = Finding("unsupported", "wrong_winner", CLAIM, "superlative", "sup", "s", PROVENANCE)
    _same(
        _finding("unsupported", "wrong_winner", CLAIM, "superlative", "sup", "s", PROVENANCE),
        expected,
    )
    _same(
        _finding("error", "fact_missing", CLAIM, "c", "f"),
        Finding("error", "fact_missing", CLAIM, "c", "f"),
    )


def test_seen_finding_is_seen_finding() -> None:
    built = seen_finding("b", "unsupported", "?", (None,) * 6, 1, 2, "chat", "flagged")
    expected = SeenFinding(
        "b", "unsupported", "?", f"{1:032x}", f"{2:016x}", "chat", outcome="flagged"
    )
    _same(built, expected)


def test_a_checked_outputs_evaluation_is_an_evaluation() -> None:
    """Every field of ``Evaluation`` is set by ``_evaluation`` (a field added to the class and
    not to it would leave the slot empty: reading it raises, which this catches)."""
    finding = Finding("unsupported", "wrong_winner", CLAIM, "superlative", "sup", "s", PROVENANCE)
    fields = (("sup", "unsupported"),), (finding,), ("s",), (("s", PROVENANCE),)
    built = _evaluation("b", "enforce", "blocked", *fields, 0.25, None)
    expected = Evaluation(
        "b",
        "enforce",
        "blocked",
        verdicts=fields[0],
        findings=fields[1],
        facts=fields[2],
        links=fields[3],
        duration=0.25,
    )
    _same(built, expected)
    assert {f.name: getattr(built, f.name) for f in dataclasses.fields(Evaluation)} == {
        f.name: getattr(expected, f.name) for f in dataclasses.fields(Evaluation)
    }


def test_a_draft_has_the_frozen_layout() -> None:
    draft = draft_class(Evaluation)()
    for field in dataclasses.fields(Evaluation):
        setattr(draft, field.name, getattr(Evaluation("b", "observe", "passed"), field.name))
    draft.__class__ = Evaluation
    _same(draft, Evaluation("b", "observe", "passed"))


def test_a_ranked_column_is_the_validated_ranking() -> None:
    built = ranking_from_columns("score", ["a", "b", "c"], [3, 2, 2])
    expected = Ranking("score", (("a", 3), ("b", 2), ("c", 2)))
    assert type(built) is Ranking
    assert built == expected
    assert repr(built) == repr(expected)
    assert pickle.loads(pickle.dumps(built)) == expected
    assert copy.deepcopy(built) == expected
    with pytest.raises(dataclasses.FrozenInstanceError):
        built.key = "other"  # type: ignore[misc]


def test_a_recorded_fact_is_a_fact() -> None:
    registry = FactRegistry()
    registry.record("n", 3, tool="t")
    _same(registry.peek("n"), Fact("n", 3, Provenance("t")))


def test_parsed_and_output_reads_are_theirs() -> None:
    _same(parse_payload('{"a": 1}', max_bytes=100, max_depth=8), Parsed("ok", {"a": 1}, 8))
    read = parse_answer('{"a": 1}', Limits())
    _same(read, OutputRead("output", {"a": 1}, text='{"a": 1}'))
