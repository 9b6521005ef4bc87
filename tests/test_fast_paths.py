"""The fast paths decide exactly as the validating slow paths, and never weaken isolation.

Recording, ranking and checking skip work on data the library has already validated: a plain
str is its own key, a table column is ranked without re-validating each item, a copy reuses
the key index, a correct claim passes without building a Fraction or a message. Each law here
pins one shortcut against the slow path it replaces.
"""

from __future__ import annotations

import contextlib
import copy
import math
from fractions import Fraction
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from groundplane_otel._arithmetic import equals_exact, from_fraction, matches, unrepresentable
from groundplane_otel._copy import copy_rows, flat_rows
from groundplane_otel._keys import strict_key
from groundplane_otel.checks.aggregate_reconciles import aggregate_reconciles
from groundplane_otel.checks.comparison import KINDS, _nearest_delta, delta
from groundplane_otel.errors import SparseColumnWarning, UnsupportedClaim
from groundplane_otel.facts import Ranking, Table, ranking_from_scores
from groundplane_otel.registry import FactRegistry

SETTINGS = settings(max_examples=150, deadline=None)

# Anything a key can be: plain and subclassed strings, numbers, bools, None, bytes, tuples.
scalars = st.one_of(
    st.text(max_size=4),
    st.integers(-3, 3),
    st.floats(-3, 3, allow_nan=False).filter(lambda x: x == 0 or abs(x) > 1e-300),
    st.booleans(),
    st.none(),
    st.binary(max_size=2),
)
keys = st.recursive(scalars, lambda inner: st.tuples(inner, inner), max_leaves=4)
scores = st.one_of(st.integers(-5, 5), st.sampled_from([-1.5, 0.0, 0.5, 2.25, 1e300]))


class Name(str):
    """A str subclass: equal to a plain str, yet a different type."""


# -- keys: a plain str is its own token ------------------------------------------------------


@SETTINGS
@given(text=st.text(max_size=6), other=keys)
def test_an_untagged_str_token_never_collides_with_a_tagged_token(text: str, other: Any) -> None:
    """A str is its own token; every other key's token is a tuple, which no str equals."""
    assert strict_key(text) is text
    if type(other) is not str:
        token = strict_key(other)
        assert isinstance(token, tuple)
        assert token != text
        assert text != token
        assert len({strict_key(text): 1, token: 2}) == 2


@SETTINGS
@given(left=keys, right=keys)
def test_tokens_are_equal_exactly_when_keys_are_equal_and_of_the_same_types(
    left: Any, right: Any
) -> None:
    """strict_key stays type-strict with untagged strings: 1, True, 1.0 and "1" stay apart."""

    def shape(value: Any) -> Any:
        if isinstance(value, tuple):
            return (tuple, tuple(shape(item) for item in value))
        return (type(value), value)

    assert (strict_key(left) == strict_key(right)) == (shape(left) == shape(right))


def test_a_str_subclass_is_tagged_and_never_matches_the_plain_str() -> None:
    """Name("a") equals "a" as a str, but as a key it is a different type."""
    assert strict_key(Name("a")) == (Name, "a")
    table = FactRegistry().record_table("t", [{"id": "a", "v": 1}], key="id").value
    assert table.has_key("a")
    assert not table.has_key(Name("a"))


# -- rankings built without re-validation ----------------------------------------------------


def _validated(table: Table, column: str, higher: bool) -> Ranking:
    """The ranking the slow path builds: sort the (key, score) pairs, validate every item."""
    pairs = [(row[table.key], row[column]) for row in table.rows if column in row]
    pairs.sort(key=lambda pair: pair[1], reverse=higher)
    return Ranking(column, tuple(pairs), higher)


@SETTINGS
@given(
    cells=st.lists(st.tuples(keys, st.one_of(st.none(), scores)), min_size=1, max_size=30),
    higher=st.booleans(),
)
def test_a_table_column_ranks_exactly_as_the_validating_constructor(
    cells: list[tuple[Any, Any]], higher: bool
) -> None:
    """Order, ties, ranks, positions and lookups of the fast ranking match the slow one."""
    rows, seen = [], set()
    for key, score in cells:
        if strict_key(key) in seen:
            continue
        seen.add(strict_key(key))
        rows.append({"id": key} if score is None else {"id": key, "s": score})
    table = FactRegistry().record_table("t", rows, key="id", columns=["id", "s"]).value
    if all("s" not in row for row in rows):
        with pytest.raises(ValueError, match="no values to rank"):
            table.ranking("s", higher, "skip")
        return
    sparse = any("s" not in row for row in rows)
    with pytest.warns(SparseColumnWarning) if sparse else contextlib.nullcontext():
        fast = table.ranking("s", higher, "skip")
    slow = _validated(table, "s", higher)
    assert fast == slow
    assert fast.items == slow.items
    assert fast.names == slow.names
    assert fast.scores == slow.scores
    assert fast.tie_blocks == slow.tie_blocks
    assert fast.ties == slow.ties
    for position in range(len(slow.names)):
        assert fast.block_of(position) == slow.block_of(position)
    for row in rows:
        key = row["id"]
        assert (key in fast) == (key in slow)
        assert fast.position_of(key) == slow.position_of(key)
        assert fast.rank_of(key) == slow.rank_of(key)
        assert fast.score_of(key) == slow.score_of(key)
    assert copy.deepcopy(fast) == slow


@SETTINGS
@given(
    pairs=st.lists(st.tuples(keys, scores), min_size=1, max_size=20),
    higher=st.booleans(),
)
def test_record_ranking_matches_the_validating_constructor(
    pairs: list[tuple[Any, Any]], higher: bool
) -> None:
    """ranking_from_scores' trusted build equals a validated Ranking, or raises the same."""
    ordered = sorted(pairs, key=lambda pair: pair[1], reverse=higher)
    refused = ""
    try:
        slow = Ranking("s", tuple(ordered), higher)
    except ValueError as expected:
        refused = str(expected)
    if refused:
        with pytest.raises(ValueError) as info:
            ranking_from_scores("s", pairs, higher)
        assert str(info.value) == refused
        return
    fast = ranking_from_scores("s", pairs, higher)
    assert fast == slow
    assert fast.tie_blocks == slow.tie_blocks
    for name, _ in pairs:
        assert fast.rank_of(name) == slow.rank_of(name)


def test_a_ranking_of_a_sparse_column_knows_only_the_rows_that_hold_it() -> None:
    """A derived ranking shares the table's key index; rows it skipped are never ranked."""
    table = (
        FactRegistry()
        .record_table("t", [{"id": "a", "s": 1}, {"id": "b"}, {"id": "c", "s": 3}], key="id")
        .value
    )
    with pytest.warns(SparseColumnWarning, match="missing in 1 row"):
        ranking = table.to_ranking("s", on_missing="skip")
    assert ranking.names == ("c", "a")
    assert "b" not in ranking
    assert ranking.position_of("b") is None
    assert ranking.rank_of("b") is None
    assert ranking.position_of("a") == 1
    with pytest.raises(TypeError):
        ranking.position_of(["unhashable"])  # type: ignore[arg-type]


# -- copying rows in ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("rows", "message"),
    [
        ([{"id": 1, "v": 1.0}, {"id": 2, "v": math.nan}], "row 1['v'] is nan"),
        ([{"id": 1, "v": math.inf, "s": "x"}], "row 0['v'] is inf"),
        ([{"id": 1, "v": "x"}, {"id": 2, "v": -math.inf}], "row 1['v'] is -inf"),
        ([{"id": 1}, {"id": 2, "v": math.nan}], "row 1['v'] is nan"),  # sparse rows
        ([{"id": 1, "v": 10**400}, {"id": 2, "v": math.inf}], "row 1['v'] is inf"),
        ([{"id": 1, "v": 1e308}, {"id": 2, "v": 1e308}, {"id": 3, "w": math.nan}], "nan"),
    ],
)
def test_a_non_finite_cell_is_refused_wherever_it_hides(
    rows: list[dict[str, Any]], message: str
) -> None:
    """The column-wise fast path never lets NaN/inf through; the slow path names the cell."""
    with pytest.raises(ValueError, match=r"non-finite numbers are refused") as info:
        FactRegistry().record_table("t", rows, key="id")
    assert message in str(info.value)


def test_finite_cells_whose_sum_overflows_are_accepted() -> None:
    """Two 1e308 floats sum to inf; each is finite, so the table is recorded."""
    table = (
        FactRegistry()
        .record_table(
            "t", [{"id": 1, "v": 1e308}, {"id": 2, "v": 1e308}, {"id": 3, "v": 10**400}], key="id"
        )
        .value
    )
    assert table.column("v") == (1e308, 1e308, 10**400)


@pytest.mark.parametrize(
    ("rows", "flat"),
    [
        ([{"a": 1, "b": "x", "c": None, "d": b"y", "e": 1.5, "f": True}], True),
        ([{"a": 1}, {"b": 2}], True),  # same widths, different columns
        ([{"a": 1}, {"a": 1, "b": 2}], True),
        ([{"a": [1]}], False),
        ([{"a": (1, 2)}], False),
        ([{"a": Name("x")}], False),
        ([{"a": Fraction(1, 3)}], False),
        ([{"a": math.nan}], False),
    ],
)
def test_only_rows_of_immutable_atoms_are_flat(rows: list[dict[str, Any]], flat: bool) -> None:
    """A shallow copy of a row is a deep one only when every cell is an immutable atom."""
    assert flat_rows(rows)[0] is flat


def test_nested_cells_are_deep_copied_in_and_out() -> None:
    """A list inside a cell is the caller's own object neither on the way in nor out."""
    rows = [{"id": 1, "tags": ["a"]}, {"id": 2, "tags": ["b"]}]
    reg = FactRegistry()
    returned = reg.record_table("t", rows, key="id").value
    rows[0]["tags"].append("in")
    returned.rows[0]["tags"].append("out")
    reg.table("t").rows[0]["tags"].append("read")
    assert reg.peek("t").value.rows[0]["tags"] == ["a"]


def test_rows_that_are_not_plain_dicts_take_the_validating_path() -> None:
    """Mapping rows are copied into dicts; a non-mapping row is named, as before."""
    from types import MappingProxyType

    copied, flat, shared = copy_rows([MappingProxyType({"id": 1})], fact="t")
    assert copied == [{"id": 1}]
    assert type(copied[0]) is dict
    assert not flat
    assert shared is None
    with pytest.raises(TypeError, match="row 1 must be a mapping, got int"):
        copy_rows([{"id": 1}, 5], fact="t")


# -- what record_table and record_ranking return ---------------------------------------------


def test_the_table_record_table_returns_is_independent_of_the_evidence() -> None:
    """Mutating every part of the returned Table leaves the recorded one and checks intact."""
    reg = FactRegistry()
    returned = reg.record_table("t", [{"id": "a", "v": 2}, {"id": "b", "v": 1}], key="id").value
    stored = reg.peek("t").value
    assert returned == stored
    assert returned is not stored
    assert returned.row("a") is not stored.row("a")
    returned.rows[0]["v"] = 99
    returned.rows[1]["id"] = "zzz"
    returned._index.clear()
    returned._derived["flat"] = False
    assert stored.rows == ({"id": "a", "v": 2}, {"id": "b", "v": 1})
    assert stored.row("b")["v"] == 1
    assert stored.ranking("v").names == ("a", "b")
    read = reg.table("t")
    read.rows[0].clear()
    assert reg.table("t").row("a") == {"id": "a", "v": 2}


def test_the_ranking_record_ranking_returns_is_independent_of_the_evidence() -> None:
    """Mutating the returned Ranking (items, private index) never reaches the recorded one."""
    reg = FactRegistry()
    returned = reg.record_ranking("r", {"a": 3, "b": 1, ("c", 1): 2}).value
    stored = reg.peek("r").value
    assert returned == stored
    assert returned is not stored
    returned._index.clear()
    assert stored.position_of(("c", 1)) == 1
    assert returned.position_of("a") is None
    read = reg.ranking("r")
    read._index.clear()
    assert reg.ranking("r").rank_of("b") == 3


def test_a_ranking_with_mutable_names_is_deep_copied_out() -> None:
    """Names that are not plain atoms (a frozenset) go through the validating deep copy."""
    reg = FactRegistry()
    returned = reg.record_ranking("r", [(frozenset({1}), 2), (frozenset({2}), 1)]).value
    assert returned.names == (frozenset({1}), frozenset({2}))
    assert returned.names[0] is not reg.peek("r").value.names[0]


def test_the_domain_record_domain_returns_has_a_cache_of_its_own() -> None:
    """A returned or read Domain shares the immutable members, never the derived-data cache."""
    reg = FactRegistry()
    returned = reg.record_domain("d", ["a", "b"]).value
    stored = reg.peek("d").value
    assert returned == stored
    assert returned._derived is not stored._derived
    assert reg.domain("d")._derived is not stored._derived


# -- a correct claim passes without the exact machinery -------------------------------------

exacts = st.one_of(
    st.fractions(max_denominator=10**6),
    st.integers(-(10**30), 10**30).map(Fraction),
    st.floats(allow_nan=False, allow_infinity=False).map(Fraction),
)
claims = st.one_of(
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.booleans(),
    st.text(max_size=2),
)


@SETTINGS
@given(exact=exacts, claim=claims)
def test_equals_exact_agrees_with_matches_at_zero_tolerance(exact: Fraction, claim: Any) -> None:
    """For a plain int or float claim the shortcut is exactly ``matches``; else it abstains.
    A value no float stands for matches no claim, and has no nearest value to shortcut to."""
    if unrepresentable(exact) is not None:
        assert not matches(claim, exact)
        with pytest.raises(ValueError, match="cannot be represented"):
            from_fraction(exact)
        return
    nearest = from_fraction(exact)
    fast = equals_exact(claim, nearest)
    if type(claim) in (int, float):
        assert fast == matches(claim, exact)
    else:
        assert not fast
    if fast:
        assert matches(claim, exact)


@SETTINGS
@given(exact=exacts)
def test_the_nearest_float_of_a_fraction_passes_and_of_an_integer_only_if_exact(
    exact: Fraction,
) -> None:
    """A model cannot write 1/3 exactly: the nearest float passes, its neighbours do not;
    an integral result has an exact float or int, so only that passes (as in ``matches``)."""
    assume(unrepresentable(exact) is None)
    nearest = float(exact)
    passes = equals_exact(nearest, from_fraction(exact))
    assert passes == (exact.denominator != 1 or nearest == exact)
    assert passes == matches(nearest, exact)
    assert not equals_exact(math.nextafter(nearest, math.inf), from_fraction(exact))


@SETTINGS
@given(
    left=st.one_of(st.integers(-(10**6), 10**6), st.floats(-1e6, 1e6, allow_nan=False)),
    right=st.one_of(st.integers(-(10**6), 10**6), st.floats(-1e6, 1e6, allow_nan=False)),
    kind=st.sampled_from(KINDS),
)
def test_integer_deltas_equal_the_exact_fraction_deltas(
    left: int | float, right: int | float, kind: Any
) -> None:
    """comparison's integer arithmetic gives ``from_fraction`` of the Fraction delta (None when
    that is undefined or beyond the float range)."""
    exact = delta(kind, Fraction(left), Fraction(right))
    try:
        expected = None if exact is None else from_fraction(exact)
    except ValueError:  # a ratio over a subnormal base, say
        expected = None
    assert _nearest_delta(kind, left, right) == expected


def test_huge_deltas_fall_back_to_the_exact_path() -> None:
    """A ratio beyond the float range is None here; the exact path then raises the ValueError."""
    assert _nearest_delta("ratio", 1e300, 1e-300) is None
    assert _nearest_delta("pct", 5, 0) is None


def test_the_fast_path_never_stands_in_for_a_delta_no_float_stands_for() -> None:
    """1e-308 / 1e308 rounds to 0.0 and (2**54 + 1) / 2 to 2**53: neither is a nearest value
    the fast path may accept (the float rule refuses them), so both fall back to the exact path."""
    assert _nearest_delta("ratio", 1e-308, 1e308) is None
    assert _nearest_delta("ratio", 2**54 + 1, 2) is None
    assert _nearest_delta("ratio", 2**54 + 2, 2) == 2**53 + 1  # integral: an exact int
    assert _nearest_delta("ratio", 1, 3) == 1 / 3


@SETTINGS
@given(
    left=st.one_of(st.integers(-(2**80), 2**80), st.floats(allow_nan=False, allow_infinity=False)),
    right=st.one_of(st.integers(-(2**80), 2**80), st.floats(allow_nan=False, allow_infinity=False)),
    kind=st.sampled_from(KINDS),
)
def test_the_fast_path_agrees_with_the_float_rule_over_the_whole_range(
    left: int | float, right: int | float, kind: Any
) -> None:
    """Huge, tiny and subnormal operands included: the fast path gives exactly
    ``from_fraction`` of the delta, and None exactly when that refuses (or there is no delta)."""
    exact = delta(kind, Fraction(left), Fraction(right))
    if exact is None or unrepresentable(exact) is not None:
        assert _nearest_delta(kind, left, right) is None
        return
    found = _nearest_delta(kind, left, right)
    expected = from_fraction(exact)
    assert (found, type(found)) == (expected, type(expected))


# -- checks: the early pass never accepts what the full evaluation refuses -------------------


def _verdict(check: Any, reg: FactRegistry, output: dict[str, Any]) -> str:
    try:
        check(reg, output)
    except UnsupportedClaim as claim:
        return claim.code
    except ValueError as error:
        return f"ValueError: {error}"
    return "pass"


@SETTINGS
@given(
    scores_=st.lists(st.integers(0, 4), min_size=1, max_size=8),
    picks=st.lists(st.integers(-1, 9), max_size=5),
    k=st.one_of(st.none(), st.integers(1, 5)),
    ordered=st.booleans(),
    allow_tie_pick=st.booleans(),
    as_tuple=st.booleans(),
)
def test_ranking_prefix_passes_early_exactly_when_the_full_evaluation_passes(
    scores_: list[int],
    picks: list[int],
    k: int | None,
    ordered: bool,
    allow_tie_pick: bool,
    as_tuple: bool,
) -> None:
    """Random rankings with ties, random claims (repeats, interlopers, permutations): the
    verdict with the early pass is the verdict of the full evaluation alone."""
    from groundplane_otel.checks import ranking_prefix as module

    reg = FactRegistry()
    reg.record_ranking("r", {f"n{i}": score for i, score in enumerate(scores_)})
    claim = [f"n{i}" if i >= 0 else "ghost" for i in picks]
    output = {"top": tuple(claim) if as_tuple else claim}
    check = module.ranking_prefix("r", k=k, ordered=ordered, allow_tie_pick=allow_tie_pick)
    with_shortcut = _verdict(check, reg, output)
    original = module._RankingPrefix._passes
    module._RankingPrefix._passes = lambda self, ranking, claimed: False  # type: ignore[method-assign]
    try:
        without = _verdict(check, reg, output)
    finally:
        module._RankingPrefix._passes = original  # type: ignore[method-assign]
    assert with_shortcut == without


@SETTINGS
@given(
    values=st.lists(
        st.one_of(st.integers(-50, 50), st.sampled_from([0.1, 0.25, 1e-3])), min_size=1, max_size=12
    ),
    op=st.sampled_from(["sum", "count", "mean", "min", "max", "median"]),
    offset=st.sampled_from([0, 0.0, 1, -1, 1e-9, 0.5, True, "7"]),
    tolerance=st.sampled_from([0, 1e-6, 1]),
)
def test_aggregate_judges_a_claim_alike_on_first_and_repeated_checks(
    values: list[int | float], op: Any, offset: Any, tolerance: int | float
) -> None:
    """The cached result only short-cuts a supported claim: cold and warm verdicts agree."""
    rows = [{"id": i, "x": value} for i, value in enumerate(values)]
    exact = sum(map(Fraction, values))
    computed = {
        "sum": exact,
        "count": Fraction(len(values)),
        "mean": exact / len(values),
        "min": Fraction(min(values)),
        "max": Fraction(max(values)),
        "median": Fraction(sorted(values)[len(values) // 2]),
    }[op]
    base = from_fraction(computed)
    claim = offset if isinstance(offset, (bool, str)) else base + offset
    check = aggregate_reconciles("t", "v", None if op == "count" else "x", op, tolerance=tolerance)
    warm = FactRegistry()
    warm.record_table("t", rows, key="id")
    warm_up = {"v": len(values)} if op == "count" else {"v": base}
    assert _verdict(check, warm, warm_up) in ("pass", "value_mismatch")  # median of even n
    cold = FactRegistry()
    cold.record_table("t", rows, key="id")
    assert _verdict(check, warm, {"v": claim}) == _verdict(check, cold, {"v": claim})


def test_shared_positions_are_the_plain_range_even_under_concurrent_growth() -> None:
    """The process-wide position ints read like range(n), however many threads grow them."""
    import threading

    from groundplane_otel import ranking

    counts = [3000 + 997 * i for i in range(16)]
    threads = [threading.Thread(target=ranking._positions, args=(count,)) for count in counts]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for count in (0, 1, 1024, 1025, max(counts), ranking._SHARED_POSITIONS + 1):
        assert list(ranking._positions(count)) == list(range(count))
    assert ranking._positions_cache == list(range(len(ranking._positions_cache)))
