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

Nothing in this package imports pygls or lsprotocol.
"""

from agentls.mcp.approval import ApprovalStore, ProjectFileApprover, ProjectFileRequest
from agentls.mcp.config import (
    McpOptions,
    RemoteServer,
    ServerSpec,
    StdioServer,
    user_config_path,
)
from agentls.mcp.connection import HostBridge, McpConnection
from agentls.mcp.elicitation import QuestionPort
from agentls.mcp.manager import McpManager
from agentls.mcp.naming import rule_matches_tool, tool_name
from agentls.mcp.notices import Notice
from agentls.mcp.tools import ListMcpResources, McpTool, ReadMcpResource

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
