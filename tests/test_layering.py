"""The package's layering, pinned: who may import whom (docs/development.md draws it).

Every import counts, ``TYPE_CHECKING`` ones included: a type-only arrow is still an arrow a
reader has to follow.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "groundplane_otel"
OTEL = "groundplane_otel.otel"

# Lowest first. A module may import its own layer and the layers below it; ``engine`` and
# ``policy`` are siblings that never import each other.
LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("core", ("groundplane_otel.",)),  # everything not otel/adapters/cli/plugin (below)
    (
        "vocabulary",
        tuple(f"{OTEL}.{m}" for m in ("semconv", "config", "result", "environment", "_rules")),
    ),
    ("engine", (f"{OTEL}._engine",)),
    ("policy", (f"{OTEL}.policy",)),
    (
        "drivers",
        tuple(
            f"{OTEL}.{m}"
            for m in (
                "_telemetry",
                "_live",
                "install",
                "replay",
                "verifier",
                "sampling",
                "otlp_files",
                "suggest",
            )
        ),
    ),
    (
        "face",
        (OTEL, *(f"{OTEL}.{m}" for m in ("scope", "tools", "testing", "_grounded"))),
        # the entry points users name in configuration
    ),
    ("entry points", tuple(f"{OTEL}.{m}" for m in ("completion_hook", "instrumentor"))),
    ("adapters", ("groundplane_otel.adapters",)),
    ("commands", ("groundplane_otel.cli", "groundplane_otel.pytest_plugin")),
)
SIBLINGS = {frozenset({"engine", "policy"})}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(path): path for path in PACKAGE.rglob("*.py")}


def layer_of(module: str) -> int:
    """The index of the most specific layer prefix ``module`` falls under."""
    best, length = -1, -1
    for index, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            matched = module == prefix or module.startswith(prefix.rstrip(".") + ".")
            if prefix == "groundplane_otel.":  # the package namespace is the core's face
                matched = module == "groundplane_otel" or module.startswith(prefix)
            if matched and len(prefix) > length:
                best, length = index, len(prefix)
    assert best >= 0, module
    return best


def imports(module: str) -> Iterator[str]:
    """The package modules ``module`` imports (``from a import b`` names ``a.b`` when that is a
    module, else ``a``)."""
    tree = ast.parse(MODULES[module].read_text())
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found = full if full in MODULES else node.module
                if found in MODULES and found != module:
                    yield found
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in MODULES and alias.name != module:
                    yield alias.name


GRAPH = {module: set(imports(module)) for module in MODULES}


def test_every_import_goes_to_the_same_layer_or_below() -> None:
    """No module imports from a higher layer, and the engine and policy never import each other."""
    wrong = []
    for module, targets in GRAPH.items():
        here = layer_of(module)
        for target in targets:
            there = layer_of(target)
            names = frozenset({LAYERS[here][0], LAYERS[there][0]})
            if there > here or (there != here and names in SIBLINGS):
                wrong.append(f"{module} ({LAYERS[here][0]}) -> {target} ({LAYERS[there][0]})")
    assert sorted(wrong) == []


def test_the_import_graph_has_no_circle() -> None:
    """No import circle anywhere in the package (a circle means two modules are really one)."""
    circles: list[list[str]] = []
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()

    def visit(node: str) -> None:  # Tarjan's strongly connected components
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(GRAPH[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                circles.append(sorted(component))

    for node in sorted(GRAPH):
        if node not in index:
            visit(node)
    assert circles == []


def test_the_top_of_otel_holds_only_the_public_face_and_entry_points() -> None:
    """At most 16 modules at the top of ``otel/``; the engine, the live driver (the span
    processor), the live telemetry writer, the stream gate, policy reading, replay, suggest and
    the verifier are subpackages, and every module of the engine is private to the package."""
    top = sorted(path.stem for path in (PACKAGE / "otel").glob("*.py"))
    assert len(top) <= 16, top
    packages = sorted(path.parent.name for path in (PACKAGE / "otel").glob("*/__init__.py"))
    assert packages == [
        "_engine",
        "_live",
        "_stream",
        "_telemetry",
        "policy",
        "replay",
        "suggest",
        "verifier",
    ]


def test_adapters_and_commands_use_the_public_face_only() -> None:
    """Adapters, the CLI and the pytest plugin never import the engine."""
    reaching = sorted(
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        if layer_of(module) >= layer_of("groundplane_otel.adapters")
        for target in targets
        if target.startswith(f"{OTEL}._engine")
    )
    assert reaching == []


TELEMETRY = f"{OTEL}._telemetry"


def test_live_telemetry_is_a_driver_outside_the_engine() -> None:
    """``otel/_telemetry`` (the live guard's span events, status, metrics, log records) is a
    driver-side package: it reads the engine only through its door (``_engine/__init__``) and
    otherwise the vocabulary and the core; no engine module imports it (the engine returns its
    ``Evaluation``s and writes no telemetry)."""
    ours = sorted(m for m in MODULES if m == TELEMETRY or m.startswith(f"{TELEMETRY}."))
    assert ours == [TELEMETRY, f"{TELEMETRY}.metric_counts", f"{TELEMETRY}.telemetry"]
    assert LAYERS[layer_of(TELEMETRY)][0] == "drivers"
    allowed = {"core", "vocabulary"}
    reaching = sorted(
        f"{module} -> {target}"
        for module in ours
        for target in GRAPH[module]
        if not (
            target == f"{OTEL}._engine"
            or target == TELEMETRY
            or target.startswith(f"{TELEMETRY}.")
            or LAYERS[layer_of(target)][0] in allowed
        )
    )
    assert reaching == []
    into = sorted(
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        if module.startswith(f"{OTEL}._engine")
        for target in targets
        if target == TELEMETRY or target.startswith(f"{TELEMETRY}.")
    )
    assert into == []


ENGINE = f"{OTEL}._engine"
SDK = f"{ENGINE}.sdk"


def test_the_engine_is_entered_through_its_door_only() -> None:
    """The engine's public surface is its ``__init__`` (``Engine`` and the names drivers share
    with it): nothing outside ``otel/_engine/`` imports an engine submodule."""
    reaching = sorted(
        f"{module} -> {target}"
        for module, targets in GRAPH.items()
        if module != ENGINE and not module.startswith(f"{ENGINE}.")
        for target in targets
        if target.startswith(f"{ENGINE}.")
    )
    assert reaching == []
    assert f"{ENGINE}.engine" in MODULES  # the door opens onto one object


def test_the_sdk_contract_is_a_leaf() -> None:
    """``_engine/sdk`` (every SDK private field and replaced method the guard relies on) imports
    nothing of the package outside itself, type-only imports included: the hooks read the
    engine through the structural ``Door``/``Driven`` protocols."""
    ours = sorted(m for m in MODULES if m == SDK or m.startswith(f"{SDK}."))
    assert ours == [SDK, f"{SDK}.dispatch", f"{SDK}.hooks"]
    reaching = sorted(
        f"{module} -> {target}"
        for module in ours
        for target in GRAPH[module]
        if not (target == SDK or target.startswith(f"{SDK}."))
    )
    assert reaching == []


def test_replay_and_the_verifier_drive_the_engine_through_its_door() -> None:
    """Replay, the verifier and suggest reach the engine only through its door
    (``_engine/__init__``), never an engine module behind it, and never the live driver
    (``_live``): they hand the ``Engine`` recorded spans themselves."""
    recorded = tuple(f"{OTEL}.{m}" for m in ("replay", "verifier", "suggest"))
    ours = [m for m in MODULES if any(m == p or m.startswith(f"{p}.") for p in recorded)]
    assert f"{OTEL}.replay.driving" in ours
    reaching = sorted(
        f"{module} -> {target}"
        for module in ours
        for target in GRAPH[module]
        if target.startswith((f"{OTEL}._engine.", f"{OTEL}._live"))
    )
    assert reaching == []
    assert f"{OTEL}._engine" in GRAPH[f"{OTEL}.replay.driving"]
