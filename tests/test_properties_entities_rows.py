"""Property tests: for random valid facts the correct claim passes and each perturbation fails.

Covers entities_recorded, row_integrity and field_matches_fact.
"""

from __future__ import annotations

import copy
import string
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from groundplane_otel._keys import strict_key
from groundplane_otel.checks.entities_recorded import check_entities_recorded
from groundplane_otel.checks.field_matches_fact import check_field_matches_fact
from groundplane_otel.checks.row_integrity import check_row_integrity
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.registry import FactRegistry

SETTINGS = settings(max_examples=100, deadline=None)

words = st.text(alphabet=string.ascii_letters, min_size=1, max_size=10)
word_sets = st.lists(words, min_size=1, max_size=30, unique=True)
int_keys = st.lists(st.integers(-(10**6), 10**6), min_size=1, max_size=30, unique=True)


def fails(run: Any) -> UnsupportedClaim:
    with pytest.raises(UnsupportedClaim) as info:
        run()
    return info.value


def domain(names: list[str]) -> FactRegistry:
    reg = FactRegistry()
    reg.record_domain("names", names, tool="list_names")
    return reg


# -- entities_recorded ------------------------------------------------------------------------


@SETTINGS
@given(names=word_sets, data=st.data())
def test_any_recorded_subset_passes(names: list[str], data: st.DataObject) -> None:
    """A non-empty list drawn from the recorded names always passes."""
    claimed = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=10))
    check_entities_recorded(domain(names), {"n": claimed, "one": claimed[0]}, ["n", "one"], "names")


@SETTINGS
@given(names=word_sets, other=words, data=st.data())
def test_one_unrecorded_member_always_fails(
    names: list[str], other: str, data: st.DataObject
) -> None:
    """Swapping any one member for a name never recorded fails as unknown_entity on it."""
    assume(other not in names)
    claimed = data.draw(st.lists(st.sampled_from(names), min_size=1, max_size=10))
    position = data.draw(st.integers(0, len(claimed) - 1))
    claimed[position] = other
    claim = fails(lambda: check_entities_recorded(domain(names), {"n": claimed}, ["n"], "names"))
    assert (claim.claimed, claim.code) == (other, "unknown_entity")
    assert f"at 'n.{position}'" in claim.reason


@SETTINGS
@given(names=word_sets, data=st.data())
def test_case_drift_fails_case_sensitive_and_passes_case_insensitive(
    names: list[str], data: st.DataObject
) -> None:
    """A recorded name with its case swapped fails by default and passes with casefolding."""
    name = data.draw(st.sampled_from(names))
    drifted = name.swapcase()
    assume(drifted not in names)
    reg = domain(names)
    claim = fails(lambda: check_entities_recorded(reg, {"n": drifted}, ["n"], "names"))
    assert claim.code == "unknown_entity"
    assert "only the case differs" in claim.reason
    check_entities_recorded(reg, {"n": drifted}, ["n"], "names", case_sensitive=False)


@SETTINGS
@given(names=word_sets, data=st.data())
def test_blend_of_two_recorded_names_always_fails_with_a_suggestion(
    names: list[str], data: st.DataObject
) -> None:
    """'a b' built from two recorded names is never accepted, and always gets a did-you-mean."""
    assume(len(names) >= 2)
    first, second = data.draw(st.lists(st.sampled_from(names), min_size=2, max_size=2, unique=True))
    blended = f"{first} {second}"
    claim = fails(lambda: check_entities_recorded(domain(names), {"n": blended}, ["n"], "names"))
    assert claim.code == "unknown_entity"
    assert "it blends recorded names" in claim.reason
    assert "did you mean" in claim.reason


@SETTINGS
@given(keys=int_keys, data=st.data())
def test_int_keys_pass_and_their_lookalikes_fail(keys: list[int], data: st.DataObject) -> None:
    """A recorded int key passes; its string, float and (for 0/1) bool twins never do."""
    reg = FactRegistry()
    reg.record_table("t", [{"id": key} for key in keys], key="id")
    key = data.draw(st.sampled_from(keys))
    check_entities_recorded(reg, {"id": key}, ["id"], "t")
    lookalikes: list[Any] = [str(key), float(key)]
    if key in (0, 1):
        lookalikes.append(bool(key))
    for lookalike in lookalikes:
        claim = fails(lambda lk=lookalike: check_entities_recorded(reg, {"id": lk}, ["id"], "t"))
        assert strict_key(claim.claimed) == strict_key(lookalike)
        assert claim.code == "unknown_entity"


@SETTINGS
@given(names=word_sets, allow_empty=st.booleans())
def test_empty_list_fails_exactly_when_not_allowed(names: list[str], allow_empty: bool) -> None:
    """[] passes with allow_empty=True and fails as empty_list otherwise."""
    reg = domain(names)

    def run() -> None:
        check_entities_recorded(reg, {"n": []}, ["n"], "names", allow_empty=allow_empty)

    if allow_empty:
        run()
    else:
        assert fails(run).code == "empty_list"


# -- row_integrity ----------------------------------------------------------------------------

numbers = st.one_of(
    st.integers(-(10**9), 10**9), st.floats(-1e9, 1e9, allow_nan=False, allow_infinity=False)
)


@st.composite
def tables(draw: st.DrawFn) -> tuple[list[dict[str, Any]], list[Any]]:
    keys: list[Any] = draw(st.one_of(word_sets, int_keys).filter(lambda ks: len(ks) >= 2))
    rows = [
        {"key": key, "x": draw(numbers), "y": draw(numbers), "label": draw(words)} for key in keys
    ]
    return rows, keys


def table_registry(rows: list[dict[str, Any]]) -> FactRegistry:
    reg = FactRegistry()
    reg.record_table("t", rows, key="key", tool="db.rows")
    return reg


@SETTINGS
@given(table=tables(), data=st.data())
def test_values_read_off_the_named_row_always_pass(
    table: tuple[list[dict[str, Any]], list[Any]], data: st.DataObject
) -> None:
    """Claiming a row's own cells (default and explicit mapping) always passes."""
    rows, _ = table
    row = data.draw(st.sampled_from(rows))
    reg = table_registry(rows)
    check_row_integrity(reg, dict(row), "t", "key")
    output = {"k": row["key"], "the_x": row["x"], "label": row["label"]}
    check_row_integrity(reg, output, "t", "k", {"the_x": "x", "label": "label"})


@SETTINGS
@given(table=tables(), data=st.data(), column=st.sampled_from(["x", "y", "label"]))
def test_value_from_another_row_always_fails_naming_that_row(
    table: tuple[list[dict[str, Any]], list[Any]], data: st.DataObject, column: str
) -> None:
    """Quoting another row's cell for the named row fails as swapped_value naming the donor."""
    rows, _ = table
    named, donor = data.draw(st.lists(st.sampled_from(rows), min_size=2, max_size=2, unique_by=id))
    claimed = donor[column]
    reg = table_registry(rows)
    same = check_row_integrity  # the named row may hold an equal value: then it must pass
    if strict_key(claimed) == strict_key(named[column]) or (
        column != "label" and claimed == named[column]
    ):
        same(reg, {"key": named["key"], column: claimed}, "t", "key")
        return
    claim = fails(lambda: same(reg, {"key": named["key"], column: claimed}, "t", "key"))
    assert claim.code == "swapped_value"
    assert (claim.field, claim.supported) == (column, named[column])
    assert repr(donor["key"]) in claim.reason


@SETTINGS
@given(
    table=tables(),
    data=st.data(),
    tolerance=st.integers(0, 1000),
    beyond=st.integers(1, 10**6),
    sign=st.sampled_from([1, -1]),
)
def test_number_beyond_the_tolerance_always_fails_and_within_it_passes(
    table: tuple[list[dict[str, Any]], list[Any]],
    data: st.DataObject,
    tolerance: int,
    beyond: int,
    sign: int,
) -> None:
    """cell ± (tolerance + d) fails for any d > 0; cell ± tolerance passes (exact arithmetic)."""
    rows, _ = table
    row = data.draw(st.sampled_from(rows))
    cell = row["x"]
    reg = table_registry(rows)
    if isinstance(cell, int):
        within, outside = cell + sign * tolerance, cell + sign * (tolerance + beyond)
        check_row_integrity(reg, {"key": row["key"], "x": within}, "t", "key", tolerance=tolerance)
    else:
        outside = cell + sign * (tolerance + beyond)
        assume(abs(outside - cell) > tolerance)  # float rounding must not pull it back in
    claim = fails(
        lambda: check_row_integrity(
            reg, {"key": row["key"], "x": outside}, "t", "key", tolerance=tolerance
        )
    )
    assert claim.code in {"value_mismatch", "swapped_value"}
    assert claim.supported == cell


@SETTINGS
@given(table=tables(), other=st.one_of(words, st.integers()))
def test_unknown_key_always_fails_as_row_not_found(
    table: tuple[list[dict[str, Any]], list[Any]], other: Any
) -> None:
    """A key no row holds (type-strictly) never resolves to a row."""
    rows, keys = table
    assume(strict_key(other) not in {strict_key(key) for key in keys})
    claim = fails(lambda: check_row_integrity(table_registry(rows), {"key": other}, "t", "key"))
    assert (claim.claimed, claim.code) == (other, "row_not_found")


# -- field_matches_fact -----------------------------------------------------------------------

json_values = st.recursive(
    st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
        st.text(max_size=5),
    ),
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


def perturb(value: Any) -> Any:
    """A value that differs from ``value`` structurally (and so must never match it)."""
    if value is None:
        return 0
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + 1
    if isinstance(value, float):
        if value.is_integer():
            return value + 1 if abs(value) < 2**52 else value * 2
        return value * 2 + 1
    if isinstance(value, str):
        return value + "x"
    if isinstance(value, list):
        return tuple(value) if value else [None]
    return {**value, "\x00extra": None}


@SETTINGS
@given(value=json_values)
def test_recorded_value_always_matches_an_equal_copy(value: Any) -> None:
    """A deep copy of the recorded value passes, at the root and through a path."""
    reg = FactRegistry()
    reg.record("f", {"inner": value})
    check_field_matches_fact(reg, {"v": copy.deepcopy(value)}, "v", "f", path="inner")
    check_field_matches_fact(reg, {"v": {"inner": copy.deepcopy(value)}}, "v", "f")


@SETTINGS
@given(value=json_values)
def test_any_structural_perturbation_always_fails(value: Any) -> None:
    """A changed leaf, a type swap (bool, list/tuple) or an extra key never matches."""
    reg = FactRegistry()
    reg.record("f", value)
    claim = fails(lambda: check_field_matches_fact(reg, {"v": perturb(value)}, "v", "f"))
    assert claim.code == "value_mismatch"
    assert claim.reason.startswith("the recorded value differs: ")
