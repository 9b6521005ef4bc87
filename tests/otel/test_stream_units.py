"""Release units of a streamed answer: sentence, line or list item, whichever ends first; a
long run cut only at a safe whitespace; every character in exactly one unit, whatever the
chunking."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from groundplane_otel.otel._stream.units import HARD_FACTOR, Units


def split(text: str, *, size: int = 1, bound: int = 400) -> list[str]:
    """The units of ``text`` fed in chunks of ``size`` characters (the rest last)."""
    units = Units(bound)
    found: list[str] = []
    for start in range(0, len(text), size):
        found += units.feed(text[start : start + size])
    rest = units.end()
    return [*found, rest] if rest else found


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One fact. Two facts! Three?", ["One fact.", " Two facts!", " Three?"]),
        ("The rate is 3.9% today. Next.", ["The rate is 3.9% today.", " Next."]),
        ("Dr. Smith met Mr. Jones. Then left.", ["Dr. Smith met Mr. Jones.", " Then left."]),
        ("J. R. Smith wrote it. Yes.", ["J. R. Smith wrote it.", " Yes."]),
        ("Ship by Jan. 5 at the latest. Ok.", ["Ship by Jan. 5 at the latest.", " Ok."]),
        ("It is e.g. the case. Fine.", ["It is e.g. the case.", " Fine."]),
        ("a line\nanother line\n", ["a line\n", "another line\n"]),
        ("1. First item\n2. Second item", ["1. First item\n", "2. Second item"]),
        ("- North: 10\n- South: 7\n", ["- North: 10\n", "- South: 7\n"]),
        (
            'He said "It is done. Really." Then left.',
            ['He said "It is done. Really."', " Then left."],
        ),
        ("In 2024. Then 2025.", ["In 2024.", " Then 2025."]),
        ("Wait... what? Yes.", ["Wait... what?", " Yes."]),
        ("version 1.2.3 shipped. Ok", ["version 1.2.3 shipped.", " Ok"]),
        ("(It rose.) Then fell.", ["(It rose.)", " Then fell."]),
    ],
)
def test_units_end_at_sentences_lines_and_items(text: str, expected: list[str]) -> None:
    """Each case, fed a character at a time and whole, gives the same units."""
    assert split(text) == expected
    assert split(text, size=len(text)) == expected


def test_a_long_run_is_cut_only_between_plain_words() -> None:
    """A run with no sentence or line end past the bound is cut at a whitespace between two
    lower-case words: never inside a number, a date, a name or a quotation."""
    phrase = (
        'and the total rose to 10 000 units at North Harbour Loft on 5 March 2024 "as the '
        'board said in its report" then '
    )
    text = phrase * 12
    units = split(text, size=7, bound=120)
    assert "".join(units) == text
    assert len(units) > 5
    offset = 0
    for unit in units[:-1]:
        assert len(unit) <= HARD_FACTOR * 120
        offset += len(unit)
        before, after = text[:offset].split()[-1], text[offset:].split()[0]
        for word in (before, after):
            assert word.isalpha(), (before, after)
            assert word.islower(), (before, after)
        assert text[:offset].count('"') % 2 == 0  # never inside the quotation


def test_a_run_with_no_safe_whitespace_is_cut_at_the_hard_bound() -> None:
    """Capitalised words only (no safe cut): held up to HARD_FACTOR x bound, then cut at the
    last whitespace; a run with no whitespace at all at the hard bound itself."""
    text = "North Harbour Loft " * 40
    units = split(text, size=5, bound=32)
    assert "".join(units) == text
    assert all(len(unit) <= HARD_FACTOR * 32 for unit in units)
    blob = "x" * 1000
    assert [len(u) for u in split(blob, size=50, bound=32)][:3] == [128, 128, 128]


def test_the_bound_is_validated() -> None:
    """A bound too small to hold a sentence is a ValueError naming it."""
    with pytest.raises(ValueError, match=r"^bound must be an int >= 16 \(characters\), got 3$"):
        Units(3)


SENTENCE = st.lists(
    st.sampled_from(["the", "rate", "was", "3.9%", "North", "Loft", "10,000", "Dr.", "and"]),
    min_size=1,
    max_size=8,
).map(" ".join)
TEXT = st.lists(
    st.tuples(SENTENCE, st.sampled_from([". ", "! ", "? ", "\n", ".\n", " "])), max_size=12
).map(lambda parts: "".join(sentence + end for sentence, end in parts))


@settings(max_examples=200, deadline=None)
@given(TEXT, st.integers(min_value=1, max_value=12))
def test_every_character_is_in_one_unit_whatever_the_chunking(text: str, size: int) -> None:
    """The units, in order, spell the text; with runs shorter than the bound, they do not
    depend on how the text was chunked."""
    units = split(text, size=size)
    assert "".join(units) == text
    assert units == split(text, size=len(text) or 1)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=3000), st.integers(min_value=1, max_value=64))
def test_the_text_held_stays_bounded(text: str, size: int) -> None:
    """Whatever the text, the text held between units never exceeds the hard bound plus one
    chunk."""
    units = Units(32)
    for start in range(0, len(text), size):
        units.feed(text[start : start + size])
        assert len(units.pending) <= HARD_FACTOR * 32 + size
