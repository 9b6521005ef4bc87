"""Whole text answers: every prose family reads a plain ``str`` output when its field arguments
say "the whole answer", and every structured family refuses one with a clear TypeError."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import groundplane_otel as gp
from groundplane_otel import FactRegistry, NamedCheck, UnsupportedClaim

PROFILE = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
CONTENT = "Orders ship within two business days. Refunds take 30 days."


def registry() -> FactRegistry:
    """An invoice table, a restricted cost table, listings with a catalogue, retrieved docs."""
    reg = FactRegistry()
    reg.record_table("invoice", [{"id": "A", "total": 10000, "rate": 3.9}], key="id")
    reg.record_table(
        "wholesale", [{"sku": "Project Falcon", "cost": 1234.5}], key="sku", restricted=True
    )
    reg.record_domain("listings", ["North Harbour Loft", "Delta House"])
    reg.record_domain("catalogue", ["North Harbour Loft", "Delta House", "Bay Flat"])
    reg.record_documents("kb", [{"id": "policy-7", "content": CONTENT}, {"id": "faq-2"}])
    return reg


def verdict(check: Callable[[FactRegistry, Any], None], output: Any) -> str | None:
    """None when the check passes, else the claim's reason code."""
    try:
        check(registry(), output)
    except UnsupportedClaim as claim:
        return claim.code
    return None


# The five prose families, configured to read the whole answer: (builder, its check_* twin).
WHOLE: dict[str, tuple[NamedCheck, Callable[[FactRegistry, Any], None]]] = {
    "numbers_recorded": (
        gp.numbers_recorded("invoice"),
        lambda reg, out: gp.check_numbers_recorded(reg, out, "invoice"),
    ),
    "no_restricted_values": (
        gp.no_restricted_values(),
        gp.check_no_restricted_values,
    ),
    "entities_in_scope": (
        gp.entities_in_scope(text_fields=["*"], vocabulary="catalogue", approved=["listings"]),
        lambda reg, out: gp.check_entities_in_scope(
            reg, out, text_fields=["*"], vocabulary="catalogue", approved=["listings"]
        ),
    ),
    "citations_retrieved": (
        gp.citations_retrieved(text_fields=["*"], min_citations=1),
        lambda reg, out: gp.check_citations_retrieved(reg, out, text_fields=["*"], min_citations=1),
    ),
    "quotes_anchored": (
        gp.quotes_anchored(text_fields=["*"]),
        lambda reg, out: gp.check_quotes_anchored(reg, out, text_fields=["*"]),
    ),
}

CASES = [
    ("numbers_recorded", "Invoice A totals 10,000 at 3.9%.", None),
    ("numbers_recorded", "Invoice A totals 1,000 at 3.9%.", "number_scale_mismatch"),
    ("no_restricted_values", "The Widget ships today.", None),
    ("no_restricted_values", "Internally it costs us 1,234.50.", "restricted_value"),
    ("no_restricted_values", "Ask about project falcon.", "restricted_value"),
    ("entities_in_scope", "Try North Harbour Loft or Delta House.", None),
    ("entities_in_scope", "Try the Bay Flat.", "out_of_scope"),
    ("citations_retrieved", "Orders ship fast [policy-7].", None),
    ("citations_retrieved", "Orders ship fast [policy-8].", "citation_not_retrieved"),
    ("citations_retrieved", "Orders ship fast.", "no_citation"),
    ("quotes_anchored", 'Orders "ship within two business days" [policy-7].', None),
    ("quotes_anchored", 'Orders "ship within two days" [policy-7].', "quote_not_in_source"),
]


@pytest.mark.parametrize(("family", "text", "code"), CASES)
def test_each_prose_family_checks_a_whole_answer_text(
    family: str, text: str, code: str | None
) -> None:
    """The builder and the check_* twin give the same verdict on a str answer, and the same
    as on that text inside a mapping."""
    built, twin = WHOLE[family]
    assert built.text is True
    assert verdict(built, text) == code
    assert verdict(twin, text) == code
    assert verdict(built, {"answer": text}) == code


def test_a_whole_answer_finding_names_the_whole_answer() -> None:
    """A finding in a str answer is labelled ``*`` (``<output>`` for no_restricted_values,
    which never echoes a label the model chose) and keeps its character span."""
    for family, text, field in [
        ("numbers_recorded", "It totals 1,000.", "*"),
        ("entities_in_scope", "Try the Bay Flat.", "*"),
        ("citations_retrieved", "See [nope].", "*"),
        ("quotes_anchored", '"ship within a week" [policy-7]', "*"),
        ("no_restricted_values", "It costs 1234.5 each.", "<output>"),
    ]:
        with pytest.raises(UnsupportedClaim) as caught:
            WHOLE[family][0](registry(), text)
        assert caught.value.field == field, family
    with pytest.raises(UnsupportedClaim) as caught:
        gp.check_entities_in_scope(
            registry(), "Try the Bay Flat.", text_fields=["*"], vocabulary="catalogue",
            approved=["listings"],
        )  # fmt: skip
    assert "'Bay Flat' at characters 8-16" in caught.value.reason


def test_the_whole_answer_of_a_mapping_is_every_string_in_it() -> None:
    """text_fields=["*"] on a mapping reads every string, each labelled by its path."""
    output = {"answer": "Try Delta House.", "notes": ["fine", "or the Bay Flat"]}
    with pytest.raises(UnsupportedClaim) as caught:
        WHOLE["entities_in_scope"][0](registry(), output)
    assert caught.value.field == "notes.1"
    with pytest.raises(UnsupportedClaim) as caught:
        WHOLE["citations_retrieved"][0](registry(), {"a": "x [policy-7]", "b": {"c": "[zz]"}})
    assert caught.value.field == "b.c"


@pytest.mark.parametrize(
    ("check", "message"),
    [
        (
            gp.numbers_recorded("invoice", "summary"),
            "numbers_recorded(field='summary'): this check reads JSON fields; declare the "
            "boundary with answer: json (it was given the whole answer text, a str); or read "
            "the whole answer text with field=None",
        ),
        (
            gp.no_restricted_values(["answer"]),
            "no_restricted_values: this check reads JSON fields; declare the boundary with "
            "answer: json (it was given the whole answer text, a str); or read the whole "
            "answer text with fields=None",
        ),
        (
            gp.entities_in_scope(text_fields=["answer"], vocabulary="catalogue"),
            "entities_in_scope: this check reads JSON fields; declare the boundary with "
            "answer: json (it was given the whole answer text, a str); or read the whole "
            'answer text with text_fields=["*"]',
        ),
        (
            gp.entities_in_scope(["pick"], text_fields=["*"], vocabulary="catalogue"),
            "entities_in_scope: this check reads JSON fields",
        ),
        (gp.citations_retrieved(["sources"]), "citations_retrieved: this check reads JSON"),
        (gp.quotes_anchored("quotes"), "quotes_anchored: this check reads JSON fields"),
    ],
)
def test_a_named_field_of_a_text_answer_is_a_type_error(check: NamedCheck, message: str) -> None:
    """A prose family told to read a named field cannot read a str answer: TypeError saying
    how to read the whole answer instead (never a field_missing claim blamed on the model)."""
    assert check.text is False
    with pytest.raises(TypeError) as caught:
        check(registry(), "Invoice A totals 10,000 [policy-7].")
    assert str(caught.value).startswith(message)


STRUCTURED = [
    ("superlative", lambda: gp.superlative("invoice", "winner", column="total")),
    ("ranking_prefix", lambda: gp.ranking_prefix("invoice", "top", column="total")),
    ("aggregate_reconciles", lambda: gp.aggregate_reconciles("invoice", "sum", "total")),
    ("entities_recorded", lambda: gp.entities_recorded(["winner"], "listings")),
    ("row_integrity", lambda: gp.row_integrity("invoice", "id")),
    ("comparison", lambda: gp.comparison("invoice", "a", "b", "d", column="total")),
    ("field_matches_fact", lambda: gp.field_matches_fact("winner", "invoice")),
]


@pytest.mark.parametrize(("family", "build"), STRUCTURED)
def test_a_structured_family_refuses_a_text_answer(
    family: str, build: Callable[[], NamedCheck]
) -> None:
    """Whatever the text says (even the field's name, which used to be read as a substring),
    a structured check given a str raises a TypeError naming the family."""
    check = build()
    assert check.text is False
    for text in ("the winner is A", "no fields here"):
        with pytest.raises(TypeError) as caught:
            check(registry(), text)
        assert str(caught.value) == (
            f"{family}: this check reads JSON fields; declare the boundary with answer: json "
            "(it was given the whole answer text, a str)"
        )


def test_a_structured_twin_refuses_a_text_answer() -> None:
    """The check_* twins go through the same refusal."""
    with pytest.raises(TypeError, match="^superlative: this check reads JSON fields"):
        gp.check_superlative(registry(), "A wins", "invoice", column="total")  # type: ignore[arg-type]


def test_the_whole_answer_is_listed_alone() -> None:
    """``*`` beside named fields is refused when the check is built (``*`` holds them all)."""
    with pytest.raises(ValueError, match=r'text_fields=\["\*"\] reads the whole answer'):
        gp.citations_retrieved(text_fields=["*", "answer"])


_WORDS = st.sampled_from(
    ["the", "invoice", "totals", "10,000", "3.9%", "1,000", "Delta House", "Bay Flat", "1234.5",
     "Project Falcon", "[policy-7]", "[faq-9]", '"ship within two business days"', '"ship"',
     "\n", "A", "and", "twenty", "2026-11-30"]
)  # fmt: skip


@PROFILE
@given(words=st.lists(_WORDS, max_size=12), family=st.sampled_from(sorted(WHOLE)))
def test_a_text_and_the_same_text_as_a_field_get_the_same_verdict(
    words: list[str], family: str
) -> None:
    """For any text, a whole-answer check gives the same verdict on the str and on a mapping
    holding it, through the builder and the twin."""
    text = " ".join(words)
    built, twin = WHOLE[family]
    expected = verdict(built, {"answer": text})
    assert verdict(built, text) == expected
    assert verdict(twin, text) == expected


@PROFILE
@given(
    before=st.lists(st.sampled_from(["We", "ship", "the", "Widget", "today", "9", "\n"])),
    after=st.lists(st.sampled_from(["soon", "and", "fast", "12", "[policy-7]"])),
    leak=st.sampled_from(["1234.5", "1,234.50", "$1,234.5", "1.2345k", "PROJECT FALCON"]),
)
def test_a_restricted_value_anywhere_in_a_text_answer_fails(
    before: list[str], after: list[str], leak: str
) -> None:
    """Public words around it change nothing: a restricted value in a str answer is refused;
    without it, the same words pass."""
    assert verdict(WHOLE["no_restricted_values"][0], " ".join([*before, *after])) is None
    text = " ".join([*before, leak, *after])
    assert verdict(WHOLE["no_restricted_values"][0], text) == "restricted_value"


@PROFILE
@given(
    recorded=st.lists(st.sampled_from(["10,000", "10000", "3.9", "3.9%", "ten thousand"])),
    wrong=st.integers(min_value=11, max_value=9999),
)
def test_recorded_numbers_pass_and_one_unrecorded_fails_in_a_text_answer(
    recorded: list[str], wrong: int
) -> None:
    """Any text of recorded numbers passes as a str answer; adding one unrecorded fails."""
    text = "Invoice: " + ", ".join(recorded)
    assert verdict(WHOLE["numbers_recorded"][0], text) is None
    assert verdict(WHOLE["numbers_recorded"][0], f"{text} and {wrong} more") is not None


@PROFILE
@given(
    names=st.lists(st.sampled_from(["North Harbour Loft", "Delta House", "delta house"])),
    ids=st.lists(st.sampled_from(["policy-7", "faq-2"]), min_size=1),
)
def test_approved_names_and_retrieved_ids_pass_and_others_fail_in_a_text_answer(
    names: list[str], ids: list[str]
) -> None:
    """Approved names and retrieved citations pass as a str answer; one more unapproved name
    or unretrieved id fails."""
    text = " ".join(names) + " " + " ".join(f"[{i}]" for i in ids)
    assert verdict(WHOLE["entities_in_scope"][0], text) is None
    assert verdict(WHOLE["citations_retrieved"][0], text) is None
    assert verdict(WHOLE["entities_in_scope"][0], text + " Bay Flat") == "out_of_scope"
    assert verdict(WHOLE["citations_retrieved"][0], text + " [kb-1]") == "citation_not_retrieved"


@PROFILE
@given(data=st.data())
def test_a_quoted_passage_of_the_source_passes_and_an_edited_one_fails(
    data: st.DataObject,
) -> None:
    """Any word-aligned passage of the document, quoted with its marker in a str answer, is
    anchored; the same passage with one word added is not."""
    words = CONTENT.split()
    start = data.draw(st.integers(0, len(words) - 1))
    end = data.draw(st.integers(start + 1, len(words)))
    passage = " ".join(words[start:end])
    check = WHOLE["quotes_anchored"][0]
    assert verdict(check, f'As the policy says, "{passage}" [policy-7].') is None
    assert verdict(check, f'"{passage} always" [policy-7]') == "quote_not_in_source"
