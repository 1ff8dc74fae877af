"""`AgentRuntime`: every part of a session, built one way for every host.

Built from a host's layered settings (`ConfigState`), its workspace and its `HostPorts`, the
runtime owns what the language server and the ACP agent once each wired up themselves: the
safety settings (permission rules, hooks, secrets, read roots, the commands' environment,
the sandbox), the tools (every built-in with its settings: `run_command`, `lint`,
`run_tests`, `web_fetch`, `web_search`, `task` with the workspace's sub-agent types), the
MCP servers, the code-intelligence sources, skills and the session's model settings. The
host only says how to ask, tell and answer (the ports).

It builds the workspace's one typed services object (`services`, a `ToolServices`) and
keeps it current: the sandbox's settings, the sub-agent types, the checks' `lint` / `tests`
settings; `AgentHost` gives it the code-intelligence sources and the skills, and passes it
to every session, whose tools see it as `ToolContext.services`.

`AgentHost` takes the runtime as its options: each method below is what it calls when a
session (or a direct tool call) needs that part, so changed settings apply to the next one.

`start_runtime` is how every host builds it (the language server, the ACP agent, and
`agentls doctor`, which reports from the runtime a session would get): the settings'
layers, the workspace-trust decision, then the safety settings, in that order.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentls.runtime.ports import HostPorts

if TYPE_CHECKING:
    from agentls.agent.claude.prompt_commands import CommandCatalog
    from agentls.agent.claude.skills import SkillCatalog
    from agentls.agent.framework.questions import UserPrompts
    from agentls.agent.framework.registry import AnyTool, PoolFilter, ToolSearchSettings, ToolSource
    from agentls.agent.framework.services import ToolServices
    from agentls.agent.hooks.runner import HookRunner
    from agentls.agent.permissions.approval import PermissionPolicy
    from agentls.agent.run.model_client import ModelClient
    from agentls.agent.safety import Safety
    from agentls.agent.settings import AgentSettings
    from agentls.codeintel.sources import CodeSource
    from agentls.mcp import McpManager
    from agentls.mcp.config import ServerSpec
    from agentls.runtime.config_state import ConfigState
    from agentls.runtime.mcp_source import McpSource
    from agentls.tools import WebSearch
    from agentls.workspace import Workspace

log = logging.getLogger(__name__)


def start_runtime(
    config: ConfigState,
    workspace: Workspace,
    ports: HostPorts | None = None,
    *,
    editor: tuple[object, str] | None,
    trust: Callable[[], list[str]],
) -> tuple[AgentRuntime, list[str]]:
    """A host's runtime, built the one way: `config`'s layers (the environment, the first
    root's project file, the user's `editor` section with its source unless None), then
    the host's `trust` step (assess the workspace and apply it to `config`: the safety
    settings depend on it), then the runtime and its safety settings. Returns the runtime
    and every problem to show the user."""
    problems = config.load_layers(workspace.roots[0], editor)
    problems += trust()
    runtime = AgentRuntime(config, workspace, ports)
    problems += runtime.reload_safety()
    return runtime, problems


class AgentRuntime:
    """One workspace's session parts, from its settings and its host's ports."""

    def __init__(
        self,
        config: ConfigState,
        workspace: Workspace,
        ports: HostPorts | None = None,
        *,
        transcript_dir: Path | None = None,
    ) -> None:
        from agentls.agent.framework.services import ToolServices
        from agentls.runtime.mcp_source import McpSource

        self.config = config
        self.workspace = workspace
        self.services = ToolServices(workspace)
        """The workspace's typed services, which tools see as `ToolContext.services`."""
        self.ports = ports or HostPorts()
        self.safety: Safety | None = None
        """The loaded safety settings; None when they could not be loaded (fail closed)."""
        self.transcript_dir = transcript_dir
        self.mcp: McpSource = McpSource(self)
        """The workspace's MCP servers, shared by its sessions."""
        self.tool_sources: Sequence[ToolSource] = [self.mcp]
        self.before_session: Callable[[], Awaitable[None]] | None = self.ports.before_session
        self._session_mcp: dict[str, McpManager] = {}
        self._install_ports()

    def _install_ports(self) -> None:
        """The host's editor files and terminal, as the workspace's services
        (`Workspace.services`, which tools see as `ToolContext.services`)."""
        if self.ports.editor_files is not None:
            self.workspace.services.editor_files = self.ports.editor_files
        if self.ports.terminal is not None:
            self.workspace.services.terminal = self.ports.terminal

    # -- safety ---------------------------------------------------------------------------

    def reload_safety(self) -> list[str]:
        """(Re)build the safety settings from the current layers; returns problems to show.

        If they cannot be loaded at all, sessions get the same `RulePolicy` with no rules and
        no hooks: reads run, everything else is asked (or denied where nobody can ask).
        Secret files, plan mode and credential redaction are pipeline steps: they hold
        either way."""
        from agentls.workspace.secrets import SecretMatcher

        workspace = self.workspace
        try:
            from agentls.agent import safety as settings_files

            self.safety = settings_files.load_safety(
                workspace.roots,
                section=self.config.editor,
                project_section=self.config.project,
                project_trusted=self.config.project_trusted,  # the trust gate decided it
            )
        except Exception as exc:
            log.exception("cannot load the permission settings")
            self.safety = None
            workspace.services.secrets = SecretMatcher(roots=list(workspace.roots))  # the defaults
            return [
                f"the permission settings could not be loaded ({exc}); calls that need "
                "approval are asked for, or denied where the editor cannot ask"
            ]
        self._apply_safety(self.safety)
        return [*self.safety.problems, *self.sandbox_warning()]

    def _apply_safety(self, safety: Safety) -> None:
        """The tools' services from the settings (`ToolContext.services`): secrets, read
        roots, environment, sandbox (the proxies already running are kept)."""
        from agentls.sandbox import SandboxConfig

        workspace = self.workspace
        workspace.services.secrets = safety.secrets  # grep and list_files skip them too
        workspace.services.set_read_roots(safety.readable_roots)  # additionalDirectories
        workspace.services.set_environment(safety.env)  # the settings' `env` for commands
        self.services.sandbox.config = SandboxConfig(safety.sandbox, safety.sandbox_hidden)

    def sandbox_warning(self) -> list[str]:
        """Said plainly at start-up (and on every settings change) when no sandbox can run."""
        service = self.services.sandbox
        if not service.settings.enabled:
            return []
        found = service.availability()
        if found.ok:
            return []
        fallback = service.settings.fallback
        modes = ", ".join(f"{t}: {service.settings.fallback_for(t)}" for t in fallback)
        return [f"{found.describe()} Without it: {modes} (setting `sandbox.fallback`)."]

    def permissions(self) -> PermissionPolicy:
        """A new policy per session, so "allow for this session" stays with that session.
        Without loaded settings: the same policy with no rules (fails closed)."""
        approver = self.ports.approver()
        if self.safety is None:
            from agentls.agent.permissions.policy import RulePolicy

            return RulePolicy(approver=approver)
        return self.safety.policy(approver)

    def hooks(self) -> HookRunner:
        from agentls.agent.hooks.runner import NoHooks

        if self.safety is None:
            return NoHooks()
        return self.safety.hooks(
            on_problem=self.ports.hook_problem,
            private_addresses=self.config.current.web_fetch.allowed_private_addresses,
        )

    def pool_filter(self) -> PoolFilter:
        """Tool-wide deny rules hide those tools from the model altogether (plan mode's
        read-only filter is applied per run)."""
        from agentls.agent.framework.registry import PoolFilter

        if self.safety is None:
            return PoolFilter()
        return PoolFilter(denied=self.safety.pool_filter().denied)

    # -- tools ----------------------------------------------------------------------------

    def tool_services(self, workspace: Workspace) -> ToolServices:
        """The workspace's services (`services`), for `AgentHost` to hand its sessions
        (the host's workspace is the runtime's: one runtime serves one workspace)."""
        return self.services

    def tools(self, services: ToolServices) -> list[AnyTool]:
        """Every built-in tool with its settings: `run_command` by the safety settings,
        `lint` / `run_tests` by `lint` / `tests`, `web_fetch` / `web_search` by `webFetch`
        / `webSearch`, `task` with the workspace's sub-agent types (`.claude/agents`). The
        checks after an edit and before review get the same `lint` / `tests` settings."""
        from agentls.agent.framework.services import CheckTools
        from agentls.runtime.config_state import check_entries
        from agentls.tools import LintConfig, RunCommand, TestConfig, builtin_tools

        workspace = services.workspace
        run_command = None
        if self.safety is not None:
            run_command = RunCommand.from_settings(self.safety.run_command, self.safety.redactor)
        lint, tests = check_entries(self.config)
        workspace.services.checks = self.config.current.checks  # the write tools' after-edit checks
        denied = self.pool_filter().denied  # a tool denied to the model: not run by checks
        services.check_tools = CheckTools(lint, tests, denied)
        return builtin_tools(
            lint=LintConfig(entries=lint),
            tests=TestConfig(entries=tests),
            run_command=run_command,
            agents=services.agents,
            web_fetch=self.config.current.web_fetch,
            web_search=self.web_search(),
        )

    def web_search(self) -> WebSearch:
        """Anthropic's server-side search, offered by endpoint, settings and `WebSearch`
        rules."""
        from agentls.tools import WebSearch

        rules = self.safety.rules if self.safety is not None else None
        current = self.config.current
        return WebSearch(current.web_search, current.base_url, rules)

    def tool_search(self) -> ToolSearchSettings:
        return self.config.current.tool_search

    def session_mcp(self, specs: Sequence[ServerSpec]) -> list[McpManager]:
        """A client's own MCP servers for a session (ACP's `mcpServers`): one manager per
        distinct list (editors pass the same servers to every session; they start once)."""
        if not specs:
            return []
        key = repr([repr(s) for s in specs])
        manager = self._session_mcp.get(key)
        if manager is None:
            from agentls.mcp import McpManager

            root = self.workspace.roots[0]
            manager = McpManager(specs, self.config.current.mcp, workspace_root=root)
            self._session_mcp[key] = manager
        return [manager]

    # -- code intelligence, skills, prompts ----------------------------------------------

    def code_sources(self, workspace: Workspace) -> list[CodeSource]:
        """The editor's own answers (when the host has them), then agentls's language
        servers, with the `languageServers` settings read per query."""
        from agentls.langservers import LanguageServerPool
        from agentls.runtime.code_sources import (
            LanguageServerSettingsReader,
            confirm_install_through,
        )

        reader = LanguageServerSettingsReader(self.config)
        editor = list(self.ports.editor_code_sources(workspace))
        confirm = confirm_install_through(self.ports.prompts)
        return [
            *editor,
            LanguageServerPool(
                workspace,
                reader.language_servers,
                confirm_install=confirm,
                sandbox=self.services.sandbox,
            ),
        ]

    def skills(self, workspace: Workspace) -> SkillCatalog:
        """`.claude/skills`, `.agentls/skills` of each root and `~/.claude/skills`."""
        from agentls.agent.claude.skills import discover_skills

        return discover_skills(workspace.roots)

    def commands(self) -> CommandCatalog:
        """Custom slash commands (`.claude/commands`, `.agentls/commands`, the user's), read
        now: hosts list and expand them from here (`/name args`)."""
        from agentls.agent.claude.plugins import commands_with_plugins

        return commands_with_plugins(self.workspace.roots)

    def prompts(self) -> UserPrompts | None:
        return self.ports.prompts()

    def instructions(self) -> str:
        return self.config.current.instructions

    # -- the model ------------------------------------------------------------------------

    def settings(self) -> AgentSettings:
        """Settings for a new session: the layered settings plus the environment's
        credentials, and what Claude Code's files set where no agentls setting chose."""
        from agentls.agent.settings import AgentSettings
        from agentls.config.environment import environment

        credentials, _ = environment()
        explicit = {key for layer in self.config.layers.values() for key in layer.values}
        claude = self.safety.loop_overrides(explicit) if self.safety is not None else {}
        return AgentSettings.resolve(self.config.current, credentials, **claude)

    def client(self, settings: AgentSettings) -> ModelClient:
        from agentls.agent.run.model_client import AnthropicModelClient

        return AnthropicModelClient(settings)

    async def aclose(self) -> None:
        """Close the sessions' own MCP servers (the shared ones close with the host)."""
        for manager in self._session_mcp.values():
            try:
                await manager.aclose()
            except Exception:
                log.exception("closing an MCP manager failed")
