"""Framework adapters: ``adapters.langgraph`` and ``adapters.mcp``.

Each adapter module imports its framework only when a function that needs it is called, so
``import groundplane_otel.adapters.langgraph`` works without LangGraph installed; a missing
framework raises ImportError naming the ``pip install 'groundplane-otel[extra]'`` line.
"""

from groundplane_otel.adapters._extras import install_hint

__all__ = ["install_hint"]
