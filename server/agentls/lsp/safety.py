"""Permission policy and hooks for new sessions, from the layered settings.

The rules engine is the core's (`agentls.agent.settings_files.load_safety` →
`RulePolicy`, `CommandHooks`); this module only feeds it the editor's and the project's
`agentls` sections, gives it the LSP approver, and reloads it when the settings change.
If the safety settings cannot be loaded at all, sessions get the same `RulePolicy` with no
rules and no hooks: reads run, everything else is asked (or denied where the editor cannot
ask). Secret files, plan mode and credential redaction do not depend on any of this: they
are steps of the core's pipeline.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

from agentls.lsp.approvals import approver_for

if TYPE_CHECKING:
    from pathlib import Path
    from typing import Any

    from agentls.agent.hooks import HookRunner
    from agentls.agent.permissions import PermissionPolicy
    from agentls.agent.registry import AnyTool, PoolFilter
    from agentls.config import McpSettings, ToolSearchSettings
    from agentls.lsp.server import AgentLanguageServer
    from agentls.mcp import McpManager
    from agentls.mcp.notices import Notice as McpNotice

log = logging.getLogger(__name__)


def reload_safety(ls: AgentLanguageServer) -> list[str]:
    """(Re)build `ls.safety` from the current settings; returns problems to show."""
    try:
        from agentls.agent.settings_files import load_safety

        ls.safety = load_safety(
            ls.host.workspace.roots,
            section=ls.config.editor,
            project_section=ls.config.project,
            project_trusted=ls.config.project_trusted,  # agentls.lsp.trust decided it
        )
    except Exception as exc:
        log.exception("cannot load the permission settings")
        ls.safety = None
        from agentls.workspace.secrets import SecretMatcher, use_secrets

        workspace = ls.host.workspace
        use_secrets(workspace, SecretMatcher(roots=list(workspace.roots)))  # the defaults
        return [
            f"the permission settings could not be loaded ({exc}); calls that need approval "
            "are asked for, or denied where the editor cannot ask"
        ]
    from agentls.sandbox import SandboxConfig, use_sandbox
    from agentls.workspace.secrets import use_secrets

    use_secrets(ls.host.workspace, ls.safety.secrets)  # grep and list_files skip them too
    from agentls.workspace.child_env import use_child_env
    from agentls.workspace.read_roots import use_read_roots

    use_read_roots(ls.host.workspace, ls.safety.readable_roots)  # additionalDirectories
    use_child_env(ls.host.workspace, ls.safety.env)  # the settings' `env` for commands
    sandbox = SandboxConfig(ls.safety.sandbox, ls.safety.sandbox_hidden)
    use_sandbox(ls.host.workspace, sandbox)
    return [*ls.safety.problems, *_sandbox_warning(ls)]


def _sandbox_warning(ls: AgentLanguageServer) -> list[str]:
    """Said plainly at start-up (and on every settings change) when no sandbox can run."""
    from agentls.sandbox import sandbox_of

    service = sandbox_of(ls.host.workspace)
    if not service.settings.enabled:
        return []
    found = service.availability()
    if found.ok:
        return []
    modes = ", ".join(f"{t}: {service.settings.fallback_for(t)}" for t in service.settings.fallback)
    return [f"{found.describe()} Without it: {modes} (setting `sandbox.fallback`)."]


def session_policy(ls: AgentLanguageServer) -> PermissionPolicy:
    """A new policy per session, so "allow for this session" stays with that session.
    Without loaded settings: the same policy with no rules (fails closed)."""
    if ls.safety is None:
        from agentls.agent.policy import RulePolicy

        return RulePolicy(approver=approver_for(ls))
    return ls.safety.policy(approver_for(ls))


def session_hooks(ls: AgentLanguageServer) -> HookRunner:
    from agentls.agent.hooks import NoHooks

    if ls.safety is None:
        return NoHooks()
    return ls.safety.hooks(on_problem=lambda message: ls.log_line(f"agentls hooks: {message}"))


def session_pool_filter(ls: AgentLanguageServer) -> PoolFilter:
    """Tool-wide deny rules hide those tools from the model altogether."""
    from agentls.agent.registry import PoolFilter

    if ls.safety is None:
        return PoolFilter()
    return PoolFilter(denied=ls.safety.pool_filter().denied)


def session_tools(ls: AgentLanguageServer) -> list[Any]:
    """The built-in tools, with `run_command` configured by the safety settings and `lint` /
    `run_tests` by the `lint` / `tests` settings."""
    from agentls.agent.subagents import agents_for
    from agentls.lsp.config import check_entries
    from agentls.tools import LintConfig, RunCommand, TestConfig, builtin_tools

    run_command = None
    if ls.safety is not None:
        run_command = RunCommand.from_settings(ls.safety.run_command, ls.safety.redactor)
    lint, tests = check_entries(ls.config)
    from agentls.tools.after_edit import set_checks

    set_checks(ls.host.workspace, ls.config.current.checks)
    return builtin_tools(
        lint=LintConfig(entries=lint),
        tests=TestConfig(entries=tests),
        run_command=run_command,
        agents=agents_for(ls.host.workspace),  # sub-agent types for `task`
        web_fetch=ls.config.current.web_fetch,
        web_search=web_search_tool(ls),
    )


def web_search_tool(ls: AgentLanguageServer) -> Any:
    """Anthropic's server-side search, offered by endpoint, settings and `WebSearch` rules."""
    from agentls.tools import WebSearch

    rules = ls.safety.rules if ls.safety is not None else None
    current = ls.config.current
    return WebSearch(current.web_search, current.base_url, rules)


class LazyMcpSource:
    """The workspace's MCP servers as a tool source, created on first need.

    Importing the MCP SDK takes seconds, so neither start-up nor the event loop pays for
    it: the manager is built in a thread when a session first asks for tools (or at once
    with `mcp.startup: "eager"`). Its notices (approval needed, failed or slow starts, bad
    configuration) become `window/showMessage`; servers' questions go through
    `agentls.lsp.mcp_prompts`. Changed `mcp` settings are applied before the next session
    loads its tools.
    """

    def __init__(self, ls: AgentLanguageServer, root: Path) -> None:
        self.ls = ls
        self.root = root
        self.manager: McpManager | None = None
        self._settings: McpSettings | None = None
        self._building: asyncio.Lock | None = None
        self._eager: asyncio.Task[None] | None = None

    def _build(self) -> McpManager:
        from agentls.lsp.approvals import approve_mcp_project_file
        from agentls.lsp.mcp_prompts import questions_for
        from agentls.mcp import HostBridge, McpManager

        ls = self.ls
        self._settings = ls.config.current.mcp
        bridge = HostBridge(roots=lambda: ls.host.workspace.roots, questions=questions_for(ls))
        return McpManager.from_config(
            self.root,
            self._settings,
            approve_project_file=lambda request: approve_mcp_project_file(ls, request),
            read_claude_settings=ls.config.current.read_claude_settings,
            bridge=bridge,
            notify=self._notify,
            extra_env=ls.safety.env if ls.safety is not None else None,
        )

    def _notify(self, notice: McpNotice) -> None:
        from lsprotocol import types

        kind = types.MessageType.Warning if notice.level == "warning" else types.MessageType.Info
        self.ls.message(kind, f"agentls: {notice.text}")

    async def ensure(self) -> McpManager:
        """The manager, built now if needed, with the current `mcp` settings applied."""
        if self._building is None:
            self._building = asyncio.Lock()
        async with self._building:
            if self.manager is None:
                self.manager = await asyncio.to_thread(self._build)
            elif self._settings != self.ls.config.current.mcp:
                self._settings = self.ls.config.current.mcp
                await self.manager.reload(self._settings)
        return self.manager

    async def tools(self) -> Sequence[AnyTool]:
        manager = await self.ensure()
        return await manager.tools()

    def instructions_for(self, tools: Sequence[AnyTool]) -> str:
        return self.manager.instructions_for(tools) if self.manager is not None else ""

    def start_soon(self) -> None:
        """With `mcp.startup: "eager"`: build the manager and start the servers now."""
        if self.ls.config.current.mcp.startup != "eager":
            return

        async def start() -> None:
            manager = await self.ensure()
            await manager.start()

        self._eager = asyncio.get_running_loop().create_task(start(), name="agentls-mcp-eager")

    def status(self) -> list[dict[str, Any]]:
        return self.manager.status() if self.manager is not None else []

    async def aclose(self) -> None:
        if self.manager is not None:
            await self.manager.aclose()


def mcp_source(ls: AgentLanguageServer) -> LazyMcpSource | None:
    """The host's MCP tool source (None in hosts built without one)."""
    for source in ls.host.options.tool_sources:
        if isinstance(source, LazyMcpSource):
            return source
    return None


def tool_search_settings(ls: AgentLanguageServer) -> ToolSearchSettings:
    return ls.config.current.tool_search
