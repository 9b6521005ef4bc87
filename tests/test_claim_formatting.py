"""A claim's message and superlative's winner reason are formatted when first read: the same
text, ``args``, ``repr()`` and pickled state as a claim formatted when it was raised."""

from __future__ import annotations

import pickle

import pytest

from groundplane_otel.checks.superlative import superlative
from groundplane_otel.errors import UnsupportedClaim
from groundplane_otel.registry import FactRegistry

HEAD = "unsupported claim in field 'winner': model said {!r}, registered facts support 'north'"
BEST = "computed argmax on 'total' is 'north' (3)"


def _claim(winner: str) -> UnsupportedClaim:
    registry = FactRegistry()
    registry.record_ranking(
        "sales", {"north": 3, "south": 2, "east": 1}, key="total", tool="top_sales", args={"q": 1}
    )
    with pytest.raises(UnsupportedClaim) as caught:
        superlative("sales")(registry, {"winner": winner})
    return caught.value


@pytest.mark.parametrize(
    ("winner", "code", "reason"),
    [
        ("south", "wrong_winner", f"{BEST}; 'south' ranked #2 at 2"),
        ("west", "not_ranked", f"{BEST}; 'west' was never ranked"),
        (
            "east",
            "wrong_winner",
            f"{BEST}; 'east' ranked #3 at 1 (last: the computed argmin, as if lower were better)",
        ),
    ],
)
def test_a_late_formatted_claim_reads_as_one_formatted_when_raised(
    winner: str, code: str, reason: str
) -> None:
    claim = _claim(winner)
    message = f"{HEAD.format(winner)} | fact='sales' | provenance=top_sales(q=1) | {reason}"
    assert claim.code == code
    assert repr(claim) == f"UnsupportedClaim({message!r})"
    assert (claim.reason, claim.args, str(claim)) == (reason, (message,), message)
    copied = pickle.loads(pickle.dumps(_claim(winner)))  # pickled before anything was read
    assert (copied.reason, copied.args, str(copied)) == (reason, (message,), message)


def test_a_redacted_claim_keeps_its_summary_whatever_was_read_before() -> None:
    claim = _claim("south")
    claim.redact("redacted: winner")
    assert (claim.args, str(claim)) == (("redacted: winner",), "redacted: winner")
    assert claim.diagnosis.endswith("'south' ranked #2 at 2")
