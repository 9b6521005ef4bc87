"""The adapters import their frameworks lazily, and only a missing framework gets the hint."""

from __future__ import annotations

import subprocess
import sys

import pytest

from groundplane_otel.adapters._extras import install_hint, require


def test_importing_the_adapters_loads_no_framework() -> None:
    """Importing every adapter module loads no framework (LangGraph, LangChain, MCP, OpenAI,
    the Agents SDK, pydantic-ai) and not OpenTelemetry."""
    code = (
        "import sys, groundplane_otel.adapters.langgraph, groundplane_otel.adapters.mcp\n"
        "import groundplane_otel.adapters.langchain, groundplane_otel.adapters.openai_agents\n"
        "import groundplane_otel.adapters.pydantic_ai\n"
        "bad = sorted({m.split('.')[0] for m in sys.modules} & {'langgraph', 'langchain_core', "
        "'langchain', 'mcp', 'mcp_types', 'openai', 'agents', 'pydantic_ai', 'opentelemetry'})\n"
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


@pytest.mark.parametrize(
    ("build", "module", "extra"),
    [
        (
            "from groundplane_otel.adapters.langchain import GroundplaneMiddleware as f",
            "langchain",
            "langchain",
        ),
        (
            "from groundplane_otel.adapters.openai_agents import output_guardrail as f",
            "agents",
            "openai-agents",
        ),
        (
            "from groundplane_otel.adapters.pydantic_ai import Groundplane as f",
            "pydantic_ai",
            "pydantic-ai",
        ),
    ],
)
def test_missing_framework_names_its_extra(build: str, module: str, extra: str) -> None:
    """Building an adapter without its framework is a ModuleNotFoundError with the exact
    ``pip install 'groundplane-otel[extra]'`` line (the framework hidden in a subprocess)."""
    code = (
        f"import sys; sys.modules[{module!r}] = None\n{build}\n"
        "try:\n    f()\nexcept ModuleNotFoundError as exc:\n    print(exc)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    adapter = extra.replace("-", "_")
    assert result.stdout.strip() == (
        f"groundplane_otel.adapters.{adapter} needs {module!r}, which is not installed; "
        f"install it with: pip install 'groundplane-otel[{extra}]'"
    )
