"""docs/zero-code.md's complete example, run as the page shows it: its ``app.py`` and
``policy.yaml``, its ``export`` lines and its ``opentelemetry-instrument`` command, against the
loopback fake OpenAI server.

In the environment the page tells a user to install — one OpenAI instrumentation, genai-openai —
the right winner is printed and the runner-up refused. This environment (``make``'s ``.venv``)
holds all three OpenAI instrumentations for the other tests; the user's is built from it: a venv
whose site-packages links every installed distribution except the other ones registering the
``opentelemetry_instrumentor`` name ``openai`` (importlib.metadata, which opentelemetry-instrument
asks, then finds one). In the full environment the page's warning holds: the right answer is
refused.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import sysconfig
import venv
from importlib.metadata import distributions, entry_points
from pathlib import Path

import pytest
from fake_openai import FakeOpenAI, answer_turn, tool_call_turn

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
from test_docs import read_blocks  # noqa: E402  (the docs' own block reader)

PAGE = ROOT / "docs" / "zero-code.md"
KEPT = "opentelemetry-instrumentation-genai-openai"  # what the `openai` extra installs
RIGHT = {"winner": "harbour", "ctr": 0.0455}
WRONG = {"winner": "north", "ctr": 0.0412}
REFUSED = (
    "refused: unsupported claim in field 'winner': model said 'north', registered facts support "
    "'harbour' | fact='campaign_ctr' | provenance=warehouse_query(window='7d') | computed argmax "
    "on 'score' is 'harbour' (0.0455); 'north' ranked #2 at 0.0412"
)


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


def other_openai_instrumentations() -> set[str]:
    """The normalized names of the installed distributions, other than KEPT, that register an
    ``opentelemetry_instrumentor`` entry point named ``openai``."""
    return {
        normalized(dist.metadata["Name"])
        for dist in distributions()
        if normalized(dist.metadata["Name"]) != normalized(KEPT)
        and any(
            ep.group == "opentelemetry_instrumentor" and ep.name == "openai"
            for ep in dist.entry_points
        )
    }


@pytest.fixture(scope="module")
def user_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv with this environment's packages minus the other OpenAI instrumentations, and
    ``opentelemetry-instrument`` in its ``bin/`` as pip would write it."""
    others = other_openai_instrumentations()
    assert len(others) == 2  # OpenInference's and Traceloop's, both installed by `make`
    home = tmp_path_factory.mktemp("user-venv")
    venv.create(home, with_pip=False, symlinks=True)
    site = Path(sysconfig.get_paths()["purelib"])
    target = home / site.relative_to(sys.prefix)
    for entry in site.iterdir():
        stem = normalized(entry.name.split("-")[0])
        if entry.name.endswith(".dist-info") and stem in others:
            continue
        (target / entry.name).symlink_to(entry)
    script = home / "bin" / "opentelemetry-instrument"
    script.write_text(
        f"#!{home / 'bin' / 'python'}\n"
        "import sys\nfrom opentelemetry.instrumentation.auto_instrumentation import run\n"
        "sys.exit(run())\n"
    )
    script.chmod(0o755)
    return home


def page_example(work: Path) -> tuple[dict[str, str], list[str]]:
    """Write the page's titled files into ``work``; return its ``export`` lines as variables
    and its last command line as argv."""
    blocks = read_blocks(PAGE)
    for block in blocks:
        if block.title in ("app.py", "policy.yaml"):
            (work / block.title).write_text(block.code + "\n")
    (commands,) = [b for b in blocks if b.language == "bash" and "export " in b.code]
    variables: dict[str, str] = {}
    argv: list[str] = []
    for line in commands.code.splitlines():
        words = shlex.split(line, comments=True)
        if words[:1] == ["export"]:
            name, _, value = words[1].partition("=")
            variables[name] = value
        elif words:
            argv = words
    assert argv[0] == "opentelemetry-instrument"
    return variables, argv


def run_page(bin_dir: Path, answer: dict[str, object], tmp_path: Path) -> list[str]:
    """The page's commands with ``bin_dir`` first on PATH; the app's printed lines."""
    variables, argv = page_example(tmp_path)
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "GROUNDPLANE_"))}
    script = [tool_call_turn("warehouse_query", {"window": "7d"}), answer_turn(answer)]
    with FakeOpenAI(script) as api:
        env = {
            **clean,
            **variables,
            "PATH": os.pathsep.join((str(bin_dir), "/usr/bin", "/bin")),
            "PYTHONPATH": str(ROOT),  # this checkout's package, as installed
            "OPENAI_API_KEY": "not-needed",
            "OPENAI_BASE_URL": api.base_url,
        }
        result = subprocess.run(
            argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180, check=False
        )
    assert result.returncode == 0, result.stderr[-3000:]
    return [line for line in result.stdout.splitlines() if line.startswith(("answer:", "refused:"))]


def test_the_user_venv_holds_one_openai_instrumentation(user_venv: Path) -> None:
    """What opentelemetry-instrument would load under the name ``openai``: genai-openai alone."""
    code = (
        "from importlib.metadata import entry_points\n"
        "print([e.value for e in entry_points(group='opentelemetry_instrumentor', name='openai')])"
    )
    shown = subprocess.run(
        [str(user_venv / "bin" / "python"), "-c", code],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert (
        shown.stdout.strip() == "['opentelemetry.instrumentation.genai.openai:OpenAIInstrumentor']"
    )
    everything = [e.value for e in entry_points(group="opentelemetry_instrumentor", name="openai")]
    assert len(everything) == 3  # and here, all three


@pytest.mark.parametrize(
    ("answer", "printed"),
    [(RIGHT, 'answer: {"winner": "harbour", "ctr": 0.0455}'), (WRONG, REFUSED)],
    ids=["right-passes", "wrong-refused"],
)
def test_the_documented_command_with_one_instrumentation(
    user_venv: Path, answer: dict[str, object], printed: str, tmp_path: Path
) -> None:
    """The page's command in the user's environment: the right winner reaches the app, the
    runner-up is refused with the full message."""
    assert run_page(user_venv / "bin", answer, tmp_path) == [printed]


def test_with_all_three_instrumentations_the_right_answer_is_refused(tmp_path: Path) -> None:
    """The page's warning: the same command where all three load refuses the right answer."""
    (line,) = run_page(Path(sys.executable).parent, RIGHT, tmp_path)
    assert line.startswith("refused: ")
    assert "(fact_missing)" in line
