"""build_fact's column passes: the same facts and the same errors as reading the rows one by one.

A ranking read from rows (two C-speed column passes, scores already in order kept as they are)
is the ranking ``ranking_from_scores`` makes of the rows' (key, score) pairs, or fails with the
same exception and message; a row lacking a column is named in row order; a domain's members,
a table's keys and a path through the result are checked as before.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundplane_otel.checks._base import walk_path
from groundplane_otel.facts import Domain, Ranking, ranking_from_scores
from groundplane_otel.otel._engine.capture import build_fact
from groundplane_otel.otel.config import FactSpec
from groundplane_otel.ranking import ranking_from_columns

names_st = st.one_of(
    st.text(alphabet="abc", min_size=1, max_size=2),
    st.integers(-3, 3),
    st.booleans(),
    st.lists(st.integers(0, 2), max_size=1),  # unhashable
)
scores_st = st.one_of(
    st.integers(-2, 2),
    st.sampled_from([0.5, 1.0, -1.5, float("nan"), float("inf")]),
    st.booleans(),
    st.just("3"),
)


def _outcome(build: Any) -> tuple[Any, ...]:
    """What building gave: the ranking's names, scores and key index, or the error."""
    try:
        ranking = build()
    except (ValueError, TypeError) as error:
        return type(error), str(error)
    assert isinstance(ranking, Ranking)
    return ranking.names, ranking.scores, ranking._index, ranking.higher_is_better


@settings(max_examples=300, deadline=None)
@given(
    pairs=st.lists(st.tuples(names_st, scores_st), max_size=8),
    higher=st.booleans(),
    presorted=st.booleans(),
)
def test_a_ranking_from_rows_is_ranking_from_scores_of_their_pairs(
    pairs: list[tuple[Any, Any]], higher: bool, presorted: bool
) -> None:
    """Rows become exactly the ranking (or the error) ranking_from_scores makes of their pairs."""
    if presorted and all(type(score) in (int, float) for _, score in pairs):
        pairs.sort(key=lambda pair: pair[1], reverse=higher)  # scores already in order
    rows = [{"region": name, "total": score} for name, score in pairs]
    spec = FactSpec(
        "sales", "t", kind="ranking", key="region", score="total", path="rows",
        higher_is_better=higher,
    )  # fmt: skip
    expected = _outcome(lambda: ranking_from_scores("total", pairs, higher, fact="sales"))
    assert _outcome(lambda: build_fact(spec, {"rows": rows})) == expected
    if not isinstance(expected[0], type):  # a ranking: the validating constructor's, sorted
        ordered = sorted(pairs, key=lambda pair: pair[1], reverse=higher)
        assert expected == _outcome(lambda: Ranking("total", tuple(ordered), higher))
    names, scores = [name for name, _ in pairs], [score for _, score in pairs]
    assert _outcome(lambda: ranking_from_columns("total", names, scores, higher)) == _outcome(
        lambda: ranking_from_scores("total", pairs, higher)
    )


def test_scores_already_in_order_keep_tied_names_in_input_order() -> None:
    """Ranked rows with ties come out in their input order, best first."""
    rows = [{"k": "b", "s": 3}, {"k": "a", "s": 3}, {"k": "c", "s": 1}, {"k": "d", "s": 1}]
    spec = FactSpec("f", "t", kind="ranking", key="k", score="s")
    ranking = build_fact(spec, rows)
    assert (ranking.names, ranking.scores) == (("b", "a", "c", "d"), (3, 3, 1, 1))
    assert (ranking.rank_of("a"), ranking.competition_rank("d")) == (2, 3)
    lower = build_fact(
        FactSpec("f", "t", kind="ranking", key="k", score="s", higher_is_better=False), rows
    )
    assert lower.names == ("c", "d", "b", "a")


def test_the_first_missing_cell_in_row_order_is_named() -> None:
    """A row lacking the score is named before a later row lacking the key."""
    spec = FactSpec("sales", "t", kind="ranking", key="region", score="total")
    rows = [{"region": "a", "total": 1}, {"region": "b"}, {"total": 3}]
    with pytest.raises(ValueError) as raised:
        build_fact(spec, rows)
    assert str(raised.value) == "fact 'sales': a row has no column 'total'"
    with pytest.raises(ValueError) as raised:
        build_fact(spec, [{"total": 3}, {"region": "b"}])
    assert str(raised.value) == "fact 'sales': a row has no column 'region'"


def test_a_defaultdict_row_lacking_a_column_is_missing_not_defaulted() -> None:
    """A mapping row that would invent a missing cell (a defaultdict) still lacks the column."""
    row: defaultdict[str, Any] = defaultdict(int, {"region": "a"})
    spec = FactSpec("sales", "t", kind="domain", key="total")
    with pytest.raises(ValueError) as raised:
        build_fact(spec, [row])
    assert str(raised.value) == "fact 'sales': a row has no column 'total'"
    assert dict(row) == {"region": "a"}


def test_domain_members_must_be_strings() -> None:
    """A domain of names keeps strings (a str subclass too) and names a non-string member."""

    class Name(str):
        pass

    spec = FactSpec("regions", "t", kind="domain")
    assert build_fact(spec, ["a", Name("b")]) == Domain(frozenset({"a", "b"}))
    with pytest.raises(TypeError) as raised:
        build_fact(spec, ["a", 3])
    assert str(raised.value) == "domain members must be strings, got 3"


def test_walk_path_through_dicts_mapping_subclasses_and_list_indices() -> None:
    """Steps go through plain dicts, dict subclasses and list indices; a miss is not found."""
    inner: defaultdict[str, Any] = defaultdict(list, {"rows": [{"a": 1}, {"a": 2}]})
    payload = {"data": inner}
    assert walk_path(payload, "data.rows.1.a") == (True, 2)
    assert walk_path(payload, "data.rows.-2") == (True, {"a": 1})
    assert walk_path(payload, "data.missing") == (False, None)
    assert "missing" not in inner
    assert walk_path(payload, "data.rows.2") == (False, None)
    assert walk_path(payload, "") == (True, payload)
    assert walk_path(payload, None) == (True, payload)
    assert walk_path([1], "x") == (False, None)


json_cells = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.text("ab", max_size=2)),
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from("kst"), inner),
    max_leaves=4,
)
json_rows = st.lists(
    st.one_of(
        st.dictionaries(st.sampled_from(["k", "s", "x"]), json_cells, max_size=3),
        json_cells,  # a row that is no object
    ),
    max_size=5,
)


@settings(max_examples=300, deadline=None)
@given(data=st.one_of(json_rows, json_cells), kind=st.sampled_from(["ranking", "domain"]))
def test_rows_parsed_from_text_read_as_the_typed_rows(data: Any, kind: str) -> None:
    """A payload parsed from text skips the row type pass: the same fact, or the same error."""
    score = "s" if kind == "ranking" else None
    spec = FactSpec("f", "t", kind=kind, key="k", score=score)  # type: ignore[arg-type]
    parsed = _outcome_of(lambda: build_fact(spec, data, from_text=True))
    assert parsed == _outcome_of(lambda: build_fact(spec, data))


def _outcome_of(build: Any) -> Any:
    """The fact built (a ranking as its names, scores and index), or the error."""
    try:
        built = build()
    except (ValueError, TypeError) as error:
        return type(error), str(error)
    return _outcome(lambda: built) if isinstance(built, Ranking) else built
