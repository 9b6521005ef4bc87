"""The Prometheus alert rules pass `promtool check rules` and their `promtool test rules` tests."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).parents[1]
RULES = REPO / "dashboards" / "alerts.yaml"
RULE_TESTS = REPO / "dashboards" / "alerts_test.yaml"


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    """Run promtool; a missing binary is a failure with the install command, never a skip."""
    binary = shutil.which("promtool")
    if binary is None:
        pytest.fail("promtool not found: apt-get install -y prometheus (Debian package)")
    return subprocess.run([binary, *args], capture_output=True, text=True, timeout=120, check=False)


def test_check_rules() -> None:
    """promtool accepts alerts.yaml and counts every recording and alerting rule."""
    result = promtool("check", "rules", str(RULES))
    assert result.returncode == 0, result.stdout + result.stderr
    groups = yaml.safe_load(RULES.read_text())["groups"]
    total = sum(len(g["rules"]) for g in groups)
    assert f"SUCCESS: {total} rules found" in result.stdout


def test_rule_naming_and_labels() -> None:
    """Recording rules are level:metric:operations; alerts carry severity and annotations."""
    rules = [r for g in yaml.safe_load(RULES.read_text())["groups"] for r in g["rules"]]
    records = [r["record"] for r in rules if "record" in r]
    assert all(re.fullmatch(r"job:[a-z_]+:[a-z0-9_]+", name) for name in records), records
    for window in ("5m", "30m", "1h", "2h", "6h", "1d", "3d"):
        assert f"job:groundplane_claims_unsupported:ratio_rate{window}" in records
    alerts = [r for r in rules if "alert" in r]
    assert {r["labels"]["severity"] for r in alerts} == {"page", "ticket"}
    for rule in alerts:
        assert {"summary", "description", "runbook"} <= set(rule["annotations"]), rule["alert"]
        assert "by (job" in rule["expr"] or "job:" in rule["expr"], rule["alert"]


def test_rule_unit_tests_pass() -> None:
    """All promtool unit tests (firing, not firing, low traffic, guard health) pass."""
    result = promtool("test", "rules", str(RULE_TESTS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout
    assert "FAILED" not in result.stdout


def test_wrong_expectation_fails(tmp_path: Path) -> None:
    """A copy of the unit tests expecting no page for the bad mix makes promtool exit 1."""
    shutil.copy(RULES, tmp_path / "alerts.yaml")
    tests = yaml.safe_load(RULE_TESTS.read_text())
    fast = next(t for t in tests["tests"] if t["name"] == "fast burn pages")
    firing = next(a for a in fast["alert_rule_test"] if a["exp_alerts"])
    firing["exp_alerts"] = []
    broken = tmp_path / "alerts_test.yaml"
    broken.write_text(yaml.safe_dump(tests, sort_keys=False))
    result = promtool("test", "rules", str(broken))
    assert result.returncode == 1, result.stdout + result.stderr
    assert "FAILED" in result.stdout + result.stderr
    assert "GroundplaneUnsupportedClaimsFastBurn" in result.stdout + result.stderr


def test_rules_without_low_traffic_guard_fail_tests(tmp_path: Path) -> None:
    """Removing the minimum-claims guard makes the low-traffic unit test fail."""
    text = RULES.read_text().replace(">= 100", ">= 1")
    assert text != RULES.read_text()
    (tmp_path / "alerts.yaml").write_text(text)
    shutil.copy(RULE_TESTS, tmp_path / "alerts_test.yaml")
    result = promtool("test", "rules", str(tmp_path / "alerts_test.yaml"))
    assert result.returncode == 1, result.stdout
    assert "name: low traffic does not page" in result.stdout + result.stderr
