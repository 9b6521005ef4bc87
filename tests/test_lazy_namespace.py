"""The package namespace loads each public name on first use (issue 19): importing a submodule
alone (the pytest plugin at every pytest start-up) loads no core module, and every public name
still resolves to the same object, whatever was imported before it."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import groundplane_otel as gp

ROOT = Path(__file__).resolve().parents[1]
INIT = ROOT / "groundplane_otel" / "__init__.py"


def fresh(code: str) -> list[str]:
    """``code`` run in a fresh interpreter on this checkout; its printed lines."""
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    return done.stdout.splitlines()


def _type_checking_imports() -> dict[str, str]:
    """{name: module} of the ``if TYPE_CHECKING:`` imports in the package ``__init__``."""
    tree = ast.parse(INIT.read_text("utf-8"))
    (block,) = [
        node
        for node in tree.body
        if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
    ]
    return {
        alias.name: str(node.module)
        for node in block.body
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


def test_the_lazy_table_is_what_type_checkers_see_and_all_exports() -> None:
    """Each public name loads from the module its TYPE_CHECKING import names, and __all__ is
    exactly those names plus __version__ (no name the checkers see is missing at run time)."""
    seen = _type_checking_imports()
    assert seen == gp._SOURCE
    assert sorted(gp.__all__) == sorted([*seen, "__version__"])
    assert len(seen) == 48  # the parse found them all (49 names in __all__)


def test_importing_a_submodule_loads_no_core_module() -> None:
    """``import groundplane_otel.pytest_plugin`` loads exactly the namespace and the plugin;
    the first public name used loads its own module."""
    code = (
        "import sys\n"
        "import groundplane_otel.pytest_plugin\n"
        "mine = lambda: sorted(m for m in sys.modules if m.startswith(('groundplane_otel', "
        "'opentelemetry')))\n"
        "print(mine())\n"
        "import groundplane_otel as gp\n"
        "print(gp.UnsupportedClaim.__module__, 'groundplane_otel.errors' in mine())\n"
    )
    assert fresh(code) == [
        "['groundplane_otel', 'groundplane_otel.pytest_plugin']",
        "groundplane_otel.errors True",
    ]


def test_a_submodule_named_like_a_public_name_never_shadows_it() -> None:
    """``boundary`` and ``comparison`` are builders even when their submodules (or the OTel
    layer that imports them) loaded first, by attribute, ``from`` import and ``import as``."""
    code = (
        "import sys, types\n"
        "import groundplane_otel.boundary, groundplane_otel.comparison, groundplane_otel.otel\n"
        "import groundplane_otel as gp\n"
        "from groundplane_otel import comparison\n"
        "import groundplane_otel.boundary as boundary\n"
        "modules = [sys.modules[f'groundplane_otel.{n}'] for n in ('boundary', 'comparison')]\n"
        "print(gp.boundary is modules[0].boundary, gp.comparison is modules[1].comparison)\n"
        "print(boundary is gp.boundary, comparison is gp.comparison)\n"
        "print(isinstance(gp.boundary, types.ModuleType), vars(gp)['boundary'] is gp.boundary)\n"
    )
    assert fresh(code) == ["True True", "True True", "False True"]


def test_an_unknown_name_is_an_attribute_error_and_dir_lists_every_public_name() -> None:
    """A name the package does not export raises the standard AttributeError (ImportError from
    ``from ... import``); dir() lists the public names before any was loaded."""
    code = (
        "import groundplane_otel as gp\n"
        "names = dir(gp)\n"
        "print(all(name in names for name in gp.__all__))\n"
        "try:\n    gp.superlativ\nexcept AttributeError as exc:\n    print(exc)\n"
        "try:\n    from groundplane_otel import nope\nexcept ImportError as exc:\n"
        "    print(type(exc).__name__, exc.name)\n"
    )
    assert fresh(code) == [
        "True",
        "module 'groundplane_otel' has no attribute 'superlativ'",
        "ImportError groundplane_otel",
    ]
