"""What a grounded test saw — output counts and guardrail findings — and its failure text.

Pure values and formatting (no SDK here): ``otel/testing.py`` reads them from the test's
in-memory telemetry, the pytest plugin fails the test with :func:`failure_text`. Every echoed
value is capped (200 characters + an ellipsis) and at most ``MAX_LISTED`` findings are listed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from groundplane_otel.otel._telemetry.metric_counts import SeenFinding

__all__ = ["FAILING", "MAX_LISTED", "Counts", "SeenFinding", "cap", "failure_text", "outcome_table"]

MAX_SHOWN: Final = 200
MAX_LISTED: Final = 10
FAILING: Final = ("blocked", "flagged", "error")
_ORDER: Final = ("passed", "blocked", "flagged", "error", "skipped")

Counts = Mapping[tuple[str, str, str | None], int]
"""``groundplane.outputs`` as counted: (boundary, outcome, skip reason or None) -> count."""


def cap(text: str) -> str:
    """``text``, cut to ``MAX_SHOWN`` characters plus an ellipsis."""
    return text if len(text) <= MAX_SHOWN else text[:MAX_SHOWN] + "…"


def outcome_table(counts: Counts) -> dict[str, dict[str, int]]:
    """``{boundary: {outcome: count}}`` (skip reasons folded into ``skipped``)."""
    table: dict[str, dict[str, int]] = {}
    for (boundary, outcome, _), count in sorted(counts.items(), key=_sort_key):
        per = table.setdefault(boundary, {})
        per[outcome] = per.get(outcome, 0) + count
    return table


def failure_text(
    counts: Counts,
    findings: Sequence[SeenFinding],
    *,
    at_least: int,
    exact: int | None,
    boundary: str | None,
    capture_content: bool,
) -> str | None:
    """Why the test's outputs are not grounded, or None when they are: any blocked, flagged
    or error output, or fewer checked (not skipped) outputs than ``at_least`` (``exact``:
    exactly that many). Restricted to ``boundary`` when given."""
    if boundary is not None:
        counts = {key: n for key, n in counts.items() if key[0] == boundary}
        findings = [finding for finding in findings if finding.boundary == boundary]
    failing = sum(n for (_, outcome, _), n in counts.items() if outcome in FAILING)
    checked = failing + sum(n for (_, outcome, _), n in counts.items() if outcome == "passed")
    where = "" if boundary is None else f" at boundary {cap(repr(boundary))}"
    problems = []
    if failing:
        problems.append(f"{failing} of {checked} checked output(s){where} not grounded")
    if exact is not None and checked != exact:
        problems.append(f"expected {exact} checked output(s){where}, saw {checked}")
    elif exact is None and checked < at_least:
        problems.append(f"expected at least {at_least} checked output(s){where}, saw {checked}")
    if not problems:
        return None
    lines = [f"groundplane: {problem}" for problem in problems]
    lines.append(f"outputs: {_outputs_line(counts)}")
    for index, finding in enumerate(findings[:MAX_LISTED], start=1):
        lines.extend(_finding_lines(finding, index, len(findings)))
    if len(findings) > MAX_LISTED:
        lines.append(
            f"… and {len(findings) - MAX_LISTED} more finding(s) (groundplane.findings() has all)"
        )
    if findings and not capture_content:
        lines.append(
            "(content capture is off: install with capture_content=True to see the claimed "
            "and supported values)"
        )
    return "\n".join(lines)


def _sort_key(item: tuple[tuple[str, str, str | None], int]) -> tuple[str, int, str]:
    (boundary, outcome, reason), _ = item
    rank = _ORDER.index(outcome) if outcome in _ORDER else len(_ORDER)
    return boundary, rank, reason or ""


def _outputs_line(counts: Counts) -> str:
    if not counts:
        return (
            "none counted — is the agent traced with groundplane.tracer_provider, and does a "
            "boundary of the policy match its spans?"
        )
    per: dict[str, list[str]] = {}
    for (boundary, outcome, reason), count in sorted(counts.items(), key=_sort_key):
        label = f"{count} {outcome}" if reason is None else f"{count} {outcome} ({reason})"
        per.setdefault(boundary, []).append(label)
    return "; ".join(
        f"boundary {cap(repr(name))}: {', '.join(parts)}" for name, parts in per.items()
    )


def _finding_lines(finding: SeenFinding, index: int, total: int) -> list[str]:
    lines = [
        f"finding {index} of {total}: {finding.result} ({cap(finding.reason)}) "
        f"at boundary {cap(repr(finding.boundary))}"
    ]
    what = []
    if finding.check is not None:
        what.append(f"check {cap(finding.check)}")
    if finding.field is not None:
        what.append(f"field {cap(repr(finding.field))}")
    if finding.fact is not None:
        what.append(f"fact {cap(repr(finding.fact))}")
    if what:
        lines.append("  " + ", ".join(what))
    ids = f"trace {finding.trace_id}, span {finding.span_id}"
    if not finding.trace_id.strip("0"):
        lines.append("  outside any span (checked with no current span)")
    elif finding.span_name is None:
        lines.append(f"  on a span not ended yet ({ids})")
    else:
        lines.append(f"  on span {cap(repr(finding.span_name))} ({ids})")
    if finding.claimed is not None or finding.supported is not None:
        lines.append(
            f"  claimed {cap(finding.claimed or '?')}, supported {cap(finding.supported or '?')}"
        )
    if finding.message is not None:
        lines.append(f"  {cap(finding.message)}")
    return lines
