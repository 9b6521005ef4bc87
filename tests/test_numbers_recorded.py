"""numbers_recorded: every number in a prose field must be a number the facts record, exactly;
each unrecorded one is a receipt (text, span, nearest recorded value and where it lives)."""

from __future__ import annotations

import decimal
import json
from typing import Any

import pytest

import groundplane_otel as gp
from groundplane_otel.checks.numbers_recorded import (
    NumberReceipt,
    UnrecordedNumbers,
    check_numbers_recorded,
    numbers_recorded,
)
from groundplane_otel.errors import UnregisteredFact, UnsupportedClaim


def invoices() -> gp.FactRegistry:
    registry = gp.FactRegistry()
    registry.record_table(
        "invoice",
        [
            {"id": "A", "total": 10000, "rate": 3.9, "days": 30, "change": -3.2},
            {"id": "B", "total": 1234567, "rate": 4.55, "days": 45, "change": 0.5},
        ],
        key="id",
        tool="erp.invoices",
        args={"year": 2026},
    )
    return registry


def fails(registry: gp.FactRegistry, text: str, **options: Any) -> UnrecordedNumbers:
    """The claim a text raises (it must raise one)."""
    options.setdefault("fact", "invoice")
    with pytest.raises(UnrecordedNumbers) as raised:
        check_numbers_recorded(registry, {"summary": text}, field="summary", **options)
    return raised.value


def passes(registry: gp.FactRegistry, text: str, **options: Any) -> None:
    options.setdefault("fact", "invoice")
    check_numbers_recorded(registry, {"summary": text}, field="summary", **options)


def codes(claim: UnrecordedNumbers) -> list[tuple[str, str]]:
    return [(receipt.text, receipt.code) for receipt in claim.receipts]


def test_every_recorded_number_passes() -> None:
    """Cells of every column, in their written forms, and the tool's arguments pass."""
    passes(invoices(), "In 2026 invoice A totals $10,000 at 3.90% over 30 days; B 1,234,567.")


class TestAdversarial:
    def test_ten_thousand_said_as_one_thousand(self) -> None:
        """1,000 where 10,000 is recorded fails: same digits, another power of ten."""
        claim = fails(invoices(), "The invoice total is 1,000 dollars, due in 30 days.")
        (receipt,) = claim.receipts
        assert (receipt.text, receipt.span, receipt.code) == (
            "1,000",
            (21, 26),
            "number_scale_mismatch",
        )
        assert (receipt.nearest, receipt.fact, receipt.row, receipt.column) == (
            10000,
            "invoice",
            "A",
            "total",
        )

    def test_a_rate_from_the_question_is_an_echo_not_support(self) -> None:
        """4.75% asked in the question, 3.90% recorded: an echo, nearest 3.9; 45 days: 30."""
        registry = gp.FactRegistry()
        registry.record("policy", {"rate": 3.9, "term_days": 30}, tool="docs.read")
        registry.record("question", "Is the rate 4.75%, and what is the payment term?")
        answer = "The invoice total is 4.75% payable within 45 days."
        claim = fails(registry, answer, fact="policy", question_fact="question")
        assert [(r.text, r.span, r.code, r.echo, r.nearest, r.column) for r in claim.receipts] == [
            ("4.75%", (21, 26), "number_echo_only", True, 3.9, "rate"),
            ("45", (42, 44), "number_unrecorded", False, 30, "term_days"),
        ]
        assert claim.code == "number_echo_only"

    def test_without_the_question_the_same_rate_is_just_unrecorded(self) -> None:
        """4.75% with no question declared is ``number_unrecorded``, nearest 4.55."""
        (receipt,) = fails(invoices(), "The rate is 4.75%.").receipts
        assert (receipt.code, receipt.echo, receipt.nearest) == ("number_unrecorded", False, 4.55)

    def test_a_recorded_number_in_the_question_is_still_supported(self) -> None:
        """An echo that a fact also records passes: the fact is the support."""
        registry = invoices()
        registry.record("question", "Is the rate 3.90%?")
        passes(registry, "Yes, the rate is 3.90%.", question_fact="question")

    def test_nine_in_words_is_the_recorded_nine(self) -> None:
        """ "nine" passes against a recorded 9 and fails against 8, nearest 8."""
        registry = gp.FactRegistry()
        registry.record_ranking("regions", {"north": 9, "south": 8})
        check_numbers_recorded(registry, {"s": "North closed nine deals."}, "regions", "s")
        other = gp.FactRegistry()
        other.record_ranking("regions", {"north": 8})
        with pytest.raises(UnrecordedNumbers) as raised:
            check_numbers_recorded(other, {"s": "North closed nine deals."}, "regions", "s")
        (receipt,) = raised.value.receipts
        assert (receipt.text, receipt.nearest, receipt.row, receipt.column) == (
            "nine",
            8,
            "north",
            "score",
        )

    def test_one_point_two_million_is_a_rounding_only_when_declared(self) -> None:
        """1.2M of a recorded 1,234,567 fails by default and passes with rounding declared."""
        (receipt,) = fails(invoices(), "B totals 1.2M.").receipts
        assert (receipt.code, receipt.nearest) == ("number_rounding_undeclared", 1234567)
        passes(invoices(), "B totals 1.2M.", rounding="half_even")
        passes(invoices(), "B totals 1.2M.", rounding="half_up")
        assert codes(fails(invoices(), "B totals 1.3M.", rounding="half_even")) == [
            ("1.3M", "number_unrecorded")
        ]

    def test_a_dropped_negative_sign_fails(self) -> None:
        """-3.2 recorded, "3.2" said: the negation is recorded, so the sign was dropped."""
        (receipt,) = fails(invoices(), "A changed by 3.2.").receipts
        assert (receipt.code, receipt.nearest, receipt.column) == (
            "number_sign_flipped",
            -3.2,
            "change",
        )
        passes(invoices(), "A changed by -3.2 (\u22123.2).")

    def test_a_percent_that_was_a_percentage_point_difference_fails(self) -> None:
        """Rates 3.9 and 4.75 recorded: "up 0.85%" (the pp difference) and "up 21.8%" both fail."""
        registry = gp.FactRegistry()
        registry.record("rates", {"2025": 3.9, "2026": 4.75})
        claim = fails(registry, "The rate rose 0.85% (21.8%) to 4.75%.", fact="rates")
        assert codes(claim) == [("0.85%", "number_unrecorded"), ("21.8%", "number_unrecorded")]

    def test_a_pp_difference_stays_unrecorded_under_percent_as_ratio(self) -> None:
        """Ratios 0.039 and 0.0475 recorded: "up 0.85%" is not a ratio either (0.0085)."""
        registry = gp.FactRegistry()
        registry.record("rates", {"2025": 0.039, "2026": 0.0475})
        passes(registry, "The rate rose to 4.75%.", fact="rates", percent_as_ratio=True)
        claim = fails(registry, "The rate rose 0.85%.", fact="rates", percent_as_ratio=True)
        assert codes(claim) == [("0.85%", "number_unrecorded")]


class TestDeclaredOptions:
    def test_percent_as_ratio_is_never_implied(self) -> None:
        """4.55% of a recorded 0.0455 fails unless ``percent_as_ratio=True``."""
        registry = gp.FactRegistry()
        registry.record("ctr", {"harbour": 0.0455})
        (receipt,) = fails(registry, "CTR 4.55%.", fact="ctr").receipts
        assert (receipt.code, receipt.nearest, receipt.column) == (
            "number_ratio_undeclared",
            0.0455,
            "harbour",
        )
        passes(registry, "CTR 4.55%.", fact="ctr", percent_as_ratio=True)

    def test_percent_as_ratio_keeps_the_percent_reading(self) -> None:
        """With ``percent_as_ratio`` a percent may still equal the recorded percent value."""
        passes(invoices(), "rate 4.55%", percent_as_ratio=True)

    def test_half_even_and_half_up_differ_on_a_tie(self) -> None:
        """4.45 rounds to 4.4 half-even and 4.5 half-up (away from zero), at the 0.1 written."""
        registry = gp.FactRegistry()
        registry.record("rate", 4.45)
        passes(registry, "4.4%", fact="rate", rounding="half_even")
        fails(registry, "4.5%", fact="rate", rounding="half_even")
        passes(registry, "4.5%", fact="rate", rounding="half_up")
        fails(registry, "4.4%", fact="rate", rounding="half_up")

    def test_rounding_to_the_units_written(self) -> None:
        """ "1,234" may round 1,234.4 but "1,230" is exact to the unit, not to the ten."""
        registry = gp.FactRegistry()
        registry.record("x", 1234.4)
        passes(registry, "about 1,234", fact="x", rounding="half_even")
        fails(registry, "about 1,230", fact="x", rounding="half_even")

    def test_rounding_with_a_ratio(self) -> None:
        """4.6% may round a recorded ratio 0.0455 when both options are declared."""
        registry = gp.FactRegistry()
        registry.record("ctr", 0.0455)
        passes(registry, "4.6%", fact="ctr", rounding="half_even", percent_as_ratio=True)
        fails(registry, "4.6%", fact="ctr", rounding="half_even")

    def test_years_skip(self) -> None:
        """An unrecorded year fails by default and is skipped with ``years="skip"``."""
        assert codes(fails(invoices(), "In 2025 A was 10,000.")) == [("2025", "number_unrecorded")]
        passes(invoices(), "In 2025 A was 10,000.", years="skip")


class TestExactness:
    def test_a_float_reads_as_its_shortest_repr(self) -> None:
        """0.1 + 0.2 reads 0.30000000000000004; "0.3" is not it, and 0.1 is exactly "0.1"."""
        registry = gp.FactRegistry()
        registry.record("v", {"a": 0.1 + 0.2, "b": 0.1})
        passes(registry, "a is 0.30000000000000004, b is 0.1 or 0.10", fact="v")
        fails(registry, "a is 0.3", fact="v")
        fails(registry, "b is 0.1000000000000000055511151231257827", fact="v")

    def test_large_integers_compare_exactly(self) -> None:
        """10**18 + 1 recorded passes as written and fails one off; a big float reads by repr."""
        registry = gp.FactRegistry()
        registry.record("v", {"big": 10**18 + 1, "huge": float(2**70)})
        passes(registry, "1,000,000,000,000,000,001 and 1.1805916207174113e21", fact="v")
        fails(registry, "1,000,000,000,000,000,002", fact="v")
        fails(registry, f"{2**70:,}", fact="v")

    def test_the_thread_decimal_context_changes_nothing(self) -> None:
        """A 3-digit, trapping decimal context does not round or break the comparison."""
        registry = gp.FactRegistry()
        registry.record("v", 1234567.891)
        with decimal.localcontext() as context:
            context.prec = 3
            context.traps[decimal.Inexact] = True
            passes(registry, "1,234,567.891", fact="v", rounding="half_even")
            fails(registry, "1,234,567.89", fact="v")

    def test_bools_and_numeric_strings_are_not_recorded_numbers(self) -> None:
        """A recorded True is not 1 and a recorded "10,000" string is not 10,000."""
        registry = gp.FactRegistry()
        registry.record("v", {"flag": True, "label": "10,000"})
        assert codes(fails(registry, "1 and 10,000", fact="v")) == [
            ("1", "number_unrecorded"),
            ("10,000", "number_unrecorded"),
        ]

    def test_trailing_zeros_are_the_same_number(self) -> None:
        """ "3.90" and "3.9" are both the recorded 3.9; "10,000.00" is 10000."""
        passes(invoices(), "3.90, 3.9, 10,000.00")


class TestRules:
    def test_dates_times_ordinals_markers_identifiers_are_not_checked(self) -> None:
        """None of these is recorded, and none is read as a number: the text passes."""
        text = (
            "1. Q3 review (v2.1, gpt-4o, SKU-1234, #7) on 2026-11-30 at 10:45, Nov 30, 2026, "
            "30/11/2026 [2]: the 2nd and third invoice; one of them is A at 10,000."
        )
        passes(invoices(), text)

    @pytest.mark.parametrize(
        "context",
        [
            "On 2026-11-30",
            "On Nov 30, 2026,",
            "On 30/11/2026",
            "At 10:45",
            "In Q3",
            "For SKU-1234",
            "In v2.1",
            "With gpt-4o",
            "The 2nd invoice",
            "The third invoice",
            "1.",
            "(a)",
            "See [2]:",
        ],
    )
    def test_a_rule_never_swallows_the_wrong_number_next_to_it(self, context: str) -> None:
        """Whatever the rule skips, the wrong amount beside it is still read and refused."""
        claim = fails(invoices(), f"{context} the total was 1,000 dollars.")
        assert [(r.text, r.code) for r in claim.receipts] == [("1,000", "number_scale_mismatch")]

    def test_the_facts_it_may_draw_on_include_every_kind(self) -> None:
        """Table cells, Ranking scores and numeric names, nested values, tool arguments."""
        registry = gp.FactRegistry()
        registry.record_ranking("ids", {101: 0.5}, tool="t", args={"limit": 25})
        registry.record("nested", {"a": [{"b": 7}]})
        check_numbers_recorded(
            registry, {"s": "101 scored 0.5 in the top 25, with 7."}, ["ids", "nested"], "s"
        )
        with pytest.raises(UnrecordedNumbers):
            check_numbers_recorded(registry, {"s": "7 and 8"}, ["ids", "nested"], "s")

    def test_numbers_inside_container_cells_are_recorded(self) -> None:
        """A Table cell holding a mapping (any Mapping) or a list: its numbers count too."""
        from collections import OrderedDict

        registry = gp.FactRegistry()
        registry.record_table(
            "t", [{"id": "A", "m": OrderedDict(q1=7), "l": [8, "x"], "b": True}], key="id"
        )
        check_numbers_recorded(registry, {"s": "7 and 8"}, "t", "s")
        with pytest.raises(UnrecordedNumbers) as raised:
            check_numbers_recorded(registry, {"s": "1"}, "t", "s")  # True is not 1
        (receipt,) = raised.value.receipts
        assert (receipt.row, receipt.column) == ("A", "m.q1")

    def test_a_german_answer_in_the_de_locale(self) -> None:
        """ "3,5 Mio." is 3,500,000 in German; the English reading would be two numbers."""
        registry = gp.FactRegistry()
        registry.record("v", {"kunden": 3500000, "quote": 4.5})
        passes(registry, "3,5 Mio. Kunden, Quote 4,5 %.", fact="v", locale="de")
        fails(registry, "3,5 Mio. Kunden", fact="v")


class TestFields:
    def test_dotted_path_and_key_list(self) -> None:
        """A dotted path walks mappings and list indices; a key list allows dots in keys."""
        output = {"report": {"parts": ["10,000"]}, "a.b": "30"}
        check_numbers_recorded(invoices(), output, "invoice", "report.parts.0")
        check_numbers_recorded(invoices(), output, "invoice", ["a.b"])

    def test_a_missing_field_is_field_missing(self) -> None:
        """An absent field fails with the shared ``field_missing`` claim."""
        with pytest.raises(UnsupportedClaim) as raised:
            check_numbers_recorded(invoices(), {}, "invoice", "summary")
        assert (raised.value.code, raised.value.field) == ("field_missing", "summary")

    def test_a_field_that_is_not_text_is_not_text(self) -> None:
        """A number where prose was declared is ``not_text`` (no silent pass)."""
        with pytest.raises(UnsupportedClaim) as raised:
            check_numbers_recorded(invoices(), {"summary": 10000}, "invoice", "summary")
        assert (raised.value.code, raised.value.claimed) == ("not_text", 10000)

    def test_the_whole_answer_text(self) -> None:
        """``field=None`` scans a str answer, or every string of a mapping, under field "*"."""
        check_numbers_recorded(invoices(), "A is 10,000.", "invoice")
        with pytest.raises(UnrecordedNumbers) as raised:
            check_numbers_recorded(invoices(), {"x": "A", "y": ["is 1,000"]}, "invoice")
        assert raised.value.field == "*"
        assert [(r.field, r.span) for r in raised.value.receipts] == [("y.0", (3, 8))]


class TestClaim:
    def test_the_message_lists_every_receipt_with_provenance(self) -> None:
        """One line per unrecorded number, then the provenance of the nearest one's fact."""
        claim = fails(invoices(), "Totals 1,000 and 44 days.")
        assert str(claim) == (
            "unsupported claim in field 'summary': 2 numbers are not recorded | "
            "'1,000' at 7..12 of 'summary': the same digits are recorded at another power of "
            "ten; nearest recorded 10000 (fact 'invoice', row 'A', column 'total'); "
            "'44' at 17..19 of 'summary': no fact records it; nearest recorded 45 "
            "(fact 'invoice', row 'B', column 'days') | provenance=erp.invoices(year=2026)"
        )

    def test_to_dict_carries_the_receipts_as_strict_json(self) -> None:
        """claimed = the receipts, supported = the nearest values; strict JSON encodes both."""
        claim = fails(invoices(), "Totals 1,000.")
        payload = claim.to_dict()
        assert set(payload) == {"field", "claimed", "supported", "fact", "provenance", "reason"}
        assert payload["claimed"] == [
            {
                "text": "1,000",
                "span": [7, 12],
                "field": "summary",
                "value": "1000",
                "code": "number_scale_mismatch",
                "nearest": 10000,
                "fact": "invoice",
                "row": "A",
                "column": "total",
                "echo": False,
            }
        ]
        assert payload["supported"] == [10000]
        json.dumps(payload, allow_nan=False)

    def test_nothing_recorded_at_all(self) -> None:
        """With no number in the facts the receipt says so and names no nearest value."""
        registry = gp.FactRegistry()
        registry.record_domain("names", ["north"])
        with pytest.raises(UnrecordedNumbers) as raised:
            check_numbers_recorded(registry, {"s": "north sold 5"}, "names", "s")
        (receipt,) = raised.value.receipts
        assert (receipt.nearest, receipt.fact) == (None, None)
        assert "no number is recorded at all" in str(raised.value)
        assert isinstance(receipt, NumberReceipt)

    def test_long_row_keys_are_capped_in_the_message(self) -> None:
        """An echoed row key is capped at 200 characters plus an ellipsis."""
        registry = gp.FactRegistry()
        registry.record_table("t", [{"k": "x" * 500, "v": 10}], key="k")
        with pytest.raises(UnrecordedNumbers) as raised:
            check_numbers_recorded(registry, {"s": "11"}, "t", "s")
        assert "'" + "x" * 199 + "…" in str(raised.value)
        assert "x" * 200 not in str(raised.value)

    def test_many_receipts_are_listed_up_to_twenty(self) -> None:
        """25 unrecorded numbers: all 25 in ``receipts``, 20 in the message and ``claimed``."""
        text = " ".join(str(100 + i) for i in range(25))
        claim = fails(invoices(), text)
        assert len(claim.receipts) == 25
        assert (len(claim.claimed), len(claim.supported)) == (20, 20)
        assert str(claim).count("' at ") == 20
        assert "; … (+5 more)" in str(claim)

    def test_a_runaway_numeral_is_capped_everywhere(self) -> None:
        """A 5,000-digit numeral is one receipt whose text is capped in message and dict."""
        claim = fails(invoices(), "9" * 5000)
        (receipt,) = claim.receipts
        assert len(receipt.text) == 5000
        assert claim.claimed[0]["text"] == "9" * 200 + "…"
        assert len(str(claim)) < 1000

    def test_a_repeated_number_gets_the_same_receipt(self) -> None:
        """The same wrong number twice: two receipts (two spans), one diagnosis."""
        claim = fails(invoices(), "1,000 and again 1,000")
        assert [(r.span, r.code, r.nearest) for r in claim.receipts] == [
            ((0, 5), "number_scale_mismatch", 10000),
            ((16, 21), "number_scale_mismatch", 10000),
        ]


class TestBuilder:
    def test_name_family_and_facts(self) -> None:
        """The name reads like the other builders'; the question fact is a needed fact."""
        check = numbers_recorded(["a", "b"], "summary", question_fact="q")
        assert check.name == "numbers_recorded(fact=['a', 'b'], field='summary')"
        assert (check.family, check.facts) == ("numbers_recorded", ("a", "b", "q"))
        assert numbers_recorded("a").name == "numbers_recorded(fact='a', field='*')"

    @pytest.mark.parametrize(
        ("arguments", "error", "message"),
        [
            ({"fact": ""}, TypeError, "numbers_recorded: fact must be a non-empty string, got ''"),
            (
                {"fact": []},
                TypeError,
                "numbers_recorded: fact must be a fact name or a non-empty list of them, got []",
            ),
            (
                {"fact": ["a", "a"]},
                ValueError,
                "numbers_recorded: fact lists a name twice: ['a', 'a']",
            ),
            (
                {"fact": "a", "field": "a..b"},
                ValueError,
                "numbers_recorded: field must be a dotted path like 'report.summary', got 'a..b'",
            ),
            (
                {"fact": "a", "field": 3},
                TypeError,
                "numbers_recorded: field must be None (the whole answer), a dotted path or a "
                "non-empty list of keys, got 3",
            ),
            (
                {"fact": "a", "locale": "de_DE"},
                ValueError,
                "numbers_recorded: locale must be one of ['ch', 'de', 'en', 'fr'], got 'de_DE'",
            ),
            (
                {"fact": "a", "locale": ["en"]},
                ValueError,
                "numbers_recorded: locale must be one of ['ch', 'de', 'en', 'fr'], got ['en']",
            ),
            (
                {"fact": "a", "percent_as_ratio": 1},
                TypeError,
                "numbers_recorded: percent_as_ratio must be True or False, got 1",
            ),
            (
                {"fact": "a", "rounding": "up"},
                ValueError,
                'numbers_recorded: rounding must be None, "half_even" or "half_up", got \'up\'',
            ),
            (
                {"fact": "a", "question_fact": "a"},
                ValueError,
                "numbers_recorded: question_fact 'a' is also listed in fact; the question is "
                "not a source",
            ),
            (
                {"fact": "a", "years": "no"},
                ValueError,
                'numbers_recorded: years must be "check" or "skip", got \'no\'',
            ),
        ],
    )
    def test_arguments_are_validated_when_built(
        self, arguments: dict[str, Any], error: type[Exception], message: str
    ) -> None:
        """Each bad argument is refused at build time, naming the parameter and the value."""
        with pytest.raises(error) as raised:
            numbers_recorded(**arguments)
        assert str(raised.value) == message

    def test_question_fact_must_be_registered_and_text(self) -> None:
        """A missing question fact is UnregisteredFact; a non-str one a TypeError."""
        with pytest.raises(UnregisteredFact):
            passes(invoices(), "10,000", question_fact="q")
        registry = invoices()
        registry.record("q", 5)
        with pytest.raises(TypeError) as raised:
            passes(registry, "10,000", question_fact="q")
        assert str(raised.value) == (
            "numbers_recorded: question_fact 'q' must hold the question text (a str), got a int"
        )

    def test_in_a_boundary_with_report_mode_all(self) -> None:
        """The check runs in a boundary like any other; the report lists its violation."""
        registry = invoices()
        guard = gp.boundary(
            registry, facts=["invoice"], checks=[numbers_recorded("invoice", "s")], mode="all"
        )
        with guard as entered:
            report = entered.report({"s": "A totals 1,000."})
        assert report.failed == ("numbers_recorded(fact='invoice', field='s')",)
        assert report.violations[0].code == "number_scale_mismatch"
