"""no_restricted_values and restricted facts: a restricted value never leaves in an output,
however it is coaxed out (keroground's adversarial cases), and the finding never repeats it."""

from __future__ import annotations

from typing import Any

import pytest

from groundplane_otel import (
    FactBoundaryError,
    FactRegistry,
    UnregisteredFact,
    UnsupportedClaim,
    boundary,
    check_no_restricted_values,
    no_restricted_values,
)


def registry() -> FactRegistry:
    """A confidential wholesale table (restricted) next to a public price list."""
    reg = FactRegistry()
    reg.record_table(
        "wholesale",
        [
            {"sku": "Project Falcon", "cost": 1234.5, "margin": 0.0455},
            {"sku": "Harbour Kit", "cost": 88, "margin": 0.21},
        ],
        key="sku",
        tool="erp.costs",
        args={"quarter": "Q3"},
        restricted=True,
    )
    reg.record_domain("catalogue", ["Widget", "Gadget"], tool="shop.list")
    return reg


def leak(output: dict[str, Any], **kwargs: Any) -> UnsupportedClaim:
    with pytest.raises(UnsupportedClaim) as caught:
        no_restricted_values(**kwargs)(registry(), output)
    return caught.value


@pytest.mark.parametrize(
    ("text", "locator", "how"),
    [
        ("Our internal name is Project Falcon.", "row 0, column 'sku'", "as text"),
        ("our internal name is PROJECT FALCON", "row 0, column 'sku'", "as text"),
        ("it is project   falcon", "row 0, column 'sku'", "as text"),
        ("it is Project\nFalcon", "row 0, column 'sku'", "as text"),
        ("it is Project Fal-\ncon", "row 0, column 'sku'", "as text"),
        ("it is Project Fal\u200bcon", "row 0, column 'sku'", "as text"),
        ("it is \uff30roject \uff26alcon", "row 0, column 'sku'", "as text"),
        ("we pay 1234.5 per unit", "row 0, column 'cost'", "as a number"),
        ("we pay 1,234.50 per unit", "row 0, column 'cost'", "as a number"),
        ("we pay $1,234.5 per unit", "row 0, column 'cost'", "as a number"),
        ("we pay about 1.2345k per unit", "row 0, column 'cost'", "as a number"),
        ("the margin is 4.55%", "row 0, column 'margin'", "as a number"),
        ("the kit costs us eighty-eight? no: 88.00", "row 1, column 'cost'", "as a number"),
    ],
)
def test_a_restricted_value_coaxed_out_in_any_form_fails(text: str, locator: str, how: str) -> None:
    """Verbatim, another case, extra spaces, split across a line break (with or without a
    hyphen), zero-width or full-width characters, numbers reformatted, scaled or as a percent:
    each is the same restricted value and fails with code restricted_value."""
    claim = leak({"answer": text})
    assert claim.code == "restricted_value"
    assert (claim.field, claim.claimed, claim.fact) == ("answer", "<withheld>", "wholesale")
    assert f"restricted fact 'wholesale' ({locator}) {how}, in a string at characters" in str(claim)


@pytest.mark.parametrize(
    "text",
    [
        "Falconry is a hobby; projects vary.",
        "the cost is 1234.55, or 12345, or 123.45",
        "we sell the Widget and the Gadget",
        "margin 4.56%, kit 89",
        "SKU-1234 ships today",
    ],
)
def test_near_misses_pass(text: str) -> None:
    """Word boundaries and exact values: a longer word, a different number, public names and
    a number inside an identifier are not restricted values."""
    check_no_restricted_values(registry(), {"answer": text})


def test_the_finding_never_repeats_the_value() -> None:
    """Neither str(claim) nor to_dict() holds the restricted value, in any case."""
    claim = leak({"answer": "Project Falcon costs 1,234.50"})
    text = (str(claim) + repr(claim.to_dict())).casefold()
    for secret in ("project falcon", "1234.5", "1,234.50"):
        assert secret not in text
    assert claim.supported == "no value of a restricted fact"
    assert claim.provenance is not None
    assert claim.provenance.tool == "erp.costs"


def test_structured_numbers_keys_and_nested_values_are_read() -> None:
    """A number field equal by value, a mapping key, and a string deep in a list all leak; a
    key that is itself the leak is never used as the field label."""
    assert leak({"total": 1234.50}).reason.endswith("as a number, in a number of field 'total'")
    keyed = leak({"Project Falcon": 1})
    assert keyed.field == "<output>"
    assert "in a mapping key at characters 0-14" in keyed.reason
    assert leak({"items": [{"name": "ok"}, {"name": "harbour kit"}]}).field == "items"


def test_fields_limit_where_it_looks() -> None:
    """With fields=, only those fields are read; a declared field that is missing fails."""
    output = {"answer": "all good", "debug": "Project Falcon"}
    check_no_restricted_values(registry(), output, ["answer"])
    with pytest.raises(UnsupportedClaim) as caught:
        check_no_restricted_values(registry(), output, ["summary"])
    assert caught.value.code == "field_missing"


def test_decimal_comma_locale_is_an_argument() -> None:
    """decimal="," reads "1.234,50" as 1234.5; the default "." reads it as 1.234 and 50."""
    check_no_restricted_values(registry(), {"answer": "1.234,50"})
    claim = leak({"answer": "1.234,50"}, decimal=",")
    assert "column 'cost'" in claim.reason


def test_declaring_restriction_in_code() -> None:
    """restricted=True on every recorder, or restrict(name) before or after recording; a view
    keeps it; a read-only view cannot restrict; restricted must be a bool."""
    reg = FactRegistry()
    reg.record("plain", {"staff": "Ana Ruiz"}, restricted=True)
    reg.record_ranking("ranked", {"a": 1}, restricted=True)
    reg.record_domain("names", ["Bo"], restricted=True)
    reg.record_documents("docs", [{"id": "hr-1"}], restricted=True)
    reg.restrict("later")
    reg.record("later", "x")
    reg.record("public", "y")
    reg.restrict("public")
    assert reg.restricted_names() == ["plain", "ranked", "names", "docs", "later", "public"]
    view = reg.view(["plain", "public"])
    assert view.restricted_names() == ["plain", "public"]
    with pytest.raises(FactBoundaryError, match="read-only boundary view"):
        view.restrict("plain")
    with pytest.raises(TypeError) as caught:
        reg.record("z", 1, restricted="yes")  # type: ignore[arg-type]
    assert str(caught.value) == "fact 'z': restricted must be True or False, got 'yes'"


def test_a_failed_second_record_does_not_restrict_the_first() -> None:
    """A write-once error leaves an unrestricted fact unrestricted."""
    reg = FactRegistry()
    reg.record("x", 1)
    with pytest.raises(ValueError, match="write-once"):
        reg.record("x", 2, restricted=True)
    assert not reg.is_restricted("x")


def test_misconfigurations_are_developer_errors() -> None:
    """No restricted fact visible, a listed fact that is not restricted or not recorded, and
    bad builder arguments are ValueError/TypeError/UnregisteredFact, never a model claim."""
    plain = FactRegistry()
    plain.record("public", "y")
    with pytest.raises(ValueError) as caught:
        check_no_restricted_values(plain, {"a": "y"})
    assert str(caught.value).startswith(
        "no_restricted_values: no restricted fact is visible to this check"
    )
    with pytest.raises(ValueError) as caught:
        check_no_restricted_values(plain, {"a": "y"}, facts=["public"])
    assert str(caught.value) == (
        "no_restricted_values: fact 'public' is not restricted; record it with restricted=True "
        "(or declare `restricted: true` in the policy)"
    )
    with pytest.raises(UnregisteredFact):
        check_no_restricted_values(plain, {"a": "y"}, facts=["absent"])
    with pytest.raises(TypeError) as type_error:
        no_restricted_values("answer")
    assert "did you mean fields=['answer']?" in str(type_error.value)
    with pytest.raises(ValueError) as value_error:
        no_restricted_values(decimal=";")
    assert str(value_error.value) == 'no_restricted_values: decimal must be "." or ",", got \';\''


def test_through_a_boundary_with_its_name() -> None:
    """The builder's name reads like the others and the boundary raises the claim."""
    check = no_restricted_values(["answer"], facts=["wholesale"])
    assert check.name == "no_restricted_values(fields=['answer'], facts=['wholesale'])"
    assert check.family == "no_restricted_values"
    assert check.facts == ("wholesale",)
    with (
        pytest.raises(UnsupportedClaim, match="restricted fact 'wholesale'"),
        boundary(registry(), facts=["wholesale", "catalogue"], checks=[check]) as b,
    ):
        b.submit({"answer": "Harbour Kit at 88"})


def test_the_locale_is_the_number_scanner_s() -> None:
    """locale= takes the scanner's locales (fr reads "1 234,5"); decimal="," is short for
    locale="de"; a decimal mark contradicting the locale, or an unknown locale, is refused."""
    claim = leak({"answer": "nous payons 1\u202f234,50"}, locale="fr")
    assert "column 'cost'" in claim.reason
    check_no_restricted_values(registry(), {"answer": "nous payons 1\u202f234,50"})
    assert "column 'cost'" in leak({"answer": "1.234,50"}, locale="de").reason
    with pytest.raises(ValueError) as caught:
        no_restricted_values(locale="de", decimal=".")
    assert str(caught.value) == (
        "no_restricted_values: decimal='.' contradicts locale='de', whose decimal mark is ','; "
        "give the locale alone"
    )
    with pytest.raises(ValueError, match=r"locale must be one of \['ch', 'de', 'en', 'fr'\]"):
        no_restricted_values(locale="xx")
    with pytest.raises(ValueError, match='decimal must be "." or ","'):
        no_restricted_values(decimal=" ")


def test_numbers_follow_the_scanner_s_rules() -> None:
    """Words past twenty and a magnitude's written digits reveal a value; digits inside an
    identifier or a date do not (the scanner's rules: they are not numbers)."""
    reg = FactRegistry()
    reg.record_table("t", [{"k": "x", "n": 88, "m": 1.2, "d": 12}], key="k", restricted=True)
    for text in ("eighty-eight units", "revenue was $1.2M", "12 of them"):
        with pytest.raises(UnsupportedClaim):
            check_no_restricted_values(reg, {"a": text})
    for text in ("order SKU-88 and #12", "due 2026-12-01", "the 12th", "v1.2.0"):
        check_no_restricted_values(reg, {"a": text})
