"""`McpManager`: every configured MCP server of a workspace, as one tool source.

The host builds one manager per workspace (`McpManager.from_config`) and gives it to each
session as a tool source (`SessionConfig.tool_sources=[manager]`). Servers start on first
need — the first `tools()` call, i.e. the first run — or at once when `startup` is `eager`
and the host calls `start_soon()`; all of them concurrently, in the background, each with a
start-up timeout. A run waits for them at most `startupWaitSeconds` and then goes on
without the slow ones (which keep starting and serve later sessions); a server that fails
is reported, and the others carry on. What the user must know — servers awaiting approval,
failed or slow starts, a malformed configuration — goes to the host's `notify` once per
occurrence (an LSP `window/showMessage`, the CLI's output) and into `status()`.

The workspace's `.mcp.json` starts nothing until approved (see `agentls.mcp.approval` and
`agentls.mcp.claude` for who may approve). `aclose()` stops every server and leaves no
process behind.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentls.agent.framework.registry import AnyTool
from agentls.config import McpSettings, validate_leniently
from agentls.mcp.approval import ApprovalStore, ProjectFileApprover, ProjectFileRequest
from agentls.mcp.bridge import HostBridge
from agentls.mcp.claude import ClaudeCodeFiles, ProjectSwitches, plugin_servers
from agentls.mcp.config import (
    PROJECT_FILE,
    ConfigProblem,
    McpOptions,
    ParsedServers,
    ServerSpec,
    parse_servers,
    read_json_file,
    servers_of,
    user_config_path,
)
from agentls.mcp.naming import unique_tool_names
from agentls.mcp.notices import Notice, Notifier, Seen, log_notice
from agentls.mcp.project import (
    HOW_TO_APPROVE,
    ProjectFile,
    ProjectState,
    project_state,
    read_project,
)

if TYPE_CHECKING:  # the SDK is imported only once a server is configured (issue 33)
    from agentls.mcp.connection import McpConnection
    from agentls.mcp.tools import McpTool

log = logging.getLogger(__name__)

APPROVAL_TIMEOUT = 300.0
"""How long a run waits for the user to answer about `.mcp.json` before going on without it."""
SLOW_NOTICE = 3.0
"""After this long a run says which servers it is waiting for."""
MAX_SERVER_INSTRUCTIONS = 2_000
MAX_INSTRUCTIONS = 8_000
"""Caps on the servers' `instructions` in the system prompt (per server, all together)."""
RANK = {"config": 0, "local": 1, "project": 2, "user": 3}
"""Which source wins when two define the same server name (lower wins)."""


@dataclass
class _Sources:
    """What `from_config` was given, kept so `reload()` can read the sources again."""

    workspace_root: Path | None
    config: McpSettings | Mapping[str, Any] | None
    approve_project_file: ProjectFileApprover | None
    approvals: ApprovalStore | None
    user_config: Path | None
    environ: Mapping[str, str] | None
    home: Path | None
    read_claude_settings: bool
    bridge: HostBridge | None
    notify: Notifier | None


class McpManager:
    """All MCP servers of one workspace; implements the `ToolSource` protocol."""

    def __init__(
        self,
        servers: Sequence[ServerSpec],
        options: McpOptions | None = None,
        *,
        workspace_root: Path | None = None,
        project: ProjectFile | None = None,
        approve_project_file: ProjectFileApprover | None = None,
        approvals: ApprovalStore | None = None,
        problems: Sequence[ConfigProblem] = (),
        switches: ProjectSwitches | None = None,
        bridge: HostBridge | None = None,
        notify: Notifier | None = None,
    ) -> None:
        self.options = options or McpOptions()
        self.workspace_root = workspace_root
        self.project = project
        self.approve_project_file = approve_project_file
        self.approvals = approvals or ApprovalStore()
        self.problems = list(problems)
        self.switches = switches or ProjectSwitches()
        self.bridge = bridge or HostBridge(
            roots=lambda: [workspace_root] if workspace_root is not None else []
        )
        self.notify: Notifier = notify or log_notice
        self._connections: dict[str, McpConnection] = {
            spec.name: self._connection(spec) for spec in servers
        }
        self._retired: dict[str, McpConnection] = {}
        """Stopped connections whose tools sessions may still hold (reused by name)."""
        self._tool_cache: dict[str, tuple[McpConnection, tuple[Any, ...], list[McpTool]]] = {}
        self._lock = asyncio.Lock()
        self._closed = False
        self._seen = Seen()
        self._sources: _Sources | None = None

    def _connection(self, spec: ServerSpec) -> McpConnection:
        from agentls.mcp.connection import McpConnection

        cwd = str(self.workspace_root) if self.workspace_root else None
        return McpConnection(spec, self.options, cwd, self.bridge)

    @classmethod
    def from_config(
        cls,
        workspace_root: Path | None,
        config: McpSettings | Mapping[str, Any] | None = None,
        *,
        approve_project_file: ProjectFileApprover | None = None,
        approvals: ApprovalStore | None = None,
        user_config: Path | None = None,
        environ: Mapping[str, str] | None = None,
        home: Path | None = None,
        read_claude_settings: bool = True,
        bridge: HostBridge | None = None,
        notify: Notifier | None = None,
        extra_env: Mapping[str, str] | None = None,
    ) -> McpManager:
        """Read every source; nothing starts yet.

        `config` is our settings object (`agentls.config.McpSettings`, or its camelCase
        dict). `user_config` overrides the user file's path and `home` the home folder of
        Claude Code's files (tests); `environ` is the environment for `${VAR}` expansion;
        `read_claude_settings: false` ignores Claude Code's files (their servers and
        approvals). `bridge` is what the host lends servers (roots, questions to the user)
        and `notify` where notices go. `extra_env` is the settings' `env` (Claude Code's
        `env` key): every stdio server starts with it (its own `env` entry wins) and `${VAR}`
        expands from it.
        """
        if extra_env:
            environ = {**(os.environ if environ is None else environ), **extra_env}
            bridge = _with_environment(bridge, workspace_root, extra_env)
        sources = _Sources(
            workspace_root,
            config,
            approve_project_file,
            approvals,
            user_config,
            environ,
            home,
            read_claude_settings,
            bridge,
            notify,
        )
        options, problems = _options(config)
        env = os.environ if environ is None else environ
        claude = ClaudeCodeFiles(workspace_root, home)
        merged: dict[str, ServerSpec] = {}

        def add(parsed: ParsedServers) -> None:
            problems.extend(parsed.problems)
            for name, spec in parsed.servers.items():
                merged.setdefault(name, spec)

        if options.mcp_servers:
            add(servers_of(options.mcp_servers, "config", env, "settings"))
        if options.claude_code_local_config and read_claude_settings:
            add(claude.local_servers(env))
        project: ProjectFile | None = None
        if options.project_config and workspace_root is not None:
            project, found = read_project(workspace_root / PROJECT_FILE, env)
            problems.extend(found)
        for parsed in _user_servers(options, user_config, claude, read_claude_settings, env):
            add(parsed)
        if read_claude_settings:
            for parsed in plugin_servers(workspace_root, home, env):
                add(parsed)
        switches = claude.switches(options, read_claude_settings) if project else None
        problems.extend(claude.problems)
        manager = cls(
            [s for n, s in merged.items() if n not in options.disabled],
            options,
            workspace_root=workspace_root,
            project=project,
            approve_project_file=approve_project_file,
            approvals=approvals,
            problems=problems,
            switches=switches,
            bridge=bridge,
            notify=notify,
        )
        manager._sources = sources
        return manager

    # -- the ToolSource protocol -----------------------------------------------------------

    async def tools(self) -> list[AnyTool]:
        """Tools of every ready server, plus the resource tools when some server offers
        resources. Starts pending servers and waits for them at most `startupWaitSeconds`."""
        await self._wait_briefly(await self._launch())
        tools: list[AnyTool] = []
        ready = self._ready()
        for connection in ready:
            tools.extend(self._tools_of(connection))
        if any(c.supports_resources for c in ready):
            from agentls.mcp.tools import ListMcpResources, ReadMcpResource

            tools.append(ListMcpResources(self._ready))
            tools.append(ReadMcpResource(self._ready))
        return tools

    def instructions_for(self, tools: Sequence[AnyTool]) -> str:
        """The `instructions` of the servers whose tools these are, for the system prompt
        (capped; the same tools give the same text, so a session's prompt stays stable).
        Each server's text is inside its own `<mcp-server>` element, which its text
        cannot close."""
        if not self._connections and not self._retired:
            return ""  # no server, so no MCP tool (and no SDK import)
        from agentls.mcp.tools import McpTool

        connections = {t.connection.name: t.connection for t in tools if isinstance(t, McpTool)}
        sections: list[str] = []
        budget = MAX_INSTRUCTIONS
        for name in sorted(connections):
            text = (connections[name].instructions or "").strip()
            if not text or budget <= 0:
                continue
            text = _capped(
                text.replace("</mcp-server", "<\\/mcp-server"), min(MAX_SERVER_INSTRUCTIONS, budget)
            )
            budget -= len(text)
            sections.append(f'<mcp-server name="{name}">\n{text}\n</mcp-server>')
        if not sections:
            return ""
        head = (
            "# MCP server instructions\n\nThe MCP servers whose tools you have "
            "(`mcp__<server>__<tool>`) say how to use them. This text comes from the "
            "servers, not from the user."
        )
        return "\n\n".join([head, *sections])

    def _tools_of(self, connection: McpConnection) -> list[McpTool]:
        """Built once per connection and tool listing: sessions share the tool objects."""
        listing = tuple(connection.tools)
        cached = self._tool_cache.get(connection.name)
        if cached is None or cached[0] is not connection or cached[1] != listing:
            from agentls.mcp.tools import McpTool

            names = unique_tool_names(connection.name, [t.name for t in connection.tools])
            built = [McpTool(connection, t, names[t.name]) for t in connection.tools]
            cached = (connection, listing, built)
            self._tool_cache[connection.name] = cached
        return cached[2]

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Resolve the project file's approval, start every pending server, and wait until
        each is ready or has failed. Idempotent; safe from several sessions at once."""
        tasks = await self._launch()
        if tasks:
            await asyncio.gather(*tasks)

    def start_soon(self) -> asyncio.Task[None] | None:
        """For hosts: begin starting servers now when `startup` is `eager` (else None)."""
        if self.options.startup != "eager" or self._closed:
            return None
        return asyncio.get_running_loop().create_task(self.start(), name="agentls-mcp-start")

    async def _launch(self) -> list[asyncio.Task[None]]:
        """Start what is pending in the background; the start tasks still running."""
        async with self._lock:
            if self._closed:
                return []
            await self._resolve_project()
            self._announce()
            tasks: list[asyncio.Task[None]] = []
            for connection in self._connections.values():
                if connection.state == "pending":
                    task = connection.begin()
                    task.add_done_callback(functools.partial(self._on_start_done, connection))
                if connection.state in ("pending", "starting"):
                    tasks.append(connection.begin())
            return [t for t in tasks if not t.done()]

    async def _wait_briefly(self, tasks: list[asyncio.Task[None]]) -> None:
        """Wait for starting servers, saying so after a moment, at most `startup_wait`."""
        if not tasks:
            return
        wait = self.options.startup_wait
        _, pending = await asyncio.wait(tasks, timeout=min(SLOW_NOTICE, wait))
        if not pending:
            return
        if wait > SLOW_NOTICE:
            names = self._starting_names()
            self._say("info", f"waiting for MCP server(s) to start: {names} (up to {wait:g} s)")
            _, pending = await asyncio.wait(pending, timeout=wait - SLOW_NOTICE)
        slow = [c for c in self._connections.values() if c.state == "starting"]
        for connection in slow:
            connection.reported_slow = True
        if slow and self._seen.first("slow", *sorted(c.name for c in slow)):
            names = ", ".join(sorted(c.name for c in slow))
            self._say(
                "warning",
                f"MCP server(s) {names} still starting after {wait:g} s: this run goes on "
                "without their tools; they keep starting (up to "
                f"{self.options.startup_timeout:g} s) and serve new sessions once ready "
                "(`mcp.startupWaitSeconds` makes runs wait longer)",
            )

    def _starting_names(self) -> str:
        return ", ".join(
            sorted(c.name for c in self._connections.values() if c.state == "starting")
        )

    def _on_start_done(self, connection: McpConnection, task: asyncio.Task[None]) -> None:
        self._started(connection)

    def _started(self, connection: McpConnection) -> None:
        """A start ended (maybe long after the run stopped waiting): say how, once."""
        if self._closed:
            return
        if connection.state == "failed" and self._seen.first("failed", connection.name):
            self._say(
                "warning", f"MCP server '{connection.name}' failed to start: {connection.error}"
            )
        elif connection.state == "ready" and connection.reported_slow:
            seconds = (connection.startup_ms or 0) / 1000
            self._say(
                "info",
                f"MCP server '{connection.name}' is ready after {seconds:.0f} s; new "
                "sessions get its tools",
            )

    def _say(self, level: Literal["info", "warning"], text: str) -> None:
        try:
            self.notify(Notice(level, text))
        except Exception:
            log.exception("showing an MCP notice failed")

    def _announce(self) -> None:
        """Configuration problems and servers awaiting approval, each said once."""
        for problem in self.problems:
            if self._seen.first("problem", problem.source, problem.name, problem.message):
                self._say("warning", f"MCP configuration: {problem.message}")
        for note in self.switches.ignored:
            if self._seen.first("ignored", note):
                self._say("warning", f"MCP approval: {note}")
        project = self.project
        if project is None:
            return
        waiting = [
            n for n in sorted(project.servers) if self.project_state(n)[0] == "needs-approval"
        ]
        if waiting and self._seen.first("approval", project.request.sha256, *waiting):
            listing = "; ".join(f"{n}: {project.servers[n].describe()}" for n in waiting)
            self._say(
                "warning",
                f"{project.path} defines MCP servers that need your approval before they "
                f"start ({listing}); {HOW_TO_APPROVE}",
            )

    # -- the project file ------------------------------------------------------------------

    def project_state(self, name: str) -> tuple[ProjectState, str]:
        """Where a server of `.mcp.json` stands, and why."""
        return project_state(
            self.project, name, self.switches, self.approvals, self.options.disabled
        )

    async def _resolve_project(self) -> None:
        project = self.project
        if project is None:
            return
        if project.decision is None:
            project.decision = self.approvals.decision(project.path, project.request.sha256)
        undecided = [
            n for n in sorted(project.servers) if self.project_state(n)[0] == "needs-approval"
        ]
        if undecided and self.approve_project_file is not None and not project.asked:
            project.asked = True
            decision = await self._ask(project, project.request_for(undecided))
            if decision is not None:
                self.approvals.record(project.request, decision)
                project.decision = decision
        self._apply_project()

    async def _ask(self, project: ProjectFile, request: ProjectFileRequest) -> bool | None:
        assert self.approve_project_file is not None
        try:
            return await asyncio.wait_for(self.approve_project_file(request), APPROVAL_TIMEOUT)
        except TimeoutError:
            # An unanswered prompt must not hold the run forever; ask again next time.
            log.warning("no answer about %s; its servers stay off for now", project.path)
            project.asked = False
        except Exception:
            log.exception("asking to approve %s failed", project.path)
        return None

    def _apply_project(self) -> None:
        """Add a connection for every approved server of the file (not started yet)."""
        project = self.project
        if project is None:
            return
        for name, spec in project.servers.items():
            if self.project_state(name)[0] != "approved":
                continue
            existing = self._connections.get(name)
            if existing is not None and (
                RANK[existing.spec.source] < RANK["project"]
                or existing.spec.source == "project"
                or existing.state != "pending"
            ):
                continue  # our settings and Claude Code's local scope win on a name clash
            retired = self._retired.pop(name, None)
            if retired is not None:
                retired.reconfigure(spec, self.options)
                self._connections[name] = retired
            else:
                self._connections[name] = self._connection(spec)

    async def approve(self, server: str | None = None) -> list[str]:
        """Approve the workspace's `.mcp.json` (remembered for its current content), or one
        of its servers; starts what that approves and returns the names approved."""
        project = self.project
        if project is None:
            root = self.workspace_root or "the workspace"
            raise LookupError(f"there is no {PROJECT_FILE} in {root} (nothing to approve)")
        if server is not None and server not in project.servers:
            names = ", ".join(sorted(project.servers)) or "none"
            raise LookupError(
                f"{server!r} is not a server of {project.path} (its servers: {names})"
            )
        async with self._lock:
            self.approvals.record(project.request, True, server=server)
            if server is None:
                project.decision = True
            self._apply_project()
        await self.start()
        return [server] if server is not None else sorted(project.servers)

    async def approve_project(self, approved: bool) -> None:
        """Record the user's answer about the whole `.mcp.json` (e.g. from an editor command).

        Approved servers start with the next `start()`/`tools()` call and serve new sessions;
        running sessions keep their (byte-stable) tool set.
        """
        if self.project is None:
            return
        async with self._lock:
            self.approvals.record(self.project.request, approved)
            self.project.decision = approved
            self.project.asked = True
            self._apply_project()

    # -- restarts --------------------------------------------------------------------------

    async def restart(self, name: str | None = None) -> None:
        """Start one server again (failed, crashed or stopped), or — without a name — read
        the configuration again and restart every server. Sessions that hold a server's
        tools use the new process."""
        if name is None:
            await self.reload()
            return
        connection = self._connections.get(name)
        if connection is None:
            if self.project is not None and name in self.project.servers:
                raise LookupError(f"MCP server {name!r}: {self.project_state(name)[1]}")
            known = ", ".join(sorted(self._connections)) or "none"
            raise KeyError(f"no MCP server named {name!r} (servers: {known})")
        self._seen.forget(name)
        await connection.restart()
        self._started(connection)

    async def reload(self, config: McpSettings | Mapping[str, Any] | None = None) -> None:
        """Read every source again (with new settings, if given), stop what is gone or
        changed, and start the servers now configured."""
        sources = self._sources
        if sources is None:
            for connection in list(self._connections.values()):
                await connection.restart()
            return
        if config is not None:
            sources.config = config
        fresh = McpManager.from_config(
            sources.workspace_root,
            sources.config,
            approve_project_file=sources.approve_project_file,
            approvals=self.approvals,
            user_config=sources.user_config,
            environ=sources.environ,
            home=sources.home,
            read_claude_settings=sources.read_claude_settings,
            bridge=self.bridge,
            notify=self.notify,
        )
        async with self._lock:
            old = self._connections
            await asyncio.gather(*(c.stop() for c in old.values()), return_exceptions=True)
            self._retired.update(old)
            self.options = fresh.options
            self.problems = fresh.problems
            self.switches = fresh.switches
            self.project = fresh.project
            self._connections = {}
            for name, connection in fresh._connections.items():
                retired = self._retired.pop(name, None)
                if retired is not None:
                    retired.reconfigure(connection.spec, self.options)
                    connection = retired
                self._connections[name] = connection
            self._tool_cache.clear()
            self._seen = Seen()
        await self.start()

    async def aclose(self) -> None:
        """Stop every server (concurrently); afterwards no server process is left running."""
        self._closed = True
        connections = list(self._connections.values())
        results = await asyncio.gather(*(c.stop() for c in connections), return_exceptions=True)
        for connection, result in zip(connections, results, strict=True):
            if isinstance(result, BaseException):
                log.error("stopping MCP server %s failed: %s", connection.name, result)

    # -- status ----------------------------------------------------------------------------

    def connection(self, name: str) -> McpConnection | None:
        return self._connections.get(name)

    def _ready(self) -> list[McpConnection]:
        return [
            c
            for c in sorted(self._connections.values(), key=lambda c: c.name)
            if c.state == "ready"
        ]

    def status(self) -> list[dict[str, object]]:
        """One entry per server (and per unusable config entry) for `agentls.status`."""
        entries = [c.status() for c in sorted(self._connections.values(), key=lambda c: c.name)]
        project = self.project
        if project is not None:
            for name, spec in sorted(project.servers.items()):
                state, reason = self.project_state(name)
                existing = self._connections.get(name)
                if state == "approved" or (existing and existing.spec.source != "project"):
                    continue
                entries.append(
                    {
                        "name": name,
                        "source": "project",
                        "transport": spec.transport,
                        "target": spec.describe(),
                        "state": state,
                        "tools": 0,
                        "resources": False,
                        "error": reason,
                    }
                )
        for problem in self.problems:
            entries.append(
                {
                    "name": problem.name,
                    "source": problem.source,
                    "state": "invalid-config",
                    "tools": 0,
                    "resources": False,
                    "error": problem.message,
                }
            )
        return entries

    def report(self) -> dict[str, object]:
        """`status()` with the project file and its standing approvals (`agentls.mcp`)."""
        project = self.project
        switches = self.switches
        return {
            "servers": self.status(),
            "project_file": str(project.path) if project else None,
            "project_sha256": project.request.sha256 if project else None,
            "approvals": {
                "enable_all": switches.enable_all,
                "enabled": dict(switches.enabled),
                "disabled": dict(switches.disabled),
                "ignored": list(switches.ignored),
            },
        }


def _capped(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 40)].rstrip() + "\n… (instructions truncated)"


def _options(
    config: McpSettings | Mapping[str, Any] | None,
) -> tuple[McpSettings, list[ConfigProblem]]:
    """Our `mcp` settings object, validated (each invalid part reported and dropped)."""
    if isinstance(config, McpSettings):
        return config, []
    checked = validate_leniently(McpSettings, config, "settings")
    return checked.model, [ConfigProblem("*", "config", str(p)) for p in checked.problems]


def _with_environment(
    bridge: HostBridge | None, workspace_root: Path | None, extra: Mapping[str, str]
) -> HostBridge:
    """`bridge` whose servers' base environment also has `extra` (later keys win)."""
    base = bridge or HostBridge(roots=lambda: [workspace_root] if workspace_root else [])
    inherited = base.environment
    return dataclasses.replace(base, environment=lambda: {**inherited(), **extra})


def _user_servers(
    options: McpOptions,
    user_config: Path | None,
    claude: ClaudeCodeFiles,
    read_claude_settings: bool,
    env: Mapping[str, str],
) -> list[ParsedServers]:
    """The user's own servers: our user file, then Claude Code's user scope."""
    if not options.user_config:
        return []
    user_files = [user_config or user_config_path()]
    if options.claude_code_user_config and read_claude_settings:
        user_files.append(claude.claude_json)
    found: list[ParsedServers] = []
    for path in user_files:
        data, problem = read_json_file(path)
        if problem:
            skipped = ParsedServers()
            skipped.problems.append(ConfigProblem("*", "user", problem))
            found.append(skipped)
        if data is not None:
            found.append(parse_servers(data, "user", env, str(path)))
    return found
