"""The peer run's verdict: only differences listed with their states and failure text pass,
a listed one that no longer happens fails, and the repository's allowlist is well formed."""

from __future__ import annotations

from pathlib import Path

import pytest
from compare import Allowed, Outcome, differences, judge, load_allowlist  # this folder

HERE = Path(__file__).resolve().parent
TEST = "tests.trace.test_trace.TestSpan::test_ended_span"
LISTED = {TEST: Allowed(TEST, "passed", "failed", "5 != 0", "annotation")}


def test_only_state_changes_are_differences() -> None:
    """Same state, other message: no difference; a test missing from one run: a difference."""
    plain = {"a": Outcome("failed", "x"), "b": Outcome("passed")}
    guarded = {"a": Outcome("failed", "y"), "c": Outcome("passed")}
    assert differences(plain, guarded) == {
        "b": (Outcome("passed"), Outcome("missing")),
        "c": (Outcome("missing"), Outcome("passed")),
    }


def test_a_listed_difference_with_its_failure_text_passes() -> None:
    """The listed states and a guarded message containing the listed text: accepted."""
    found = {TEST: (Outcome("passed"), Outcome("failed", "AssertionError: 5 != 0"))}
    assert judge(found, LISTED) == ([], [])


@pytest.mark.parametrize(
    "guarded",
    [Outcome("failed", "AssertionError: 7 != 0"), Outcome("error", "5 != 0")],
    ids=["other-failure", "other-state"],
)
def test_a_listed_test_that_differs_another_way_fails(guarded: Outcome) -> None:
    """Another failure message or another state than listed is an unexpected difference."""
    unexpected, stale = judge({TEST: (Outcome("passed"), guarded)}, LISTED)
    assert len(unexpected) == 1
    assert unexpected[0].startswith(f"{TEST}: plain passed, guarded {guarded.state} ")
    assert stale == []


def test_an_unlisted_difference_and_a_stale_entry_fail() -> None:
    """A difference nobody listed is reported, and so is an entry with no difference."""
    found = {"other": (Outcome("passed"), Outcome("skipped", "why"))}
    assert judge(found, LISTED) == (["other: plain passed, guarded skipped 'why'"], [TEST])


def test_the_allowlist_gives_every_entry_a_reason_and_a_failure_text() -> None:
    """Each entry of allowlist.toml names a reason stated in it, and pins a failure text."""
    allowed = load_allowlist(HERE / "allowlist.toml")
    assert len(allowed) == 4
    assert all(entry.reason.strip() and entry.failure for entry in allowed.values())
    assert {(entry.plain, entry.guarded) for entry in allowed.values()} == {("passed", "failed")}


def test_an_unknown_reason_is_a_value_error(tmp_path: Path) -> None:
    """An entry naming a reason the file does not state is refused."""
    path = tmp_path / "allowlist.toml"
    path.write_text(
        '[reasons]\n[[difference]]\ntest = "t"\nplain = "passed"\nguarded = "failed"\n'
        'failure = "x"\nreason = "nope"\n',
        encoding="utf-8",
    )
    with pytest.raises(ValueError, match="^.*: t: reason 'nope' is not in \\[reasons\\]$"):
        load_allowlist(path)
