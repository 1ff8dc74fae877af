"""Approval prompts: the editor's user answers the permission policy's "ask".

`LspApprover` implements the core's `Approver` with `window/showMessageRequest` ("Allow
once", "Allow for this session" when the policy can remember the call, "Deny"). The
permission decisions themselves — modes, allow/ask/deny rules, secrets — are the core's
`RulePolicy` (built from the settings in `lifecycle`), so the LSP, the CLI and the tests
decide alike. A client without message-request support (Helix) gets no approver, and the
policy denies with a message naming the allow rule that would permit the call.

`PromptPolicy` is the fallback when the safety settings cannot be loaded: reads and what a
tool allows run, what it asks about goes to the same prompt, everything else fails closed.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from agentls.agent.permissions import ApprovalChoice, ApprovalRequest
from agentls.agent.tool import PermissionDecision

if TYPE_CHECKING:
    from agentls.agent.context import ToolContext
    from agentls.agent.tool import Tool
    from agentls.lsp.server import AgentLanguageServer

log = logging.getLogger(__name__)

ALLOW_ONCE = "Allow once"
ALLOW_SESSION = "Allow for this session"
DENY = "Deny"
_CHOICES: dict[str, ApprovalChoice] = {
    ALLOW_ONCE: "allow_once",
    ALLOW_SESSION: "allow_session",
    DENY: "deny",
}


class LspApprover:
    """Shows one approval prompt per request; a dismissed prompt is a denial."""

    def __init__(self, ls: AgentLanguageServer) -> None:
        self.ls = ls

    async def ask(self, request: ApprovalRequest) -> ApprovalChoice:
        titles = [ALLOW_ONCE, *([ALLOW_SESSION] if request.can_remember else []), DENY]
        reason = f" ({request.reason})" if request.reason else ""
        params = types.ShowMessageRequestParams(
            type=types.MessageType.Warning,
            message=f"agentls: allow {request.tool}? {request.summary}{reason}",
            actions=[types.MessageActionItem(title=t) for t in titles],
        )
        self.ls.log_line(f"[{request.session_id}] asking: {request.summary}{reason}")
        choice = await self.ls.window_show_message_request_async(params)
        title = choice.title if choice is not None else DENY
        return _CHOICES.get(title, "deny")


def approver_for(ls: AgentLanguageServer) -> LspApprover | None:
    """An approver where the client can show message requests, else None (fail closed)."""
    return LspApprover(ls) if ls.features.show_message_request else None


class PromptPolicy:
    """Fallback `PermissionPolicy`: the tool's own opinion, "ask" resolved by the user."""

    def __init__(self, ls: AgentLanguageServer) -> None:
        self.ls = ls
        self.approver = approver_for(ls)
        self.session_allowed: set[str] = set()

    async def decide(
        self,
        tool: Tool[Any],
        input: Any,
        tool_opinion: PermissionDecision,
        ctx: ToolContext,
    ) -> PermissionDecision:
        config = self.ls.config.current
        if tool_opinion.behavior == "allow" and tool.name in config.ask_tools:
            tool_opinion = PermissionDecision.ask("the agentls.askTools setting asks for approval")
        if tool_opinion.behavior != "ask":
            return tool_opinion
        if tool.name in self.session_allowed or tool.name in config.allowed_tools:
            return PermissionDecision.allow()
        if self.approver is None:
            return PermissionDecision.deny(
                f"{tool.name} needs the user's approval, and this editor cannot show approval "
                f'prompts. To allow it, add "{tool.name}" to the agentls.allowedTools setting '
                "(or an allow rule to agentls.permissions.allow), or run in plan mode"
            )
        try:
            summary = tool.summary(input)
        except Exception:
            summary = f"Run {tool.name}"
        request = ApprovalRequest(
            ctx.session_id, tool.name, summary, tool_opinion.message, remember=(tool.name,)
        )
        try:
            choice = await self.approver.ask(request)
        except Exception as exc:
            log.info("approval prompt failed: %s", exc)
            return PermissionDecision.deny(f"the approval prompt failed ({exc})")
        if choice == "allow_session":
            self.session_allowed.add(tool.name)
        if choice in ("allow_once", "allow_session"):
            return PermissionDecision.allow()
        return PermissionDecision.deny("the user denied this call")


ALLOW_SERVERS = "Allow"
DENY_SERVERS = "Don't allow"


async def approve_mcp_project_file(ls: AgentLanguageServer, request: Any) -> bool | None:
    """Ask once whether the workspace's `.mcp.json` may start its servers.

    `request` is an `agentls.mcp.ProjectFileRequest`. No prompt support, or a dismissed
    prompt, is "no answer" (asked again later), never a yes.
    """
    if not ls.features.show_message_request:
        ls.log_line(
            f"agentls: {request.path} defines MCP servers; they start only after approval "
            "(an editor with message requests, or `mcp.projectConfig` in your user settings)"
        )
        return None
    params = types.ShowMessageRequestParams(
        type=types.MessageType.Warning,
        message=f"agentls: {request.message()}",
        actions=[types.MessageActionItem(title=t) for t in (ALLOW_SERVERS, DENY_SERVERS)],
    )
    choice = await ls.window_show_message_request_async(params)
    if choice is None:
        return None
    return choice.title == ALLOW_SERVERS
