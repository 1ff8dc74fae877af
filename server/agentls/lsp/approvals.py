"""Approval prompts: the editor's user answers the permission policy's "ask".

`LspApprover` implements the core's `Approver` port with `window/showMessageRequest`
("Allow once", "Allow for this session" when the policy can remember the call, "Deny").
The permission decisions themselves — modes, allow/ask/deny rules, secrets — are the
core's pipeline and `RulePolicy`, so the LSP, the CLI and the tests decide alike. The
headless CLI is an LSP client too: it answers these requests on its terminal. A client
without message-request support (Helix) gets no approver, and the policy denies with a
message naming the allow rule that would permit the call.

When the run is cancelled while a prompt is open, the request is withdrawn with
`$/cancelRequest`; an answer that still arrives is dropped, never acted on.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from agentls.agent.permissions.approval import ApprovalChoice, ApprovalRequest

if TYPE_CHECKING:
    from agentls.lsp.contract import Connection

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

    def __init__(self, ls: Connection) -> None:
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
        choice = await self._show(params, request)
        title = choice.title if choice is not None else DENY
        return _CHOICES.get(title, "deny")

    async def _show(
        self, params: types.ShowMessageRequestParams, request: ApprovalRequest
    ) -> types.MessageActionItem | None:
        """The request, withdrawn from the editor if the run stops waiting for it."""
        msg_id = f"agentls-approval-{uuid.uuid4().hex}"
        answer = self.ls.protocol.send_request_async(
            types.WINDOW_SHOW_MESSAGE_REQUEST, params, msg_id=msg_id
        )
        answer.add_done_callback(_drop_late_answer)
        try:
            # shielded: cancelling us must not cancel pygls's own future, which the late
            # response (or the client's "cancelled" error) still resolves
            choice: types.MessageActionItem | None = await asyncio.shield(answer)
        except asyncio.CancelledError:
            self.ls.log_line(f"[{request.session_id}] approval withdrawn: the run was cancelled")
            self.ls.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
            raise
        return choice


def _drop_late_answer(future: asyncio.Future[Any]) -> None:
    """Retrieve the outcome of a request nobody waits for any more (no "never retrieved")."""
    if not future.cancelled() and future.exception() is not None:
        log.debug("approval request ended: %s", future.exception())


def approver_for(ls: Connection) -> LspApprover | None:
    """An approver where the client can show message requests, else None (fail closed)."""
    return LspApprover(ls) if ls.features.show_message_request else None


ALLOW_SERVERS = "Allow"
DENY_SERVERS = "Don't allow"


async def approve_mcp_project_file(ls: Connection, request: Any) -> bool | None:
    """Ask once whether the workspace's `.mcp.json` may start its servers.

    `request` is an `agentls.mcp.ProjectFileRequest`. No prompt support, or a dismissed
    prompt, is "no answer" (asked again later), never a yes.
    """
    if not ls.features.show_message_request:
        # nobody to ask here: the MCP manager tells the user how to approve (showMessage)
        ls.log_line(f"agentls: {request.path} defines MCP servers awaiting approval")
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
