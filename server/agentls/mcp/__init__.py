"""MCP servers as a tool source: configuration, approval, connections, tools.

Wiring for a host (the LSP server, the CLI)::

    manager = McpManager.from_config(workspace_root, settings.mcp,   # agentls.config
                                     approve_project_file=ask_the_user,
                                     bridge=HostBridge(roots=..., questions=...),
                                     notify=show_to_the_user)
    manager.start_soon()            # with `startup: "eager"`
    SessionConfig(..., tool_sources=[manager],
                  tool_search=settings.tool_search)
    ...
    status["mcp"] = manager.status()
    await manager.aclose()          # on shutdown

Nothing in this package imports pygls or lsprotocol, and the MCP SDK is imported only
once a server is configured (`McpConnection`, `McpTool` load on first use).
"""

import importlib
from typing import TYPE_CHECKING, Any

from agentls.mcp.approval import ApprovalStore, ProjectFileApprover, ProjectFileRequest
from agentls.mcp.bridge import HostBridge
from agentls.mcp.config import (
    McpOptions,
    RemoteServer,
    ServerSpec,
    StdioServer,
    user_config_path,
)
from agentls.mcp.manager import McpManager
from agentls.mcp.naming import rule_matches_tool, tool_name
from agentls.mcp.notices import Notice

if TYPE_CHECKING:
    from agentls.mcp.connection import McpConnection
    from agentls.mcp.elicitation import QuestionPort
    from agentls.mcp.tools import ListMcpResources, McpTool, ReadMcpResource

_NEEDS_SDK = {
    "McpConnection": "agentls.mcp.connection",
    "QuestionPort": "agentls.mcp.elicitation",
    "ListMcpResources": "agentls.mcp.tools",
    "McpTool": "agentls.mcp.tools",
    "ReadMcpResource": "agentls.mcp.tools",
}


def __getattr__(name: str) -> Any:
    """What needs the MCP SDK is imported on first use: a workspace without MCP servers
    never pays for the SDK's import (most of a second; issue 33)."""
    module = _NEEDS_SDK.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "ApprovalStore",
    "HostBridge",
    "ListMcpResources",
    "McpConnection",
    "McpManager",
    "McpOptions",
    "McpTool",
    "Notice",
    "ProjectFileApprover",
    "ProjectFileRequest",
    "QuestionPort",
    "ReadMcpResource",
    "RemoteServer",
    "ServerSpec",
    "StdioServer",
    "rule_matches_tool",
    "tool_name",
    "user_config_path",
]
