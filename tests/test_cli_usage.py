"""The command line's own behaviour (issue 36): ``--version``, help for a bare command, a
"did you mean" for a mistyped command, choice or option, every option's default in ``--help``,
and ``check-policy`` listing every error of a file. Run as a user runs it: a new process."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from groundplane_otel import __version__
from groundplane_otel.cli import main
from groundplane_otel.otel.policy import PolicyError, load_policy

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "examples" / "policy.yaml"


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "groundplane_otel.cli", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        cwd=cwd,
    )


def test_version_option_prints_the_version() -> None:
    done = cli("--version")
    assert (done.returncode, done.stdout, done.stderr) == (
        0,
        f"groundplane-otel {__version__}\n",
        "",
    )


def test_a_bare_command_prints_the_help() -> None:
    """No command: the whole help (every command listed) on stderr, exit 2 — not the lone
    "the following arguments are required: COMMAND"."""
    done = cli()
    assert done.returncode == 2
    assert done.stdout == ""
    lines = done.stderr.splitlines()
    assert lines[0] == "usage: groundplane-otel [-h] [--version] COMMAND ..."
    assert "    replay      run a policy over recorded traces (Collector file exporter," in lines
    assert lines[-1] == "Run 'groundplane-otel COMMAND --help' for a command's options."
    assert "required" not in done.stderr


@pytest.mark.parametrize(
    ("args", "error"),
    [
        (
            ["repaly", "--policy", "p.yaml", "t.jsonl"],
            "groundplane-otel: error: argument COMMAND: invalid choice: 'repaly' (choose from "
            "'check-policy', 'replay', 'serve', 'suggest', 'version'); did you mean 'replay'?",
        ),
        (
            ["replay", "--policy", "p.yaml", "--max-erors", "3", "t.jsonl"],
            "groundplane-otel replay: error: unrecognized arguments: --max-erors "
            "('--max-erors': did you mean '--max-errors'?)",
        ),
        (
            ["replay", "--policy", "p.yaml", "--format", "jsn", "t.jsonl"],
            "groundplane-otel replay: error: argument --format: invalid choice: 'jsn' (choose "
            "from 'auto', 'json', 'proto'); did you mean 'json'?",
        ),
        (
            ["check-policy", "--quiet", "p.yaml"],
            "groundplane-otel check-policy: error: unrecognized arguments: --quiet",
        ),
    ],
    ids=["command", "option", "choice", "nothing-close"],
)
def test_a_mistyped_word_gets_a_did_you_mean(args: list[str], error: str) -> None:
    done = cli(*args)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1] == error


def test_replay_help_shows_every_default_and_explains_every_option() -> None:
    """``replay --help``: the gate's defaults are shown (``--max-errors`` 0, not gated rates,
    ``--max-error-rate`` 0.0, the buffer's bounds), and ``--format`` and
    ``--max-spans-per-trace`` say what they are."""
    done = cli("replay", "--help")
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    for expected in (
        "--max-unsupported-rate R exit 1 when the share of checked answers refused (blocked or "
        "flagged) is above R (0: any wrong answer fails; default: not gated)",
        "--max-errors N outputs that could not be checked (error) allowed: exit 1 when more than "
        "N, unless --max-error-rate allows them (default: 0, any error fails)",
        "--max-error-rate R or allow error outputs up to this share of all outputs (default: 0.0)",
        "--format {auto,json,proto} the files' format: OTLP/JSON lines, length-prefixed "
        "protobuf, or auto (by the first byte; gzip and zstd are recognised either way) "
        "(default: auto)",
        "--max-spans-per-trace N spans kept per trace; a trace over it is decided on the first N "
        "and counted incomplete (the rest counted as dropped) (default: 10000)",
        "--max-findings N findings listed in the report (the rest are counted) (default: 10000)",
        "--allow-unmatched pass although a fact's tool never appeared",
    ):
        assert expected in text


def test_suggest_and_serve_help_show_their_defaults() -> None:
    """The shared formatter shows the defaults of the other commands too."""
    suggest = " ".join(cli("suggest", "--help").stdout.split())
    assert "runs it applies to (default: 0.8)" in suggest  # --min-support
    serve = " ".join(cli("serve", "--help").stdout.split())
    assert "OTLP/gRPC address to listen on (default: 0.0.0.0:4317)" in serve


BROKEN = (
    EXAMPLE.read_text()
    .replace("mode: enforce", "mode: enforse")
    .replace("kind: table", "kind: tabel")
    .replace("report_mode: first", "report_mode: frist")
    .replace("- ranking_prefix: {field: top3, k: 3, column: ctr}", "- ranking_prefx: {field: top3}")
)


def test_check_policy_reports_every_error_in_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Four mistakes in four places: each reported, located, in the order of the file, with
    its fix, then the count; exit 1. The loader raises one PolicyError listing them all
    (``errors``), its fields the first's."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(BROKEN)
    assert main(["check-policy", str(bad)]) == 1
    out, err = capsys.readouterr()
    assert out == ""
    prefix = f"groundplane-otel: invalid policy: {bad}"
    assert err.splitlines() == [
        f"{prefix}:7: mode: expected one of enforce, observe, got 'enforse'. "
        "Fix: did you mean 'enforce'?",
        f"{prefix}:25: facts.campaign_ctr.kind: expected one of ranking, table, domain, value, "
        "documents, got 'tabel'. Fix: did you mean 'table'?",
        f"{prefix}:35: boundaries.campaign_report.report_mode: expected one of all, first, got "
        "'frist'. Fix: did you mean 'first'?",
        f"{prefix}:39: boundaries.campaign_report.checks[1].ranking_prefx: unknown check family "
        "'ranking_prefx'. Fix: did you mean 'ranking_prefix'?",
        f"groundplane-otel: 4 errors in {bad}",
    ]
    with pytest.raises(PolicyError) as caught:
        load_policy(bad)
    assert len(caught.value.errors) == 4
    assert (caught.value.line, caught.value.path) == (7, "mode")
    assert str(caught.value).splitlines()[0] == f"4 errors in {bad}:"


def test_a_single_error_reads_as_before(tmp_path: Path) -> None:
    """One mistake: the PolicyError's message is that error alone."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text().replace("kind: table", "kind: tabel"))
    with pytest.raises(PolicyError) as caught:
        load_policy(bad)
    assert caught.value.errors == (caught.value,)
    assert str(caught.value).startswith(f"{bad}:25: facts.campaign_ctr.kind: expected one of")


def test_a_cascade_is_not_reported(tmp_path: Path) -> None:
    """A fact in error is still declared: the boundary that lists it reports nothing more."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(EXAMPLE.read_text().replace("    key: campaign\n", ""))
    with pytest.raises(PolicyError) as caught:
        load_policy(bad)
    assert [error.path for error in caught.value.errors] == ["facts.campaign_ctr"]
