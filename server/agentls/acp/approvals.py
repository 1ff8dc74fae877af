"""`session/request_permission`: the user answers in the editor's agent panel.

`AcpApprover` is the core's `Approver` port for ACP. The core decides (`decide`, one
`Requirement`); this module only asks. The request refers to the tool call the client
already shows (same `toolCallId`, title, kind, raw input, locations) and offers:

- `allow_once` → allow once;
- `allow_always` → allow for this session (only when the policy can remember the call);
- `reject_once` → deny;
- `reject_always` → deny, and deny the same call without asking for the rest of the session
  (offered where "allow always" is: the approver remembers the user's answer, nothing else).

An answer of `cancelled` (the client's, after `session/cancel`) is `cancelled`. When the run
stops waiting (cancel), the awaiting task is cancelled and an answer arriving later is
dropped by the SDK: nothing runs, nothing is remembered.

The same request carries two questions that are not tool calls: whether the workspace's
`.mcp.json` may start its servers, and — in review delivery — whether a run's staged edits
are written.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from typing import TYPE_CHECKING, Literal

from acp.schema import (
    AllowedOutcome,
    ContentToolCallContent,
    FileEditToolCallContent,
    PermissionOption,
    TerminalToolCallContent,
    TextContentBlock,
    ToolCallLocation,
    ToolCallProgress,
    ToolCallUpdate,
    ToolKind,
)

from agentls.acp.mapping import tool_kind
from agentls.agent.permissions.approval import ApprovalChoice, ApprovalRequest

if TYPE_CHECKING:
    from agentls.acp.client import ClientLink
    from agentls.mcp.approval import ProjectFileRequest

log = logging.getLogger(__name__)

ToolCallContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

ALLOW_ONCE = PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once")
ALLOW_ALWAYS = PermissionOption(
    option_id="allow_always", name="Allow for this session", kind="allow_always"
)
REJECT_ONCE = PermissionOption(option_id="reject_once", name="Deny", kind="reject_once")
REJECT_ALWAYS = PermissionOption(
    option_id="reject_always", name="Deny for this session", kind="reject_always"
)
_CHOICES: dict[str, ApprovalChoice] = {
    "allow_once": "allow_once",
    "allow_always": "allow_session",
    "reject_once": "deny",
    "reject_always": "deny",
}

Answer = Literal["selected", "cancelled"]


async def ask_client(
    link: ClientLink,
    session_id: str,
    tool_call: ToolCallUpdate,
    options: Sequence[PermissionOption],
) -> str | None:
    """One `session/request_permission`; the chosen option id, or None when the client
    answered `cancelled` (or with something that is not one of `options`)."""
    await link.flush()
    response = await link.client.request_permission(
        session_id=session_id, tool_call=tool_call, options=list(options)
    )
    outcome = response.outcome
    if isinstance(outcome, AllowedOutcome):
        known = {o.option_id for o in options}
        if outcome.option_id in known:
            return outcome.option_id
        log.warning("the client chose an option it was not offered: %r", outcome.option_id)
    return None


class AcpApprover:
    """The `Approver` of every session of one connection."""

    def __init__(self, link: ClientLink, previews: PreviewSource | None = None) -> None:
        self.link = link
        self.previews = previews
        self._rejected: dict[str, set[tuple[str, ...]]] = {}
        """Per session: calls the user denied "for this session" (by what allow would
        remember)."""

    async def ask(self, request: ApprovalRequest) -> ApprovalChoice:
        rejected = self._rejected.setdefault(request.session_id, set())
        if request.can_remember and request.remember in rejected:
            return "deny"
        options = [ALLOW_ONCE, *([ALLOW_ALWAYS] if request.can_remember else []), REJECT_ONCE]
        if request.can_remember:
            options.append(REJECT_ALWAYS)
        try:
            chosen = await ask_client(
                self.link, request.session_id, self._tool_call(request), options
            )
        except ConnectionError:
            return "cancelled"
        if chosen is None:
            return "cancelled"
        if chosen == "reject_always":
            rejected.add(request.remember)
        choice = _CHOICES.get(chosen, "deny")
        if choice != "deny" and request.tool_use_id:
            self.link.send(
                request.session_id,
                _progress(request.tool_use_id, "in_progress"),
            )
        return choice

    def _tool_call(self, request: ApprovalRequest) -> ToolCallUpdate:
        title = request.summary + (f" ({request.reason})" if request.reason else "")
        content: list[ToolCallContent] = []
        if self.previews is not None:
            content.extend(self.previews.preview(request))
        if request.reason:
            content.append(text_content(f"Needs your approval: {request.reason}"))
        kind: ToolKind = tool_kind(request.tool, request.kind == "read")
        return ToolCallUpdate(
            tool_call_id=request.tool_use_id or f"approval-{uuid.uuid4().hex[:12]}",
            title=title,
            kind=kind,
            status="pending",
            raw_input=request.input,
            locations=[ToolCallLocation(path=p) for p in request.paths] or None,
            content=content or None,
        )


class PreviewSource:
    """What an approval prompt shows of the change a call would make (edits: a diff)."""

    def preview(self, request: ApprovalRequest) -> list[ToolCallContent]:
        return []


def text_content(text: str) -> ContentToolCallContent:
    return ContentToolCallContent(type="content", content=TextContentBlock(type="text", text=text))


def _progress(tool_call_id: str, status: Literal["in_progress"]) -> ToolCallProgress:
    return ToolCallProgress(
        session_update="tool_call_update", tool_call_id=tool_call_id, status=status
    )


async def approve_project_file(
    link: ClientLink, session_id: str | None, request: ProjectFileRequest
) -> bool | None:
    """Whether the workspace's `.mcp.json` may start its servers, asked in the session
    that needs them. None ("ask again later") when there is no session or no answer."""
    if session_id is None:
        return None
    listing = "\n".join(f"- {name}: {what}" for name, what in request.servers)
    tool_call = ToolCallUpdate(
        tool_call_id=f"mcp-approval-{uuid.uuid4().hex[:12]}",
        title=f"Start the MCP servers of {request.path.name}?",
        kind="execute",
        status="pending",
        locations=[ToolCallLocation(path=str(request.path))],
        content=[text_content(f"{request.path} would start:\n{listing}")],
    )
    options = [
        PermissionOption(option_id="allow", name="Allow", kind="allow_always"),
        PermissionOption(option_id="deny", name="Don't allow", kind="reject_always"),
    ]
    try:
        chosen = await ask_client(link, session_id, tool_call, options)
    except ConnectionError:
        return None
    if chosen is None:
        return None
    return chosen == "allow"
