"""`McpManager`: every configured MCP server of a workspace, as one tool source.

The host builds one manager per workspace (`McpManager.from_config`) and gives it to each
session as a tool source (`SessionConfig.tool_sources=[manager]`). Servers start on first
need — the first `tools()` call, i.e. the first run — or at once when `startup` is `eager`
and the host calls `start()`; all of them concurrently, each with a start-up timeout. A
server that fails is reported in `status()` (and the log) and the others carry on.
`aclose()` stops every server and leaves no process behind.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agentls.agent.registry import AnyTool
from agentls.config import McpSettings, validate_leniently
from agentls.mcp.approval import (
    ApprovalStore,
    ProjectFileApprover,
    ProjectFileRequest,
    file_digest,
)
from agentls.mcp.config import (
    PROJECT_FILE,
    ConfigProblem,
    McpOptions,
    ServerSpec,
    claude_code_user_servers,
    parse_servers,
    read_json_file,
    user_config_path,
)
from agentls.mcp.connection import McpConnection
from agentls.mcp.naming import unique_tool_names
from agentls.mcp.tools import ListMcpResources, McpTool, ReadMcpResource

log = logging.getLogger(__name__)

APPROVAL_TIMEOUT = 300.0
"""How long a run waits for the user to answer about `.mcp.json` before going on without it."""


class ProjectFile:
    """The workspace's `.mcp.json` and where its approval stands."""

    def __init__(self, path: Path, data: bytes, servers: dict[str, ServerSpec]) -> None:
        self.path = path
        self.servers = servers
        self.request = ProjectFileRequest(
            path,
            file_digest(data),
            tuple((name, spec.describe()) for name, spec in sorted(servers.items())),
        )
        self.approved: bool | None = None
        self.asked = False


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
        extra_env: Mapping[str, str] | None = None,
    ) -> None:
        self.options = options or McpOptions()
        self.extra_env = dict(extra_env or {})
        """The settings' `env`: every stdio server gets it (its own `env` wins)."""
        self.workspace_root = workspace_root
        self.project = project
        self.approve_project_file = approve_project_file
        self.approvals = approvals or ApprovalStore()
        self.problems = list(problems)
        cwd = str(workspace_root) if workspace_root else None
        self._connections: dict[str, McpConnection] = {
            spec.name: self._connection(spec, cwd) for spec in servers
        }
        self._tool_cache: dict[str, tuple[McpConnection, list[McpTool]]] = {}
        self._lock = asyncio.Lock()
        self._closed = False

    def _connection(self, spec: ServerSpec, cwd: str | None) -> McpConnection:
        connection = McpConnection(spec, self.options, cwd)
        connection.extra_env = self.extra_env
        return connection

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
        extra_env: Mapping[str, str] | None = None,
    ) -> McpManager:
        """Read the three sources; nothing starts yet.

        `config` is our settings object: `{"mcpServers": {...}}` plus options (`startup`,
        `startupTimeoutSeconds`, `toolTimeoutSeconds`, `projectConfig`, `userConfig`,
        `claudeCodeUserConfig`, `disabledServers`). `user_config` overrides the user file's
        path (tests); `environ` the environment used for `${VAR}` expansion; `extra_env`
        the settings' `env` (given to every server, and expanded like the environment).
        """
        options, problems = _options(config)
        env = {**(os.environ if environ is None else environ), **(extra_env or {})}
        merged: dict[str, ServerSpec] = {}

        def add(parsed_servers: Mapping[str, ServerSpec], found: list[ConfigProblem]) -> None:
            problems.extend(found)
            for name, spec in parsed_servers.items():
                merged.setdefault(name, spec)

        if options.mcp_servers:
            parsed = parse_servers({"mcpServers": options.mcp_servers}, "config", env, "settings")
            add(parsed.servers, parsed.problems)
        project: ProjectFile | None = None
        if options.project_config and workspace_root is not None:
            project, found = _read_project(workspace_root / PROJECT_FILE, env)
            problems.extend(found)
        if options.user_config:
            for path in _user_files(user_config, options):
                data, problem = read_json_file(path)
                if problem:
                    problems.append(ConfigProblem("*", "user", problem))
                if data is not None:
                    parsed = parse_servers(data, "user", env, str(path))
                    add(parsed.servers, parsed.problems)
        servers = [s for n, s in merged.items() if n not in options.disabled]
        manager = cls(
            servers,
            options,
            workspace_root=workspace_root,
            project=project,
            approve_project_file=approve_project_file,
            approvals=approvals,
            problems=problems,
            extra_env=extra_env,
        )
        return manager

    # -- the ToolSource protocol -----------------------------------------------------------

    async def tools(self) -> list[AnyTool]:
        """Tools of every ready server (starting pending ones first), plus the resource tools
        when some server offers resources."""
        await self.start()
        tools: list[AnyTool] = []
        for connection in self._ready():
            tools.extend(self._tools_of(connection))
        if any(c.supports_resources for c in self._ready()):
            tools.append(ListMcpResources(self._ready))
            tools.append(ReadMcpResource(self._ready))
        return tools

    def _tools_of(self, connection: McpConnection) -> list[McpTool]:
        """Built once per connection: every session shares the same tool objects."""
        cached = self._tool_cache.get(connection.name)
        if cached is None or cached[0] is not connection:
            names = unique_tool_names(connection.name, [t.name for t in connection.tools])
            built = [McpTool(connection, t, names[t.name]) for t in connection.tools]
            cached = (connection, built)
            self._tool_cache[connection.name] = cached
        return cached[1]

    # -- lifecycle -------------------------------------------------------------------------

    async def start(self) -> None:
        """Resolve the project file's approval, then start every pending server concurrently.

        Idempotent and safe to call from several sessions at once; returns when each server
        is ready or has failed.
        """
        async with self._lock:
            if self._closed:
                return
            await self._resolve_project()
            pending = [c for c in self._connections.values() if c.state == "pending"]
            if pending:
                await asyncio.gather(*(c.start() for c in pending))

    def start_soon(self) -> asyncio.Task[None] | None:
        """For hosts: begin starting servers now when `startup` is `eager` (else None)."""
        if self.options.startup != "eager" or self._closed:
            return None
        return asyncio.get_running_loop().create_task(self.start(), name="agentls-mcp-start")

    async def _resolve_project(self) -> None:
        project = self.project
        if project is None or project.approved is not None:
            return
        decision = self.approvals.decision(project.path, project.request.sha256)
        if decision is None and self.approve_project_file is not None and not project.asked:
            project.asked = True
            try:
                decision = await asyncio.wait_for(
                    self.approve_project_file(project.request), APPROVAL_TIMEOUT
                )
            except TimeoutError:
                # An unanswered prompt must not hold the run forever; ask again next time.
                log.warning("no answer about %s; its servers stay off for now", project.path)
                project.asked = False
                decision = None
            except Exception:
                log.exception("asking to approve %s failed", project.path)
                decision = None
            if decision is not None:
                self.approvals.record(project.request, decision)
        self._apply_project_decision(decision)

    def _apply_project_decision(self, decision: bool | None) -> None:
        project = self.project
        if project is None:
            return
        project.approved = decision
        if decision:
            cwd = str(self.workspace_root) if self.workspace_root else None
            for name, spec in project.servers.items():
                # Our own settings win over the project file on a name clash; the project
                # file wins over the user file.
                existing = self._connections.get(name)
                if name in self.options.disabled or (existing and existing.spec.source == "config"):
                    continue
                if existing is None or existing.state == "pending":
                    self._connections[name] = self._connection(spec, cwd)

    async def approve_project(self, approved: bool) -> None:
        """Record the user's answer about `.mcp.json` (e.g. from an editor command).

        Approved servers start with the next `start()`/`tools()` call and serve new sessions;
        running sessions keep their (byte-stable) tool set.
        """
        if self.project is None:
            return
        async with self._lock:
            self.approvals.record(self.project.request, approved)
            self.project.approved = None
            self.project.asked = True
            self._apply_project_decision(approved)

    async def restart(self, name: str) -> None:
        """Start a failed, crashed or stopped server again (new sessions get its tools)."""
        async with self._lock:
            old = self._connections.get(name)
            if old is None:
                raise KeyError(name)
            await old.stop()
            fresh = McpConnection(old.spec, self.options, old.cwd)
            self._connections[name] = fresh
            await fresh.start()

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

    def status(self) -> list[dict[str, Any]]:
        """One entry per server (and per unusable config entry) for `agentls.status`."""
        entries = [c.status() for c in sorted(self._connections.values(), key=lambda c: c.name)]
        project = self.project
        if project is not None and not project.approved:
            state = "needs-approval" if project.approved is None else "denied"
            reason = (
                f"{project.path} has not been approved yet; its servers start only after you "
                "approve the file (it can run programs on this machine)"
                if project.approved is None
                else f"you declined {project.path}; approve it to use its servers"
            )
            for name, spec in sorted(project.servers.items()):
                if (
                    name not in self._connections
                    or self._connections[name].spec.source != "project"
                ):
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


def _read_project(
    path: Path, env: Mapping[str, str]
) -> tuple[ProjectFile | None, list[ConfigProblem]]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None, []
    except OSError as exc:
        return None, [ConfigProblem("*", "project", f"{path}: cannot read ({exc})")]
    data, problem = read_json_file(path)
    if problem:
        return None, [ConfigProblem("*", "project", problem)]
    parsed = parse_servers(data, "project", env, str(path))
    return ProjectFile(path, raw, parsed.servers), parsed.problems


def _options(
    config: McpSettings | Mapping[str, Any] | None,
) -> tuple[McpSettings, list[ConfigProblem]]:
    """Our `mcp` settings object, validated (each invalid part reported and dropped)."""
    if isinstance(config, McpSettings):
        return config, []
    checked = validate_leniently(McpSettings, config, "settings")
    return checked.model, [ConfigProblem("*", "config", str(p)) for p in checked.problems]


def _user_files(user_config: Path | None, options: McpOptions) -> list[Path]:
    files = [user_config or user_config_path()]
    if options.claude_code_user_config:
        files.append(claude_code_user_servers())
    return files
