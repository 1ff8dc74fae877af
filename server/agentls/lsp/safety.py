"""The language server's ports for the `AgentRuntime`, and reloading it on changes.

Every session part (permission rules, hooks, tools, MCP, code intelligence) is built by
`agentls.runtime.AgentRuntime` from the layered settings, the same way as in every host;
this module only gives it the LSP's ways of asking and telling: the approver
(`window/showMessageRequest`), the question prompts, the editor's code-intelligence bridge,
MCP notices as `window/showMessage`, and the wait for the workspace-trust answer.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from agentls.lsp.approvals import approver_for

if TYPE_CHECKING:
    from agentls.lsp.contract import Connection
    from agentls.mcp.notices import Notice as McpNotice
    from agentls.runtime.mcp_source import McpSource
    from agentls.runtime.ports import HostPorts

log = logging.getLogger(__name__)


def lsp_ports(ls: Connection) -> HostPorts:
    """What only the language server can do for the runtime."""
    from agentls.lsp.approvals import approve_mcp_project_file
    from agentls.lsp.code_intel import editor_code_sources
    from agentls.lsp.mcp_prompts import questions_for
    from agentls.lsp.questions import prompts_for
    from agentls.lsp.trust import wait_for_trust
    from agentls.runtime.ports import HostPorts

    return HostPorts(
        approver=lambda: approver_for(ls),
        prompts=lambda: prompts_for(ls),
        hook_problem=lambda message: ls.log_line(f"agentls hooks: {message}"),
        mcp_notice=lambda notice: _mcp_notice(ls, notice),
        approve_mcp_project_file=lambda request: approve_mcp_project_file(ls, request),
        mcp_questions=lambda: questions_for(ls),
        editor_code_sources=lambda workspace: editor_code_sources(ls),
        before_session=lambda: wait_for_trust(ls),
    )


def _mcp_notice(ls: Connection, notice: McpNotice) -> None:
    from lsprotocol import types

    kind = types.MessageType.Warning if notice.level == "warning" else types.MessageType.Info
    ls.message(kind, f"agentls: {notice.text}")


def reload_safety(ls: Connection) -> list[str]:
    """Rebuild the runtime's safety settings from the current settings; returns problems."""
    return ls.runtime.reload_safety()


def mcp_source(ls: Connection) -> McpSource | None:
    """The host's MCP tool source (None before the host is built)."""
    return ls.runtime.mcp if ls.has_host else None
