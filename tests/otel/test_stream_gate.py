"""The stream gate on str deltas, with the real SDK: JSON answers held whole, whole-answer
checks at the end before the last unit, explicit boundaries, bad arguments, bounded holding,
and a check cost linear in the answer."""

from __future__ import annotations

import json
from typing import Any

import pytest
from otel_harness import Harness

import groundplane_otel as gp
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.otel import BoundarySpec, FactSpec, GuardConfig, MatchSpec, guard_stream
from groundplane_otel.otel import trace_registry as registry_of
from groundplane_otel.otel._engine.accounting import Accounting
from groundplane_otel.otel._engine.evaluate import UnitRunner
from groundplane_otel.otel._stream.units import HARD_FACTOR

ROWS = [{"id": "A", "total": 10000, "rate": 3.9}, {"id": "B", "total": 250, "rate": 1.5}]
DOCS = [{"id": "policy-7", "content": "Orders ship within two business days."}]
# The facts ``read`` records in code, declared as a GuardConfig requires.
FACTS = (
    FactSpec("invoice", "invoice_query", kind="table", key="id"),
    FactSpec("kb", "kb_search", kind="documents"),
)


def text_boundary(
    *checks: Any, name: str = "prose", agent: str | None = "analyst", facts: tuple[str, ...] = ()
) -> BoundarySpec:
    facts = tuple(sorted({fact for check in checks for fact in check.facts} | set(facts)))
    match = MatchSpec(agent_name=agent) if agent else MatchSpec(span_name="never")
    return BoundarySpec(name, facts, checks, match=match, report_mode="first", answer="text")


def deltas(text: str, size: int = 3) -> list[str]:
    return [text[start : start + size] for start in range(0, len(text), size)]


def read(otel: Harness, pieces: list[str], **options: Any) -> tuple[str, BaseException | None]:
    """Read ``pieces`` through guard_stream inside the analyst's agent span (facts recorded
    in code): (the text the app received, the exception)."""
    received: list[str] = []
    error: BaseException | None = None
    with otel.agent():
        facts = registry_of()
        facts.record_table("invoice", ROWS, key="id")
        facts.record_documents("kb", DOCS)
        try:
            for delta in guard_stream(iter(pieces), **options):
                received.append(delta)
        except UnsupportedClaim as exc:
            error = exc
    return "".join(received), error


def outcomes(otel: Harness) -> list[str]:
    return [
        attributes["groundplane.outcome"]
        for attributes, value in otel.metrics().get("groundplane.outputs", [])
        for _ in range(int(value))
    ]


def test_a_json_answer_is_released_complete_and_checked(otel: Harness) -> None:
    """answer: json — nothing of the answer reaches the app until the whole object is
    checked: all of a right one, none of a wrong one."""
    spec = BoundarySpec(
        "summary",
        ("invoice",),
        (gp.numbers_recorded("invoice", "summary"),),
        match=MatchSpec(agent_name="analyst"),
        report_mode="first",
    )
    otel.install(GuardConfig(facts=FACTS, boundaries=(spec,)))
    right = json.dumps({"summary": "Invoice A totals 10,000. B totals 250."})
    wrong = json.dumps({"summary": "Invoice A totals 10,000. B totals 260."})
    assert read(otel, deltas(right)) == (right, None)
    text, error = read(otel, deltas(wrong))
    assert text == ""
    assert isinstance(error, UnsupportedClaim)
    assert outcomes(otel).count("passed") == 1
    assert outcomes(otel).count("blocked") == 1


def test_a_whole_answer_check_runs_before_the_last_unit_is_released(otel: Harness) -> None:
    """min_citations=1 with no citation: each sentence is clean on its own, the answer is not
    — the app gets every sentence but the last, then the refusal."""
    check = gp.citations_retrieved(text_fields=["*"], min_citations=1)
    otel.install(GuardConfig(facts=FACTS, boundaries=(text_boundary(check, facts=("kb",)),)))
    answer = "Orders ship fast. Refunds are quick. Ask us anything."
    text, error = read(otel, deltas(answer))
    assert text == "Orders ship fast. Refunds are quick."
    assert isinstance(error, UnsupportedClaim)
    assert error.code == "no_citation"
    cited = "Orders ship fast [policy-7]. Ask us anything."
    assert read(otel, deltas(cited)) == (cited, None)
    assert sorted(outcomes(otel)) == ["blocked", "passed"]


def test_a_custom_check_holds_the_whole_answer(otel: Harness) -> None:
    """A custom check may read the answer as a whole: nothing is released before the end."""

    def no_shouting(registry: Any, output: Any) -> None:
        if "!" in output:
            raise UnsupportedClaim("*", "!", None, reason="shouting", code="shouting")

    check = gp.NamedCheck("no_shouting", no_shouting)
    boundary = text_boundary(check, facts=("kb",))  # a boundary names the facts it may read
    otel.install(GuardConfig(facts=FACTS, boundaries=(boundary,)))
    text, error = read(otel, deltas("Fine. Fine. Not fine!"))
    assert text == ""
    assert isinstance(error, UnsupportedClaim)


def test_an_explicit_boundary_guards_a_stream_no_rule_matches(otel: Harness) -> None:
    """boundary= names the boundary: guarded although its match rules select nothing."""
    spec = text_boundary(gp.numbers_recorded("invoice"), agent=None)
    otel.install(GuardConfig(facts=FACTS, boundaries=(spec,)))
    wrong = "Invoice A totals 10,000. It grew 12% last week."
    assert read(otel, deltas(wrong)) == (wrong, None)  # not matched: flows, nothing counted
    assert outcomes(otel) == []
    text, error = read(otel, deltas(wrong), boundary="prose")
    assert text == "Invoice A totals 10,000."
    assert isinstance(error, UnsupportedClaim)
    assert outcomes(otel) == ["blocked"]


def test_bad_arguments_are_named(otel: Harness) -> None:
    """An unknown boundary, a bad bound, no span to count on: each a clear error."""
    otel.install(
        GuardConfig(facts=FACTS, boundaries=(text_boundary(gp.numbers_recorded("invoice")),))
    )
    with otel.tracer.start_as_current_span("work"), pytest.raises(ValueError) as caught:
        guard_stream(iter([]), boundary="nope")
    assert str(caught.value) == "unknown boundary 'nope' (configured: prose)"
    with pytest.raises(ValueError, match=r"^bound must be an int >= 16 \(characters\), got 0$"):
        guard_stream(iter([]), bound=0)
    with pytest.raises(RuntimeError, match=r"^guard_stream\(\) needs a recording span"):
        guard_stream(iter([]), boundary="prose")


def test_guard_stream_needs_an_installed_guard() -> None:
    """No guard installed: a RuntimeError saying how to install one."""
    with pytest.raises(RuntimeError, match="^groundplane_otel is not installed"):
        guard_stream(iter([]))


def test_a_long_answer_with_no_sentence_end_is_released_in_bounded_units(otel: Harness) -> None:
    """No sentence or line end at all: the text held never exceeds the hard bound plus one
    chunk, and the whole answer arrives."""
    otel.install(
        GuardConfig(facts=FACTS, boundaries=(text_boundary(gp.numbers_recorded("invoice")),))
    )
    answer = "and the invoice total was 10,000 for the year as planned " * 80
    with otel.agent():
        registry_of().record_table("invoice", ROWS, key="id")
        guarded = guard_stream(iter(deltas(answer, 5)), bound=64)
        assert guarded.gate is not None
        guarded.gate.record_holding = True
        text = "".join(guarded)
    assert text == answer
    held = guarded.gate.held_chars
    assert max(held) <= HARD_FACTOR * 64 + 5
    drops = sum(1 for before, after in zip(held, held[1:], strict=False) if after < before)
    assert drops > 10  # released along the way, not at the end
    assert outcomes(otel) == ["passed"]


def test_checking_a_streamed_answer_reads_it_at_most_twice(
    otel: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """4,400 one-token chunks: the units checked add up to the answer once — nothing is
    re-scanned, and no whole-answer check re-reads it (none is configured)."""
    otel.install(
        GuardConfig(facts=FACTS, boundaries=(text_boundary(gp.numbers_recorded("invoice")),))
    )
    checked: list[int] = []
    unit, rest = UnitRunner.__call__, Accounting.stream_rest

    def counted_unit(self: UnitRunner, text: str) -> Any:
        checked.append(len(text))
        return unit(self, text)

    def counted_rest(self: Accounting, span: Any, spec: Any, text: str) -> Any:
        run = rest(self, span, spec, text)
        assert run[1] == ()  # every check already ran on every unit
        return run

    monkeypatch.setattr(UnitRunner, "__call__", counted_unit)
    monkeypatch.setattr(Accounting, "stream_rest", counted_rest)
    sentence = "Invoice A totals 10,000 and invoice B totals 250 this year."
    answer = " ".join([sentence] * 400)
    tokens = answer.split(" ")
    pieces = [tokens[0]] + [" " + token for token in tokens[1:]]
    assert len(pieces) == 4400
    text, error = read(otel, pieces)
    assert (text, error) == (answer, None)
    assert sum(checked) == len(answer)


def test_a_stream_s_prepared_checks_judge_each_unit_as_the_span_path_does(otel: Harness) -> None:
    """The checks a gate prepares once per stream (``UnitRunner``: facts read once, the
    evidence index kept) give every unit the run ``run_all`` gives it: clean, unrecorded,
    a rank claim, a fact the view lacks."""
    checks = (
        gp.numbers_recorded("invoice", percent_as_ratio=True),
        gp.numbers_recorded("missing"),
    )
    declared = (*FACTS, FactSpec("missing", "never_called", kind="table", key="id"))
    boundary = text_boundary(*checks, agent=None)
    guard = otel.install(GuardConfig(facts=declared, boundaries=(boundary,)))
    accounting = guard.processor.engine.accounting
    spec = guard.config.boundaries[0]
    units = [
        "Invoice A totals 10,000 dollars.",
        "Its rate was 4.7% last month.",
        "Nothing numeric here.",
        "It fell 3.9% and rose 10000 later.\n",
        "",
    ]
    with otel.agent() as span:
        registry_of().record_table("invoice", ROWS, key="id")
        view = accounting.stream_view(span, spec)
        runner = accounting.stream_runner(view, spec)
        for unit in units:
            expected = accounting.stream_unit(view, spec, unit)
            got = runner(unit)
            assert list(got[0]) == list(expected[0])
            assert [(f.reason, f.claim.code, str(f.claim)) for f in got[1]] == [
                (f.reason, f.claim.code, str(f.claim)) for f in expected[1]
            ]
            assert list(got[2]) == list(expected[2])
        assert [verdict for _, verdict in runner(units[1])[0]] == ["unsupported", "error"]
