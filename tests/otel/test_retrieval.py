"""Retrieval spans become documents facts (GenAI ``retrieval``, OpenInference RETRIEVER), and
citations are checked against this request's retrieval, with the retrieval span as provenance."""

from __future__ import annotations

import json
from typing import Any

import pytest
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits
from otel_harness import Harness, answer

from groundplane_otel import UnsupportedClaim, citations_retrieved, quotes_anchored
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec
from groundplane_otel.otel._engine.capture import read_tool_call

DOCS = [{"id": "policy-7", "score": 0.91}, {"id": "faq-2", "score": 0.55}]


def config(tool: str = "kb", **fact: Any) -> GuardConfig:
    checks = (
        citations_retrieved(text_fields=["answer"], min_citations=1),
        quotes_anchored(text_fields=["answer"]),
    )
    return GuardConfig(
        facts=(FactSpec("retrieved", tool, kind="documents", **fact),),
        boundaries=(
            BoundarySpec(
                "rag",
                ("retrieved",),
                checks,
                match=MatchSpec(agent_name="helper"),
                report_mode="first",
            ),
        ),
        capture_content=True,
    )


def genai_retrieval(otel: Harness, docs: Any, **extra: Any) -> ReadableSpan:
    attributes = {
        "gen_ai.operation.name": "retrieval",
        "gen_ai.data_source.id": "kb",
        "gen_ai.retrieval.query.text": "shipping",
        "gen_ai.retrieval.top_k": 2,
        **extra,
    }
    if docs is not None:
        attributes["gen_ai.retrieval.documents"] = json.dumps(docs)
    with otel.tracer.start_as_current_span("retrieval kb", attributes=attributes) as span:
        pass
    return span  # type: ignore[return-value]


def openinference_retriever(otel: Harness, docs: list[dict[str, Any]]) -> ReadableSpan:
    attributes: dict[str, Any] = {"openinference.span.kind": "RETRIEVER", "input.value": "ship"}
    for index, doc in enumerate(docs):
        for key, value in doc.items():
            attributes[f"retrieval.documents.{index}.document.{key}"] = value
    with otel.tracer.start_as_current_span("kb", attributes=attributes) as span:
        pass
    return span  # type: ignore[return-value]


def ask(otel: Harness, retrieve: Any, text: str) -> UnsupportedClaim | None:
    """One request: an agent span around a retrieval and a chat answering ``text``."""
    try:
        with otel.tracer.start_as_current_span("request"), otel.agent("helper"):
            retrieve()
            otel.chat(answer({"answer": text}))
    except UnsupportedClaim as claim:
        return claim
    return None


def events(otel: Harness) -> list[dict[str, Any]]:
    (chat,) = otel.spans("chat gpt-test")
    return [dict(e.attributes or {}) for e in chat.events if e.name == "gen_ai.guardrail.result"]


def test_the_readers_turn_retrieval_spans_into_tool_calls() -> None:
    """GenAI: tool = data source id, arguments = query and top_k; OpenInference: tool = span
    name, documents assembled from the flattened attributes in index order."""
    call = read_tool_call(
        {
            "gen_ai.operation.name": "retrieval",
            "gen_ai.data_source.id": "kb",
            "gen_ai.retrieval.query.text": "q",
            "gen_ai.retrieval.documents": "[]",
        },
        "retrieval kb",
    )
    assert call is not None
    assert (call.source, call.tool, call.arguments, call.result) == (
        "genai",
        "kb",
        {"query": "q"},
        "[]",
    )
    fallback = read_tool_call({"gen_ai.operation.name": "retrieval"}, "retrieval docs")
    assert fallback is not None
    assert fallback.tool == "docs"
    oi = read_tool_call(
        {
            "openinference.span.kind": "RETRIEVER",
            "retrieval.documents.1.document.id": "b",
            "retrieval.documents.0.document.id": "a",
            "retrieval.documents.0.document.score": 0.5,
            "retrieval.documents.0.document.content": "text",
            "retrieval.documents.0.document.metadata": "{}",
        },
        "VectorStoreRetriever",
    )
    assert oi is not None
    assert (oi.source, oi.tool) == ("openinference", "VectorStoreRetriever")
    assert oi.result == [{"id": "a", "score": 0.5, "content": "text"}, {"id": "b"}]


def test_a_cited_genai_retrieval_passes_and_a_fabricated_citation_is_blocked(otel: Harness) -> None:
    """The guard captures the retrieval span; a citation of a retrieved id passes, an invented
    one is blocked with the retrieval span's ids as provenance on the event."""
    otel.install(config())
    assert ask(otel, lambda: genai_retrieval(otel, DOCS), "Ships in two days [policy-7].") is None
    otel.exporter.clear()
    holder: list[ReadableSpan] = []
    claim = ask(otel, lambda: holder.append(genai_retrieval(otel, DOCS)), "See [policy-9].")
    assert claim is not None
    assert claim.code == "citation_not_retrieved"
    (event,) = events(otel)
    retrieval = holder[0].get_span_context()
    assert event["gen_ai.guardrail.result.reason"] == "citation_not_retrieved"
    assert event["groundplane.check"] == "citations_retrieved"
    assert event["groundplane.fact.tool"] == "kb"
    assert event["groundplane.fact.span_id"] == f"{retrieval.span_id:016x}"
    assert event["groundplane.fact.trace_id"] == f"{retrieval.trace_id:032x}"
    kinds = {attrs["groundplane.fact.kind"] for attrs, _ in otel.metrics()["groundplane.facts"]}
    assert kinds == {"documents"}


def test_a_citation_from_another_request_is_blocked(otel: Harness) -> None:
    """Documents retrieved in request A are not evidence for request B."""
    otel.install(config())
    assert ask(otel, lambda: genai_retrieval(otel, DOCS), "ok [policy-7]") is None
    other = [{"id": "faq-2", "score": 0.4}]
    claim = ask(otel, lambda: genai_retrieval(otel, other), "ok [policy-7]")
    assert claim is not None
    assert claim.code == "citation_not_retrieved"


def test_openinference_content_anchors_quotes(otel: Harness) -> None:
    """RETRIEVER documents carry content: a quote that occurs passes, one that does not is
    blocked as quote_not_in_source."""
    otel.install(config(tool="kb"))
    docs = [{"id": "policy-7", "score": 0.9, "content": "Orders ship within two days."}]
    good = '"ship within two days" [policy-7]'
    assert ask(otel, lambda: openinference_retriever(otel, docs), good) is None
    claim = ask(otel, lambda: openinference_retriever(otel, docs), '"ship today" [policy-7]')
    assert claim is not None
    assert claim.code == "quote_not_in_source"


def test_unusable_retrievals_fail_closed(otel: Harness) -> None:
    """No documents captured: fact_missing; a document without an id: fact_unparseable."""
    otel.install(config())
    missing = ask(otel, lambda: genai_retrieval(otel, None), "x [policy-7]")
    assert missing is not None
    assert missing.code == "fact_missing"
    broken = ask(otel, lambda: genai_retrieval(otel, [{"score": 1}]), "x [policy-7]")
    assert broken is not None
    assert broken.code == "fact_unparseable"


def test_content_cut_at_the_length_limit_is_not_content(make_otel: Any) -> None:
    """An OpenInference document content cut by the attribute length limit becomes "not
    captured": the quote is content_missing, never judged on half a text."""
    otel = make_otel(SpanLimits(max_attribute_length=200))
    otel.install(config())
    docs = [{"id": "policy-7", "content": "Orders ship within two days. " * 10}]
    claim = ask(otel, lambda: openinference_retriever(otel, docs), '"Orders ship" [policy-7]')
    assert claim is not None
    assert claim.code == "content_missing"


@pytest.mark.parametrize("bad", [{"key": "id"}, {"score": "s"}])
def test_a_documents_fact_takes_no_key_or_score(bad: dict[str, str]) -> None:
    """FactSpec(kind="documents") refuses key=/score=, naming the fact."""
    with pytest.raises(ValueError, match="a documents fact takes no key= or score="):
        FactSpec("retrieved", "kb", kind="documents", **bad)  # type: ignore[arg-type]


def test_two_different_retrievals_under_one_fact_conflict(otel: Harness) -> None:
    """Facts are write-once per request: a second, different retrieval from the same data
    source makes the citation checks fail closed (fact_conflict), never pick one."""
    otel.install(config())

    def twice() -> None:
        genai_retrieval(otel, DOCS)
        genai_retrieval(otel, [{"id": "other-1", "score": 0.2}])

    claim = ask(otel, twice, "ok [policy-7]")
    assert claim is not None
    assert claim.code == "fact_conflict"


def test_the_attribute_names_are_the_conventions_own() -> None:
    """The names the reader uses are those of the real semconv packages (GenAI incubating
    attributes, OpenInference trace attributes), not spellings of our own."""
    from openinference.semconv.trace import (
        DocumentAttributes,
        OpenInferenceSpanKindValues,
        SpanAttributes,
    )
    from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as genai

    from groundplane_otel.otel import semconv as sc

    assert sc.GEN_AI_DATA_SOURCE_ID == genai.GEN_AI_DATA_SOURCE_ID
    assert sc.GEN_AI_RETRIEVAL_DOCUMENTS == genai.GEN_AI_RETRIEVAL_DOCUMENTS
    assert sc.GEN_AI_RETRIEVAL_QUERY_TEXT == genai.GEN_AI_RETRIEVAL_QUERY_TEXT
    assert genai.GenAiOperationNameValues.RETRIEVAL.value == sc.OP_RETRIEVAL
    assert OpenInferenceSpanKindValues.RETRIEVER.value == sc.OI_KIND_RETRIEVER
    assert f"{SpanAttributes.RETRIEVAL_DOCUMENTS}." == sc.OI_RETRIEVAL_DOCUMENTS_PREFIX
    for field in ("DOCUMENT_ID", "DOCUMENT_CONTENT", "DOCUMENT_SCORE"):
        assert getattr(DocumentAttributes, field).startswith("document.")
