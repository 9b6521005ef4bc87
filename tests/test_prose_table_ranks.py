"""Rank claims read from a Table (issue 40, classes 1 and 2): a rank phrase naming a numeric
column (or a declared alias) is checked against the rows ranked by that column."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import groundplane_otel as gp
from groundplane_otel.checks._numbers.rank_receipt import RankReceipt
from groundplane_otel.checks.numbers_recorded import (
    UnrecordedNumbers,
    check_numbers_recorded,
    numbers_recorded,
)

ROWS = [
    {"store": "Elm Street", "revenue": 900, "margin": 0.31, "orders": 40, "visits": 700},
    {"store": "Harbour", "revenue": 1200, "margin": 0.12, "orders": 55, "visits": 300},
    {"store": "Oak", "revenue": 500, "margin": 0.22, "orders": 12, "visits": 900},
    {"store": "Pine", "revenue": 500, "margin": 0.40, "orders": 60, "visits": 100},
]
ALIASES = {"revenue": ["sales"], "visits": ["busiest", "traffic"], "margin": ["thinnest:lowest"]}


def registry(exhaustive: bool = True) -> gp.FactRegistry:
    found = gp.FactRegistry()
    found.record_table("stores", ROWS, key="store", tool="bi.stores", exhaustive=exhaustive)
    return found


def check(text: str, registry_: gp.FactRegistry | None = None) -> None:
    check_numbers_recorded(registry_ or registry(), text, "stores", aliases=ALIASES)


def refused(text: str) -> RankReceipt:
    with pytest.raises(UnrecordedNumbers) as caught:
        check(text)
    (receipt,) = [r for r in caught.value.receipts if isinstance(r, RankReceipt)][:1]
    return receipt


RIGHT = [
    "Elm Street was second on revenue.",
    "Harbour had the lowest margin.",
    "Oak is last on orders.",
    "The top 3 by revenue were Harbour, Elm Street and Oak.",
    "The top 3 by revenue were Harbour, followed by Elm Street and Pine.",
    "Top stores by revenue: #1 Harbour, #2 Elm Street, #3 Oak.",
    "Harbour is our No. 1 store by revenue.",
    "The No. 2 store by sales was Elm Street.",
    "Oak is the busiest store.",
    "Harbour had the thinnest margin.",
    "Oak was third on revenue and Pine was fourth on revenue.",  # a tie spans both ranks
    "Oak had the highest traffic.",
    "Elm Street trailed only Harbour on revenue.",
    "Harbour and Elm Street were first and second on revenue, respectively.",
    "Oak Lane was behind only Harbour and Elm Street on revenue.",
]
UNREAD = [
    "Elm Street was second.",  # no column named: which order is meant is not said
    "Pine was the best store on margin.",  # best/worst: which way is better is not recorded
    "Pine was first in March.",  # a period, not a column
    "Harbour was the first store to report.",  # an ordinal followed by a noun
    "Pine had the highest revenue growth.",  # another measure than the column (growth)
]
WRONG = [  # (text, phrase, column, entity, ranks held)
    ("Elm Street was first on revenue.", "first", "revenue", "Elm Street", (2, 2)),
    ("Oak had the lowest margin.", "lowest", "margin", "Oak", (2, 2)),
    ("Pine is last on orders.", "last", "orders", "Pine", (4, 4)),
    ("The top 2 by revenue were Harbour and Oak.", "top 2", "revenue", "Oak", (3, 4)),
    ("The top 3 by revenue were Harbour, followed by Oak and Elm Street.", "followed by",
     "revenue", "Oak", (3, 4)),
    ("Top stores by revenue: #1 Harbour, #2 Oak, #3 Elm Street.", "#2", "revenue", "Oak",
     (3, 4)),
    ("Oak is our No. 1 store by revenue.", "No. 1", "revenue", "Oak", (3, 4)),
    ("The No. 2 store by sales was Oak.", "No. 2", "revenue", "Oak", (3, 4)),
    ("Pine is the busiest store.", "busiest", "visits", "Pine", (4, 4)),
    ("Pine had the thinnest margin.", "thinnest", "margin", "Pine", (4, 4)),
    ("Oak trailed only Harbour on revenue.", "trailed only", "revenue", "Oak", (3, 4)),
    ("Oak and Harbour were first and second on revenue, respectively.", "first and second",
     "revenue", "Oak", (3, 4)),
]  # fmt: skip


@pytest.mark.parametrize("text", RIGHT + UNREAD)
def test_a_right_rank_on_a_named_column_passes(text: str) -> None:
    """A rank the rows hold on the column named passes; a claim naming no column is unread."""
    check(text)


@pytest.mark.parametrize(("text", "phrase", "column", "entity", "held"), WRONG)
def test_a_wrong_rank_on_a_named_column_is_refused_naming_it(
    text: str, phrase: str, column: str, entity: str, held: tuple[int, int]
) -> None:
    """The receipt names the phrase, the column it was ranked by, the entity and its ranks."""
    receipt = refused(text)
    assert (receipt.text, receipt.column, receipt.row, (receipt.low, receipt.high)) == (
        phrase,
        column,
        entity,
        held,
    )
    assert receipt.fact == "stores" and receipt.code == "rank_mismatch" or receipt.within


def test_the_receipt_says_how_the_column_was_counted() -> None:
    """A column is counted from its highest value; the message says so and names it."""
    receipt = refused("Elm Street was first on revenue.")
    assert receipt.describe() == (
        "'first' at 15..20: 'Elm Street' ranks #2 (counted from the highest) on 'revenue' "
        "in fact 'stores', not #1"
    )


def test_a_truncated_table_is_not_ranked() -> None:
    """exhaustive=False: its rows are not all the rows, so no rank is read from them."""
    check("Elm Street was first on revenue.", registry(exhaustive=False))


def test_a_column_with_a_gap_is_not_ranked() -> None:
    """A column some row lacks (or holds a non-number in) is not ranked."""
    found = gp.FactRegistry()
    found.record_table(
        "t", [{"id": "A", "revenue": 1}, {"id": "B", "revenue": "n/a"}], key="id", tool="bi"
    )
    check_numbers_recorded(found, "A was first on revenue.", "t")


def test_aliases_are_validated_at_build() -> None:
    """Aliases: a mapping of column to a list of words; located, exact messages."""
    with pytest.raises(TypeError) as caught:
        numbers_recorded("t", aliases={"revenue": "sales"})
    assert str(caught.value) == (
        "numbers_recorded: aliases['revenue'] must be a non-empty list of words, got 'sales'"
    )
    with pytest.raises(ValueError) as wrong:
        numbers_recorded("t", aliases={"revenue": ["sales!"]})
    assert str(wrong.value) == (
        "numbers_recorded: aliases['revenue'] must list words (letters and spaces; a "
        'superlative may end in ":highest" or ":lowest"), got \'sales!\''
    )
    with pytest.raises(ValueError) as suffix:
        numbers_recorded("t", aliases={"price": ["cost:lowest"]})
    assert str(suffix.value) == (
        "numbers_recorded: aliases['price']: 'cost:lowest' is not one word ending in \"est\"; "
        'only a superlative alias may say ":highest" or ":lowest"'
    )


def test_an_alias_on_a_ranking_names_its_key() -> None:
    """An alias keyed by a Ranking's key (or fact name) makes a synonym read, not skipped."""
    found = gp.FactRegistry()
    found.record_ranking("regions", {"South": 150, "North": 120}, key="revenue", tool="bi")
    check_numbers_recorded(found, "North had the highest sales.", "regions")  # unread
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(
            found, "North had the highest sales.", "regions", aliases={"regions": ["sales"]}
        )
    assert caught.value.receipts[0].column == "revenue"


@settings(max_examples=150, deadline=None)
@given(
    values=st.lists(st.integers(0, 5), min_size=2, max_size=6),
    pick=st.integers(0, 5),
    rank=st.integers(1, 6),
)
def test_a_table_rank_passes_exactly_when_the_row_holds_it(
    values: list[int], pick: int, rank: int
) -> None:
    """Law: "X was Nth on score" passes iff N is within X's competition-rank tie block."""
    names = ["Alder", "Birch", "Cedar", "Dogwood", "Elder", "Fir"][: len(values)]
    pick %= len(values)
    found = gp.FactRegistry()
    found.record_table(
        "t", [{"id": n, "score": v} for n, v in zip(names, values, strict=True)], key="id"
    )
    mine = values[pick]
    low = 1 + sum(1 for v in values if v > mine)
    high = low + sum(1 for v in values if v == mine) - 1
    ordinal = ["first", "second", "third", "fourth", "fifth", "sixth"][rank - 1]
    text = f"{names[pick]} was {ordinal} on score."
    if low <= rank <= high:
        check_numbers_recorded(found, text, "t")
    else:
        with pytest.raises(UnrecordedNumbers) as caught:
            check_numbers_recorded(found, text, "t")
        assert (caught.value.receipts[0].low, caught.value.receipts[0].high) == (low, high)
