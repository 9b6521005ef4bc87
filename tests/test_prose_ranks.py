"""Rank claims in prose: numbers_recorded reads ordinals, superlatives, "top N", "No. 1" and
"runner-up" tied to an entity against the Ranking facts in scope, with a rank receipt."""

from __future__ import annotations

import pytest

import groundplane_otel as gp
from groundplane_otel.checks._numbers.rank_receipt import RankReceipt
from groundplane_otel.checks.numbers_recorded import UnrecordedNumbers, check_numbers_recorded

SCORES = {"South": 150, "North": 120, "East": 90, "West": 90, "Central": 60}


def registry(higher_is_better: bool = True) -> gp.FactRegistry:
    found = gp.FactRegistry()
    found.record_ranking(
        "regions", SCORES, key="revenue", tool="warehouse.rank",
        higher_is_better=higher_is_better,
    )  # fmt: skip
    found.record_table("detail", [{"region": "South", "revenue": 150, "margin": 0.2}], key="region")
    return found


def refused(text: str, registry_: gp.FactRegistry | None = None) -> UnrecordedNumbers:
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(registry_ or registry(), text, ["regions", "detail"])
    return caught.value


RIGHT = [
    "North was second.",
    "North came in second with 120.",
    "South ranked #1 and North is No. 2.",
    "The second-highest revenue was North's.",
    "East and West tied; West was third and East fourth.",
    "The top 3 regions were South, North and East.",
    "Central is in the bottom 2 and finished last.",
    "North, the second-largest region, grew.",
    "The runner-up was North.",
    "Second place: North. Central had the lowest revenue.",
    "South had the highest margin of all, and North was second.",
    "Coming in second, North posted 120.",
    "North is second only to South.",
    "The region with the lowest revenue, Central, is under review.",
]
DISCOURSE = [
    "In the third quarter, North grew.",
    "First, North grew. Second, we looked at East.",
    "North was the first region to report.",
    "For the second time, Central missed plan.",
    "North worked the 2nd shift in Q2.",
    "Central had the highest margin.",  # another recorded measure than the ranking's key
]


@pytest.mark.parametrize("text", RIGHT + DISCOURSE)
def test_right_ranks_and_discourse_ordinals_pass(text: str) -> None:
    """A rank the entity holds (any rank of its tie block) passes; ordinals that are no rank
    claim about a ranked entity are not read."""
    check_numbers_recorded(registry(), text, ["regions", "detail"])


def test_a_wrong_ordinal_is_refused_with_a_rank_receipt() -> None:
    """North was third, for a second-ranked North: the receipt names the ranking, the rank
    held and the rank claimed."""
    claim = refused("North was third.")
    (receipt,) = claim.receipts
    assert isinstance(receipt, RankReceipt)
    assert (receipt.text, receipt.span, receipt.code) == ("third", (10, 15), "rank_mismatch")
    assert (receipt.fact, receipt.row, receipt.column, receipt.nearest) == (
        "regions", "North", "revenue", 2,
    )  # fmt: skip
    assert claim.code == "rank_mismatch"
    assert claim.reason == (
        "'third' at 10..15: 'North' ranks #2 (the ranking's order) on 'revenue' in fact "
        "'regions', not #3"
    )
    assert receipt.to_dict()["recorded_rank"] == [2, 2]
    assert receipt.to_dict()["claimed_rank"] == 3


@pytest.mark.parametrize(
    ("text", "phrase", "reason"),
    [
        ("West was fifth.", "fifth", "'West' ranks #3-#4 (tied) (the ranking's order)"),
        ("South ranked #2.", "#2", "'South' ranks #1 (the ranking's order)"),
        ("North is No. 1.", "No. 1", "'North' ranks #2 (the ranking's order)"),
        ("The second-highest was East.", "second-highest", "'East' ranks #3-#4 (tied) "
         "(counted from the highest)"),
        ("North had the lowest revenue.", "lowest", "'North' ranks #4 (counted from the lowest)"),
        ("North finished last.", "last", "'North' ranks #4 (counted from the last)"),
        ("The runner-up was East.", "runner-up", "'East' ranks #3-#4 (tied) (the ranking's order)"),
        ("Second place: East.", "Second place", "'East' ranks #3-#4 (tied) (the ranking's order)"),
        ("APAC aside, North, the largest region, grew.", "largest", "'North' ranks #2 "
         "(counted from the highest)"),
        ("Ranked third, Central grew.", "third", "'Central' ranks #5 (the ranking's order)"),
        ("The region with the lowest revenue, East, is under review.", "lowest",
         "'East' ranks #2-#3 (tied) (counted from the lowest)"),
    ],
)  # fmt: skip
def test_each_rank_form_is_read(text: str, phrase: str, reason: str) -> None:
    """Ordinals, rank numbers, superlatives, "last", "runner-up" and "N place" are each read
    in their documented direction."""
    (receipt,) = refused(text).receipts
    assert receipt.text == phrase
    assert receipt.describe().split(": ", 1)[1].startswith(reason)


def test_top_n_reads_each_listed_entity_and_not_its_digits_as_a_number() -> None:
    """In "the top 3 were South, North and Central", Central (#5) is refused as outside the
    top 3, and the 3 is a rank, not an unrecorded number."""
    claim = refused("The top 3 regions were South, North and Central.")
    (receipt,) = claim.receipts
    assert (receipt.code, receipt.row, receipt.text) == ("rank_outside_top", "Central", "top 3")
    assert receipt.describe().endswith("not within the top 3")


def test_lower_is_better_counts_best_first_and_highest_from_the_top() -> None:
    """In a lower-is-better ranking "first" is the lowest score and "highest" the largest."""
    lower = registry(higher_is_better=False)
    check_numbers_recorded(lower, "Central came in first; South had the highest revenue.",
                           ["regions", "detail"])  # fmt: skip
    (receipt,) = refused("South came in first.", lower).receipts
    assert (receipt.row, receipt.nearest) == ("South", 5)


def test_no_ranking_in_scope_reads_no_rank() -> None:
    """Against a Table alone an ordinal is not a claim ("Ranked third" passes), as before."""
    found = gp.FactRegistry()
    found.record_table("t", [{"id": "A", "total": 10}], key="id")
    check_numbers_recorded(found, "A ranked third with 10.", "t")


def test_numbers_and_ranks_share_one_claim_in_text_order_per_field() -> None:
    """A wrong number and a wrong rank in one answer: both receipts, numbers first."""
    claim = refused("North was third with 999.")
    assert [r.code for r in claim.receipts] == ["number_unrecorded", "rank_mismatch"]


def test_a_clause_after_the_first_reads_its_own_subject() -> None:
    """The entity of a later clause is found where that clause starts ("…; East led with 90")."""
    (receipt,) = refused("South grew; East led with 90.").receipts
    assert (receipt.text, receipt.row, receipt.nearest) == ("led", "East", 3)


def test_followed_by_claims_the_next_ranks_in_order() -> None:
    """Prose "South led, followed by North and East" is right; "followed by East and North" gives
    North rank 3 and East rank 2, both wrong."""
    check_numbers_recorded(registry(), "South led with 150, followed by North (120) and East.",
                           ["regions", "detail"])  # fmt: skip
    claim = refused("South led with 150, followed by Central (60) and North.")
    assert [(r.text, r.row, int(r.value), r.nearest) for r in claim.receipts] == [
        ("followed by", "Central", 2, 5),
        ("followed by", "North", 3, 2),
    ]


def test_a_numbered_ranking_after_a_rank_header_claims_each_position() -> None:
    """A list or table under "Ranking …" claims rank N for item N; a plain numbered list of
    steps is no ranking."""
    check_numbers_recorded(registry(), "Ranking by revenue:\n1. South\n2. North\n3. East",
                           ["regions", "detail"])  # fmt: skip
    table = "| Rank | Region |\n|---|---|\n| 1 | North |\n| 2 | South |"
    assert [(r.row, int(r.value)) for r in refused(table).receipts] == [
        ("North", 1), ("South", 2),
    ]  # fmt: skip
    check_numbers_recorded(registry(), "Steps:\n1. Central exports\n2. North reviews",
                           ["regions", "detail"])  # fmt: skip


@pytest.mark.parametrize(
    "text",
    [
        "Central was first in headcount growth.",  # another measure, named after "in"
        "Central ranked first in March.",  # another period
        "South was second in Q3.",
        "Central posted the strongest growth.",  # a superlative naming another measure
        "Central, the smallest region by headcount, grew.",
    ],
)
def test_a_claim_naming_another_measure_or_period_is_not_read(text: str) -> None:
    """Only claims about the ranking's own measure are checked (see the documented limits)."""
    check_numbers_recorded(registry(), text, ["regions", "detail"])


def test_with_two_rankings_a_claim_reads_the_one_its_measure_names() -> None:
    """Prose "the highest growth" reads the growth ranking; a bare ordinal passes when any ranking
    in scope holds it; "ranked 2" is a rank like "ranked #2"."""
    found = gp.FactRegistry()
    found.record_ranking("by_revenue", {"North": 150, "South": 120, "East": 90}, key="revenue")
    found.record_ranking("by_growth", {"North": 2.1, "South": 7.5, "East": 4.0}, key="growth")
    facts = ["by_revenue", "by_growth"]
    check_numbers_recorded(found, "South had the highest growth; South was first.", facts)
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(
            found, "North had the highest growth and ranked 2 by revenue.", facts
        )
    assert [(r.fact, r.row, int(r.value)) for r in caught.value.receipts] == [
        ("by_growth", "North", 1),
        ("by_revenue", "North", 2),
    ]


def test_a_short_capitalised_name_must_be_written_as_recorded() -> None:
    """The name "US" is read only as written: "Ask us: we came in first" names no entity, while "US
    came in first" for a second-ranked US is refused."""
    found = gp.FactRegistry()
    found.record_ranking("markets", {"UK": 90, "US": 80}, key="revenue")
    check_numbers_recorded(found, "Ask us: us came in first.", "markets")
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(found, "US came in first.", "markets")
    assert caught.value.receipts[0].row == "US"


def test_ranked_one_of_is_no_rank() -> None:
    """Prose "ranked one of the best" is praise, not rank 1; "ranked 1" with a digit is a rank."""
    check_numbers_recorded(registry(), "North was ranked one of the best regions.", "regions")
    (receipt,) = refused("North ranked 1 by revenue.").receipts
    assert (receipt.text, receipt.nearest) == ("1", 2)


def test_first_to_do_something_is_no_rank() -> None:
    """Prose "the first to report" is about time; "second to South" is a rank."""
    check_numbers_recorded(registry(), "Central was the first to report results.", "regions")
    check_numbers_recorded(registry(), "North came second to South.", "regions")
    (receipt,) = refused("East came second to South.").receipts
    assert receipt.row == "East"


@pytest.mark.parametrize(
    "text",
    ["North performed best this week.", "North is the clear winner.", "The winner was North.",
     "North won this week with 120.", "North came out on top."],
)  # fmt: skip
def test_winning_words_claim_the_first_rank(text: str) -> None:
    """Prose "performed best", "winner", "won this week", "came out on top" claim rank 1 (the seed's
    "north performed best this week" when North was second)."""
    (receipt,) = refused(text).receipts
    assert (receipt.row, int(receipt.value), receipt.nearest) == ("North", 1, 2)


def test_winning_words_about_something_else_are_not_read() -> None:
    """Prose "won the contract", "on top of that" are no rank claims."""
    check_numbers_recorded(registry(), "North won the contract. On top of that, East grew.",
                           "regions")  # fmt: skip
