"""entities_in_scope: an answer names only entities from this request's approved facts."""

from __future__ import annotations

import pytest

from groundplane_otel import (
    FactRegistry,
    UnsupportedClaim,
    check_entities_in_scope,
    entities_in_scope,
)


def registry() -> FactRegistry:
    """Listings retrieved for this request, the whole catalogue, and an unapproved listing."""
    reg = FactRegistry()
    reg.record_table(
        "listings",
        [{"name": "North Harbour Loft", "rent": 1800}, {"name": "Delta House", "rent": 1500}],
        key="name",
        tool="search.listings",
    )
    reg.record_domain(
        "catalogue",
        ["North Harbour Loft", "Delta House", "North Harbour", "Old Mill", "Bay Flat"],
        tool="catalogue.all",
    )
    reg.record_domain("internal", ["Old Mill"], tool="crm.internal", restricted=True)
    return reg


def refuse(output: dict[str, object], **kwargs: object) -> UnsupportedClaim:
    with pytest.raises(UnsupportedClaim) as caught:
        check_entities_in_scope(registry(), output, **kwargs)  # type: ignore[arg-type]
    return caught.value


def test_declared_fields_must_hold_approved_names() -> None:
    """A name from the catalogue that was not retrieved is out of scope; case is ignored by
    default, and a list is checked member by member. Without a vocabulary every unrestricted
    name-holding fact is approved, so the catalogue must be left out with approved=."""
    check_entities_in_scope(registry(), {"picks": ["Bay Flat"]}, ["picks"])
    listed = {"approved": ["listings"]}
    check_entities_in_scope(registry(), {"pick": "delta house"}, ["pick"], **listed)
    claim = refuse({"picks": ["Delta House", "Bay Flat"]}, fields=["picks"], **listed)
    assert (claim.code, claim.field, claim.claimed) == ("out_of_scope", "picks[1]", "Bay Flat")
    assert claim.fact == "listings"
    strict = refuse({"pick": "delta house"}, fields=["pick"], case_sensitive=True, **listed)
    assert strict.code == "out_of_scope"


def test_prose_is_scanned_for_the_closed_vocabulary() -> None:
    """Names of the vocabulary found in prose (case-folded, spacing-normalised) must be
    approved; the longest name wins where names overlap."""
    check = entities_in_scope(text_fields=["answer"], vocabulary="catalogue")
    check(registry(), {"answer": "Try the north harbour\nloft or Delta House."})
    with pytest.raises(UnsupportedClaim) as caught:
        check(registry(), {"answer": "Delta House, or maybe Bay  Flat?"})
    assert caught.value.code == "out_of_scope"
    assert caught.value.claimed == "Bay  Flat"
    assert "at characters 22-31" in caught.value.reason
    with pytest.raises(UnsupportedClaim) as shorter:
        check(registry(), {"answer": "somewhere in North Harbour"})
    assert shorter.value.claimed == "North Harbour"


def test_a_restricted_entity_is_named_without_its_name() -> None:
    """A name of a restricted fact fails as restricted_entity and is not repeated."""
    claim = refuse(
        {"answer": "the old mill is free"}, text_fields=["answer"], vocabulary="catalogue"
    )
    assert (claim.code, claim.claimed, claim.fact) == (
        "restricted_entity",
        "<withheld>",
        "internal",
    )
    assert "old mill" not in str(claim).casefold()


def test_approved_can_be_listed() -> None:
    """approved= narrows the scope to the listed facts."""
    reg = registry()
    reg.record_domain("shortlist", ["Delta House"])
    check = entities_in_scope(["pick"], approved=["shortlist"])
    check(reg, {"pick": "Delta House"})
    with pytest.raises(UnsupportedClaim, match="approved fact 'shortlist'"):
        check(reg, {"pick": "North Harbour Loft"})
    assert check.facts == ("shortlist",)


def test_arguments_are_validated_at_build() -> None:
    """Nothing to read, prose without a vocabulary, the vocabulary approved, bad types."""
    with pytest.raises(ValueError, match="give fields"):
        entities_in_scope()
    with pytest.raises(ValueError, match="text_fields and vocabulary go together"):
        entities_in_scope(text_fields=["answer"])
    with pytest.raises(ValueError, match="cannot also be approved"):
        entities_in_scope(["a"], vocabulary="c", text_fields=["t"], approved=["c"])
    with pytest.raises(TypeError) as caught:
        entities_in_scope(["a"], case_sensitive="no")  # type: ignore[arg-type]
    assert str(caught.value) == "entities_in_scope: case_sensitive must be True or False, got 'no'"


def test_no_approved_fact_is_a_developer_error() -> None:
    """A boundary with only restricted or vocabulary facts has no scope: ValueError."""
    reg = FactRegistry()
    reg.record_domain("catalogue", ["A"])
    with pytest.raises(ValueError, match="no approved fact holding names"):
        check_entities_in_scope(reg, {"t": "A"}, text_fields=["t"], vocabulary="catalogue")
    reg.record("value", 3)
    with pytest.raises(TypeError, match="holds no names"):
        check_entities_in_scope(reg, {"a": "A"}, ["a"], approved=["value"])
