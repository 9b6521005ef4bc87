"""Import an optional framework on first use, failing with a copy-paste install line."""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["install_hint", "require"]

_DISTRIBUTION = "groundplane-otel"


def install_hint(extra: str) -> str:
    """The exact command that installs ``extra``: ``pip install 'groundplane-otel[extra]'``."""
    return f"pip install '{_DISTRIBUTION}[{extra}]'"


def require(module: str, *, extra: str) -> ModuleType:
    """Import ``module``; when its framework is missing, raise ImportError with the install line.

    Only a framework that is absent gets the hint: a missing submodule (another major version)
    or a broken dependency of the framework re-raises the original error, which says more.
    """
    top = module.partition(".")[0]
    try:
        importlib.import_module(top)
    except ImportError as exc:
        if exc.name != top:
            raise
        raise ModuleNotFoundError(
            f"groundplane_otel.adapters.{extra.replace('-', '_')} needs {top!r}, which is not "
            "installed; "
            f"install it with: {install_hint(extra)}",
            name=top,
        ) from exc
    return importlib.import_module(module)
