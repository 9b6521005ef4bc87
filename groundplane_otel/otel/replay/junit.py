"""The replay report as JUnit XML (``replay --junit-xml FILE``), read natively by GitLab, GitHub
(``mikepenz/action-junit-report``, ``dorny/test-reporter``) and Jenkins.

Built from the report (``report.build_report``) alone, so memory stays bounded: replay keeps the
findings (at most ``--max-findings``) and counts everything else. One ``<testsuite>`` per
boundary, after a first one named ``groundplane gate``:

- the gate suite holds one ``gate`` test case, failed (``<failure>``) with every reason the gate
  failed — unreadable input, no guarded output, a threshold — so the CI view is never green when
  the gate is not; the input's counts are its ``<properties>``;
- each blocked or flagged output with listed findings is a test case with a ``<failure>``, each
  ``error`` output one with an ``<error>``: classname the boundary, name ``boundary trace <id>
  span <id> '<span name>'``, the text every finding's boundary, check, reason code, trace and
  span id (claimed/supported values and the message only with content capture, as the text
  report);
- outputs that are counted but not listed are aggregated, one test case per boundary and kind:
  the passed ones (``answer: 4 outputs passed``), the skipped ones (``<skipped>``), and the blocked,
  flagged or error outputs whose findings were over ``--max-findings`` (a ``<failure>`` or an
  ``<error>`` saying how many). The boundary's real counts are its suite's ``<properties>``.

Every suite's ``tests``, ``failures``, ``errors`` and ``skipped`` count its test cases. Every
value is escaped by ``ElementTree``; text from the traces is capped (``_echo.capped``) and
characters XML 1.0 cannot carry are written as ``\\uXXXX``.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterable, Mapping
from typing import Any

from groundplane_otel._echo import capped

__all__ = ["render_junit"]

GATE_SUITE = "groundplane gate"
_NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")
_FAILED = ("blocked", "flagged")
_NAME_LIMIT = 80


def _xml(text: object, limit: int = 1_000) -> str:
    """``text`` capped, with what XML 1.0 cannot hold (control characters, lone surrogates)
    written as ``\\uXXXX``."""
    return _NOT_XML.sub(lambda found: f"\\u{ord(found.group()):04x}", capped(str(text), limit))


def _suite(parent: ET.Element, name: str, properties: Mapping[str, object]) -> ET.Element:
    suite = ET.SubElement(parent, "testsuite", name=_xml(name, _NAME_LIMIT))
    if properties:
        holder = ET.SubElement(suite, "properties")
        for key, value in properties.items():
            ET.SubElement(holder, "property", name=key, value=_xml(value))
    return suite


def _case(
    suite: ET.Element, classname: str, name: str, kind: str | None = None, message: str = ""
) -> ET.Element:
    """A test case; with ``kind`` (``failure``, ``error``, ``skipped``) its result element."""
    case = ET.SubElement(
        suite, "testcase", classname=_xml(classname, _NAME_LIMIT), name=_xml(name), time="0"
    )
    if kind == "skipped":
        ET.SubElement(case, kind, message=_xml(message, 500))
    elif kind is not None:
        ET.SubElement(case, kind, message=_xml(message, 500), type=kind)
    return case


def _finding_text(finding: Mapping[str, Any]) -> str:
    lines = [
        f"{finding['result']}: boundary {finding['boundary']} check {finding['check']} "
        f"reason {finding['reason']}",
        f"  trace {finding['trace_id']} span {finding['span_id']}",
    ]
    if finding.get("claimed") is not None:
        lines.append(f"  claimed {finding['claimed']} supported {finding['supported']}")
    if finding.get("message") is not None:
        lines.append(f"  message {finding['message']}")
    return "\n".join(lines)


def _outputs(findings: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str, str], list[Any]]:
    """The listed findings grouped by output (boundary, trace id, span id), in report order."""
    grouped: dict[tuple[str, str, str], list[Any]] = {}
    for finding in findings:
        key = (finding["boundary"], finding["trace_id"], finding["span_id"])
        grouped.setdefault(key, []).append(finding)
    return grouped


def _kind(outcome: str | None) -> str:
    return "failure" if outcome in _FAILED else "error"


def _boundary_suite(
    root: ET.Element, name: str, entry: Mapping[str, Any], listed: list[list[Any]]
) -> None:
    outcomes: Mapping[str, int] = entry["outcomes"]
    properties: dict[str, object] = {"outputs": entry["outputs"]}
    properties.update({f"outcome.{key}": value for key, value in sorted(outcomes.items())})
    properties["unsupported_rate"] = f"{entry['unsupported_rate']:.4f}"  # of answers
    properties["unsupported_claim_rate"] = f"{entry['unsupported_claim_rate']:.4f}"
    suite = _suite(root, name, properties)
    shown = {"failure": 0, "error": 0}
    for findings in listed:
        first = findings[0]
        kind = _kind(first["outcome"])
        shown[kind] += 1
        span_name = f" {capped(str(first['span_name']), 60)!r}" if first["span_name"] else ""
        title = f"{name} trace {first['trace_id']} span {first['span_id']}{span_name}"
        more = f" (+{len(findings) - 1} more)" if len(findings) > 1 else ""
        message = f"{first['result']} {first['check']}: {first['reason']}{more}"
        case = _case(suite, name, title, kind, message)
        result = case[0]
        result.text = _xml("\n".join(_finding_text(finding) for finding in findings), 20_000)
    if outcomes.get("passed", 0):
        _case(suite, name, f"{name}: {_outputs_word(outcomes['passed'])} passed")
    if outcomes.get("skipped", 0):
        count = outcomes["skipped"]
        _case(suite, name, f"{name}: {_outputs_word(count)} skipped", "skipped", "not checked")
    failed = sum(outcomes.get(key, 0) for key in _FAILED)
    for kind, total, what in (
        ("failure", failed, "blocked or flagged"),
        ("error", outcomes.get("error", 0), "error"),
    ):
        hidden = total - shown[kind]
        if hidden > 0:
            text = f"{name}: {_outputs_word(hidden)} {what}, not listed"
            _case(suite, name, text, kind, f"{text} (their findings are over --max-findings)")


def _outputs_word(count: int) -> str:
    return f"{count} output" if count == 1 else f"{count} outputs"


def _count(suite: ET.Element) -> dict[str, int]:
    """Set ``suite``'s counting attributes from its test cases; return them."""
    cases = suite.findall("testcase")
    counts = {
        "tests": len(cases),
        "failures": sum(1 for case in cases if case.find("failure") is not None),
        "errors": sum(1 for case in cases if case.find("error") is not None),
        "skipped": sum(1 for case in cases if case.find("skipped") is not None),
    }
    for key, value in counts.items():
        suite.set(key, str(value))
    suite.set("time", "0")
    return counts


def render_junit(report: Mapping[str, Any]) -> bytes:
    """The report as a JUnit XML document (UTF-8, with its declaration)."""
    root = ET.Element("testsuites", name="groundplane-otel replay")
    data = report["input"]
    gate = _suite(
        root, GATE_SUITE, {key: data[key] for key in data if key != "unreadable_locations"}
    )
    verdict = report["gate"]
    if verdict["passed"]:
        case = _case(gate, "groundplane.gate", "gate")
    else:
        message = "gate failed: " + "; ".join(verdict["failures"])
        case = _case(gate, "groundplane.gate", "gate", "failure", message)
        case[0].text = _xml(message, 2_000)
    if data["unreadable"]:
        out = ET.SubElement(case, "system-out")
        lines = [f"unreadable {item}" for item in data["unreadable_locations"]]
        if data["unreadable_left_out"]:
            lines.append(f"… {data['unreadable_left_out']} more unreadable, not located")
        out.text = _xml("\n".join(lines), 50_000)
    grouped = _outputs(report["findings"])
    by_boundary: dict[str, list[list[Any]]] = {}
    for (boundary, _, _), findings in grouped.items():
        by_boundary.setdefault(boundary, []).append(findings)
    for name, entry in report["boundaries"].items():
        _boundary_suite(root, name, entry, by_boundary.get(name, []))
    totals = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
    for suite in root.findall("testsuite"):
        for key, value in _count(suite).items():
            totals[key] += value
    for key, value in totals.items():
        root.set(key, str(value))
    root.set("time", "0")
    ET.indent(root)
    document: bytes = ET.tostring(root, encoding="utf-8", xml_declaration=True)
    return document + b"\n"
