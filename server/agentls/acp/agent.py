"""`AgentlsAcpAgent`: the ACP methods, each adapted to `AgentHost` (no agent logic here).

- `initialize`: capabilities `loadSession`, images and embedded context, MCP over
  stdio/http/sse, `session/list`; the client's `fs` and `terminal` capabilities are read;
- `session/new {cwd, mcpServers}`: a session of the folder's host; the client's MCP servers
  are the session's own tool source, started without asking (the user configured them in
  the editor);
- `session/load`: the saved session resumed with today's settings, its history replayed, then
  its todo list as the plan;
- `session/list`: the saved sessions of a folder (title, updated time);
- `session/resume`: the saved session, without replaying its history; `session/fork`: a
  copy under a new id; `session/close`: out of memory (saved); `session/delete`: gone;
- `session/set_mode`: the session's permission mode (`plan`: read-only tools only);
- `session/set_config_option`: the model and the permission mode, for the next turn;
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
import time
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import PROTOCOL_VERSION, RequestError
from acp.interfaces import Client
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    AgentPlanUpdate,
    AuthenticateResponse,
    AuthEnvVar,
    AvailableCommandsUpdate,
    ClientCapabilities,
    CloseSessionResponse,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    DeleteSessionResponse,
    EnvVarAuthMethod,
    ForkSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionDeleteCapabilities,
    SessionForkCapabilities,
    SessionInfo,
    SessionInfoUpdate,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    TerminalAuthMethod,
    TextContentBlock,
    Usage,
)

from agentls import __version__
from agentls.acp import hunk_commands, hunks
from agentls.acp.client import ClientLink
from agentls.acp.commands import STAGED_COMMANDS, available_commands, expand
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
from agentls.acp.options import (
    MODE_OPTION,
    MODEL_OPTION,
    ConfigOption,
    ModelCatalog,
    config_options,
)
from agentls.acp.replay import replay
from agentls.acp.workspace import AcpSession, AcpWorkspace
from agentls.agent.permissions.approval import PERMISSION_MODES, PermissionMode
from agentls.errors import SessionBusy
from agentls.host import CORE_MODULES, UnknownSession

if TYPE_CHECKING:
    from agentls.agent.persistence.state import SessionState
    from agentls.agent.run.session import AgentSession
    from agentls.agent.settings import AgentSettings

log = logging.getLogger(__name__)

API_KEY_METHOD = "anthropic-api-key"
AUTH_METHODS: list[EnvVarAuthMethod | TerminalAuthMethod] = [
    TerminalAuthMethod(
        type="terminal",
        id="check-credentials",
        name="Check the API key in a terminal",
        description="Runs `agentls acp --login`: checks the key agentls gets from its "
        "environment and says how to set it",
        args=["acp", "--login"],
    ),
    EnvVarAuthMethod(
        type="env_var",
        id=API_KEY_METHOD,
        name="Anthropic API key",
        description="agentls reads ANTHROPIC_API_KEY from its environment (or "
        "ANTHROPIC_AUTH_TOKEN with ANTHROPIC_BASE_URL for another Messages-API endpoint)",
        vars=[AuthEnvVar(name="ANTHROPIC_API_KEY", label="Anthropic API key", secret=True)],
        link="https://console.anthropic.com/settings/keys",
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
        self.models = ModelCatalog()

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
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    fork=SessionForkCapabilities(),
                    close=SessionCloseCapabilities(),
                    delete=SessionDeleteCapabilities(),
                ),
            ),
            agent_info=Implementation(name="agentls", title="agentls", version=__version__),
            auth_methods=list(AUTH_METHODS),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        """The key comes from the environment: this only checks that it is there."""
        known = [m.id for m in AUTH_METHODS]
        if method_id not in known:
            raise invalid(f"unknown authentication method {method_id!r}; use one of {known}")
        problem = missing_credentials(self.settings)
        if problem is not None:
            raise RequestError.auth_required(_auth_data(problem))
        return AuthenticateResponse()

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
        await asyncio.to_thread(_import_core)
        core = workspace.host.new_session(tool_sources=sources)
        core.persist()  # saved at once: a client may prompt it from another process
        session = self._register(workspace, core.id, sources)
        if workspace.trust.pending:
            # the session is built again at the first prompt, on the answer to the trust
            # question; until then only its saved state exists
            workspace.host.sessions.pop(core.id, None)
            await core.aclose()
        return NewSessionResponse(
            session_id=session.id,
            modes=session_modes(session.mode, workspace.bypass_enabled),
            config_options=await self._options(session),
        )

    async def load_session(
        self,
        cwd: str,
        session_id: str,
        mcp_servers: Sequence[McpEntry] | None = None,
        additional_directories: list[str] | None = None,
        **kwargs: Any,
    ) -> LoadSessionResponse:
        session = await self._open(cwd, session_id, mcp_servers)
        workspace = session.workspace
        core = workspace.host.sessions.get(session_id)
        if core is not None:  # None: a session of this connection not prompted yet
            roots = workspace.host.workspace.roots
            for update in replay(core.messages, roots, core.pool("review").find):
                self.link.send(session_id, update)
            if core.todos:  # the saved todo list: the client's plan view as it stands
                plan = AgentPlanUpdate(session_update="plan", entries=plan_entries(core.todos))
                self.link.send(session_id, plan)
        await self.link.flush()
        return LoadSessionResponse(
            modes=session_modes(session.mode, workspace.bypass_enabled),
            config_options=await self._options(session),
        )

    async def resume_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: Sequence[McpEntry] | None = None,
        **kwargs: Any,
    ) -> ResumeSessionResponse:
        """`session/load` without the replay: the client keeps the history it shows."""
        session = await self._open(cwd, session_id, mcp_servers)
        self._info(session)
        return ResumeSessionResponse(
            modes=session_modes(session.mode, session.workspace.bypass_enabled),
            config_options=await self._options(session),
        )

    async def fork_session(
        self,
        session_id: str,
        cwd: str,
        additional_directories: list[str] | None = None,
        mcp_servers: Sequence[McpEntry] | None = None,
        **kwargs: Any,
    ) -> ForkSessionResponse:
        """A new session with a copy of the history (not the staged edits: those stay with
        the original, so they cannot be written twice)."""
        workspace = self._workspace(cwd)
        live = self.sessions.get(session_id)
        if live is not None and live.workspace is not workspace:
            raise invalid(f"session {session_id} belongs to {live.workspace.root}, not {cwd}")
        core = workspace.host.sessions.get(session_id)
        if core is not None and core.running:
            raise RequestError(-32603, f"session {session_id} is running; cancel it or wait", {})
        if core is not None:
            core.persist()
        state = self._saved_state(workspace, session_id)
        copy = fork_state(state, uuid.uuid4().hex[:12])
        await asyncio.to_thread(workspace.host.store.save, copy)
        session = await self._open(cwd, copy.id, mcp_servers)
        if live is not None:
            self._apply_mode(session, live.mode)
            session.model = live.model
        return ForkSessionResponse(
            session_id=session.id,
            modes=session_modes(session.mode, workspace.bypass_enabled),
            config_options=await self._options(session),
        )

    async def close_session(self, session_id: str, **kwargs: Any) -> CloseSessionResponse:
        """Stop its run, save it and let it go (it can be loaded or resumed again)."""
        session = self._session(session_id)
        await self._drop(session)
        return CloseSessionResponse()

    async def delete_session(self, session_id: str, **kwargs: Any) -> DeleteSessionResponse:
        """Close it if it is open, then delete its saved state (its transcript stays)."""
        session = self.sessions.get(session_id)
        if session is not None:
            await self._drop(session)
        from agentls.agent.persistence.store import SessionStore

        store = SessionStore()
        if not store.exists(session_id):
            raise invalid(f"no saved session {session_id!r}", sessionId=session_id)
        await asyncio.to_thread(store.delete, session_id)
        return DeleteSessionResponse()

    async def _drop(self, session: AcpSession) -> None:
        workspace = session.workspace
        host = workspace.host
        session.cancelled.set()
        handle = host.runs.get(session.id)
        if handle is not None and handle.task is not None and not handle.task.done():
            host.cancel(session.id)
            await asyncio.wait([handle.task], timeout=10)
        self.sessions.pop(session.id, None)
        workspace.sessions.pop(session.id, None)
        workspace.reporters.pop(session.id, None)
        core = host.sessions.pop(session.id, None)
        if core is not None:
            core.persist()
            await core.end("other")
            await core.aclose()

    async def _open(
        self, cwd: str, session_id: str, mcp_servers: Sequence[McpEntry] | None
    ) -> AcpSession:
        """The session, resumed from its saved state unless this connection has it open."""
        workspace = self._workspace(cwd)
        session = self.sessions.get(session_id)
        if session is not None and session.workspace is not workspace:
            raise invalid(f"session {session_id} belongs to {session.workspace.root}, not {cwd}")
        if session is None:
            session = await self._resume(workspace, session_id, mcp_specs(mcp_servers))
        return session

    def _saved_state(self, workspace: AcpWorkspace, session_id: str) -> SessionState:
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
                f"{workspace.root}; open it with that cwd",
                sessionId=session_id,
            )
        return state

    async def _resume(self, workspace: AcpWorkspace, session_id: str, specs: Any) -> AcpSession:
        self._saved_state(workspace, session_id)
        await asyncio.to_thread(_import_core)
        try:
            workspace.host.resume_session(session_id, tool_sources=workspace.session_sources(specs))
        except UnknownSession as exc:
            raise invalid(str(exc), sessionId=session_id) from None
        session = self._register(workspace, session_id)
        session.titled = False
        return session

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
        from agentls.agent.persistence.store import SessionStore

        folder = _folder(cwd) if cwd is not None else None
        found = []
        for summary in await asyncio.to_thread(SessionStore().list, folder):
            updated = datetime.fromtimestamp(summary["updated"], UTC).isoformat()
            root = summary["workspace"][0] if summary["workspace"] else str(folder or "")
            found.append(
                SessionInfo(
                    session_id=summary["id"],
                    cwd=root,
                    title=title_of(summary["first_prompt"]),
                    updated_at=updated,
                )
            )
        return ListSessionsResponse(sessions=found)

    async def set_session_mode(
        self, session_id: str, mode_id: str, **kwargs: Any
    ) -> SetSessionModeResponse:
        session = self._session(session_id)
        self._choose_mode(session, mode_id)
        self.link.send(
            session_id,
            ConfigOptionUpdate(
                session_update="config_option_update", config_options=await self._options(session)
            ),
        )
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        """The model or the permission mode; either applies from the next model request."""
        session = self._session(session_id)
        if config_id == MODE_OPTION:
            self._choose_mode(session, str(value))
            self.link.send(
                session_id,
                CurrentModeUpdate(
                    session_update="current_mode_update", current_mode_id=session.mode
                ),
            )
        elif config_id == MODEL_OPTION:
            offered = await self._models(session)
            if value not in offered:
                raise invalid(f"unknown model {value!r}; use one of {', '.join(offered)}")
            session.model = str(value)
            _use_model(session)
        else:
            raise invalid(
                f"unknown config option {config_id!r}; use {MODEL_OPTION} or {MODE_OPTION}"
            )
        return SetSessionConfigOptionResponse(config_options=await self._options(session))

    def _choose_mode(self, session: AcpSession, mode_id: str) -> None:
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

    def _apply_mode(self, session: AcpSession, mode: PermissionMode) -> None:
        session.mode = mode
        core = session.workspace.host.sessions.get(session.id)
        policy = getattr(core.config, "permissions", None) if core is not None else None
        if policy is not None and hasattr(type(policy), "mode"):
            try:
                policy.mode = mode
            except Exception as exc:  # e.g. bypass not enabled in the settings
                raise invalid(str(exc)) from None

    async def _models(self, session: AcpSession) -> list[str]:
        settings = session.workspace.host.options.settings()
        found = await asyncio.to_thread(
            self.models.models,
            settings.model,
            settings.base_url,
            settings.api_key or settings.auth_token,
        )
        return [m.id for m in found]

    async def _options(self, session: AcpSession) -> list[ConfigOption]:
        settings = session.workspace.host.options.settings()
        models = await asyncio.to_thread(
            self.models.models,
            settings.model,
            settings.base_url,
            settings.api_key or settings.auth_token,
        )
        return config_options(
            models, session.model or settings.model, session.mode, session.workspace.bypass_enabled
        )

    def _info(self, session: AcpSession) -> None:
        """The session's title for the client's list, once it has one."""
        core = session.workspace.host.sessions.get(session.id)
        if session.titled or core is None or not core.first_prompt.strip():
            return
        session.titled = True
        updated = datetime.now(UTC).isoformat()
        self.link.send(
            session.id,
            SessionInfoUpdate(
                session_update="session_info_update",
                title=title_of(core.first_prompt),
                updated_at=updated,
            ),
        )

    # -- prompts --------------------------------------------------------------------------

    async def prompt(
        self, session_id: str, prompt: list[PromptBlock], **kwargs: Any
    ) -> PromptResponse:
        session = self._session(session_id)
        workspace = session.workspace
        request = prompt_input(prompt)
        session.cancelled.clear()
        await self._announce(session)
        command = request.request.split(maxsplit=1)[0] if request.request.startswith("/") else ""
        if command in STAGED_COMMANDS:
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
        problem = missing_credentials(workspace.host.options.settings)
        if problem is not None:  # the client offers the user its authMethods
            raise RequestError.auth_required(_auth_data(problem))
        note = workspace.trust.note(session)
        if note is not None:
            self.link.send(session_id, _message(note))
        if session_id not in workspace.host.sessions:
            await self._start_core(session)
        workspace.active_session = session_id
        trusted = workspace.config.project_trusted  # the workspace-trust decision, as in LSP
        expanded = expand(request.request, request.prompt, workspace.runtime, trusted=trusted)
        try:
            handle = workspace.host.start_run(
                expanded.prompt,
                session_id,
                session.run_mode,
                title=request.request,
                attachments=request.attachments,
                command=expanded.command,
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
        self._info(session)
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
        _use_model(session)
        session.delivery = workspace.delivery()
        mode = session.mode if session.mode_chosen else workspace.initial_mode()
        self._apply_mode(session, mode)
        if not session.mode_chosen:
            self.link.send(
                session.id,
                CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode),
            )

    async def _announce(self, session: AcpSession) -> None:
        """Once per session: the slash commands; every prompt: settings problems."""
        link, workspace = self.link, session.workspace
        if not session.commands_sent:
            session.commands_sent = True
            commands, problems = await asyncio.to_thread(available_commands, workspace.runtime)
            workspace.problems += problems
            link.send(
                session.id,
                AvailableCommandsUpdate(
                    session_update="available_commands_update", available_commands=commands
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

    async def ext_method(self, method: str, params: dict[str, object]) -> dict[str, object]:
        raise RequestError.method_not_found(f"_{method}")

    async def ext_notification(self, method: str, params: dict[str, object]) -> None:
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


def title_of(first_prompt: str) -> str | None:
    """A session's title: its first prompt on one line, cut at 80 characters."""
    return " ".join(first_prompt.split())[:80] or None


def fork_state(state: SessionState, new_id: str) -> SessionState:
    """A saved session's copy under `new_id`: its history, without its staged edits."""
    now = time.time()
    return state.model_copy(
        update={
            "id": new_id,
            "created": now,
            "updated": now,
            "staged": [],
            "staged_paths": [],
            "status": "idle" if state.status in ("running", "compacting") else state.status,
            "transcript": "",
        }
    )


def _use_model(session: AcpSession) -> None:
    """The client's model choice, from the core session's next model request."""
    core = session.workspace.host.sessions.get(session.id)
    if core is None or session.model is None or core.settings.model == session.model:
        return
    settings = core.settings.model_copy(update={"model": session.model})
    core.settings = settings
    core.config.settings = settings


def _auth_data(problem: str) -> dict[str, object]:
    return {"reason": problem, "authMethods": [m.id for m in AUTH_METHODS]}


def missing_credentials(settings: Callable[[], AgentSettings] | object) -> str | None:
    """Why no model request can be made (no key, token, endpoint or helper), else None."""
    from agentls.agent.settings import ConfigError

    try:
        found = settings() if callable(settings) else user_settings(settings)
        found.require_credentials()
    except ConfigError as exc:
        return str(exc)
    return None


def user_settings(section: object) -> AgentSettings:
    """The settings of a session outside any folder: the environment and the user's."""
    from agentls.agent.settings import AgentSettings
    from agentls.config.environment import environment
    from agentls.runtime.config_state import ConfigState

    state = ConfigState()
    state.set_environment()
    state.set_editor(section, "agentls acp --settings")
    return AgentSettings.resolve(state.current, environment()[0])


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
