"""The docs stay true: every Python example in README.md and docs/ runs, the README stays the
front door (at most 250 lines), and every relative link in them points at a file that exists.

The conventions (also in docs/development.md, "The docs and their examples"):

- Every fenced block names its language, one of ``LANGUAGES``. Only ``python`` blocks run;
  shell, YAML, JSON and text blocks are shown, not run.
- A page's Python blocks run in order, in one fresh namespace, in their own subprocess, with a
  fresh temporary directory as the working directory and only what a reader who followed the
  page has: the package (this checkout's ``groundplane_otel``, alone on ``PYTHONPATH``, standing
  in for ``pip install``) and its installed dependencies — not ``examples/`` or ``tests/``. The
  loopback fake OpenAI server the examples use ships with the package
  (``groundplane_otel.fake_openai``).
- A page in ``FROM_A_CLONE`` runs from the root of a clone of the repository, and says so: its
  working directory also holds a copy of ``examples/`` (the demo's agent, ``demo_agent``), which
  its code puts on the path itself, as a reader in a clone would.
- A block with a ``title="name"`` (Material shows it as the file name; it may name a directory,
  ``examples/test_x.py``) is a file the page's examples use: it is written into the working
  directory before the page runs (a Python one is also compiled, so a syntax error fails), and
  is not run as a block itself.
- A ``text`` block right after a Python block is what that block prints: the block's output (and,
  if it raises, ``ExceptionType: message``) must match it, whitespace runs compared as one space
  and ``…`` standing for any text (ids, timings, a message cut short on the page).
- A block that raises without such an expected-output block fails the test.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
README = ROOT / "README.md"
PAGES = [README, *sorted(DOCS.rglob("*.md"))]
README_MAX_LINES = 250
LANGUAGES = frozenset({"python", "bash", "yaml", "json", "text"})
PACKAGE = ROOT / "groundplane_otel"
# Pages whose examples run from the root of a clone (they use the demo's agent in examples/).
FROM_A_CLONE = frozenset({"docs/pytest-plugin.md", "docs/start-from-traces.md"})
CLONE_SENTENCE = "from the root of a clone of the repository"

FENCE = re.compile(r"^(?P<indent> *)(?P<fence>`{3,})(?P<info>.*)$")
TITLE = re.compile(r'title="(?P<title>[^"]+)"')
LINK = re.compile(r"(?<!!)\[[^\]\n]*\]\((?P<target>[^)\s]+)\)")


@dataclass(frozen=True, slots=True)
class Block:
    """One fenced code block: where it starts (the line of its first code line), its language,
    its title (a file name) if any, its code, and the text block right after it, if any."""

    page: str
    line: int
    language: str
    title: str | None
    code: str
    expected: str | None = None


def read_blocks(page: Path) -> list[Block]:
    """The fenced blocks of one markdown page, in order; an unclosed fence is a ValueError."""
    lines = page.read_text(encoding="utf-8").splitlines()
    name = page.relative_to(ROOT).as_posix() if page.is_relative_to(ROOT) else page.name
    found: list[tuple[Block, int]] = []  # (block, index of the line after its closing fence)
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        indent, fence, info = opening["indent"], opening["fence"], opening["info"].strip()
        language = info.split(maxsplit=1)[0] if info else ""
        title = TITLE.search(info)
        body: list[str] = []
        index += 1
        start = index + 1
        while index < len(lines) and lines[index].strip() != fence:
            body.append(lines[index].removeprefix(indent))
            index += 1
        if index == len(lines):
            raise ValueError(f"{name}:{start - 1}: fence {fence} never closed")
        index += 1
        block = Block(name, start, language, title["title"] if title else None, "\n".join(body))
        found.append((block, index))
    blocks: list[Block] = []
    for position, (block, after) in enumerate(found):
        following = found[position + 1][0] if position + 1 < len(found) else None
        if (
            block.language == "python"
            and block.title is None
            and following is not None
            and following.language == "text"
            and all(not line.strip() for line in lines[after : following.line - 2])
        ):
            blocks.append(replace(block, expected=following.code))
        else:
            blocks.append(block)
    return blocks


ALL_BLOCKS = {page.relative_to(ROOT).as_posix(): read_blocks(page) for page in PAGES}
RUNNABLE = {
    page: blocks
    for page, blocks in ALL_BLOCKS.items()
    if any(b.language == "python" and b.title is None for b in blocks)
}


def matches(expected: str, actual: str) -> bool:
    """Whether printed output is what a page shows: whitespace runs compare as one space, and
    ``…`` stands for any text (also none)."""
    parts = [re.escape(part) for part in re.split(r"\s*…\s*", expected.strip())]
    pattern = ".*?".join(parts)
    pattern = re.sub(r"(?:\\\s|\\ |\s)+", r"\\s+", pattern)
    return re.fullmatch(pattern, actual.strip(), re.S) is not None


# Runs in the page's subprocess: argv[1] is a JSON list of the page's blocks.
DRIVER = (
    r"""
import contextlib, io, json, re, sys, traceback
from pathlib import Path
"""
    + inspect.getsource(matches)
    + r"""

blocks = json.loads(Path(sys.argv[1]).read_text())
for block in blocks:
    if block["title"] is not None:
        if block["language"] == "python":
            compile(block["code"], block["title"], "exec")
        Path(block["title"]).parent.mkdir(parents=True, exist_ok=True)
        Path(block["title"]).write_text(block["code"] + "\n")
namespace = {"__name__": "__main__"}
for block in blocks:
    if block["language"] != "python" or block["title"] is not None:
        continue
    where = f"{block['page']}:{block['line']}"
    code = compile("\n" * (block["line"] - 1) + block["code"], block["page"], "exec")
    out = io.StringIO()
    raised = None
    try:
        with contextlib.redirect_stdout(out):
            exec(code, namespace)
    except Exception as exc:
        raised = exc
        if block["expected"] is None:
            traceback.print_exc()
            sys.exit(f"{where}: the block raised and no text block after it shows that it should")
        print(f"{type(exc).__name__}: {exc}", file=out)
    sys.stdout.write(out.getvalue())
    if block["expected"] is not None and not matches(block["expected"], out.getvalue()):
        if raised is not None:
            traceback.print_exception(raised)
        sys.exit(
            f"{where}: the output differs from the text block after it\n"
            f"--- shown on the page:\n{block['expected']}\n--- printed:\n{out.getvalue()}"
        )
print(f"ran {sum(b['language'] == 'python' and b['title'] is None for b in blocks)} block(s)")
"""
)


@pytest.mark.parametrize("page", sorted(RUNNABLE))
def test_every_python_block_of_the_page_runs(page: str, tmp_path: Path) -> None:
    """The page's Python blocks run in order in one namespace and print what the page shows."""
    blocks = RUNNABLE[page]
    spec = tmp_path / "blocks.json"
    spec.write_text(json.dumps([asdict(block) for block in blocks]))
    work = tmp_path / "cwd"
    work.mkdir()
    if page in FROM_A_CLONE:
        ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
        shutil.copytree(ROOT / "examples", work / "examples", ignore=ignore)
    installed = tmp_path / "site"  # the package alone, as `pip install` puts it on the path
    installed.mkdir()
    (installed / PACKAGE.name).symlink_to(PACKAGE, target_is_directory=True)
    env = {**os.environ, "PYTHONPATH": str(installed), "PYTHONDONTWRITEBYTECODE": "1"}
    for variable in ("GROUNDPLANE_POLICY", "GROUNDPLANE_MODE", "GROUNDPLANE_CAPTURE_CONTENT"):
        env.pop(variable, None)
    run = subprocess.run(
        [sys.executable, "-c", DRIVER, str(spec)],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, f"{run.stdout[-4000:]}\n{run.stderr[-4000:]}"


def test_pages_run_from_a_clone_say_so() -> None:
    """A page whose examples need the clone's examples/ tells the reader to run them from the
    root of a clone; no other page imports the demo's modules."""
    for page in FROM_A_CLONE:
        text = " ".join((ROOT / page).read_text(encoding="utf-8").split())
        assert CLONE_SENTENCE in text, f"{page} does not say '{CLONE_SENTENCE}'"
    helpers = re.compile(
        r"^\s*(?:import|from) (?:demo_agent|demo_prose|demo_restricted|fake_openai)\b"
    )
    wrong = [
        f"{block.page}:{block.line}"
        for page, blocks in ALL_BLOCKS.items()
        if page not in FROM_A_CLONE
        for block in blocks
        if block.language == "python"
        and any(helpers.match(line) for line in block.code.splitlines())
    ]
    assert not wrong, f"examples importing modules a reader does not have: {wrong}"


def test_every_block_names_a_known_language() -> None:
    """No unlabelled fence (it would dodge the runner): each block is one of LANGUAGES."""
    wrong = [
        f"{block.page}:{block.line - 1}: {block.language or '(none)'}"
        for blocks in ALL_BLOCKS.values()
        for block in blocks
        if block.language not in LANGUAGES
    ]
    assert not wrong, f"fences without a known language {sorted(LANGUAGES)}: {wrong}"


def test_the_docs_have_python_examples_to_run() -> None:
    """The runner finds the examples (a parser bug must not make every page pass vacuously)."""
    count = sum(
        block.language == "python" and block.title is None
        for blocks in RUNNABLE.values()
        for block in blocks
    )
    assert count >= 16  # the examples on the pages today
    assert "README.md" in RUNNABLE


def test_readme_is_the_front_door() -> None:
    """README.md stays at most 250 lines: the reference lives in docs/."""
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines"


def slug(heading: str) -> str:
    """GitHub's and MkDocs' anchor for a heading: lower case, punctuation dropped, spaces → -."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text))


def anchors(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return {slug(match) for match in re.findall(r"^#{1,6} (.+)$", text, flags=re.M)}


def test_every_relative_link_points_at_an_existing_file() -> None:
    """Each relative link of README.md and docs/ names a file that exists (and a heading of it,
    when it has an anchor); mkdocs --strict checks docs/ too, this also covers the README."""
    broken = []
    for page in PAGES:
        text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
        for match in LINK.finditer(text):
            target = match["target"]
            if re.match(r"^[a-z][a-z+.-]*:", target):
                continue  # http:, https:, mailto:
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            name = page.relative_to(ROOT).as_posix()
            if not file.exists():
                broken.append(f"{name}: {target} (no such file)")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                broken.append(f"{name}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


def test_expected_output_matching_is_exact_but_for_whitespace_and_ellipsis() -> None:
    """The output check accepts rewrapped text and ``…`` for any text, and nothing else."""
    shown = "UnsupportedClaim: model said 'north',\n  registered facts | …"
    assert matches(shown, "UnsupportedClaim: model said 'north', registered facts | x y z")
    assert matches("trace …, span …", "trace 0af7, span 00f0")
    assert not matches(shown, "UnsupportedClaim: model said 'delta', registered facts | x")
    assert not matches("a b", "a b c")
    assert not matches("ab", "a b")


def test_blocks_pair_with_the_output_shown_right_after_them(tmp_path: Path) -> None:
    """A text block directly after a Python block is its expected output; one after prose is
    not, and an unclosed fence is an error naming the page and line."""
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n```python\nprint(1)\n```\n\n```text\n1\n```\n\nProse.\n\n"
        '```text\nshown\n```\n\n```yaml title="p.yaml"\nversion: 1\n```\n'
    )
    blocks = read_blocks(page)
    assert [(b.language, b.line, b.title, b.expected) for b in blocks] == [
        ("python", 4, None, "1"),
        ("text", 8, None, None),
        ("text", 14, None, None),
        ("yaml", 18, "p.yaml", None),
    ]
    page.write_text("```python\nprint(1)\n")
    with pytest.raises(ValueError, match=r"^page.md:1: fence ``` never closed$"):
        read_blocks(page)


def test_the_framework_policy_on_the_integrations_page_is_the_examples_one() -> None:
    """The policy the integrations page shows is examples/frameworks_policy.yaml (no drift)."""
    import yaml

    (shown,) = [b for b in ALL_BLOCKS["docs/integrations.md"] if b.title == "policy.yaml"]
    example = ROOT / "examples" / "frameworks_policy.yaml"
    assert yaml.safe_load(shown.code) == yaml.safe_load(example.read_text(encoding="utf-8"))
