"""`AgentlsAcpAgent`: the ACP methods, each adapted to `AgentHost` (no agent logic here).

- `initialize`: capabilities `loadSession`, images and embedded context, MCP over
  stdio/http/sse, `session/list`; the client's `fs` and `terminal` capabilities are read;
- `session/new {cwd, mcpServers}`: a session of the folder's host; the client's MCP servers
  are the session's own tool source, started without asking (the user configured them in
  the editor);
- `session/load`: the saved session resumed with today's settings, its history replayed, then
  its todo list as the plan;
- `session/list`: the saved sessions of a folder;
- `session/set_mode`: the session's permission mode (`plan`: read-only tools only);
- `session/prompt`: one run, its updates streamed while it runs, then the stop reason;
- `session/cancel`: cancels the run (every issued tool_use still gets its result).

Bad input — an unknown session, a prompt before `session/new`, params that do not
validate — is answered with a JSON-RPC error; nothing else changes.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import os
import threading
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    AgentPlanUpdate,
    AvailableCommand,
    AvailableCommandsUpdate,
    ClientCapabilities,
    CurrentModeUpdate,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SetSessionModeResponse,
    TextContentBlock,
    Usage,
)

from agentls import __version__
from agentls.acp import hunk_commands, hunks
from agentls.acp.client import ClientLink
from agentls.acp.delivery import write_changes
from agentls.acp.mapping import (
    McpEntry,
    PromptBlock,
    mcp_specs,
    plan_entries,
    prompt_input,
    session_modes,
    stop_reason,
)
from agentls.acp.replay import replay
from agentls.acp.workspace import AcpSession, AcpWorkspace
from agentls.agent.permissions import PERMISSION_MODES, PermissionMode
from agentls.errors import SessionBusy
from agentls.host import CORE_MODULES, UnknownSession

if TYPE_CHECKING:
    from agentls.agent.session import AgentSession

log = logging.getLogger(__name__)

COMMANDS = [
    AvailableCommand(
        name="accept",
        description="Write the edits this session has staged (or hunks: /accept 1 3)",
    ),
    AvailableCommand(
        name="rewind",
        description="List the turns, or go back to the end of one (/rewind 2)",
    ),
    AvailableCommand(
        name="reject",
        description="Discard the staged edits (or hunks, saying why: /reject 2 too risky)",
    ),
]


def invalid(message: str, **data: Any) -> RequestError:
    """A JSON-RPC invalid-params error whose message says what was wrong."""
    return RequestError(-32602, message, {"reason": message, **data})


class AgentlsAcpAgent:
    """The agent side of one ACP connection (the SDK's `Agent` protocol)."""

    def __init__(self, settings: object = None) -> None:
        self.settings = settings
        """The user's `agentls` settings section (`agentls acp --settings`)."""
        self.link = ClientLink()
        self.workspaces: dict[Path, AcpWorkspace] = {}
        self.sessions: dict[str, AcpSession] = {}

    def on_connect(self, conn: Client) -> None:
        self.link.conn = conn

    # -- initialize -----------------------------------------------------------------------

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **kwargs: Any,
    ) -> InitializeResponse:
        self.link.capabilities = client_capabilities or ClientCapabilities()
        who = f"{client_info.name} {client_info.version}" if client_info else "an ACP client"
        log.info(
            "initialize from %s: %s", who, self.link.capabilities.model_dump(exclude_none=True)
        )
        # warm up off the loop (a daemon: an exit never waits for it)
        threading.Thread(target=_import_core, name="agentls-warm-up", daemon=True).start()
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=True, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="agentls", title="agentls", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        raise invalid(f"unknown authentication method {method_id!r}: agentls needs none")

    # -- sessions -------------------------------------------------------------------------

    async def new_session(
        self,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: Sequence[McpEntry] | None = None,
        **kwargs: Any,
    ) -> NewSessionResponse:
        workspace = self._workspace(cwd)
        sources = workspace.session_sources(mcp_specs(mcp_servers))
        if workspace.trust.pending:
            # built at the first prompt, on the user's answer to the trust question
            session = self._register(workspace, uuid.uuid4().hex[:12], sources)
        else:
            await asyncio.to_thread(_import_core)
            core = workspace.host.new_session(tool_sources=sources)
            session = self._register(workspace, core.id, sources)
        return NewSessionResponse(
            session_id=session.id, modes=session_modes(session.mode, workspace.bypass_enabled)
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: Sequence[McpEntry] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        workspace = self._workspace(cwd)
        specs = mcp_specs(mcp_servers)
        session = self.sessions.get(session_id)
        if session is not None and session.workspace is not workspace:
            raise invalid(f"session {session_id} belongs to {session.workspace.root}, not {cwd}")
        if session is None:
            session = await self._resume(workspace, session_id, specs)
        core = workspace.host.sessions.get(session_id)
        if core is not None:  # None: a session of this connection not prompted yet
            roots = workspace.host.workspace.roots
            for update in replay(core.messages, roots, core.pool("review").find):
                self.link.send(session_id, update)
            if core.todos:  # the saved todo list: the client's plan view as it stands
                plan = AgentPlanUpdate(session_update="plan", entries=plan_entries(core.todos))
                self.link.send(session_id, plan)
        await self.link.flush()
        return LoadSessionResponse(modes=session_modes(session.mode, workspace.bypass_enabled))

    async def _resume(self, workspace: AcpWorkspace, session_id: str, specs: Any) -> AcpSession:
        store = workspace.host.store
        if not store.exists(session_id):
            raise invalid(f"no saved session {session_id!r}", sessionId=session_id)
        try:
            state = store.load(session_id)
        except Exception as exc:
            raise invalid(str(exc), sessionId=session_id) from None
        if not _belongs_to(state.workspace, workspace.root):
            # its staged edits and history name another folder's files
            raise invalid(
                f"session {session_id} belongs to {', '.join(state.workspace)}, not "
                f"{workspace.root}; load it with that cwd",
                sessionId=session_id,
            )
        await asyncio.to_thread(_import_core)
        try:
            workspace.host.resume_session(session_id, tool_sources=workspace.session_sources(specs))
        except UnknownSession as exc:
            raise invalid(str(exc), sessionId=session_id) from None
        return self._register(workspace, session_id)

    def _register(
        self, workspace: AcpWorkspace, session_id: str, sources: Sequence[Any] = ()
    ) -> AcpSession:
        session = AcpSession(
            session_id, workspace, workspace.delivery(), workspace.initial_mode(), sources=sources
        )
        workspace.sessions[session_id] = session
        self.sessions[session_id] = session
        self._apply_mode(session, session.mode)
        return session

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **kwargs: Any
    ) -> ListSessionsResponse:
        from agentls.agent.store import SessionStore

        folder = _folder(cwd) if cwd is not None else None
        found = []
        for summary in SessionStore().list(folder):
            updated = datetime.fromtimestamp(summary.updated, UTC).isoformat()
            title = " ".join(summary.first_prompt.split())[:80] or None
            root = summary.workspace[0] if summary.workspace else str(folder or "")
            found.append(
                SessionInfo(session_id=summary.id, cwd=root, title=title, updated_at=updated)
            )
        return ListSessionsResponse(sessions=found)

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        session = self._session(session_id)
        if mode_id not in PERMISSION_MODES:
            raise invalid(f"unknown mode {mode_id!r}; use one of {', '.join(PERMISSION_MODES)}")
        mode: PermissionMode = mode_id
        if mode == "bypassPermissions" and not session.workspace.bypass_enabled:
            raise invalid(
                "bypassPermissions is not enabled: set `allowBypassPermissions: true` in your "
                "user settings (agentls acp --settings)"
            )
        self._apply_mode(session, mode)
        session.mode_chosen = True
        return SetSessionModeResponse()

    def _apply_mode(self, session: AcpSession, mode: PermissionMode) -> None:
        session.mode = mode
        core = session.workspace.host.sessions.get(session.id)
        policy = getattr(core.config, "permissions", None) if core is not None else None
        if policy is not None and hasattr(type(policy), "mode"):
            try:
                policy.mode = mode
            except Exception as exc:  # e.g. bypass not enabled in the settings
                raise invalid(str(exc)) from None

    # -- prompts --------------------------------------------------------------------------

    async def prompt(
        self, session_id: str, prompt: list[PromptBlock], **kwargs: Any
    ) -> PromptResponse:
        session = self._session(session_id)
        workspace = session.workspace
        request = prompt_input(prompt)
        session.cancelled.clear()
        self._announce(session)
        command = request.request.split(maxsplit=1)[0] if request.request.startswith("/") else ""
        if command in ("/accept", "/reject"):
            await self._staged_command(session, command, request.request[len(command) :])
            return PromptResponse(stop_reason="end_turn")
        if command == "/rewind":
            text = hunk_commands.rewind(session.workspace, session.id, request.request[7:])
            self.link.send(session.id, _message(text))
            await self.link.flush()
            return PromptResponse(stop_reason="end_turn")
        if not await workspace.trust.settle(session):  # the trust question: the run waits
            await self.link.flush()
            return PromptResponse(stop_reason="cancelled")
        note = workspace.trust.note(session)
        if note is not None:
            self.link.send(session_id, _message(note))
        if session_id not in workspace.host.sessions:
            await self._start_core(session)
        workspace.active_session = session_id
        try:
            handle = workspace.host.start_run(
                request.prompt,
                session_id,
                session.run_mode,
                title=request.request,
                attachments=request.attachments,
            )
        except SessionBusy as exc:
            raise RequestError(-32603, str(exc), {"sessionId": session_id}) from None
        assert handle.task is not None
        try:
            result = await asyncio.shield(handle.task)
        except asyncio.CancelledError:
            workspace.host.cancel(session_id)  # the request itself went away
            raise
        reporter = workspace.reporters.get(session_id)
        await self.link.flush()
        status = str(result.get("status"))
        if handle.cancel_requested:
            status = "cancelled"
        reason = stop_reason(status, reporter.last_stop if reporter else None)
        if reason is None:
            error = result.get("error") or "the run failed"
            raise RequestError(
                -32603,
                f"agentls: the run failed: {error}",
                {"sessionId": session_id, "transcript": result.get("transcript")},
            )
        return PromptResponse(stop_reason=reason, usage=_usage(result.get("usage")))

    async def _start_core(self, session: AcpSession) -> None:
        """The core session of a `session/new` made while the workspace waited for the
        trust answer: built now, on the settings the answer left."""
        workspace = session.workspace
        await asyncio.to_thread(_import_core)
        if workspace.problems:  # e.g. the answer could not be saved
            self.link.send(session.id, _message(_problems(workspace)))
        workspace.host.new_session(session.id, tool_sources=session.sources)
        session.delivery = workspace.delivery()
        mode = session.mode if session.mode_chosen else workspace.initial_mode()
        self._apply_mode(session, mode)
        if not session.mode_chosen:
            self.link.send(
                session.id,
                CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode),
            )

    def _announce(self, session: AcpSession) -> None:
        """Once per session: the slash commands; every prompt: settings problems."""
        link, workspace = self.link, session.workspace
        if not session.commands_sent:
            session.commands_sent = True
            link.send(
                session.id,
                AvailableCommandsUpdate(
                    session_update="available_commands_update", available_commands=COMMANDS
                ),
            )
        if workspace.problems:
            link.send(session.id, _message(_problems(workspace)))

    async def _staged_command(self, session: AcpSession, command: str, argument: str) -> None:
        """`/accept`, `/reject`: the whole staged set, or with numbers, those hunks."""
        core = session.workspace.host.sessions.get(session.id)
        if core is None:  # not prompted yet
            self.link.send(session.id, _message("No edits are staged in this session."))
            await self.link.flush()
            return
        if core.running:
            raise RequestError(-32603, f"session {session.id} is running; cancel it or wait", {})
        changes = core.changes
        ids, reason = hunks.parse(argument)
        if changes.is_empty():
            self.link.send(session.id, _message("No edits are staged in this session."))
        elif ids:
            self.link.send(
                session.id, _message(await self._hunks(session, core, command, ids, reason))
            )
        elif command == "/reject":
            paths = changes.discard()
            self.link.send(
                session.id, _message(f"Discarded the staged edits to {len(paths)} file(s).")
            )
        else:
            outcome = await write_changes(session.workspace, session.id, changes, changes.entries())
            text = (
                f"Wrote {len(outcome.files)} file(s)."
                if outcome.applied
                else "Nothing was written."
            )
            if outcome.reason:
                text += f" {outcome.reason}"
            self.link.send(session.id, _message(text))
        await self.link.flush()

    async def _hunks(
        self,
        session: AcpSession,
        core: AgentSession,
        command: str,
        ids: list[int],
        reason: str | None,
    ) -> str:
        try:
            if command == "/reject":
                return hunk_commands.reject(session.workspace, core, ids, reason)
            return await hunk_commands.accept(session.workspace, core, ids, reason)
        except ValueError as exc:  # no such hunk: say so, change nothing
            return str(exc)

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None:
            log.info("session/cancel for unknown session %r ignored", session_id)
            return
        session.cancelled.set()
        host = session.workspace.host
        if session_id in host.sessions or session_id in host.runs:  # else: not started yet
            host.cancel(session_id)

    # -- extensions -----------------------------------------------------------------------

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        log.info("ignoring extension notification _%s", method)

    # -- pieces ---------------------------------------------------------------------------

    def _session(self, session_id: str) -> AcpSession:
        found = self.sessions.get(session_id)
        if found is None:
            raise invalid(
                f"unknown session {session_id!r}: create one with session/new (or resume a saved "
                "one with session/load) first",
                sessionId=session_id,
            )
        return found

    def _workspace(self, cwd: str) -> AcpWorkspace:
        folder = _folder(cwd)
        found = self.workspaces.get(folder)
        if found is not None:
            found.refresh_trust()
        if found is None:
            found = AcpWorkspace(folder, self.link, self.settings)
            self.workspaces[folder] = found
            found.start_polling()
        return found

    async def close(self) -> None:
        """The connection ended: runs are cancelled, servers stopped, state saved."""
        for workspace in list(self.workspaces.values()):
            try:
                await workspace.close()
            except Exception:
                log.exception("closing %s failed", workspace.root)
        await self.link.close()


def _folder(cwd: str) -> Path:
    """The session folder: absolute and existing (ACP requires an absolute `cwd`)."""
    if not isinstance(cwd, str) or not os.path.isabs(cwd):
        raise invalid(f"cwd must be an absolute path, got {cwd!r}")
    folder = Path(cwd).resolve()
    if not folder.is_dir():
        raise invalid(f"cwd {cwd!r} is not a folder")
    return folder


def _belongs_to(roots: Sequence[str], folder: Path) -> bool:
    """Whether a saved session's workspace is `folder` (symlinks resolved)."""
    return folder in {Path(os.path.realpath(root)) for root in roots}


def _import_core() -> None:
    """The session machinery and the model SDK (seconds to import: not on the loop)."""
    for name in CORE_MODULES:
        importlib.import_module(name)


def _problems(workspace: AcpWorkspace) -> str:
    """The workspace's settings problems as one message (they are said once)."""
    text = "agentls configuration: " + "; ".join(workspace.problems) + "\n\n"
    workspace.problems = []
    return text


def _message(text: str) -> AgentMessageChunk:
    return AgentMessageChunk(
        session_update="agent_message_chunk", content=TextContentBlock(type="text", text=text)
    )


def _usage(usage: object) -> Usage | None:
    if not isinstance(usage, dict):
        return None
    read = int(usage.get("cache_read_input_tokens") or 0)
    written = int(usage.get("cache_creation_input_tokens") or 0)
    inputs = int(usage.get("input_tokens") or 0) + read + written
    outputs = int(usage.get("output_tokens") or 0)
    return Usage(
        total_tokens=inputs + outputs,
        input_tokens=inputs,
        output_tokens=outputs,
        cached_read_tokens=read,
        cached_write_tokens=written,
    )
