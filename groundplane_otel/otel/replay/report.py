"""The report of a replay: per boundary outputs, outcomes and the unsupported-claim rate; per
finding trace id, span id and name, boundary, check, reason code and the outcome of its output
(receipts and message only with content capture); and the CI gate's verdict against thresholds.
The text and JSON reports print it; ``junit`` and ``markdown`` write it for CI, from this one
report.

The gate is honest: it fails on input it could not read (more than ``max_unreadable``
unreadable lines, messages, files or spans; 0 by default) and on input where no guarded output
matched (unless ``allow_empty``), besides its thresholds."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from groundplane_otel.otel.otlp_files import Unreadable
from groundplane_otel.otel.replay.stats import ReplayStats

__all__ = ["Gate", "build_report", "render_text"]

_OUTCOMES = ("passed", "blocked", "flagged", "skipped", "error")


@dataclass(frozen=True, slots=True)
class Gate:
    """CI thresholds: None means not gated. Unreadable input above ``max_unreadable`` and an
    input with no guarded output (unless ``allow_empty``) always fail."""

    max_unsupported_rate: float | None = None
    max_errors: int | None = None
    max_unreadable: int = 0
    allow_empty: bool = False


def build_report(
    stats: ReplayStats, bad: Unreadable, gate: Gate, *, capture_content: bool
) -> dict[str, Any]:
    """Everything the replay found, as plain data (``--json`` prints it as is): every number
    from the engine's results as replay tallied them (``stats``, a replayer's or the merged
    shares'); ``bad`` holds what could not be read (the readers' and the replayer's). Every
    mapping is in a canonical order (outcomes as listed, claims and boundaries by name), so
    a parallel replay prints byte for byte what one process prints."""
    boundaries: dict[str, dict[str, Any]] = {}
    for (boundary, outcome), value in stats.outputs.items():
        entry = boundaries.setdefault(boundary, {"outputs": 0, "outcomes": {}, "claims": {}})
        entry["outputs"] += value
        entry["outcomes"][outcome] = entry["outcomes"].get(outcome, 0) + value
    for (boundary, verdict), value in stats.claims.items():
        entry = boundaries.setdefault(boundary, {"outputs": 0, "outcomes": {}, "claims": {}})
        entry["claims"][verdict] = entry["claims"].get(verdict, 0) + value
    total_claims = unsupported = errors = 0
    for entry in boundaries.values():
        entry["outcomes"] = dict(sorted(entry["outcomes"].items(), key=_outcome_order))
        entry["claims"] = dict(sorted(entry["claims"].items()))
        claims = sum(entry["claims"].values())
        entry["unsupported_rate"] = (
            entry["claims"].get("unsupported", 0) / claims if claims else 0.0
        )
        total_claims += claims
        unsupported += entry["claims"].get("unsupported", 0)
        errors += entry["outcomes"].get("error", 0)
    rate = unsupported / total_claims if total_claims else 0.0
    findings = []
    for finding in stats.findings:
        item: dict[str, Any] = {
            "trace_id": finding.trace_id,
            "span_id": finding.span_id,
            "span_name": finding.span_name,
            "boundary": finding.boundary,
            "check": finding.check or "<output>",
            "result": finding.result,
            "reason": finding.reason,
            "outcome": finding.outcome,
        }
        if capture_content:
            item["claimed"], item["supported"] = finding.claimed, finding.supported
            item["message"] = finding.message
        findings.append(item)
    failures = []
    if gate.max_unsupported_rate is not None and rate > gate.max_unsupported_rate:
        failures.append(f"unsupported-claim rate {rate:.4f} > {gate.max_unsupported_rate}")
    if gate.max_errors is not None and errors > gate.max_errors:
        failures.append(f"{errors} error outputs > {gate.max_errors}")
    if bad.count > gate.max_unreadable:
        failures.append(f"{bad.count} unreadable inputs > {gate.max_unreadable}")
    if not boundaries and not gate.allow_empty:
        failures.append("no guarded output in the input (--allow-empty to pass)")
    return {
        "input": {
            "requests": stats.requests,
            "spans": stats.spans,
            "traces": stats.traces,
            "incomplete_traces": stats.incomplete_traces,
            "orphan_spans": stats.orphan_spans,
            "dropped_spans": stats.dropped_spans,
            "bad_spans": stats.bad_spans,
            "duplicate_spans": stats.duplicate_spans,
            "conflicting_traces": stats.conflicting_traces,
            "unreadable": bad.count,
            "unreadable_locations": [str(item) for item in bad.kept],
            "unreadable_left_out": bad.left_out,
        },
        "boundaries": dict(sorted(boundaries.items())),
        "unsupported_rate": rate,
        "error_outputs": errors,
        "findings": findings,
        "findings_left_out": stats.findings_dropped,
        "gate": {"passed": not failures, "failures": failures},
    }


def _outcome_order(item: tuple[str, int]) -> tuple[int, str]:
    name = item[0]
    return (_OUTCOMES.index(name) if name in _OUTCOMES else len(_OUTCOMES), name)


def render_text(report: dict[str, Any]) -> str:
    """The human report."""
    data = report["input"]
    lines = [
        f"replayed {data['spans']} spans in {data['traces']} traces ({data['requests']} "
        f"requests); incomplete traces: {data['incomplete_traces']}, orphan spans: "
        f"{data['orphan_spans']}, dropped spans: {data['dropped_spans']}, duplicate spans: "
        f"{data['duplicate_spans']}, conflicting traces: {data['conflicting_traces']}, "
        f"unreadable: {data['unreadable']}"
    ]
    lines += [f"  unreadable {item}" for item in data["unreadable_locations"]]
    if data["unreadable_left_out"]:
        lines.append(f"  … {data['unreadable_left_out']} more unreadable, not located")
    lines.append("")
    lines.append(
        f"{'boundary':<24} {'outputs':>7} "
        + " ".join(f"{o:>7}" for o in _OUTCOMES)
        + "  unsupported-claim rate"
    )
    for name, entry in report["boundaries"].items():
        cells = " ".join(f"{entry['outcomes'].get(outcome, 0):>7}" for outcome in _OUTCOMES)
        lines.append(f"{name:<24} {entry['outputs']:>7} {cells}  {entry['unsupported_rate']:.4f}")
    if not report["boundaries"]:
        lines.append("(no guarded output in the input)")
    lines.append("")
    for finding in report["findings"]:
        line = (
            f"{finding['result']:<11} trace {finding['trace_id']} span {finding['span_id']} "
            f"boundary {finding['boundary']} check {finding['check']} reason {finding['reason']}"
        )
        if "claimed" in finding and finding["claimed"] is not None:
            line += f" claimed {finding['claimed']} supported {finding['supported']}"
        lines.append(line)
    if report["findings_left_out"]:
        lines.append(f"… {report['findings_left_out']} more findings, not listed")
    gate = report["gate"]
    lines.append("")
    lines.append(
        "gate: passed" if gate["passed"] else "gate: FAILED — " + "; ".join(gate["failures"])
    )
    return "\n".join(lines)


def render_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, sort_keys=False)
