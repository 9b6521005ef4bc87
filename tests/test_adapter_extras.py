"""The adapters import their frameworks lazily, and only a missing framework gets the hint."""

from __future__ import annotations

import subprocess
import sys

import pytest

from groundplane_otel.adapters._extras import install_hint, require


def test_importing_the_adapters_loads_no_framework() -> None:
    """Importing both adapter modules loads neither LangGraph, MCP, OpenAI nor OpenTelemetry."""
    code = (
        "import sys, groundplane_otel.adapters.langgraph, groundplane_otel.adapters.mcp\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules} & {'langgraph', 'langchain_core', "
        "'mcp', 'mcp_types', 'openai', 'opentelemetry'})\n"
        "print(bad)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]"


def test_install_hint_is_the_exact_pip_line() -> None:
    """The hint is a copy-paste command naming the distribution and the extra."""
    assert install_hint("mcp") == "pip install 'groundplane-otel[mcp]'"


def test_missing_submodule_of_an_installed_package_keeps_the_original_error() -> None:
    """A submodule missing from an installed package (another major version) is not reported as
    "not installed": the original ModuleNotFoundError propagates."""
    with pytest.raises(ModuleNotFoundError) as caught:
        require("json.no_such_module", extra="json")
    assert caught.value.name == "json.no_such_module"
    assert "pip install" not in str(caught.value)


def test_present_framework_module_is_returned() -> None:
    """require() returns the imported module when the framework is there."""
    assert require("json.decoder", extra="json").__name__ == "json.decoder"
