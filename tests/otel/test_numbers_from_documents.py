"""Under the guard (real SDK): a retrieval span's document text is evidence for numbers_recorded
when the boundary declares it, and the receipt on the guardrail event names the document."""

from __future__ import annotations

import json
from typing import Any

import pytest
from otel_harness import Harness, answer, guardrail_events

from groundplane_otel import numbers_recorded
from groundplane_otel.checks.numbers_recorded import UnrecordedNumbers
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec

DOCS = [
    {
        "id": "invoice.pdf#p1",
        "score": 0.93,
        "content": "...the total amount due is 10,000 dollars, payable within 30 days...",
    }
]


def config(documents: list[str] | None) -> GuardConfig:
    check = numbers_recorded("retrieved", "answer", documents=documents)
    return GuardConfig(
        facts=(FactSpec("retrieved", "kb", kind="documents"),),
        boundaries=(
            BoundarySpec(
                "rag",
                ("retrieved",),
                (check,),
                match=MatchSpec(agent_name="helper"),
                report_mode="first",
            ),
        ),
        capture_content=True,
    )


def ask(otel: Harness, text: str) -> None:
    """One request: a GenAI retrieval span, then a chat answering ``text``."""
    with otel.tracer.start_as_current_span("request"), otel.agent("helper"):
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "retrieval",
            "gen_ai.data_source.id": "kb",
            "gen_ai.retrieval.query.text": "invoice total",
            "gen_ai.retrieval.top_k": 5,
            "gen_ai.retrieval.documents": json.dumps(DOCS),
        }
        with otel.tracer.start_as_current_span("retrieval kb", attributes=attributes):
            pass
        otel.chat(answer({"answer": text}))


def test_a_number_the_retrieved_text_spells_passes(otel: Harness) -> None:
    """documents=["retrieved"]: "$10,000 … thirty days" is supported by the captured content."""
    otel.install(config(["retrieved"]))
    ask(otel, "The invoice total is $10,000, due within thirty days.")
    (chat,) = otel.spans("chat gpt-test")
    assert chat.attributes is not None
    assert chat.attributes["groundplane.outcome"] == "passed"


def test_without_the_declaration_the_same_answer_is_blocked(otel: Harness) -> None:
    """Off by default: the retrieval's text (and its top_k of 5) is not evidence."""
    otel.install(config(None))
    with pytest.raises(UnrecordedNumbers) as caught:
        ask(otel, "The invoice total is $10,000, from the top 5 results.")
    assert [r.code for r in caught.value.receipts] == ["number_unrecorded", "number_unrecorded"]


def test_the_event_receipt_names_the_document(otel: Harness) -> None:
    """A wrong number is blocked; with content capture on, the event's receipt carries the
    document id whose text holds the nearest number, and the retrieval span as provenance."""
    otel.install(config(["retrieved"]))
    with pytest.raises(UnrecordedNumbers):
        ask(otel, "The invoice total is 1,000 dollars.")
    (chat,) = otel.spans("chat gpt-test")
    (event,) = guardrail_events(chat)
    assert event.attributes["gen_ai.guardrail.result.reason"] == "number_scale_mismatch"
    (receipt,) = json.loads(str(event.attributes["groundplane.claimed"]))
    assert (receipt["nearest"], receipt["fact"], receipt["document"]) == (
        10000,
        "retrieved",
        "invoice.pdf#p1",
    )
    (retrieval,) = otel.spans("retrieval kb")
    assert retrieval.context is not None
    assert event.attributes["groundplane.fact.span_id"] == format(retrieval.context.span_id, "016x")
