"""The replay report as Markdown (``replay --markdown FILE``): a PR comment or a GitHub job
summary (``$GITHUB_STEP_SUMMARY``).

The gate's verdict and why, one table row per boundary (outputs, passed, would block, flagged,
errors, skipped, the shares of answers and of claims unsupported), the input's counts, what the
policy expected and the input never showed, the first unreadable inputs and the
first ``MAX_FINDINGS`` findings (check, reason, trace and span id; receipts only with content
capture, as the text report), each count of what is not shown. Built from the report
(``report.build_report``) alone. Every cell is capped (``_echo.capped``), on one line, with
control characters written as ``\\uXXXX`` and Markdown punctuation escaped, so text from the
traces (a span name, a claimed value) can neither break the table nor become a link, an image
or HTML.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from groundplane_otel._echo import capped

__all__ = ["MAX_FINDINGS", "MAX_UNREADABLE", "render_markdown"]

MAX_FINDINGS = 20
MAX_UNREADABLE = 10
_PUNCTUATION = re.compile(r"([\\`*_{}\[\]<>()!|~&])")
_LINE_BREAKS = re.compile(r"[\r\n\x0b\x0c\x85\u2028\u2029]+")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff]")


def cell(value: object, limit: int = 120) -> str:
    """``value`` as one table cell: capped, on one line, control characters as ``\\uXXXX``,
    Markdown punctuation escaped."""
    text = _LINE_BREAKS.sub(" ", capped(str(value), limit))
    text = _CONTROL.sub(lambda found: f"\\u{ord(found.group()):04x}", text)
    return _PUNCTUATION.sub(r"\\\1", text)


def _row(values: list[object]) -> str:
    return "| " + " | ".join(cell(value) for value in values) + " |"


def _boundaries(report: Mapping[str, Any]) -> list[str]:
    lines = [
        "| boundary | outputs | passed | would block | flagged | errors | skipped | "
        "unsupported answers | unsupported claims |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for name, entry in report["boundaries"].items():
        outcomes = entry["outcomes"]
        counts = [
            outcomes.get(key, 0) for key in ("passed", "blocked", "flagged", "error", "skipped")
        ]
        rates = [f"{entry[key]:.4f}" for key in ("unsupported_rate", "unsupported_claim_rate")]
        lines.append(_row([name, entry["outputs"], *counts, *rates]))
    if not report["boundaries"]:
        lines.append(_row(["(no guarded output in the input)", 0, 0, 0, 0, 0, 0, "-", "-"]))
    return lines


def _findings(report: Mapping[str, Any]) -> list[str]:
    findings = report["findings"]
    receipts = any(finding.get("claimed") is not None for finding in findings)
    header = ["result", "boundary", "check", "reason", "trace id", "span id"]
    lines = [
        "| " + " | ".join(header + (["claimed", "supported"] if receipts else [])) + " |",
        "| " + " | ".join(["---"] * (len(header) + (2 if receipts else 0))) + " |",
    ]
    for finding in findings[:MAX_FINDINGS]:
        values: list[object] = [finding[key] for key in ("result", "boundary", "check", "reason")]
        values += [finding["trace_id"], finding["span_id"]]
        if receipts:
            values += [finding.get("claimed") or "", finding.get("supported") or ""]
        lines.append(_row(values))
    hidden = len(findings[MAX_FINDINGS:]) + report["findings_left_out"]
    if hidden:
        lines += ["", f"… {hidden} more findings, not shown."]
    return lines


def render_markdown(report: Mapping[str, Any]) -> str:
    """The report as a Markdown summary."""
    gate, data = report["gate"], report["input"]
    lines = ["## groundplane-otel replay", ""]
    if gate["passed"]:
        lines.append("**Gate: passed.**")
    else:
        lines.append("**Gate: FAILED**")
        lines += [f"- {cell(failure, 300)}" for failure in gate["failures"]]
    lines += ["", *_boundaries(report), ""]
    lines.append(
        f"Input: {data['spans']} spans in {data['traces']} traces ({data['requests']} requests); "
        f"incomplete traces {data['incomplete_traces']}, orphan spans {data['orphan_spans']}, "
        f"dropped spans {data['dropped_spans']}, duplicate spans {data['duplicate_spans']}, "
        f"conflicting traces {data['conflicting_traces']}, unreadable {data['unreadable']}."
    )
    coverage = report.get("coverage") or {}
    unseen = [
        f"fact {item['fact']!r}: {item['problem']}"
        for item in coverage.get("facts_unseen", []) + coverage.get("facts_without_results", [])
    ]
    unseen += [
        f"boundary {item['boundary']!r} {item['problem']}"
        for item in coverage.get("boundaries_unmatched", [])
    ]
    if unseen:
        lines += ["", "Not seen in the input:", ""]
        lines += [f"- {cell(item, 500)}" for item in unseen]
    if data["unreadable"]:
        lines.append("")
        shown = data["unreadable_locations"][:MAX_UNREADABLE]
        lines += [f"- unreadable {cell(item, 300)}" for item in shown]
        hidden = data["unreadable"] - len(shown)
        if hidden:
            lines.append(f"- … {hidden} more unreadable, not shown")
    if report["findings"] or report["findings_left_out"]:
        lines += ["", "### Findings", "", *_findings(report)]
    return "\n".join(lines) + "\n"
