"""``replay --junit-xml`` and ``--markdown`` over a live recording, through the real CLI: valid
JUnit XML whose counts match its test cases and the report, a gate test case that is never
green when the gate failed, a Markdown summary whose table survives hostile text, and no file
at all on a usage error."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from replay_recording import ALLOW_ITS_ERRORS, POLICY, live_and_recorded, unguarded_recording

from groundplane_otel.cli import main
from groundplane_otel.otel.replay.markdown import MAX_FINDINGS, cell

WRONG = '\\\\\\"winner\\\\\\": \\\\\\"US\\\\\\"'  # the wrong answer, as the JSON line holds it
HOSTILE = "chat \x00|\n<img src=x onerror=alert(1)>]]>\x1b"


def run(tmp_path: Path, recording: Path, *extra: str, policy: str = POLICY) -> int:
    file = tmp_path / "policy.yaml"
    file.write_text(policy)
    args = ["replay", "--policy", str(file), str(recording), "--quiet"]
    out = ["--junit-xml", str(tmp_path / "gate.xml"), "--markdown", str(tmp_path / "gate.md")]
    return main([*args, *out, *ALLOW_ITS_ERRORS, *extra])


def junit(tmp_path: Path) -> ET.Element:
    return ET.fromstring((tmp_path / "gate.xml").read_bytes())


def cases(suite: ET.Element) -> list[tuple[str, str, str | None]]:
    """Each test case of ``suite``: classname, name, and its result element's tag (or None)."""
    found = []
    for case in suite.findall("testcase"):
        result = next(iter(case.findall("*[@message]")), None)
        found.append(
            (case.get("classname", ""), case.get("name", ""), getattr(result, "tag", None))
        )
    return found


def assert_counts_match(root: ET.Element) -> None:
    """Every suite's and the root's tests/failures/errors/skipped count their test cases."""
    totals = dict.fromkeys(("tests", "failures", "errors", "skipped"), 0)
    for suite in root.findall("testsuite"):
        tags = [tag for _, _, tag in cases(suite)]
        counted = {
            "tests": len(tags),
            "failures": tags.count("failure"),
            "errors": tags.count("error"),
            "skipped": tags.count("skipped"),
        }
        assert {key: int(suite.get(key, "-1")) for key in counted} == counted
        for key, value in counted.items():
            totals[key] += value
    assert {key: int(root.get(key, "-1")) for key in totals} == totals


def test_junit_has_one_case_per_listed_output_and_the_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The blocked output is a failure, the two error outputs are errors (boundary, check,
    reason, trace and span id in the text, no claimed value without content capture), the four
    passed ones one aggregate case; the gate case passes; the counts are the report's."""
    _, path = live_and_recorded(tmp_path)
    assert run(tmp_path, path, "--json") == 0
    report = json.loads(capsys.readouterr().out)
    root = junit(tmp_path)
    assert root.tag == "testsuites"
    assert [suite.get("name") for suite in root.findall("testsuite")] == [
        "groundplane gate",
        "answer",
    ]
    gate, answer = root.findall("testsuite")
    assert cases(gate) == [("groundplane.gate", "gate", None)]
    found = {f["span_id"]: f for f in report["findings"]}
    expected = []
    for finding in report["findings"]:
        name = f"answer trace {finding['trace_id']} span {finding['span_id']} "
        name += repr(finding["span_name"])
        expected.append(
            ("answer", name, "failure" if finding["result"] == "unsupported" else "error")
        )
    assert cases(answer) == [*expected, ("answer", "answer: 4 outputs passed", None)]
    assert [tag for _, _, tag in expected] == ["failure", "error", "error"]
    (failure,) = answer.iter("failure")
    wrong = next(f for f in found.values() if f["reason"] == "wrong_winner")
    assert failure.get("message") == f"unsupported {wrong['check']}: wrong_winner"
    assert failure.text == (
        f"unsupported: boundary answer check {wrong['check']} reason wrong_winner\n"
        f"  trace {wrong['trace_id']} span {wrong['span_id']}"
    )
    assert "claimed" not in (tmp_path / "gate.xml").read_text()
    properties = {p.get("name"): p.get("value") for p in answer.iter("property")}
    assert properties == {
        "outputs": "7",
        "outcome.blocked": "1",
        "outcome.error": "2",
        "outcome.passed": "4",
        "unsupported_rate": "0.2000",  # 1 of the 5 answers checked
        "unsupported_claim_rate": "0.1667",  # 1 of the 6 claims
    }
    assert_counts_match(root)
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("5", "1", "2")


def test_with_content_capture_the_failure_carries_the_receipts(tmp_path: Path) -> None:
    """``--capture-content`` adds claimed and supported values to the failure text, as to the
    text report (JSON-quoted, an ESC in the recorded answer escaped)."""
    _, path = live_and_recorded(tmp_path)
    text = path.read_text()
    assert text.count(WRONG) == 1
    path.write_text(text.replace(WRONG, WRONG.replace("US", "U\\\\\\\\u001bS")))
    assert run(tmp_path, path, "--capture-content") == 0
    (failure,) = junit(tmp_path).iter("failure")
    assert failure.text is not None
    assert failure.text.splitlines()[2] == '  claimed "U\\u001bS" supported "EU"'


def test_findings_over_the_cap_become_counted_cases(tmp_path: Path) -> None:
    """With ``--max-findings 1`` the two error outputs not listed are one error case saying
    how many, so the CI view still shows them."""
    _, path = live_and_recorded(tmp_path)
    assert run(tmp_path, path, "--max-findings", "1") == 0
    root = junit(tmp_path)
    answer = root.findall("testsuite")[1]
    listed = cases(answer)
    assert [(name.split(" trace ")[0], tag) for _, name, tag in listed[:1]] == [
        ("answer", "failure")
    ]
    assert listed[1:] == [
        ("answer", "answer: 4 outputs passed", None),
        ("answer", "answer: 2 outputs error, not listed", "error"),
    ]
    (error,) = answer.iter("error")
    assert error.get("message") == (
        "answer: 2 outputs error, not listed (their findings are over --max-findings)"
    )
    assert_counts_match(root)
    markdown = (tmp_path / "gate.md").read_text()
    assert "… 2 more findings, not shown." in markdown.splitlines()


def test_a_failed_gate_is_a_failed_case_with_the_unreadable_located(tmp_path: Path) -> None:
    """An unreadable span with a hostile name, in a file whose name holds an ESC, fails the
    gate (exit 1): the gate case fails with the reason, its location is in the case's output;
    the file is valid XML (the ESC written as ``\\u001b``) and the Markdown says FAILED with
    the table intact."""
    _, recorded = live_and_recorded(tmp_path)
    lines = recorded.read_text().splitlines()
    tree = json.loads(lines[0])
    tree["resourceSpans"][0]["scopeSpans"][0]["spans"][0].update(spanId="ab", name=HOSTILE)
    path = tmp_path / "odd\x1bname.jsonl"
    path.write_text("\n".join([*lines, json.dumps(tree)]) + "\n")
    assert run(tmp_path, path) == 1
    root = junit(tmp_path)
    gate = root.findall("testsuite")[0]
    assert cases(gate) == [("groundplane.gate", "gate", "failure")]
    (failure,) = gate.iter("failure")
    assert failure.get("message") == "gate failed: 1 unreadable inputs > 0"
    out = gate.find("testcase/system-out")
    assert out is not None
    assert out.text is not None
    location = out.text.splitlines()[0]
    shown = str(path).replace("\x1b", "\\u001b")
    assert location.startswith(f"unreadable {shown}:{len(lines) + 1} span 0 'chat \\x00|\\n")
    assert "\x1b" not in (tmp_path / "gate.xml").read_text()
    assert_counts_match(root)
    assert "\x1b" not in (tmp_path / "gate.md").read_text()
    markdown = (tmp_path / "gate.md").read_text().splitlines()
    assert markdown[2:4] == ["**Gate: FAILED**", "- 1 unreadable inputs \\> 0"]
    (bad,) = [line for line in markdown if line.startswith("- unreadable ")]
    assert "\\<img" in bad
    assert bad.count("<img") == bad.count("\\<img")
    rows = [line for line in markdown if line.startswith("| answer |")]
    assert rows == ["| answer | 7 | 4 | 1 | 0 | 2 | 0 | 0.2000 | 0.1667 |"]


def test_a_hostile_span_name_is_escaped_in_the_test_case_name(tmp_path: Path) -> None:
    """The guarded chat spans renamed with a NUL, a pipe, a newline and markup: the JUnit file
    parses, the case name shows the name as its ``repr`` (control characters escaped)."""
    _, path = live_and_recorded(tmp_path)
    path.write_text(path.read_text().replace('"chat gpt-test"', json.dumps(HOSTILE)))
    assert run(tmp_path, path) == 0
    answer = junit(tmp_path).findall("testsuite")[1]
    names = [name for _, name, tag in cases(answer) if tag == "failure"]
    assert len(names) == 1
    assert names[0].endswith(" 'chat \\x00|\\n<img src=x onerror=alert(1)>]]>\\x1b'")


def test_an_empty_match_fails_in_both_files(tmp_path: Path) -> None:
    """No guarded output (spans, none guarded): exit 1, the gate case fails saying so, no
    boundary suite; the Markdown says FAILED and why, with the empty row. (Changed with
    issue 36: the input was an empty file, which now fails as "no span read".)"""
    unguarded = unguarded_recording(tmp_path)
    assert run(tmp_path, unguarded, "--allow-unmatched") == 1
    root = junit(tmp_path)
    assert [suite.get("name") for suite in root.findall("testsuite")] == ["groundplane gate"]
    (failure,) = root.iter("failure")
    assert failure.get("message") == (
        "gate failed: no guarded output in the input (--allow-empty to pass)"
    )
    markdown = (tmp_path / "gate.md").read_text().splitlines()
    assert markdown[2:4] == [
        "**Gate: FAILED**",
        "- no guarded output in the input \\(--allow-empty to pass\\)",
    ]
    assert "| \\(no guarded output in the input\\) | 0 | 0 | 0 | 0 | 0 | 0 | - | - |" in markdown


def test_markdown_summary_of_a_threshold_failure(tmp_path: Path) -> None:
    """``--max-unsupported-rate 0``: the summary says FAILED with the rate, one row per
    boundary, the findings table (check, reason, trace id) in report order."""
    _, path = live_and_recorded(tmp_path)
    assert run(tmp_path, path, "--max-unsupported-rate", "0") == 1
    markdown = (tmp_path / "gate.md").read_text().splitlines()
    assert markdown[:4] == [
        "## groundplane-otel replay",
        "",
        "**Gate: FAILED**",
        "- unsupported-answer rate 0.2000 \\(1 of 5 answers refused\\) \\> 0 "
        "\\(--max-unsupported-rate\\)",
    ]
    header = markdown.index("### Findings")
    table = markdown[header + 2 :]
    assert table[0] == "| result | boundary | check | reason | trace id | span id |"
    assert [row.split(" | ")[3] for row in table[2:]] == [
        "wrong\\_winner",
        "fact\\_missing",
        "no\\_output",
    ]
    assert MAX_FINDINGS == 20
    root = junit(tmp_path)
    assert cases(root.findall("testsuite")[0]) == [("groundplane.gate", "gate", "failure")]


def test_a_cell_never_breaks_the_table_or_becomes_markup() -> None:
    """Pipes, newlines and Markdown/HTML punctuation are escaped; long text is capped."""
    assert cell("a|b\nc\r\nd") == "a\\|b c d"
    assert cell("[x](http://e) <b>`c`</b> *e*") == (
        "\\[x\\]\\(http://e\\) \\<b\\>\\`c\\`\\</b\\> \\*e\\*"
    )
    assert cell("x" * 200, 10) == "x" * 10 + "…"
    assert cell("a\x1bb\x00") == "a\\\\u001bb\\\\u0000"  # renders as a\u001bb\u0000


@pytest.mark.parametrize(
    ("problem", "args"),
    [
        ("bad policy", ["--policy", "{policy}.missing"]),
        ("no such directory", ["--junit-xml", "{tmp}/nowhere/gate.xml"]),
        ("a directory", ["--markdown", "{tmp}"]),
        ("one file for both", ["--markdown", "{tmp}/gate.xml"]),
        ("missing input", ["{tmp}/absent.jsonl"]),
    ],
)
def test_a_usage_error_writes_no_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], problem: str, args: list[str]
) -> None:
    """Exit 2 (a bad policy, an unwritable output, one path for both, a missing input):
    neither file exists, and stderr says why."""
    _, path = live_and_recorded(tmp_path)
    policy = tmp_path / "policy.yaml"
    policy.write_text(POLICY)
    argv: dict[str, Any] = {"policy": str(policy), "tmp": str(tmp_path)}
    filled = [arg.format(**argv) for arg in args]
    base = ["replay", "--policy", str(policy), "--quiet"]
    outputs = ["--junit-xml", str(tmp_path / "gate.xml"), "--markdown", str(tmp_path / "gate.md")]
    inputs = [] if problem == "missing input" else [str(path)]
    assert main([*base, *outputs, *inputs, *filled]) == 2
    assert not (tmp_path / "gate.xml").exists()
    assert not (tmp_path / "gate.md").exists()
    assert capsys.readouterr().err.startswith("groundplane-otel: ")
