"""Issue 22's evidence rules: retrieved documents as evidence for numbers_recorded, leaks by
rounding and from restricted documents (no_restricted_values), single-quoted and unmarked
quotes (quotes_anchored) — each right answer passes, each wrong one fails with its receipt."""

from __future__ import annotations

from typing import Any

import pytest

from groundplane_otel import FactRegistry, UnsupportedClaim, boundary
from groundplane_otel.checks.no_restricted_values import check_no_restricted_values
from groundplane_otel.checks.numbers_recorded import (
    UnrecordedNumbers,
    check_numbers_recorded,
    numbers_recorded,
)
from groundplane_otel.checks.quotes_anchored import check_quotes_anchored, quotes_anchored

INVOICE = "...the total amount due is 10,000 dollars, payable within 30 days, at 3.90% a year..."


def rag() -> FactRegistry:
    """One retrieval (with a score and a top_k argument) and one restricted retrieval."""
    reg = FactRegistry()
    reg.record_documents(
        "kb",
        [{"id": "invoice.pdf#p1", "score": 0.93, "content": INVOICE}],
        tool="kb.search",
        args={"query": "invoice total", "top_k": 5},
    )
    reg.record_documents(
        "hr",
        [{"id": "hr-7", "content": "The salary band is $85,000 to $95,000."}],
        tool="kb.search",
        restricted=True,
    )
    return reg


def refused(text: str, **options: Any) -> UnrecordedNumbers:
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(rag(), text, **{"fact": "kb", "documents": ["kb"], **options})
    return caught.value


@pytest.mark.parametrize(
    "text",
    [
        "The invoice total is $10,000, due within thirty days.",
        "It comes to 10k dollars at 3.9% [invoice.pdf#p1].",
        "Total: 10,000.00 USD; term 30 days; rate 3.90 percent.",
    ],
)
def test_a_number_a_retrieved_document_spells_is_supported(text: str) -> None:
    """With documents=[...], a number the document's content spells passes in any format the
    scanner reads (grouping, magnitude, words, percent, trailing zeros)."""
    check_numbers_recorded(rag(), text, fact="kb", documents=["kb"])


def test_without_the_option_document_text_is_no_evidence() -> None:
    """Off by default: the same word-for-word number is unrecorded."""
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(rag(), "The total is 10,000 dollars.", fact="kb")
    assert [r.code for r in caught.value.receipts] == ["number_unrecorded"]
    assert caught.value.receipts[0].nearest is None


def test_the_receipt_names_the_document() -> None:
    """A wrong number's receipt names the document whose text holds the nearest number."""
    claim = refused("The invoice total is 1,000 dollars.")
    (receipt,) = claim.receipts
    assert (receipt.code, receipt.nearest, receipt.fact, receipt.document) == (
        "number_scale_mismatch",
        10000,
        "kb",
        "invoice.pdf#p1",
    )
    assert receipt.to_dict()["document"] == "invoice.pdf#p1"
    assert str(claim) == (
        "unsupported claim in field '*': 1 number is not recorded | '1,000' at 21..26: the same "
        "digits are recorded at another power of ten; nearest recorded 10000 (fact 'kb', "
        "document 'invoice.pdf#p1', column 'content') | provenance=kb.search(query='invoice "
        "total', top_k=5)"
    )


@pytest.mark.parametrize("text", ["The match scored 0.93.", "I read the top 5 results."])
def test_scores_and_retrieval_arguments_are_never_evidence(text: str) -> None:
    """A retrieval score and the retrieval's top_k are metadata: unrecorded."""
    assert [r.code for r in refused(text).receipts] == ["number_unrecorded"]


def test_a_restricted_document_is_never_evidence() -> None:
    """Listing a restricted Documents fact is a ValueError; its numbers stay unrecorded."""
    with pytest.raises(ValueError, match="documents lists fact 'hr', which is restricted"):
        check_numbers_recorded(rag(), "The band starts at $85,000.", fact="kb", documents=["hr"])
    assert [r.code for r in refused("The band starts at $85,000.").receipts] == [
        "number_unrecorded"
    ]


def test_documents_is_validated_and_declared_as_needed_facts() -> None:
    """documents must be a non-empty list of distinct names (or None), and a Documents fact;
    the check needs its documents facts, so a boundary without them refuses to open."""
    with pytest.raises(TypeError, match="documents must be None or a non-empty list"):
        numbers_recorded("kb", documents="kb")
    with pytest.raises(ValueError, match="documents lists a name twice"):
        numbers_recorded("kb", documents=["kb", "kb"])
    reg = rag()
    reg.record("plain", {"total": 1})
    with pytest.raises(TypeError, match="fact 'plain', which is not retrieved documents"):
        check_numbers_recorded(reg, "1", fact="plain", documents=["plain"])
    check = numbers_recorded("plain", documents=["kb"])
    assert check.facts == ("plain", "kb")
    with boundary(reg, facts=["plain", "kb"], checks=[check]) as b:
        b.submit({"answer": "A total of 1, and 10,000 dollars."})


# -- no_restricted_values: roundings and restricted documents ---------------------------------


def secrets(public_price: int | None = None) -> FactRegistry:
    reg = FactRegistry()
    reg.record_table(
        "wholesale",
        [{"sku": "Project Falcon", "cost": 1234.5, "margin": 0.0455}],
        key="sku",
        tool="erp.costs",
        restricted=True,
    )
    if public_price is not None:
        reg.record_table(
            "prices", [{"sku": "Widget", "price": public_price}], key="sku", tool="shop"
        )
    reg.record_documents(
        "ops",
        [
            {
                "id": "ops-7",
                "content": "Escalations go to Maria Lopez (maria.lopez@example.com). Vendor code "
                "VC-2291; the carrier rate is $6.40 per parcel for the Widget Pro, within 3 "
                "days, effective 2026.",
            }
        ],
        tool="kb.search",
        restricted=True,
    )
    reg.record_domain("catalogue", ["Widget Pro"], tool="shop")
    return reg


def leak(text: str, reg: FactRegistry | None = None) -> str:
    with pytest.raises(UnsupportedClaim) as caught:
        check_no_restricted_values(reg or secrets(), text)
    assert caught.value.code == "restricted_value"
    assert caught.value.claimed == "<withheld>"
    return str(caught.value.reason)


@pytest.mark.parametrize(
    ("text", "how"),
    [
        (
            "It costs us about $1.2k.",
            "(row 0, column 'cost') as a number rounded to 100 (as written)",
        ),
        (
            "It costs us $1,234 a unit.",
            "(row 0, column 'cost') as a number rounded to 1 (as written)",
        ),
        ("It costs us 1,235.", "(row 0, column 'cost') as a number rounded to 1 (as written)"),
        (
            "The margin is about 4.6%.",
            "(row 0, column 'margin') as a number rounded to 0.001 (as the ratio a percent spells)",
        ),
        (
            "one thousand two hundred thirty-four",
            "(row 0, column 'cost') as a number rounded to 1 (as written)",
        ),
    ],
)
def test_a_rounding_of_a_restricted_value_is_a_leak(text: str, how: str) -> None:
    """A written number the restricted value rounds to (half-even or half-up, at the precision
    written), as written or as the ratio a percent spells, is refused; the reason names the
    fact, the place and the precision, never the value."""
    reason = leak(text)
    assert f"restricted fact 'wholesale' {how}, in a string at characters" in reason
    assert "1234" not in reason
    assert "4.55" not in reason


@pytest.mark.parametrize(
    "text",
    [
        "The margin is about 4.5%.",  # 4.55 rounds to 4.6 in both modes, never to 4.5
        "About $1k, roughly 5%.",  # one significant digit: too coarse to single out a value
        "It arrives in 12 days.",  # a plain integer below 100 is a count, never a rounding
        "It costs 1,200 exactly.",  # an integer's trailing zeros are exact to the unit
        "It costs $1.3k.",  # not a rounding of 1234.5
    ],
)
def test_coarse_or_distant_numbers_are_not_roundings(text: str) -> None:
    """The salience rules: one-digit roundings, small plain integers and numbers the
    restricted value does not round to pass."""
    check_no_restricted_values(secrets(), text)


def test_an_unrestricted_value_closer_to_the_written_number_wins() -> None:
    """$1,235 is a rounding of the restricted 1234.5, but a public price of 1235 is closer:
    allowed; a public price farther away (1236) does not save it."""
    check_no_restricted_values(secrets(public_price=1235), "The Widget costs $1,235.")
    leak("The Widget costs $1,235.", secrets(public_price=1236))


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("Please ask Maria Lopez.", "name"),
        ("please ask MARIA LOPEZ", "name"),
        ("Write to maria.lopez@example.com.", "name"),
        ("Use vendor code VC-2291.", "name"),
        ("We pay $6.40 a parcel.", "number"),
        ("We pay 6.4 dollars a parcel.", "number"),
    ],
)
def test_salient_terms_of_a_restricted_document_are_leaks(text: str, kind: str) -> None:
    """Names (two capitalised words), codes, e-mail addresses and specific numbers inside a
    restricted document's content, said on their own, are refused; the reason names the
    document by position, never by its (restricted) id."""
    reason = leak(text)
    assert f"restricted fact 'ops' (document 0 (a {kind} in its content))" in reason
    assert "ops-7" not in reason


@pytest.mark.parametrize(
    "text",
    [
        "The Widget Pro ships within 3 days.",  # a public name, a small count
        "Since 2026 the Falcon team answers faster.",  # a year, a single capitalised word
        "Maria will call you back.",  # one word of a name is not the name
    ],
)
def test_ordinary_or_public_terms_of_a_restricted_document_pass(text: str) -> None:
    """Terms the public evidence holds, small counts, years and single words are not leaks."""
    check_no_restricted_values(secrets(), text)


# -- quotes_anchored: single quotes and unmarked quotations -----------------------------------


def kb() -> FactRegistry:
    reg = FactRegistry()
    reg.record_documents(
        "kb",
        [
            {"id": "policy-7", "content": "Orders don't ship on Sundays. Refunds take 14 days."},
            {"id": "faq-2", "content": "Express delivery costs $9."},
        ],
        tool="kb.search",
    )
    return reg


def quote_code(text: str, **options: Any) -> str | None:
    try:
        check_quotes_anchored(kb(), text, text_fields=["*"], **options)
    except UnsupportedClaim as claim:
        return claim.code
    return None


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("It says 'Orders don't ship on Sundays' [policy-7].", None),
        ("It says \u2018Refunds take 14 days.\u2019 [policy-7]", None),
        ("It says 'Refunds take 10 days' [policy-7].", "quote_not_in_source"),
        ("It\u2019s \u2018Refunds take 10 days\u2019 [policy-7].", "quote_not_in_source"),
        ("It says 'Express delivery costs $9' [policy-7].", "quote_misattributed"),
        ("Customers' orders don't ship on Sundays [policy-7].", None),
        ("the 'Express' tier [faq-2]", None),  # not followed by the marker: no anchor
        ("the 'Express shipping' [faq-2]", "quote_not_in_source"),
        ("the 'Express delivery' [faq-2]", None),
    ],
)
def test_single_quotes_followed_by_a_marker_are_anchors(text: str, code: str | None) -> None:
    """ASCII and typographic single quotes followed by a marker are checked like double quotes;
    apostrophes inside words and a possessive are not quote marks."""
    assert quote_code(text) == code


def test_single_quotes_can_be_switched_off() -> None:
    """single_quotes=False reads double quotes only (the behaviour before issue 22)."""
    assert quote_code("It says 'Refunds take 10 days' [policy-7].", single_quotes=False) is None


@pytest.mark.parametrize(
    ("text", "skip", "retrieved"),
    [
        ('Our policy: "Refunds take 30 days."', None, "quote_not_in_source"),
        ('Our policy: "Refunds take 14 days."', None, None),
        ("In its words, \u2018Orders don't ship on Sundays\u2019.", None, None),
        ('It is "quick and cheap" for you.', None, None),  # three words: a scare quote
        ("It's 'not a real quote at all' here.", None, None),  # ASCII singles need a marker
    ],
)
def test_unmarked_quotations_are_checked_only_when_declared(
    text: str, skip: str | None, retrieved: str | None
) -> None:
    """By default an unmarked quotation is not an anchor; unmarked="retrieved" requires one of
    four or more words (double or typographic single quotes) to occur in a retrieved document."""
    assert quote_code(text) == skip
    assert quote_code(text, unmarked="retrieved") == retrieved


def test_quote_options_are_validated() -> None:
    """single_quotes is a bool and unmarked is "skip" or "retrieved", checked at build."""
    with pytest.raises(TypeError, match="single_quotes must be True or False, got 'yes'"):
        quotes_anchored(text_fields=["*"], single_quotes="yes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match='unmarked must be "skip" or "retrieved", got \'all\''):
        quotes_anchored(text_fields=["*"], unmarked="all")  # type: ignore[arg-type]
