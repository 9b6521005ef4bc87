"""The `groundplane-otel` command line: check-policy validates for CI, version prints it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from groundplane_otel import __version__
from groundplane_otel.cli import main

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "policy.yaml"


def test_check_policy_accepts_the_example_and_lists_what_it_guards(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A valid policy exits 0 and prints every boundary with its mode, facts and checks."""
    assert main(["check-policy", str(EXAMPLE)]) == 0
    out, err = capsys.readouterr()
    assert out == (
        f"{EXAMPLE}: ok (mode enforce; 1 fact, 1 boundary, 3 checks)\n"
        "  campaign_report [enforce] facts: campaign_ctr\n"
        "    superlative(fact='campaign_ctr', field='winner')\n"
        "    ranking_prefix(fact='campaign_ctr', field='top3')\n"
        "    aggregate_reconciles(fact='campaign_ctr', field='total_clicks')\n"
    )
    assert err == ""


def test_check_policy_exits_1_with_the_located_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An invalid policy exits 1 and prints the PolicyError (file, line, key path, fix)."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text().replace("mode: enforce", "mode: enforse"))
    assert main(["check-policy", str(bad)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    assert err == (
        f"groundplane-otel: invalid policy: {bad}:7: mode: expected one of enforce, observe, "
        "got 'enforse'. Fix: did you mean 'enforce'?\n"
    )


def test_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]) -> None:
    """`version` prints the version the package declares."""
    assert main(["version"]) == 0
    assert capsys.readouterr().out == f"groundplane-otel {__version__}\n"


def test_console_script_is_installed_and_exits_with_main_status(tmp_path: Path) -> None:
    """The `groundplane-otel` entry point runs main() and propagates its exit status."""
    script = Path(sys.executable).parent / "groundplane-otel"
    missing = tmp_path / "missing.yaml"
    ok = subprocess.run(
        [str(script), "version"], capture_output=True, text=True, check=False, timeout=60
    )
    failed = subprocess.run(
        [str(script), "check-policy", str(missing)],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert (ok.returncode, ok.stdout) == (0, f"groundplane-otel {__version__}\n")
    assert failed.returncode == 1
    assert failed.stderr.startswith(f"groundplane-otel: invalid policy: {missing}: <top level>")


def test_no_command_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    """Without a command: exit 2 with the whole help on stderr (issue 36: it was argparse's
    lone "the following arguments are required: COMMAND")."""
    assert main([]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith("usage: groundplane-otel [-h] [--version] COMMAND ...\n")
