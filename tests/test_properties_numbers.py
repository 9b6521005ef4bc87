"""Laws of numbers_recorded (Hypothesis): every recorded number written in any supported format
passes; changing any one digit, or dropping the sign, fails (unless that too is recorded);
declared rounding accepts exactly the roundings of a recorded value."""

from __future__ import annotations

from decimal import ROUND_HALF_EVEN, Decimal

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import groundplane_otel as gp
from groundplane_otel.checks.numbers_recorded import UnrecordedNumbers, check_numbers_recorded

PROFILE = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
ONES = [
    "zero",
    "one",
    "two",
    "three",
    "four",
    "five",
    "six",
    "seven",
    "eight",
    "nine",
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
]
TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
SEPARATORS = {"en": (",", "."), "de": (".", ","), "fr": ("\u202f", ","), "ch": ("'", ".")}

numbers = st.one_of(
    st.integers(min_value=-(10**15), max_value=10**15),
    st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False),
    st.decimals(min_value=-10000, max_value=10000, places=3).map(float),
)


def exact(value: int | float) -> Decimal:
    """The oracle: an int as itself, a float by its shortest repr."""
    return Decimal(value) if isinstance(value, int) else Decimal(repr(value))


def plain(value: Decimal) -> str:
    return format(value, "f")


def grouped(value: Decimal, locale: str) -> str:
    """``value`` written with the locale's group and decimal marks (independent of the code)."""
    group, mark = SEPARATORS[locale]
    text = plain(abs(value))
    whole, _, fraction = text.partition(".")
    groups = []
    while len(whole) > 3:
        groups.insert(0, whole[-3:])
        whole = whole[:-3]
    groups.insert(0, whole)
    body = group.join(groups) + (mark + fraction if fraction else "")
    return ("-" if value < 0 else "") + body


def words(value: int) -> str:
    if value < 20:
        return ONES[value]
    tens, ones = divmod(value, 10)
    return TENS[tens - 2] + (f"-{ONES[ones]}" if ones else "")


def record(values: list[int | float]) -> gp.FactRegistry:
    registry = gp.FactRegistry()
    registry.record("v", {str(i): value for i, value in enumerate(values)})
    return registry


def check(registry: gp.FactRegistry, text: str, **options: object) -> None:
    check_numbers_recorded(registry, {"s": f"It came to {text} in the end."}, "v", "s", **options)  # type: ignore[arg-type]


@PROFILE
@given(
    value=numbers,
    style=st.sampled_from(["plain", "grouped", "currency", "percent", "zeros", "minus"]),
    locale=st.sampled_from(sorted(SEPARATORS)),
)
def test_a_recorded_number_passes_in_every_format(
    value: int | float, style: str, locale: str
) -> None:
    """Plain, grouped (any locale), $-prefixed, percent, with trailing zeros, Unicode minus."""
    target = exact(value)
    written = grouped(target, locale)
    if style == "plain":
        written = plain(target) if locale in ("en", "ch") else plain(target).replace(".", ",")
    elif style == "currency":
        written = written.replace("-", "-$", 1) if target < 0 else "$" + written
    elif style == "percent":
        written += "%"
    elif style == "zeros":
        mark = SEPARATORS[locale][1]
        written += "00" if mark in written else f"{mark}00"
    elif style == "minus":
        written = written.replace("-", "\u2212")
    check(record([value]), written, locale=locale)


@PROFILE
@given(value=st.integers(min_value=0, max_value=99))
def test_a_recorded_integer_passes_in_words(value: int) -> None:
    """Every integer up to ninety-nine passes written in words (twenty-one, nine, zero)."""
    check(record([value]), words(value))


@PROFILE
@given(mantissa=st.integers(min_value=1, max_value=999), power=st.sampled_from([3, 6, 9]))
def test_a_recorded_round_number_passes_with_a_magnitude(mantissa: int, power: int) -> None:
    """``m × 10**p`` passes as ``{m/10}`` with k/M/bn and as words (million, billion)."""
    value = mantissa * 10**power // 10
    shown = plain(Decimal(mantissa).scaleb(-1).normalize())
    suffix = {3: "k", 6: "M", 9: "bn"}[power]
    check(record([value]), f"{shown}{suffix}")
    if power > 3:
        check(record([value]), f"{shown} {'million' if power == 6 else 'billion'}")


@PROFILE
@given(values=st.lists(numbers, min_size=1, max_size=5), data=st.data())
def test_changing_any_one_digit_fails(values: list[int | float], data: st.DataObject) -> None:
    """One digit of a recorded number changed gives an unrecorded number: it fails."""
    recorded = {exact(value) for value in values}
    text = plain(exact(data.draw(st.sampled_from(values))))
    positions = [i for i, char in enumerate(text) if char.isdigit()]
    position = data.draw(st.sampled_from(positions))
    digit = data.draw(st.sampled_from([d for d in "0123456789" if d != text[position]]))
    changed = text[:position] + digit + text[position + 1 :]
    assume(Decimal(changed) not in recorded)
    with pytest.raises(UnrecordedNumbers):
        check(record(values), changed)


@PROFILE
@given(values=st.lists(numbers, min_size=1, max_size=5), data=st.data())
def test_dropping_or_adding_a_sign_fails(values: list[int | float], data: st.DataObject) -> None:
    """The negation of a recorded number fails, unless it is recorded too."""
    recorded = {exact(value) for value in values}
    target = exact(data.draw(st.sampled_from(values)))
    assume(target != 0 and -target not in recorded)
    with pytest.raises(UnrecordedNumbers) as raised:
        check(record(values), plain(-target))
    assert raised.value.code == "number_sign_flipped"


@PROFILE
@given(
    value=st.decimals(min_value=-10000, max_value=10000, places=4).map(float),
    places=st.integers(min_value=0, max_value=3),
)
def test_declared_rounding_accepts_the_rounding_of_a_recorded_value(
    value: float, places: int
) -> None:
    """Half-even rounding of a recorded value to any precision passes when declared."""
    target = exact(value).quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_EVEN)
    check(record([value]), plain(target), rounding="half_even")
    if target != exact(value):
        with pytest.raises(UnrecordedNumbers):
            check(record([value]), plain(target))


@PROFILE
@given(
    text=st.text(
        alphabet=st.sampled_from(list("0123456789 ,.-–−+%$€:/()[]#\nabcQkMxe'\u202f٣")),
        max_size=60,
    ),
    locale=st.sampled_from(sorted(SEPARATORS)),
)
def test_any_text_scans_into_ordered_disjoint_spans(text: str, locale: str) -> None:
    """Whatever the text, the scan never crashes; every numeral and skip slices its own text,
    and they come in order without overlapping."""
    from groundplane_otel.checks._numbers.prose_scan import scan_numbers

    scan = scan_numbers(text, locale)
    spans = sorted(
        [(n.start, n.end, n.text) for n in scan.numerals]
        + [(s.start, s.end, s.text) for s in scan.skipped]
    )
    for start, end, written in spans:
        assert text[start:end] == written
    for (_, end, _), (start, _, _) in zip(spans, spans[1:]):
        assert end <= start
