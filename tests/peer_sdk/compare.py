"""The peer run's verdict: each test's outcome in two JUnit reports, the tests whose outcomes
differ, and the allowlist (``allowlist.toml``) every accepted difference must be listed in —
with both outcomes, a text the guarded run's failure message must contain (so a listed test
that fails for another reason is a new difference), and its reason."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import tomllib

MISSING = "missing"  # a test id one run reported and the other did not


@dataclass(frozen=True, slots=True)
class Outcome:
    """passed | failed | error | skipped | missing, and the failure's message ("" if none)."""

    state: str
    message: str = ""


@dataclass(frozen=True, slots=True)
class Allowed:
    """One accepted difference: the test, its state in each run, what the guarded run's
    failure message contains, and why."""

    test: str
    plain: str
    guarded: str
    failure: str
    reason: str


def outcomes(report: Path) -> dict[str, Outcome]:
    """``{test id: Outcome}`` from a pytest JUnit XML report (id: ``classname::name``)."""
    found: dict[str, Outcome] = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        state, message = "passed", ""
        for child in case:
            if child.tag in ("failure", "error", "skipped"):
                state = {"failure": "failed"}.get(child.tag, child.tag)
                message = child.get("message") or ""
                break
        found[f"{case.get('classname')}::{case.get('name')}"] = Outcome(state, message)
    return found


def differences(
    plain: dict[str, Outcome], guarded: dict[str, Outcome]
) -> dict[str, tuple[Outcome, Outcome]]:
    """``{test id: (plain, guarded)}`` for every test whose state differs between the runs."""
    none = Outcome(MISSING)
    return {
        test: (plain.get(test, none), guarded.get(test, none))
        for test in sorted(plain.keys() | guarded.keys())
        if plain.get(test, none).state != guarded.get(test, none).state
    }


def load_allowlist(path: Path) -> dict[str, Allowed]:
    """The accepted differences of ``path``: ``[reasons]`` states each reason once, and each
    ``[[difference]]`` gives ``test``, ``plain``, ``guarded``, ``failure`` and the name of its
    ``reason``. An unknown reason name or a test listed twice is a ValueError."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    reasons: dict[str, str] = data.get("reasons", {})
    allowed: dict[str, Allowed] = {}
    for entry in data.get("difference", []):
        test, reason = entry["test"], entry["reason"]
        if reason not in reasons:
            raise ValueError(f"{path}: {test}: reason {reason!r} is not in [reasons]")
        if test in allowed:
            raise ValueError(f"{path}: {test} is listed twice")
        allowed[test] = Allowed(
            test, entry["plain"], entry["guarded"], entry["failure"], reasons[reason]
        )
    return allowed


def judge(
    found: dict[str, tuple[Outcome, Outcome]], allowed: dict[str, Allowed]
) -> tuple[list[str], list[str]]:
    """(the differences the allowlist does not account for — unlisted, other states, or a
    guarded failure message without the listed text —, the entries that no longer differ):
    both must be empty."""
    unexpected = []
    for test, (plain, guarded) in found.items():
        entry = allowed.get(test)
        if (
            entry is None
            or (entry.plain, entry.guarded) != (plain.state, guarded.state)
            or entry.failure not in guarded.message
        ):
            unexpected.append(
                f"{test}: plain {plain.state}, guarded {guarded.state} {guarded.message[:200]!r}"
            )
    stale = [test for test in allowed if test not in found]
    return unexpected, stale
