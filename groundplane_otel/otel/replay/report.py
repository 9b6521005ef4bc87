"""The report of a replay: per boundary outputs, outcomes and the unsupported rates (of
answers checked, and of claims); per finding trace id, span id and name, boundary, check,
reason code and the outcome of its output (receipts and message only with content capture);
what the policy expected and the input never showed (``coverage``); and the CI gate's verdict.
The text and JSON reports print it; ``junit`` and ``markdown`` write it for CI, from this one
report.

The gate fails closed (``Gate``): on an output it could not check, a fact or boundary the input
never showed, input it could not read or that held no span, unless told otherwise; besides its
thresholds. Every reason is named, with what would allow it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from groundplane_otel.otel.config import GuardConfig
from groundplane_otel.otel.otlp_files import Unreadable
from groundplane_otel.otel.replay.coverage import CAPTURE_HINT, expected_unseen
from groundplane_otel.otel.replay.stats import ReplayStats

__all__ = ["Gate", "build_report", "coverage_lines", "render_json", "render_text"]

_OUTCOMES = ("passed", "blocked", "flagged", "skipped", "error")


@dataclass(frozen=True, slots=True)
class Gate:
    """CI thresholds. The gate fails closed: an output counted ``error`` fails it unless
    ``max_errors`` or ``max_error_rate`` allows it (the error count is within either); a fact or
    boundary of the policy the input never showed fails it unless ``allow_unmatched``; an input
    with no span never passes, one with no guarded output only with ``allow_empty``;
    unreadable input above ``max_unreadable`` fails it. The unsupported rates are not gated
    when None: ``max_unsupported_rate`` is the share of checked answers refused,
    ``max_unsupported_claim_rate`` the share of claims."""

    max_unsupported_rate: float | None = None
    max_errors: int = 0
    max_unreadable: int = 0
    allow_empty: bool = False
    max_error_rate: float = 0.0
    max_unsupported_claim_rate: float | None = None
    allow_unmatched: bool = False


_CHECKED = ("passed", "blocked", "flagged")  # an answer checked; blocked or flagged: refused


def build_report(
    stats: ReplayStats,
    bad: Unreadable,
    gate: Gate,
    *,
    capture_content: bool,
    config: GuardConfig | None = None,
) -> dict[str, Any]:
    """Everything the replay found, as plain data (``--json`` prints it as is): every number
    from the engine's results as replay tallied them (``stats``, a replayer's or the merged
    shares'); ``bad`` holds what could not be read (the readers' and the replayer's);
    ``config``, the policy replayed: what it expected and the input never showed
    (``coverage``). Every mapping is in a canonical order (outcomes as listed, claims and
    boundaries by name), so a parallel replay prints byte for byte what one process prints."""
    boundaries: dict[str, dict[str, Any]] = {}
    for (boundary, outcome), value in stats.outputs.items():
        entry = boundaries.setdefault(boundary, {"outputs": 0, "outcomes": {}, "claims": {}})
        entry["outputs"] += value
        entry["outcomes"][outcome] = entry["outcomes"].get(outcome, 0) + value
    for (boundary, verdict), value in stats.claims.items():
        entry = boundaries.setdefault(boundary, {"outputs": 0, "outcomes": {}, "claims": {}})
        entry["claims"][verdict] = entry["claims"].get(verdict, 0) + value
    total_claims = unsupported = errors = outputs = checked = refused = 0
    for entry in boundaries.values():
        entry["outcomes"] = dict(sorted(entry["outcomes"].items(), key=_outcome_order))
        entry["claims"] = dict(sorted(entry["claims"].items()))
        claims = sum(entry["claims"].values())
        answers = sum(entry["outcomes"].get(key, 0) for key in _CHECKED)
        wrong = answers - entry["outcomes"].get("passed", 0)
        entry["unsupported_rate"] = wrong / answers if answers else 0.0
        entry["unsupported_claim_rate"] = (
            entry["claims"].get("unsupported", 0) / claims if claims else 0.0
        )
        total_claims += claims
        unsupported += entry["claims"].get("unsupported", 0)
        errors += entry["outcomes"].get("error", 0)
        outputs += entry["outputs"]
        checked += answers
        refused += wrong
    rate = refused / checked if checked else 0.0
    claim_rate = unsupported / total_claims if total_claims else 0.0
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
    error_reasons = dict(sorted(stats.errors.items(), key=lambda item: (-item[1], item[0])))
    coverage = expected_unseen(stats, config) if config is not None else None
    failures = _failures(
        stats,
        bad,
        gate,
        coverage,
        errors=errors,
        error_reasons=error_reasons,
        outputs=outputs,
        answers=(refused, checked, rate),
        claims=(unsupported, total_claims, claim_rate),
    )
    report: dict[str, Any] = {
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
        "answers_checked": checked,
        "answers_refused": refused,
        "unsupported_rate": rate,
        "claims": total_claims,
        "unsupported_claims": unsupported,
        "unsupported_claim_rate": claim_rate,
        "error_outputs": errors,
        "error_reasons": error_reasons,
    }
    if coverage is not None:
        report["coverage"] = coverage
    report["findings"] = findings
    report["findings_left_out"] = stats.findings_dropped
    report["gate"] = {"passed": not failures, "failures": failures}
    return report


def _failures(
    stats: ReplayStats,
    bad: Unreadable,
    gate: Gate,
    coverage: dict[str, Any] | None,
    *,
    errors: int,
    error_reasons: dict[str, int],
    outputs: int,
    answers: tuple[int, int, float],
    claims: tuple[int, int, float],
) -> list[str]:
    """Why the gate fails, most fundamental first; empty when it passes."""
    failures = []
    if bad.count > gate.max_unreadable:
        failures.append(f"{bad.count} unreadable inputs > {gate.max_unreadable}")
    if not stats.spans:  # never passes: nothing was read that could be checked
        if stats.requests:
            why = f"{stats.requests} requests read, none holding a span"
        else:
            why = "nothing in it is OTLP trace data" if bad.count else "the input is empty"
        failures.append(
            f"no span read from the input ({why}); replay reads the Collector's file exporter "
            "output: one OTLP/JSON request per line (lowerCamelCase keys) or length-prefixed "
            "OTLP protobuf"
        )
    if stats.spans and not outputs and not gate.allow_empty:
        failures.append("no guarded output in the input (--allow-empty to pass)")
    uncaptured = coverage["facts_without_results"] if coverage is not None else []
    hint = f": {CAPTURE_HINT}"  # said once, by the first failure it explains
    allowed = errors <= gate.max_errors or (outputs and errors / outputs <= gate.max_error_rate)
    if errors and not allowed:
        reasons = ", ".join(f"{reason} {count}" for reason, count in error_reasons.items())
        text = (
            f"{errors} of {outputs} outputs could not be checked (error: {reasons}) > "
            f"{gate.max_errors} allowed (--max-errors {gate.max_errors}, --max-error-rate "
            f"{gate.max_error_rate:g})"
        )
        if uncaptured:
            text += f"; content not captured{hint}"
            hint = ""
        failures.append(text)
    refused, checked, rate = answers
    if gate.max_unsupported_rate is not None and rate > gate.max_unsupported_rate:
        failures.append(
            f"unsupported-answer rate {rate:.4f} ({refused} of {checked} answers refused) > "
            f"{gate.max_unsupported_rate:g} (--max-unsupported-rate)"
        )
    wrong, total, claim_rate = claims
    if gate.max_unsupported_claim_rate is not None and claim_rate > gate.max_unsupported_claim_rate:
        failures.append(
            f"unsupported-claim rate {claim_rate:.4f} ({wrong} of {total} claims) > "
            f"{gate.max_unsupported_claim_rate:g} (--max-unsupported-claim-rate)"
        )
    waived = gate.allow_unmatched or (gate.allow_empty and not outputs) or not stats.spans
    if coverage is not None and not waived:
        for item in coverage["facts_unseen"]:
            failures.append(f"fact {item['fact']!r}: {item['problem']} (--allow-unmatched to pass)")
        for item in uncaptured:
            failures.append(
                f"fact {item['fact']!r}: {item['problem']}{hint} (--allow-unmatched to pass)"
            )
            hint = ""
        for item in coverage["boundaries_unmatched"]:
            failures.append(
                f"boundary {item['boundary']!r} {item['problem']} (--allow-unmatched to pass)"
            )
    return failures


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
        + "  unsupported: answers  claims"
    )
    for name, entry in report["boundaries"].items():
        cells = " ".join(f"{entry['outcomes'].get(outcome, 0):>7}" for outcome in _OUTCOMES)
        lines.append(
            f"{name:<24} {entry['outputs']:>7} {cells}  {'':>4}{entry['unsupported_rate']:>9.4f}"
            f"  {entry['unsupported_claim_rate']:.4f}"
        )
    if not report["boundaries"]:
        lines.append("(no guarded output in the input)")
    else:
        lines.append(
            f"unsupported answers: {report['answers_refused']} of {report['answers_checked']} "
            f"checked ({report['unsupported_rate']:.4f}); unsupported claims: "
            f"{report['unsupported_claims']} of {report['claims']} "
            f"({report['unsupported_claim_rate']:.4f}); error outputs: {report['error_outputs']}"
            + "".join(f", {reason} {count}" for reason, count in report["error_reasons"].items())
        )
    lines += coverage_lines(report)
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
    failures = gate["failures"]
    if gate["passed"]:
        lines.append("gate: passed")
    elif len(failures) == 1:
        lines.append(f"gate: FAILED — {failures[0]}")
    else:  # one reason a line: reasons name lists of their own
        lines.append(f"gate: FAILED, {len(failures)} reasons:")
        lines += [f"  - {failure}" for failure in failures]
    return "\n".join(lines)


def coverage_lines(report: dict[str, Any]) -> list[str]:
    """What the policy expected and the input never showed (none: no lines)."""
    coverage = report.get("coverage")
    if not coverage:
        return []
    lines = [
        f"  fact {item['fact']!r}: {item['problem']}"
        for item in coverage["facts_unseen"] + coverage["facts_without_results"]
    ]
    lines += [
        f"  boundary {item['boundary']!r} {item['problem']}"
        for item in coverage["boundaries_unmatched"]
    ]
    return ["", "not seen in the input:", *lines] if lines else []


def render_json(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, sort_keys=False)
