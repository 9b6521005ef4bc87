"""The core is groundplane's API and imports nothing beyond the standard library."""

from __future__ import annotations

import subprocess
import sys


def test_core_import_loads_no_third_party_module() -> None:
    """Importing every public name of groundplane_otel (the core) loads neither OpenTelemetry
    nor YAML."""
    code = (
        "import sys\nfrom groundplane_otel import *\n"
        "assert 'groundplane_otel.checks.numbers_recorded' in sys.modules\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'opentelemetry', 'yaml', 'langgraph', 'mcp', 'openai', 'google'})\n"
        "print(bad)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def _core_imports() -> dict[str, set[str]]:
    """Each core module (outside ``otel/`` and ``adapters/``, the lazy ``__init__`` aside) and
    the core modules it imports anywhere in its source (type-hint-only imports included)."""
    import ast
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "groundplane_otel"
    modules: dict[str, Path] = {}
    for path in root.rglob("*.py"):
        parts = path.relative_to(root.parent).with_suffix("").parts
        if parts[1:2] in (("otel",), ("adapters",)) or parts == ("groundplane_otel", "__init__"):
            continue
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        found: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            found.update(target for target in targets if target in modules)
        graph[name] = found - {name}
    return graph


def test_the_core_has_no_import_circle() -> None:
    """No core module reaches itself through imports, counting those for type hints only
    (``errors`` -> ``facts`` -> ``table`` -> ``errors`` and ``errors`` <-> ``report`` were)."""
    graph = _core_imports()
    assert len(graph) > 40  # the walk found the core (checks included)
    errors = graph["groundplane_otel.errors"]
    assert {"groundplane_otel._claims", "groundplane_otel.report"} <= errors
    circles: list[list[str]] = []
    state: dict[str, int] = {}
    path: list[str] = []

    def visit(module: str) -> None:
        state[module] = 1
        path.append(module)
        for target in sorted(graph[module]):
            if state.get(target) == 1:
                circles.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[module] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module)
    assert circles == []
