"""The suggest tests' way through the real CLI: suggest, replay --json, the flagged runs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from groundplane_otel.cli import main


def suggest(capsys: pytest.CaptureFixture[str], policy: Path, *args: str) -> tuple[int, str, str]:
    """``groundplane-otel suggest -o policy ARGS``: exit code, stdout, stderr."""
    code = main(["suggest", "-o", str(policy), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def replay(capsys: pytest.CaptureFixture[str], policy: Path, *files: Path) -> dict[str, Any]:
    """``groundplane-otel replay --policy policy --json --quiet FILES``: it must exit 0; the
    report."""
    code = main(["replay", "--policy", str(policy), "--json", "--quiet", *map(str, files)])
    assert code == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def flagged(report: dict[str, Any]) -> set[str]:
    """The trace ids of a replay report's findings."""
    return {finding["trace_id"] for finding in report["findings"]}
