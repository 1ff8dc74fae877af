"""`AgentHost`: the editor-agnostic session manager shared by the LSP server and the CLI.

It owns the sessions of one workspace (by id), starts each run as an asyncio task so the
host's event loop keeps serving other traffic, cancels one run or all, answers status, and
runs single tools through the same pipeline the model's calls use. Everything editor-shaped
(progress UI, approval prompts, delivering edits) goes through the `EditorPort` the host is
given, so this module never imports pygls or lsprotocol.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, cast

from agentls.agent.framework.context import RunMode, ToolContext
from agentls.agent.framework.registry import (
    AnyTool,
    PoolFilter,
    ToolPool,
    ToolSearchSettings,
    ToolSource,
    load_sources,
    tool_to_api_schema,
)
from agentls.agent.framework.requirement import Requirement
from agentls.agent.framework.services import ToolServices
from agentls.agent.hooks.runner import HookRunner, NoHooks
from agentls.agent.permissions.approval import (
    AllowAll,
    PendingCall,
    PermissionMode,
    PermissionPolicy,
)
from agentls.agent.persistence.store import SessionStateError, SessionStore
from agentls.agent.protocol.accounting import Tally
from agentls.agent.protocol.events import AgentEvent, ignore_event
from agentls.agent.protocol.messages import ContentBlockParam
from agentls.agent.protocol.results import (
    CompactionPayload,
    EditPayload,
    FileCheckPayload,
    HostStatusPayload,
    RunPayload,
    SessionStatusPayload,
    StartingSessionPayload,
    ToolsPayload,
)
from agentls.agent.run.pipeline import Pipeline, ToolCall, ToolCallResult
from agentls.agent.settings import AgentSettings, ConfigError
from agentls.errors import SessionBusy
from agentls.runtime.delivery import Handoff, delivery_for
from agentls.workspace import ChangeSet, Workspace

if TYPE_CHECKING:
    # the session and model client pull in the model SDK (seconds to import): loaded lazily
    from agentls.agent.claude.prompt_commands import CommandRun
    from agentls.agent.claude.skills import SkillCatalog
    from agentls.agent.framework.questions import UserPrompts
    from agentls.agent.protocol.results import RunResult
    from agentls.agent.run.model_client import ModelClient, ModelRequest, ModelResponse
    from agentls.agent.run.session import AgentSession, SessionConfig
    from agentls.codeintel.sources import CodeSource

log = logging.getLogger(__name__)

DIRECT_SESSION = "tool"
"""Pseudo-session id whose changeset holds writes made through `run_tool` (no model)."""

DEFAULT_ENDPOINT = "https://api.anthropic.com"


class UnknownSession(LookupError):
    """A command named a session this host does not have."""


@dataclass(frozen=True)
class EditOutcome:
    """What happened to a run's (or an accept's) edits, for the command result."""

    files: list[str]
    applied: bool | None
    """True = the editor applied them; False = it refused; None = still staged."""
    reason: str | None = None
    conflicts: list[str] = field(default_factory=list)
    left_out: list[tuple[str, str]] = field(default_factory=list)
    """(uri, reason) of each file that was not applied and stays staged."""

    def to_dict(self) -> EditPayload:
        result: EditPayload = {"files": self.files, "applied": self.applied}
        if self.reason:
            result["reason"] = self.reason
        if self.conflicts:
            result["conflicts"] = self.conflicts
        if self.left_out:
            result["left_out"] = [{"uri": uri, "reason": why} for uri, why in self.left_out]
        return result


class RunReporter(Protocol):
    """Per-run UI: progress, log lines, live events. All methods must not raise."""

    def on_event(self, event: AgentEvent) -> None: ...

    async def begin(self) -> None: ...

    async def end(self, result: RunPayload) -> None: ...


class EditorPort(Protocol):
    """What a host needs from the editor it serves."""

    def reporter(self, run: RunHandle) -> RunReporter: ...

    async def deliver(
        self,
        session_id: str,
        changes: ChangeSet,
        how: Handoff,
        summary: str,
        *,
        final: bool = False,
    ) -> EditOutcome | None:
        """Hand staged edits to the editor, as the runtime decided (`how`, from
        `agentls.runtime.delivery`): "write" them now without asking, or "review" them with
        the user. Review runs deliver at their end, auto runs after each write; `final` marks the
        delivery at the end of a run (a host may then tell the user what stayed staged)."""
        ...


class _SilentReporter:
    def on_event(self, event: AgentEvent) -> None:
        ignore_event(event)

    async def begin(self) -> None:
        return None

    async def end(self, result: RunPayload) -> None:
        return None


class NullPort:
    """For headless hosts: no UI, edits stay staged."""

    def reporter(self, run: RunHandle) -> RunReporter:
        return _SilentReporter()

    async def deliver(
        self,
        session_id: str,
        changes: ChangeSet,
        how: Handoff,
        summary: str,
        *,
        final: bool = False,
    ) -> EditOutcome | None:
        return None


@dataclass
class RunHandle:
    """One run in flight (or finished): its task resolves to the result dict."""

    session_id: str
    prompt: str
    mode: RunMode
    task: asyncio.Task[RunPayload] | None = None
    cancel_requested: bool = False
    request: str = ""
    """What the user typed, without the context the host added to `prompt`."""
    attachments: Sequence[ContentBlockParam] = ()
    """Content sent with the prompt besides its text (e.g. images an ACP client attached)."""
    command: CommandRun | None = None
    """The custom command the prompt expanded (`/name args`), if any."""
    checks: list[FileCheckPayload] | None = None
    """The staged files checked before review (`checks.beforeReview`), once the run ended."""

    @property
    def title(self) -> str:
        """The user's first words, for a progress title and the edit's label."""
        words = " ".join((self.request or self.prompt).split()[:8])
        return words if len(words) <= 60 else words[:59] + "…"


class _FailingClient:
    """Stands in for the model when a session cannot start (no key, a forbidden permission
    mode): the run fails with the reason instead of the request raising."""

    def __init__(self, message: str) -> None:
        self.message = message

    async def stream(self, request: ModelRequest, on_text: Callable[[str], None]) -> ModelResponse:
        from agentls.agent.run.model_client import ModelError

        raise ModelError(self.message, transient=False)

    async def close(self) -> None:
        return None


class _DenyAll:
    """The policy of a session that could not start: nothing runs (fail closed)."""

    mode: PermissionMode = "default"

    def requirement(self, call: PendingCall) -> Requirement:
        return Requirement.forbidden("this session could not start")

    async def approve(self, call: PendingCall, needed: Requirement) -> Requirement:
        return Requirement.forbidden("this session could not start")


class _HostEditSink:
    """Auto delivery: a write tool's staged change goes to the editor before its result.

    The write tool awaits this inside its call (see `agentls.agent.framework.context.EditSink`), so
    the model hears whether the editor applied the change and the next call starts only
    after it was delivered. Review and plan runs deliver at the end (`_deliver_at_end`).
    """

    def __init__(self, host: AgentHost) -> None:
        self.host = host

    async def staged(self, ctx: ToolContext) -> str:
        if ctx.mode != "auto" or ctx.changes.is_empty():
            return ""
        return _delivery_note(await self.host.deliver_now(ctx.session_id, ctx.changes, "auto"))


def _delivery_note(outcome: EditOutcome | None) -> str:
    if outcome is None or not outcome.files:
        return ""
    if outcome.applied:
        return "The editor applied this change."
    return (
        "The editor did not apply this change"
        + (f": {outcome.reason}" if outcome.reason else "")
        + ". It stays staged for the user to review."
    )


ToolsFactory = Callable[[ToolServices], Sequence[AnyTool]]
ClientFactory = Callable[[AgentSettings], "ModelClient"]


def default_tools(services: ToolServices) -> Sequence[AnyTool]:
    """The built-in tools (imported lazily: they pull in the workspace machinery)."""
    from agentls.tools import builtin_tools

    tools: Sequence[AnyTool] = builtin_tools(agents=services.agents)
    return tools


def default_client(settings: AgentSettings) -> ModelClient:
    """The client of the endpoint's protocol (`model.api`)."""
    if settings.api == "chat-completions":
        from agentls.agent.run.chat_completions import ChatCompletionsClient

        return ChatCompletionsClient(settings)
    from agentls.agent.run.model_client import AnthropicModelClient

    return AnthropicModelClient(settings)


def default_skills(workspace: Workspace) -> SkillCatalog:
    """`.claude/skills`, `.agentls/skills` of each root and `~/.claude/skills`."""
    from agentls.agent.claude.skills import discover_skills

    return discover_skills(workspace.roots)


@dataclass
class HostOptions:
    """Fixed session parts for headless hosts and tests; each field has a default. The
    LSP and ACP hosts use `agentls.runtime.AgentRuntime` instead."""

    settings: Callable[[], AgentSettings] = AgentSettings.from_env
    instructions: Callable[[], str] = lambda: ""
    tools: ToolsFactory = default_tools
    client: ClientFactory = default_client
    permissions: Callable[[], PermissionPolicy] = AllowAll
    hooks: Callable[[], HookRunner] = NoHooks
    pool_filter: Callable[[], PoolFilter] = PoolFilter
    """Tool-wide deny rules (plan mode's read-only filter is applied per run)."""
    tool_sources: Sequence[ToolSource] = ()
    """Shared by all sessions (e.g. the MCP servers); closed with the host."""
    tool_search: Callable[[], ToolSearchSettings] = ToolSearchSettings
    transcript_dir: Path | None = None
    code_sources: Callable[[Workspace], Sequence[CodeSource]] = lambda workspace: ()
    """Code-intelligence sources tried before the index (the editor, language servers)."""
    before_session: Callable[[], Awaitable[None]] | None = None
    """Awaited before a run creates a new session (the LSP host: while the workspace-trust
    question is open, so the session starts on the answer); a cancelled run stops waiting."""
    prompts: Callable[[], UserPrompts | None] = lambda: None
    """Where `ask_user_question` and the plan-mode tools ask the user (None: nobody)."""
    skills: Callable[[Workspace], SkillCatalog] = default_skills
    """Skills for new sessions (their names go into the system prompt)."""
    tool_services: Callable[[Workspace], ToolServices] = ToolServices
    """The workspace's typed services (the defaults; the runtime's are set from settings)."""


class SessionOptions(Protocol):
    """Where a host's sessions get their parts: `agentls.runtime.AgentRuntime` (the LSP
    and ACP hosts: everything built from the settings and the host's ports) or
    `HostOptions` (headless hosts and tests: fixed parts, each with a default)."""

    @property
    def tool_sources(self) -> Sequence[ToolSource]: ...
    @property
    def transcript_dir(self) -> Path | None: ...
    @property
    def before_session(self) -> Callable[[], Awaitable[None]] | None: ...
    def settings(self) -> AgentSettings: ...
    def instructions(self) -> str: ...
    def tool_services(self, workspace: Workspace, /) -> ToolServices: ...
    def tools(self, services: ToolServices, /) -> Sequence[AnyTool]: ...
    def client(self, settings: AgentSettings, /) -> ModelClient: ...
    def permissions(self) -> PermissionPolicy: ...
    def hooks(self) -> HookRunner: ...
    def pool_filter(self) -> PoolFilter: ...
    def tool_search(self) -> ToolSearchSettings: ...
    def code_sources(self, workspace: Workspace, /) -> Sequence[CodeSource]: ...
    def prompts(self) -> UserPrompts | None: ...
    def skills(self, workspace: Workspace, /) -> SkillCatalog: ...


class AgentHost:
    """Sessions of one workspace, by id. One run per session at a time; many sessions."""

    def __init__(
        self,
        workspace: Workspace,
        port: EditorPort | None = None,
        options: SessionOptions | None = None,
    ) -> None:
        self.workspace = workspace
        self.port: EditorPort = port or NullPort()
        self.options: SessionOptions = options or HostOptions()
        self.sessions: dict[str, AgentSession] = {}
        self.runs: dict[str, RunHandle] = {}
        self.direct_changes = ChangeSet()
        self.store = SessionStore(self.options.transcript_dir)
        """Saved sessions: a session id not in memory is resumed from here."""
        self._tools: Sequence[AnyTool] | None = None
        self._tool_pools: dict[tuple[bool, bool], ToolPool] = {}
        self._source_tools: tuple[AnyTool, ...] = ()
        """The tool sources' tools (MCP), as of the last `load_tool_sources`."""
        self._direct_permissions: PermissionPolicy | None = None
        self._skills_prompt: str | None = None
        self.edit_sink = _HostEditSink(self)
        """Where write tools hand their staged changes (delivered at once in auto mode)."""
        self.services = self.options.tool_services(workspace)
        """The workspace's typed services, handed to every session and direct call (their
        tools see them as `ToolContext.services`)."""
        sources = self.options.code_sources(workspace)
        if sources:
            from agentls.codeintel.service import CodeIntel

            self.services.code_intel = CodeIntel(workspace, sources)

    # --- tools ---------------------------------------------------------------------------

    @property
    def tools(self) -> Sequence[AnyTool]:
        if self._tools is None:
            self._tools = list(self.options.tools(self.services))
        return self._tools

    def tool_pool(self, mode: RunMode = "review", *, direct: bool = False) -> ToolPool:
        """The pool a new session would get (built-ins and the sources' tools as last
        loaded); `direct` defers nothing, for calling any tool by name without a model."""
        read_only = mode == "plan"
        key = (read_only, direct)
        if key not in self._tool_pools:
            denied = self.options.pool_filter().denied
            search = ToolSearchSettings(mode="never") if direct else self.options.tool_search()
            self._tool_pools[key] = ToolPool.assemble(
                self.tools,
                self._source_tools,
                PoolFilter(read_only=read_only, denied=denied),
                search,
            )
        return self._tool_pools[key]

    async def load_tool_sources(self) -> None:
        """Await the tool sources (starting MCP servers) so `tool_pool` offers what a new
        session's pool would: the CLI's `tools` and `tool` see exactly a session's tools."""
        found = await load_sources(self.options.tool_sources)
        tools = tuple(tool for _, loaded in found for tool in loaded)
        if tools != self._source_tools:
            self._source_tools = tools
            self._tool_pools.clear()

    def tool_definitions(
        self, session_id: str | None = None, mode: RunMode = "review", *, deferred: bool = False
    ) -> ToolsPayload:
        """The `tools` array exactly as the next request of that session (or a new one) sends
        (a new one: call `load_tool_sources` first for the MCP servers' tools); `deferred`
        appends the deferred tools, marked `defer_loading` as the API marks them."""
        pool = self.session(session_id).pool(mode) if session_id else self.tool_pool(mode)
        tools = pool.api_tools()
        if not deferred or pool.search.server_side:  # server-side: they are listed already
            return tools
        extra = [
            tool_to_api_schema(t, defer_loading=True)
            for t in pool.deferred_tools
            if t.name not in pool.discovered
        ]
        return [*tools, *extra]

    async def run_tool(
        self, name: str, input: dict[str, object], mode: RunMode = "review"
    ) -> ToolCallResult:
        """One tool call through the full pipeline, without a model (scripts, debugging)."""
        try:
            if self._direct_permissions is None:
                self._direct_permissions = self.options.permissions()
            permissions = self._direct_permissions
        except ConfigError as exc:
            return ToolCallResult("direct", f"Error: {exc}", is_error=True)
        await self.load_tool_sources()
        if self._skills_prompt is None:
            self.refresh_skills()
        pipeline = Pipeline(self.tool_pool(mode, direct=True), permissions, self.options.hooks())
        ctx = ToolContext(
            session_id=DIRECT_SESSION,
            workspace=self.workspace,
            changes=self.direct_changes,
            mode=mode,
            edits=self.edit_sink,
            services=self.services,
        )
        return await pipeline.execute(ToolCall("direct_" + uuid.uuid4().hex[:12], name, input), ctx)

    def refresh_skills(self) -> list[str]:
        """Discover the skills again (new sessions see new ones); returns their problems."""
        catalog = self.options.skills(self.workspace)
        self.services.skills = catalog  # what the `skill` tool and `read_file` see
        self._skills_prompt = catalog.prompt_section()
        return catalog.problems

    def settings_changed(self) -> None:
        """New settings apply to new sessions and to the next direct tool call."""
        self._direct_permissions = None
        self._tool_pools.clear()
        self._tools = None  # rebuilt with the new settings (e.g. `lint`, `tests`)

    # --- sessions ------------------------------------------------------------------------

    def session(self, session_id: str) -> AgentSession:
        """A session in memory, or a saved one resumed (e.g. after a server restart)."""
        found = self.sessions.get(session_id)
        if found is not None:
            return found
        if self.store.exists(session_id):
            return self.resume_session(session_id)
        known = ", ".join(self.sessions) or "none in memory"
        raise UnknownSession(
            f"unknown session {session_id!r} (known: {known}; no saved session in "
            f"{self.store.folder})"
        )

    def resume_session(
        self, session_id: str, *, tool_sources: Sequence[ToolSource] = ()
    ) -> AgentSession:
        """Load a saved session with today's settings, tools, policy and hooks.

        `tool_sources` are this session's own, besides the host's (e.g. the MCP servers an
        ACP client passes with `session/load`)."""
        from agentls.agent.run.session import AgentSession

        client, config = self._session_parts(tool_sources)
        try:
            session = AgentSession.resume(session_id, client, config, self.store)
        except SessionStateError as exc:
            raise UnknownSession(str(exc)) from None
        self.sessions[session.id] = session
        return session

    def changes_of(self, session_id: str) -> ChangeSet:
        """The staged changeset of a session (or of the direct-tool pseudo-session)."""
        if session_id == DIRECT_SESSION:
            return self.direct_changes
        return self.session(session_id).changes

    def sessions_touching(self, path: Path) -> list[str]:
        """Ids of sessions (and the direct-tool pseudo-session) with staged changes to `path`."""
        found = [sid for sid, s in self.sessions.items() if path in s.changes.changed_paths()]
        if path in self.direct_changes.changed_paths():
            found.append(DIRECT_SESSION)
        return found

    def new_session(
        self, session_id: str | None = None, *, tool_sources: Sequence[ToolSource] = ()
    ) -> AgentSession:
        """A session with fresh settings, policy and hooks (imports the model SDK).

        `tool_sources` are this session's own, besides the host's (e.g. the MCP servers an
        ACP client passes with `session/new`)."""
        from agentls.agent.run.session import AgentSession

        client, config = self._session_parts(tool_sources)
        session = AgentSession(client, config, session_id)
        self.sessions[session.id] = session
        return session

    def _session_parts(
        self, extra_sources: Sequence[ToolSource] = ()
    ) -> tuple[ModelClient, SessionConfig]:
        from agentls.agent.run.session import SessionConfig

        settings = self.options.settings()
        client: ModelClient
        permissions: PermissionPolicy
        try:
            permissions = self.options.permissions()
            client = self.options.client(settings)
        except ConfigError as exc:  # no key, or a permission mode that may not be used
            client = _FailingClient(str(exc))
            permissions = _DenyAll()
        config = SessionConfig(
            settings=settings,
            workspace=self.workspace,
            tools=self.tools,
            permissions=permissions,
            hooks=self.options.hooks(),
            edits=self.edit_sink,
            pool_filter=self.options.pool_filter(),
            tool_sources=[*extra_sources, *self.options.tool_sources],
            tool_search=self.options.tool_search(),
            instructions=self.options.instructions(),
            transcript_dir=self.options.transcript_dir,
            prompts=self.options.prompts(),
            services=self.services,
        )
        self.refresh_skills()
        config.skills = self._skills_prompt or ""
        return client, config

    async def compact(self, session_id: str) -> CompactionPayload:
        """Summarise a session's older turns now (the `agentls.compact` command)."""
        result = await self.session(session_id).compact(reason="manual")
        return result.to_dict()

    def start_run(
        self,
        prompt: str,
        session_id: str | None = None,
        mode: RunMode = "review",
        *,
        title: str = "",
        attachments: Sequence[ContentBlockParam] = (),
        command: CommandRun | None = None,
    ) -> RunHandle:
        """Start a run as a task and return at once; `await handle.task` for the result.

        A new session is created inside the task, so the caller gets its id at once even
        while the model SDK is still being imported (editors time requests out).
        """
        existing: AgentSession | None = None
        if session_id is not None:
            current = self.runs.get(session_id)
            if current and current.task and not current.task.done():
                raise SessionBusy(f"session {session_id} is already running; cancel it or wait")
            existing = self.session(session_id)
            if existing.running:
                raise SessionBusy(f"session {session_id} is already running; cancel it or wait")
        sid = session_id or uuid.uuid4().hex[:12]
        handle = RunHandle(
            sid, prompt, mode, request=title, attachments=attachments, command=command
        )
        self.runs[sid] = handle
        handle.task = asyncio.get_running_loop().create_task(
            self._run(existing, handle), name=f"agentls-run-{sid}"
        )
        return handle

    async def _run(self, existing: AgentSession | None, handle: RunHandle) -> RunPayload:
        reporter = self.port.reporter(handle)
        session: AgentSession | None = existing
        try:
            await reporter.begin()
            if session is None:
                await self._before_session(handle, reporter)
                await asyncio.to_thread(_import_core)
                session = self.new_session(handle.session_id)
            if handle.cancel_requested:
                result = _cancelled_before_start(session)
                session.status = result.status
            else:
                result = await session.run(
                    handle.prompt,
                    events=reporter.on_event,
                    mode=handle.mode,
                    attachments=handle.attachments,
                    command=handle.command,
                    title=handle.request,
                )
            outcome = await self._deliver_at_end(session, handle, result)
            payload = result.to_dict()
            payload["edit"] = outcome.to_dict() if outcome else None
            if handle.checks:
                payload["checks"] = handle.checks
        except Exception as exc:
            log.exception("run of session %s failed", handle.session_id)
            if session is not None:
                session.status = "failed"
            payload = {
                "session": handle.session_id,
                "status": "failed",
                "text": "",
                "edit": None,
                "usage": Tally().payload(),
                "error": f"internal error: {type(exc).__name__}: {exc}",
            }
            if session is not None:
                payload["transcript"] = session.transcript.path.as_uri()
        await reporter.end(payload)
        return payload

    async def _before_session(self, handle: RunHandle, reporter: RunReporter) -> None:
        """The host's wait before a new session (see `HostOptions.before_session`)."""
        if self.options.before_session is None:
            return
        waiting = asyncio.ensure_future(self.options.before_session())
        await asyncio.wait({waiting}, timeout=0.05)
        if not waiting.done():
            from agentls.agent.protocol.events import Notice

            reporter.on_event(
                Notice(handle.session_id, "waiting for your answer to the question shown")
            )
        while not waiting.done():
            if handle.cancel_requested:
                waiting.cancel()
                return
            await asyncio.wait({waiting}, timeout=0.05)
        if not waiting.cancelled() and waiting.exception() is not None:
            log.warning("waiting before the session failed: %s", waiting.exception())

    async def _deliver_at_end(
        self, session: AgentSession, handle: RunHandle, result: RunResult
    ) -> EditOutcome | None:
        mode = cast("RunMode", result.mode or handle.mode)  # plan mode may end mid-run
        if mode == "plan" or session.changes.is_empty():
            return None
        if result.status == "cancelled":
            # A cancelled run must not pop up a preview; its edits wait for accept/reject.
            files = [p.as_uri() for p in session.changes.changed_paths()]
            reason = "the run was cancelled; its edits stay staged"
            return EditOutcome(files, None, reason, left_out=[(f, reason) for f in files])
        from agentls.tools.after_edit import checks_settings
        from agentls.tools.review_checks import changeset_checks, hold_failing

        how = delivery_for(mode, session.config.permissions.mode, final=True)
        if how not in ("write", "review"):
            return None
        handle.checks = await changeset_checks(self.services, session.id, session.changes)
        if how == "write" and checks_settings(self.workspace).block == "newErrors":
            hold_failing(session.changes, handle.checks)
        return await self.port.deliver(session.id, session.changes, how, handle.title, final=True)

    async def deliver_now(
        self, session_id: str, changes: ChangeSet, mode: RunMode
    ) -> EditOutcome | None:
        """Auto delivery after a write tool: the runtime decides (`delivery_for`), the
        port only carries it out."""
        session = self.sessions.get(session_id)
        permission_mode = session.config.permissions.mode if session else "default"
        how = delivery_for(mode, permission_mode, final=False, empty=changes.is_empty())
        if how not in ("write", "review"):
            return None
        handle = self.runs.get(session_id)
        summary = handle.title if handle else "agentls edit"
        return await self.port.deliver(session_id, changes, how, summary)

    def cancel(self, session_id: str | None = None) -> list[str]:
        """Cancel one session's run, or every run; returns the ids that were running."""
        if session_id is not None:
            if session_id not in self.runs:
                self.session(session_id)  # raises UnknownSession
            targets = [session_id]
        else:
            targets = list(self.runs)
        cancelled = []
        for sid in targets:
            handle = self.runs.get(sid)
            if handle is None or handle.task is None or handle.task.done():
                continue
            handle.cancel_requested = True  # seen by a run that has not started yet
            if sid in self.sessions:
                self.sessions[sid].cancel()
            cancelled.append(sid)
        return cancelled

    def review_checks(self, session_id: str) -> list[FileCheckPayload]:
        """The session's staged files checked before review as its last run ended, for
        the files still staged (`checks.beforeReview`)."""
        handle = self.runs.get(session_id)
        session = self.sessions.get(session_id)
        if handle is None or not handle.checks or session is None:
            return []
        staged = {str(p) for p in session.changes.changed_paths()}
        return [c for c in handle.checks if c["path"] in staged]

    def status(self) -> HostStatusPayload:
        settings = self.options.settings()
        sessions: list[SessionStatusPayload | StartingSessionPayload] = []
        for sid, session in self.sessions.items():
            entry = session.status_dict()
            checks = self.review_checks(sid)
            if checks:
                entry["checks"] = checks
            sessions.append(entry)
        sessions += [
            StartingSessionPayload(id=sid, status="starting", running=True, turns=0, runs=0)
            for sid in self.runs
            if sid not in self.sessions
        ]
        return {
            "sessions": sessions,
            "model": settings.model,
            "endpoint": settings.base_url or DEFAULT_ENDPOINT,
            "credentials": bool(settings.api_key or settings.auth_token or settings.base_url),
            "workspace": [str(r) for r in self.workspace.roots],
            "tool_sources": [
                entry for source in self.options.tool_sources for entry in _source_status(source)
            ],
            "sandbox": self.services.sandbox.status(),
            "code_intel": _code_intel_status(self.services),
            "agents": _agents_status(self.services),
        }

    async def shutdown(self) -> None:
        """Cancel every run and wait for them to wind down (results are discarded), kill
        the background commands, end the sessions, close what they opened."""
        self.cancel()
        tasks = [h.task for h in self.runs.values() if h.task and not h.task.done()]
        if tasks:
            await asyncio.wait(tasks, timeout=5)
        from agentls.tools.background import close_jobs

        await close_jobs(self.workspace)  # no background command outlives the server
        ending = [s.end("other") for s in self.sessions.values()]  # SessionEnd hooks
        if ending:
            await asyncio.wait([asyncio.ensure_future(e) for e in ending], timeout=10)
        for session in self.sessions.values():
            await session.aclose()
        for source in self.options.tool_sources:
            closer = getattr(source, "aclose", None)
            if closer is not None:
                try:
                    await closer()
                except Exception:
                    log.exception("closing tool source %r failed", source)
        if self.services.made("code_intel"):
            await self.services.code_intel.aclose()  # language servers get shutdown + exit
        self.services.close()  # the sandbox's proxies stopped
        self.workspace.close()  # shadow copies deleted, the symbol index persisted


def _agents_status(services: ToolServices) -> Mapping[str, object]:
    """The sub-agent types `task` offers, and the agent files that were skipped and why."""
    return cast("Mapping[str, object]", services.agents.status())


def _source_status(source: ToolSource) -> list[Mapping[str, object]]:
    """A tool source's own status entries (MCP servers report one per server)."""
    status = getattr(source, "status", None)
    if status is None:
        return []
    entries = status()
    return list(entries) if isinstance(entries, list) else [cast(Mapping[str, object], entries)]


def _code_intel_status(services: ToolServices) -> list[dict[str, object]]:
    """Language servers: which run, for which languages, and why one does not."""
    return services.code_intel.status() if services.made("code_intel") else []


CORE_MODULES = (
    "agentls.agent.run.session",
    "agentls.agent.run.loop",
    "agentls.agent.run.model_client",
)


def _import_core() -> None:
    """The session machinery and the model SDK (run in a thread: it takes seconds)."""
    for name in CORE_MODULES:
        importlib.import_module(name)


def _cancelled_before_start(session: AgentSession) -> RunResult:
    from agentls.agent.protocol.results import RunResult

    return RunResult(session.id, "cancelled", "", Tally(), 0, session.transcript.path)
