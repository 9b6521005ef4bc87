"""citations_retrieved and quotes_anchored: citations name documents retrieved in this
request, and a quoted passage occurs in the document it cites (groundwright's anchor)."""

from __future__ import annotations

import copy

import pytest

from groundplane_otel import (
    Document,
    Documents,
    FactRegistry,
    UnsupportedClaim,
    check_citations_retrieved,
    check_quotes_anchored,
    citations_retrieved,
    quotes_anchored,
)

POLICY = "Orders ship within two business days.\nRefunds take 30 days."


def registry() -> FactRegistry:
    """One retrieval (with content) and a restricted HR index."""
    reg = FactRegistry()
    reg.record_documents(
        "kb",
        [
            {"id": "policy-7", "score": 0.91, "content": POLICY},
            {"id": "faq-2", "score": 0.55, "content": "Express shipping costs $9."},
            {"id": "blog-1", "score": 0.2},
        ],
        tool="kb.search",
        args={"query": "shipping"},
        source="kb",
    )
    reg.record_documents("hr", [{"id": "staff-1", "content": "salaries"}], restricted=True)
    return reg


def cite_refused(output: dict[str, object], **kwargs: object) -> UnsupportedClaim:
    with pytest.raises(UnsupportedClaim) as caught:
        check_citations_retrieved(registry(), output, **kwargs)  # type: ignore[arg-type]
    return caught.value


def quote_refused(output: dict[str, object], **kwargs: object) -> UnsupportedClaim:
    with pytest.raises(UnsupportedClaim) as caught:
        check_quotes_anchored(registry(), output, **kwargs)  # type: ignore[arg-type]
    return caught.value


def test_retrieved_citations_pass_in_fields_and_in_text() -> None:
    """Ids in a field (one or a list) and markers in prose ([a], [a, b]) pass when retrieved."""
    check_citations_retrieved(registry(), {"sources": ["policy-7", "faq-2"]}, ["sources"])
    check_citations_retrieved(
        registry(), {"answer": "Ships fast [policy-7]; express [faq-2, policy-7]."},
        text_fields=["answer"], min_citations=1,
    )  # fmt: skip


def test_a_fabricated_citation_fails_with_the_retrieval_provenance() -> None:
    """An id nobody retrieved fails (did you mean …), naming the retrieval fact and its tool."""
    claim = cite_refused({"answer": "See [policy-8]."}, text_fields=["answer"])
    assert (claim.code, claim.field, claim.claimed) == (
        "citation_not_retrieved",
        "answer",
        "policy-8",
    )
    assert claim.reason == (
        "'policy-8' (characters 4-14) was not retrieved in this request; did you mean 'policy-7'?"
    )
    assert claim.fact == "kb"
    assert claim.provenance is not None
    assert claim.provenance.tool == "kb.search"
    assert claim.supported == ["policy-7", "faq-2", "blog-1"]


def test_markdown_links_are_not_citations_and_no_citation_can_be_required() -> None:
    """[text](url) is a link; min_citations=1 refuses an answer that cites nothing."""
    output = {"answer": "Read [our policy](https://x.example) please."}
    check_citations_retrieved(registry(), output, text_fields=["answer"])
    claim = cite_refused(output, text_fields=["answer"], min_citations=1)
    assert (claim.code, claim.claimed) == ("no_citation", 0)


def test_a_restricted_document_is_never_an_approved_citation() -> None:
    """Citing a document of a restricted retrieval fails without repeating its id."""
    claim = cite_refused({"sources": "staff-1"}, fields=["sources"])
    assert (claim.code, claim.claimed, claim.fact) == ("citation_restricted", "<withheld>", "hr")
    assert "staff-1" not in str(claim)


def test_a_non_string_citation_and_a_custom_marker() -> None:
    """A citation field holding an object fails; a custom one-group marker is honoured."""
    assert cite_refused({"sources": [{"id": 1}]}, fields=["sources"]).field == "sources[0]"
    check_citations_retrieved(
        registry(), {"a": "x {{faq-2}} [not-a-citation]"}, text_fields=["a"],
        marker=r"\{\{([^}]+)\}\}",
    )  # fmt: skip


def test_citation_arguments_are_validated_at_build() -> None:
    """No field at all, a marker without exactly one group or that does not compile, a bad
    min_citations, a bare string for documents."""
    with pytest.raises(ValueError, match="give fields"):
        citations_retrieved()
    with pytest.raises(ValueError) as caught:
        citations_retrieved(text_fields=["a"], marker=r"\[\w+\]")
    assert str(caught.value) == (
        "citations_retrieved: marker must have exactly one group (the cited id), got 0 in "
        "'\\\\[\\\\w+\\\\]'"
    )
    with pytest.raises(ValueError, match="not a valid regex"):
        citations_retrieved(text_fields=["a"], marker="([")
    with pytest.raises(ValueError, match="min_citations must be an int >= 0, got -1"):
        citations_retrieved(["a"], min_citations=-1)
    with pytest.raises(TypeError, match="documents must be a non-empty list"):
        citations_retrieved(["a"], documents="kb")  # type: ignore[arg-type]


def test_quotes_in_prose_must_occur_in_the_cited_document() -> None:
    """Whitespace is normalised (a line break in the source), a final period inside the quote
    is allowed; wording and case are exact."""
    check = quotes_anchored(text_fields=["answer"])
    check(registry(), {"answer": 'It says "ship within two business   days." [policy-7]'})
    check(registry(), {"answer": 'It says "business days. Refunds take" [policy-7]'})
    with pytest.raises(UnsupportedClaim) as caught:
        check(registry(), {"answer": 'It says "ship within two days" [policy-7]'})
    assert caught.value.code == "quote_not_in_source"
    with pytest.raises(UnsupportedClaim) as cased:
        check(registry(), {"answer": 'It says "Ship within two business days" [policy-7]'})
    assert cased.value.code == "quote_not_in_source"


def test_a_misattributed_quote_names_the_document_that_has_it() -> None:
    """The passage is in another retrieved document: quote_misattributed says which."""
    claim = quote_refused(
        {"answer": '"Express shipping costs $9." [policy-7]'}, text_fields=["answer"]
    )
    assert claim.code == "quote_misattributed"
    assert claim.reason == "the quoted passage is not in 'policy-7' but occurs in 'faq-2'"


def test_an_unverifiable_or_unretrieved_anchor_fails_closed() -> None:
    """No captured content: content_missing; a document not retrieved: citation_not_retrieved;
    a quotation without a citation marker is not an anchor."""
    assert quote_refused({"a": '"anything" [blog-1]'}, text_fields=["a"]).code == "content_missing"
    assert quote_refused({"a": '"x" [nope]'}, text_fields=["a"]).code == "citation_not_retrieved"
    check_quotes_anchored(registry(), {"a": 'they call it "fast"'}, text_fields=["a"])


def test_structured_quotes() -> None:
    """field= holds {id, quote} objects (keys configurable); a malformed entry fails."""
    output = {"quotes": [{"doc": "faq-2", "text": "costs $9"}]}
    check_quotes_anchored(registry(), output, "quotes", id_key="doc", quote_key="text")
    bad = quote_refused({"quotes": [{"doc": "faq-2"}]}, field="quotes", id_key="doc")
    assert (bad.code, bad.field) == ("field_missing", "quotes[0]")
    with pytest.raises(ValueError, match="id_key and quote_key must differ"):
        quotes_anchored("q", id_key="x", quote_key="x")


def test_documents_values() -> None:
    """Document validates id/score/content; ints become string ids; Documents copies cheaply
    and lists distinct ids; the registry accessor names the recorder on a wrong kind."""
    assert Document(7).id == "7"
    with pytest.raises(TypeError, match="a document id must be a non-empty string"):
        Document(" ")
    with pytest.raises(TypeError, match="score must be a finite number or None"):
        Document("a", float("nan"))
    docs = Documents((Document("a"), Document("a", content="x"), Document("b")))
    assert docs.ids == ("a", "b")
    assert docs.contents("a") == (None, "x")
    assert copy.deepcopy(docs) == docs
    reg = registry()
    assert reg.documents("kb").source == "kb"
    reg.record("plain", 1)
    with pytest.raises(TypeError, match=r"record it with record_documents\(\)"):
        reg.documents("plain")
    with pytest.raises(TypeError) as caught:
        reg.record_documents("bad", [{"score": 1}])
    assert (
        str(caught.value)
        == "fact 'bad': document [0]: a document needs an 'id', got keys ['score']"
    )
