"""A real MCP server over stdio (mcp's MCPServer) with the tool result shapes the adapter meets.

Run as ``python tests/integrations/mcp_server.py``; the tests and ``examples/mcp_agent.py``
spawn it with ``stdio_client``.
"""

from __future__ import annotations

from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, TextContent

CTR = {"north": 0.0412, "harbour": 0.0455, "delta": 0.0301}

server = MCPServer("groundplane-test-metrics")


@server.tool()
def campaign_ctr(window: str) -> dict[str, float]:
    """CTR per campaign over ``window``: returned as structured content (and a text rendering)."""
    if window != "7d":
        raise ValueError(f"unknown window {window!r}")
    return dict(CTR)


@server.tool()
def campaign_ctr_text(window: str) -> CallToolResult:
    """The same data as JSON text only, split over two text blocks (no structured content):
    one JSON document, cut between two members (blocks are joined with a newline)."""
    body = '{"north": 0.0412, "harbour": 0.0455, "delta": 0.0301}'
    half = body.index(' "harbour"')
    return CallToolResult(
        content=[
            TextContent(type="text", text=body[:half]),
            TextContent(type="text", text=body[half:]),
        ]
    )


@server.tool()
def broken_query(window: str) -> CallToolResult:
    """A tool that reports an error in-band (``isError: true``)."""
    return CallToolResult(
        content=[TextContent(type="text", text="warehouse timeout after 30s")], is_error=True
    )


@server.tool()
def nan_metric(window: str) -> CallToolResult:
    """JSON text carrying a non-finite number, which must never become a fact."""
    return CallToolResult(
        content=[TextContent(type="text", text='{"north": NaN, "harbour": 0.0455}')]
    )


@server.tool()
def echo_arguments(window: str, campaigns: list[str]) -> dict[str, Any]:
    """Echo the arguments back, to compare what was sent with what was recorded."""
    return {"window": window, "campaigns": campaigns}


if __name__ == "__main__":
    server.run("stdio")
