"""Laws of issue 22's evidence rules (Hypothesis): the rounding neighbourhood (a written
rounding of a restricted value leaks exactly when no unrestricted value is strictly closer),
and retrieved documents as evidence (a number a document spells passes; a changed one fails)."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, ROUND_HALF_UP, Decimal

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from groundplane_otel import FactRegistry, UnsupportedClaim
from groundplane_otel.checks.no_restricted_values import check_no_restricted_values
from groundplane_otel.checks.numbers_recorded import UnrecordedNumbers, check_numbers_recorded

PROFILE = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MODES = (ROUND_HALF_EVEN, ROUND_HALF_UP)

cents = st.integers(min_value=10_000, max_value=9_999_999).map(lambda n: Decimal(n).scaleb(-2))


def written(secret: Decimal, form: str, mode: str) -> tuple[str, Decimal, Decimal, bool]:
    """A rounding of ``secret`` as text: (text, value, precision written, plain integer?)."""
    if form == "tenth":
        value = secret.quantize(Decimal("0.1"), rounding=mode)
        return f"{value:,}", value, Decimal("0.1"), False
    if form == "unit":
        value = secret.quantize(Decimal(1), rounding=mode)
        return f"${value:,}", value, Decimal(1), True
    thousands = (secret / 1000).quantize(Decimal("0.1"), rounding=mode)
    return f"${thousands}k", thousands.scaleb(3), Decimal("1E+2"), False


def leaks(
    secret: Decimal, value: Decimal, quantum: Decimal, plain: bool, public: Decimal | None
) -> bool:
    """The oracle: the exact rule, then the salience rules, the rounding, the neighbourhood."""
    if value == secret:
        return True
    if abs(value) / quantum < 10 or (plain and abs(value) < 100):
        return False
    if not any(secret.quantize(quantum, rounding=mode) == value for mode in MODES):
        return False
    return public is None or abs(public - value) >= abs(secret - value)


@PROFILE
@given(
    secret=cents,
    form=st.sampled_from(["tenth", "unit", "thousands"]),
    mode=st.sampled_from(MODES),
    offset=st.one_of(st.none(), st.integers(min_value=-300, max_value=300)),
)
def test_a_rounding_leaks_unless_an_unrestricted_value_is_strictly_closer(
    secret: Decimal, form: str, mode: str, offset: int | None
) -> None:
    """For any restricted cost and any written rounding of it (to the tenth, the unit or the
    hundred as "k"), with or without a public price near it, the check refuses exactly when the
    oracle says the number leaks."""
    text, value, quantum, plain = written(secret, form, mode)
    public = None if offset is None else value + Decimal(offset) * quantum / 100
    reg = FactRegistry()
    reg.record_table(
        "cost", [{"sku": "x", "cost": float(secret)}], key="sku", tool="erp", restricted=True
    )
    if public is not None:
        assume(public != secret)
        reg.record_table("price", [{"sku": "y", "price": float(public)}], key="sku", tool="shop")
    codes: list[str | None] = []
    try:
        check_no_restricted_values(reg, f"It is {text} per unit.")
    except UnsupportedClaim as claim:
        codes.append(claim.code)
    expected = ["restricted_value"] if leaks(secret, value, quantum, plain, public) else []
    assert codes == expected


@PROFILE
@given(
    amount=cents,
    days=st.integers(min_value=1, max_value=90),
    style=st.sampled_from(["plain", "grouped", "dollars", "zeros"]),
    change=st.sampled_from([None, 1, 9]),
)
def test_a_number_a_document_spells_passes_and_a_changed_one_fails(
    amount: Decimal, days: int, style: str, change: int | None
) -> None:
    """A retrieved document's amount, written in any format, passes with documents=[kb]; the
    same amount with its last digit changed fails, its receipt naming the document."""
    content = f"The balance of ${amount:,} is due within {days} days."
    reg = FactRegistry()
    reg.record_documents("kb", [{"id": "inv-1", "score": 0.5, "content": content}], tool="kb")
    said = amount if change is None else amount + Decimal(change) / 100
    assume(change is None or said != amount)
    text = {"plain": f"{said}", "grouped": f"{said:,}", "dollars": f"${said:,} dollars",
            "zeros": f"{said:,}0"}[style]  # fmt: skip
    answer = f"You owe {text}, due in {days} days."
    if change is None:
        check_numbers_recorded(reg, answer, fact="kb", documents=["kb"])
        return
    try:
        check_numbers_recorded(reg, answer, fact="kb", documents=["kb"])
    except UnrecordedNumbers as claim:
        (receipt,) = claim.receipts
        assert (receipt.document, receipt.fact) == ("inv-1", "kb")
    else:
        raise AssertionError(f"{answer!r} passed against {content!r}")
