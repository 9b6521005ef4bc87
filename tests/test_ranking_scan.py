"""A Ranking of a few plain-str names finds them by a scan (``ranking.SCAN``), no dict: every
lookup answers exactly as the dict index of a larger ranking does (type-strict, unhashable)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from groundplane_otel.ranking import SCAN, Ranking, ranking_from_columns, ranking_from_scores


class Name(str):
    """A str subclass: never the same name as the plain str (type-strict)."""


PROBES: list[Any] = ["n0", "n1", "n5", "nope", Name("n0"), 0, 1.0, True, None, ("n0",), ["n0"]]


def _answers(ranking: Ranking) -> list[Any]:
    found = [ranking.find(probe) for probe in PROBES]
    ranks = [ranking.rank_of(probe) for probe in PROBES]
    return [found, ranks, [probe in ranking for probe in PROBES], ranking.score_of("n5")]


@pytest.mark.parametrize("count", [SCAN, SCAN + 1])
def test_a_scanned_ranking_answers_as_an_indexed_one(count: int) -> None:
    names = [f"n{i}" for i in range(count)]
    scores = [count - i for i in range(count)]
    built = ranking_from_columns("s", names, scores)
    assert isinstance(built._index, tuple) is (count <= SCAN)
    validated = Ranking("s", tuple(zip(names, scores, strict=True)))
    assert built._index == validated._index
    expected = [[0, 1, 5, None, None, None, None, None, None, None, None]]
    assert _answers(built)[0] == expected[0]
    assert _answers(built) == _answers(validated) == _answers(copy.deepcopy(built))
    with pytest.raises(TypeError):
        built.position_of(["n0"])  # type: ignore[arg-type]


def test_a_repeated_name_among_few_is_still_refused() -> None:
    with pytest.raises(ValueError, match="duplicate name 'a'"):
        ranking_from_columns("s", ["a", "b", "a"], [3, 2, 1])
    with pytest.raises(ValueError, match="duplicate name 'a'"):
        ranking_from_scores("s", [("a", 3), ("a", 1)])


def test_non_string_names_keep_the_dict_index() -> None:
    ranking = ranking_from_scores("s", [(1, 3), ("1", 2), (True, 1)])
    assert isinstance(ranking._index, dict)
    assert [ranking.find(1), ranking.find("1"), ranking.find(True), ranking.find(1.0)] == [
        0,
        1,
        2,
        None,
    ]
