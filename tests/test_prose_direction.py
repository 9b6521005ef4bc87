"""numbers_recorded reads the words around a number: direction words, declared units and
currencies, a percent before a scaled amount, number words before "percent" (issue 22)."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest

from groundplane_otel import FactRegistry
from groundplane_otel.checks._numbers.prose_scan import scan_numbers
from groundplane_otel.checks._numbers.recorded import RecordedNumbers
from groundplane_otel.checks.no_restricted_values import check_no_restricted_values
from groundplane_otel.checks.numbers_recorded import (
    UnrecordedNumbers,
    check_numbers_recorded,
    numbers_recorded,
)
from groundplane_otel.errors import UnsupportedClaim

ROWS = [
    {"region": "North", "revenue": 1230000, "change": -3.2, "tickets": 8400, "lost": 31},
    {"region": "South", "revenue": 950000, "change": 3.5, "tickets": 3000, "lost": 12},
]


def registry(rows: list[dict[str, Any]] | None = None) -> FactRegistry:
    found = FactRegistry()
    found.record_table("kpi", rows or ROWS, key="region", tool="bi.query", args={})
    return found


def refused(text: str, **options: Any) -> UnrecordedNumbers:
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(registry(), text, "kpi", **options)
    return caught.value


def passes(text: str, **options: Any) -> None:
    check_numbers_recorded(registry(), text, "kpi", **options)


class TestScaleLeak:
    def test_a_percent_before_a_scaled_amount_stays_a_percent(self) -> None:
        """'12.4% to $1.23M' reads 12.4 (a percent) and 1,230,000, never 12,400,000."""
        for text in ("rose 12.4% to $1.23M", "8% to $2.1 billion", "3% - 8K", "3%\u20138K"):
            first = scan_numbers(text).numerals[0]
            assert (first.percent, first.magnitude) == (True, 0), text
            assert first.value == scan_numbers(text.split("%")[0] + "%").numerals[-1].value

    def test_a_range_still_shares_its_suffix(self) -> None:
        """'10-12%' and '1-2 million' keep sharing the second end's suffix."""
        assert [n.percent for n in scan_numbers("10-12%").numerals] == [True, True]
        assert [str(n.value) for n in scan_numbers("1-2 million").numerals] == ["1E+6", "2E+6"]

    def test_a_right_percent_before_a_scaled_amount_passes(self) -> None:
        """'South rose 3.5% to $0.95M' passes (it was refused as 3,500,000 before)."""
        passes("South rose 3.5% to $0.95M.")

    def test_a_wrong_percent_that_the_misreading_made_recorded_fails(self) -> None:
        """'grew 3% to 8.4K' is refused although 3,000 (3% misread as 3K) is recorded."""
        claim = refused("North tickets grew 3% to 8.4K.")
        assert [(r.text, r.code) for r in claim.receipts] == [("3%", "number_scale_mismatch")]


class TestNumberWordPercent:
    def test_words_before_percent_are_a_percent(self) -> None:
        """'thirty-eight percent', 'one percent', 'one hundred per cent' are percents."""
        found = [
            (n.text, str(n.value), n.percent)
            for n in scan_numbers(
                "thirty-eight percent; one percent; one hundred per cent; fifty%"
            ).numerals
        ]
        assert found == [
            ("thirty-eight percent", "38", True),
            ("one percent", "1", True),
            ("one hundred per cent", "100", True),
            ("fifty%", "50", True),
        ]

    def test_fifty_percent_stands_for_a_ratio_when_declared(self) -> None:
        """'fifty percent' passes for a recorded 0.5 with percent_as_ratio, and only then."""
        found = FactRegistry()
        found.record("survey", {"share": 0.5}, tool="survey.read", args={})
        check_numbers_recorded(found, "Fifty percent agreed.", "survey", percent_as_ratio=True)
        with pytest.raises(UnrecordedNumbers) as caught:
            check_numbers_recorded(found, "Fifty percent agreed.", "survey")
        assert caught.value.code == "number_ratio_undeclared"

    def test_a_restricted_ratio_in_words_is_a_leak(self) -> None:
        """A restricted 0.38 written 'thirty-eight percent' is found (it passed before)."""
        found = FactRegistry()
        found.record("cost", {"m": 0.38}, tool="erp", args={}, restricted=True)
        with pytest.raises(UnsupportedClaim) as caught:
            check_no_restricted_values(found, {"answer": "We keep thirty-eight percent."})
        assert caught.value.code == "restricted_value"

    def test_a_quarter_and_half_are_not_read(self) -> None:
        """Fractions in words stay unread (a documented limit): 'a quarter', 'half'."""
        assert scan_numbers("a quarter of users, half of them").numerals == ()


class TestDirection:
    def test_fell_against_a_recorded_fall_passes(self) -> None:
        """'fell 3.2%', 'down 3.2%', 'a 3.2% drop', 'a decline of 3.2%' read -3.2."""
        for text in (
            "North fell 3.2%.",
            "North was down 3.2% QoQ.",
            "Revenue: $1.23M (down 3.2% QoQ).",
            "North posted a 3.2% drop.",
            "North saw a decline of 3.2%.",
            "North declined by about 3.2 percent.",
            "North revenue: \u20133.2% QoQ.",
        ):
            passes(text)

    def test_rose_against_a_recorded_fall_is_direction_false(self) -> None:
        """'rose 3.2%' against -3.2 is refused with the fact, its sign and the word."""
        claim = refused("North rose 3.2% on the quarter.")
        assert claim.code == "number_direction_false"
        assert str(claim) == (
            "unsupported claim in field '*': 1 number is not recorded | '3.2%' at 11..15: its "
            "direction word contradicts the sign of the recorded change; nearest recorded -3.2 "
            "(fact 'kpi', row 'North', column 'change'): 'rose' says a rise; the recorded "
            "change is -3.2, a fall | provenance=bi.query()"
        )
        assert claim.receipts[0].to_dict()["expected"] == (
            "'rose' says a rise; the recorded change is -3.2, a fall"
        )

    def test_fell_against_a_recorded_rise_in_a_change_column_fails(self) -> None:
        """'fell 3.5%' and 'a 3.5% decrease' against a recorded +3.5 change are refused."""
        for text in ("South fell 3.5%.", "South saw a 3.5% decrease."):
            claim = refused(text)
            assert claim.code == "number_direction_false"
            assert claim.receipts[0].column == "change"

    def test_a_magnitude_of_a_level_is_not_judged(self) -> None:
        """'lost 31 accounts' for a recorded 31 (not a change) passes: the magnitude matches."""
        passes("North lost 31 accounts.")

    def test_levels_and_bounds_bind_no_direction(self) -> None:
        """'dropped to', 'down from A to B', 'up to N days' bind nothing."""
        passes("Revenue dropped to 950,000.")
        passes("Tickets were down from 8,400 to 3,000.")
        passes("Refunds take up to 12 days.")

    def test_a_declared_change_column_is_judged(self) -> None:
        """A column named without a change word is judged once declared in ``changes``."""
        rows = [{"region": "North", "trend": 2.5}]
        check_numbers_recorded(registry(rows), "North fell 2.5%.", "kpi")
        with pytest.raises(UnrecordedNumbers) as caught:
            check_numbers_recorded(registry(rows), "North fell 2.5%.", "kpi", changes=["trend"])
        assert caught.value.code == "number_direction_false"

    def test_a_bound_number_that_matches_nothing_is_diagnosed_signed(self) -> None:
        """'fell 3.3%' (recorded -3.2) is unrecorded, its receipt valued -3.3."""
        claim = refused("North fell 3.3%.")
        receipt = claim.receipts[0]
        assert (receipt.code, str(receipt.value), receipt.nearest) == (
            "number_unrecorded",
            "-3.3",
            -3.2,
        )

    def test_an_explicit_sign_is_never_rebound(self) -> None:
        """'fell -3.2%' is read as written (-3.2), not negated again."""
        passes("North fell -3.2%.")


UNITS = {"change": "pp", "revenue": "USD", "tickets": "day"}


class TestUnits:
    def test_percent_for_a_pp_change_is_a_unit_mismatch(self) -> None:
        """'0.5%' for a declared 0.5 pp change is refused, naming both units."""
        found = registry([{"region": "A", "churn_change": 0.5}])
        with pytest.raises(UnrecordedNumbers) as caught:
            check_numbers_recorded(found, "Churn rose 0.5%.", "kpi", units={"churn_change": "pp"})
        receipt = caught.value.receipts[0]
        assert (receipt.code, receipt.expected) == (
            "number_unit_mismatch",
            "written in percent; 'churn_change' is declared in pp",
        )
        check_numbers_recorded(found, "Churn rose 0.5%.", "kpi")  # undeclared: as before

    def test_basis_points_and_points_convert_exactly(self) -> None:
        """'50 bps' is a 0.5 pp change and '0.35 pp' a 35 bps one; '0.5 pp' stays 0.5."""
        found = registry([{"region": "A", "churn": 0.5, "margin": 35}])
        units = {"churn": "pp", "margin": "bps"}
        for text in ("Churn rose 50 bps.", "Churn rose 0.5 pp.", "Margin rose 0.35 pp."):
            check_numbers_recorded(found, text, "kpi", units=units)
        with pytest.raises(UnrecordedNumbers) as caught:
            check_numbers_recorded(found, "Margin rose 35%.", "kpi", units=units)
        assert caught.value.code == "number_unit_mismatch"

    def test_another_currency_is_refused_and_dollars_pass(self) -> None:
        """'€1.23M' / '1.23M EUR' for a USD column fail; '$', 'USD', 'dollars' pass."""
        for text in ("$1.23M", "USD 1,230,000", "1.23 million dollars", "US$1.23M"):
            passes(f"North earned {text}.", units=UNITS)
        for text in ("\u20ac1.23M", "1.23M EUR", "\u00a31,230,000", "1.23 million euros"):
            claim = refused(f"North earned {text}.", units=UNITS)
            assert claim.code == "number_unit_mismatch", text

    def test_another_length_is_refused_and_no_conversion_is_guessed(self) -> None:
        """'10 miles' and '6.2 miles' fail for a recorded 10 km; '10 km' passes."""
        found = registry([{"region": "A", "distance": 10}])
        units = {"distance": "km"}
        check_numbers_recorded(found, "It is 10 km away.", "kpi", units=units)
        codes = []
        for text in ("It is 10 miles away.", "It is 6.2 miles away."):
            with pytest.raises(UnrecordedNumbers) as caught:
                check_numbers_recorded(found, text, "kpi", units=units)
            codes.append(caught.value.code)
        assert codes == ["number_unit_mismatch", "number_unrecorded"]

    def test_a_hyphenated_unit_is_a_number_checked(self) -> None:
        """'45-day' is the number 45 with a unit: checked (a wrong '40-day' fails)."""
        found = registry([{"region": "A", "window": 45}])
        check_numbers_recorded(found, "A 45-day window.", "kpi")
        with pytest.raises(UnrecordedNumbers):
            check_numbers_recorded(found, "A 40-day window.", "kpi")

    def test_a_unit_not_written_keeps_todays_behaviour(self) -> None:
        """A bare number passes for a declared column (only a named other unit fails)."""
        passes("North reported 8,400.", units=UNITS)

    def test_a_fact_wide_declaration(self) -> None:
        """A fact name as key declares every column of it."""
        claim = refused("North earned \u20ac950,000.", units={"kpi": "USD"})
        assert claim.code == "number_unit_mismatch"

    def test_declarations_are_validated_at_build_time(self) -> None:
        """An unknown unit, a non-mapping, a str ``changes`` are build-time errors."""
        with pytest.raises(
            ValueError, match=r"units\['revenue'\] is .*, which is not a unit; use one of pp, bps"
        ):
            numbers_recorded("kpi", units={"revenue": "doubloons"})
        with pytest.raises(TypeError, match="units must be a mapping of column to unit"):
            numbers_recorded("kpi", units=["USD"])  # type: ignore[arg-type]
        with pytest.raises(TypeError, match="changes must be a list of column names"):
            numbers_recorded("kpi", changes="change")
        assert numbers_recorded("kpi", units={"d": "miles", "c": "usd", "p": "%"}).name


def test_a_direction_noun_then_was_binds() -> None:
    """'The decline was 3.2%' reads -3.2; 'the increase was 3.2%' against -3.2 is refused."""
    passes("For North, the decline was 3.2%.")
    assert refused("For North, the increase was 3.2%.").code == "number_direction_false"


def test_a_list_after_a_direction_word_shares_it() -> None:
    """'fell 3.2% and 4.1%, respectively' reads both as falls; a rise in the list is refused."""
    rows = [{"region": "North", "change": -3.2}, {"region": "South", "change": -4.1}]
    check_numbers_recorded(registry(rows), "They fell 3.2% and 4.1%, respectively.", "kpi")
    rows[1]["change"] = 4.1
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(registry(rows), "They fell 3.2% and 4.1%, respectively.", "kpi")
    assert [(r.text, r.code) for r in caught.value.receipts] == [("4.1%", "number_direction_false")]


def test_a_percent_of_a_declared_ratio_column() -> None:
    """'4.55%' passes for a declared ratio 0.0455; '0.0455%' (the ratio as a percent) fails."""
    found = registry([{"region": "A", "share": 0.0455}])
    units = {"share": "ratio"}
    check_numbers_recorded(found, "A converts at 4.55%.", "kpi", units=units)
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(found, "A converts at 0.0455%.", "kpi", units=units)
    assert caught.value.code == "number_unit_mismatch"


def test_a_restricted_ratio_before_a_scaled_amount_is_a_leak() -> None:
    """A restricted 0.08 in '8% to $2.1 billion' is found (it was read as 8E+9 before)."""
    found = FactRegistry()
    found.record("cost", {"m": 0.08}, tool="erp", args={}, restricted=True)
    with pytest.raises(UnsupportedClaim) as caught:
        check_no_restricted_values(found, {"answer": "North grew 8% to $2.1 billion."})
    assert caught.value.code == "restricted_value"


def test_every_lookup_reads_ints_and_floats_exactly() -> None:
    """A recorded 3 and 3.0 both read as 3; 2**60 and float(2**60) are told apart."""
    found = registry([{"region": "A", "i": 3, "f": 3.0, "big": 2**60, "fbig": float(2**60)}])
    index = RecordedNumbers([found.peek("kpi")])
    assert [r.column for r in index.every(Decimal(3))] == ["i", "f"]
    assert [r.column for r in index.every(Decimal(2**60))] == ["big"]
    assert [r.column for r in index.every(Decimal(repr(float(2**60))))] == ["fbig"]


def test_a_change_named_anywhere_in_a_path_is_a_change() -> None:
    """A plain value's {"change": {"revenue": 3.5}} is a change: 'fell 3.5%' is refused."""
    found = FactRegistry()
    found.record("kpi", {"change": {"revenue": 3.5}}, tool="bi.query", args={})
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(found, "Revenue fell 3.5%.", "kpi")
    assert (caught.value.code, caught.value.receipts[0].column) == (
        "number_direction_false",
        "change.revenue",
    )


def test_a_rise_said_of_a_documents_fall_is_refused() -> None:
    """A retrieved document's '-3.2%' is a change: 'rose 3.2%' is refused naming the document."""
    found = FactRegistry()
    found.record_documents(
        "kb", [{"id": "q3-report", "content": "Revenue changed by -3.2% in Q3."}],
        tool="search", args={},
    )  # fmt: skip
    found.record("kpi", {"x": 1}, tool="bi.query", args={})
    check_numbers_recorded(found, "Revenue fell 3.2%.", "kpi", documents=["kb"])
    with pytest.raises(UnrecordedNumbers) as caught:
        check_numbers_recorded(found, "Revenue rose 3.2%.", "kpi", documents=["kb"])
    receipt = caught.value.receipts[0]
    assert (receipt.code, receipt.document) == ("number_direction_false", "q3-report")
