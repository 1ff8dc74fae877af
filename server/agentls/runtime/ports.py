"""`HostPorts`: the few things only a host can do, handed to the `AgentRuntime`.

A host (the language server, the ACP agent, a test) fills these with its protocol's way of
asking, telling and answering; everything else a session needs — safety, tools, MCP, code
intelligence, sub-agent types, skills — the runtime builds the same way for every host.
Each field has a default that suits a host with no user at hand: nobody to ask (so "ask"
fails closed), problems only logged.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentls.agent.framework.questions import UserPrompts
    from agentls.agent.permissions.approval import Approver
    from agentls.codeintel.sources import CodeSource
    from agentls.mcp import ProjectFileRequest, QuestionPort
    from agentls.mcp.notices import Notice as McpNotice
    from agentls.workspace import Workspace
    from agentls.workspace.editor_files import EditorFiles
    from agentls.workspace.terminals import HostTerminal

log = logging.getLogger(__name__)


def _no_approver() -> Approver | None:
    return None


def _no_prompts() -> UserPrompts | None:
    return None


def _log_problem(message: str) -> None:
    log.warning("%s", message)


def _no_code_sources(workspace: Workspace) -> Sequence[CodeSource]:
    return ()


async def _no_answer(request: ProjectFileRequest) -> bool | None:
    return None


def _no_questions() -> QuestionPort | None:
    return None


@dataclass
class HostPorts:
    """What the host plugs into the runtime (each read when a session needs it)."""

    approver: Callable[[], Approver | None] = _no_approver
    """Asks the user about a tool call (LSP `window/showMessageRequest`, ACP
    `session/request_permission`); None: "ask" is a denial naming the rule that would allow."""
    prompts: Callable[[], UserPrompts | None] = _no_prompts
    """Where `ask_user_question` and the plan-mode tools ask the user (None: nobody)."""
    hook_problem: Callable[[str], None] = _log_problem
    """A hook command that failed or answered badly: where the user should see it."""
    mcp_notice: Callable[[McpNotice], None] | None = None
    """MCP notices (approval needed, failed or slow starts, bad configuration)."""
    approve_mcp_project_file: Callable[[ProjectFileRequest], Awaitable[bool | None]] = _no_answer
    """Whether the workspace's `.mcp.json` may start its servers (None: ask again later)."""
    mcp_questions: Callable[[], QuestionPort | None] = _no_questions
    """Where MCP servers' questions (elicitation, OAuth sign-in) go; None: not offered."""
    editor_code_sources: Callable[[Workspace], Sequence[CodeSource]] = _no_code_sources
    """Code intelligence the editor answers itself, tried before agentls's language servers."""
    before_session: Callable[[], Awaitable[None]] | None = None
    """Awaited before a run creates a new session (the LSP host: while the workspace-trust
    question is open, so the session starts on the answer)."""
    editor_files: EditorFiles | None = None
    """The editor's files, for an editor that answers only when asked (ACP
    `fs/read_text_file`); None: the editor pushes its buffers (LSP). Tools get it as
    `ToolContext.services.editor_files`."""
    terminal: HostTerminal | None = None
    """The editor's terminal for `run_command` in the real tree (ACP `terminal/*`), or
    None. Tools get it as `ToolContext.services.terminal`."""
