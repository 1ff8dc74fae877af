"""What Claude Code's own files say about MCP servers: local-scope servers and approvals.

Claude Code keeps, per project, in `~/.claude.json` under `projects["<absolute path>"]`:
the servers added with `claude mcp add` (local scope, `mcpServers`) and the answers about
the project's `.mcp.json` (`enabledMcpjsonServers`, `disabledMcpjsonServers`,
`enableAllProjectMcpServers`); the same three keys may also be in its settings files.

Trust: a file the repository can ship must never approve the repository's own servers
(Claude Code was bitten by exactly that), so the enabling keys count only from user-level
places — our own `mcp` settings (user-only), `~/.claude/settings.json` and the workspace's
entry in `~/.claude.json` (exact path match). The repository's `.claude/settings.json` and
`.claude/settings.local.json` may only *disable* servers; enabling keys found there are
ignored and reported, so the user learns why their file had no effect.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentls.config import ClaudeMcpApprovals, McpSettings, validate_leniently
from agentls.mcp.config import ConfigProblem, ParsedServers, parse_servers, read_json_file

CLAUDE_JSON = ".claude.json"


@dataclass(frozen=True)
class ProjectSwitches:
    """The standing answers about the workspace's `.mcp.json`, and where each came from."""

    enable_all: str | None = None
    """Where "approve every server" was set (None: nowhere)."""
    enabled: Mapping[str, str] = field(default_factory=dict)
    """Server name → where it was approved by name."""
    disabled: Mapping[str, str] = field(default_factory=dict)
    """Server name → where it was disabled (wins over any approval)."""
    ignored: tuple[str, ...] = ()
    """Enabling keys found in files the repository controls, which do not count."""

    def approval_of(self, name: str) -> str | None:
        """Where the server `name` is approved, or None."""
        return self.enabled.get(name) or self.enable_all


def claude_json_path(home: Path | None = None) -> Path:
    return (home or Path.home()) / CLAUDE_JSON


class ClaudeCodeFiles:
    """Claude Code's files of one user and workspace, each read (at most) once."""

    def __init__(self, root: Path | None, home: Path | None = None) -> None:
        self.root = root
        self.home = home or Path.home()
        self.problems: list[ConfigProblem] = []
        self._claude_json: object | None = None
        self._claude_json_read = False

    @property
    def claude_json(self) -> Path:
        return claude_json_path(self.home)

    def _global(self) -> object | None:
        if not self._claude_json_read:
            self._claude_json_read = True
            data, problem = read_json_file(self.claude_json)
            if problem:
                self.problems.append(ConfigProblem("*", "local", problem))
            self._claude_json = data
        return self._claude_json

    def project_entry(self) -> Mapping[str, Any] | None:
        """This workspace's entry in `~/.claude.json` (exact path, as Claude Code keys it)."""
        data = self._global()
        if self.root is None or not isinstance(data, Mapping):
            return None
        projects = data.get("projects")
        if not isinstance(projects, Mapping):
            return None
        for key in _path_keys(self.root):
            entry = projects.get(key)
            if isinstance(entry, Mapping):
                return entry
        return None

    def local_servers(self, environ: Mapping[str, str]) -> ParsedServers:
        """Servers added for this workspace only (`claude mcp add`, local scope)."""
        entry = self.project_entry()
        if entry is None or "mcpServers" not in entry:
            return ParsedServers()
        where = f"{self.claude_json} (projects[{self.root}])"
        return parse_servers({"mcpServers": entry["mcpServers"]}, "local", environ, where)

    def switches(self, settings: McpSettings, read_claude_files: bool = True) -> ProjectSwitches:
        """Our settings' answers, then Claude Code's user-level ones; the repository's own
        `.claude` files only disable."""
        found = _Collected()
        found.add_settings(settings)
        if read_claude_files:
            user_settings = self.home / ".claude" / "settings.json"
            found.add(self._approvals(user_settings), str(user_settings), trusted=True)
            entry = self.project_entry()
            if entry is not None:
                where = f"{self.claude_json} (projects[{self.root}])"
                found.add(self._checked(entry, where), where, trusted=True)
            for path in self._repository_files():
                found.add(self._approvals(path), str(path), trusted=False)
        return found.result()

    def _repository_files(self) -> list[Path]:
        if self.root is None:
            return []
        folder = self.root / ".claude"
        return [folder / "settings.json", folder / "settings.local.json"]

    def _approvals(self, path: Path) -> ClaudeMcpApprovals | None:
        data, problem = read_json_file(path)
        if problem:
            self.problems.append(ConfigProblem("*", "local", problem))
        return self._checked(data, str(path)) if data is not None else None

    def _checked(self, data: object, where: str) -> ClaudeMcpApprovals:
        checked = validate_leniently(ClaudeMcpApprovals, data, where)
        self.problems.extend(ConfigProblem("*", "local", str(p)) for p in checked.problems)
        return checked.model


def plugin_servers(
    root: Path | None, home: Path | None, environ: Mapping[str, str]
) -> list[ParsedServers]:
    """MCP servers of the Claude Code plugins the user enabled (`agentls.agent.claude.plugins`).
    A plugin a repository enabled brings none: a repository cannot approve its own
    servers (reported)."""
    from agentls.agent.claude.plugins import load_plugins

    found: list[ParsedServers] = []
    for plugin in load_plugins([root] if root else [], home).plugins:
        servers = plugin.mcp_servers()
        if not servers:
            continue
        where = f"plugin {plugin.key}"
        if not plugin.user_level:
            skipped = ParsedServers()
            skipped.problems.append(
                ConfigProblem(
                    "*",
                    "project",
                    f"{where} was enabled in {plugin.enabled_by}, a repository's own settings: "
                    f"its MCP servers ({', '.join(sorted(servers))}) do not start (a repository "
                    "cannot approve its own servers; enable the plugin in "
                    "~/.claude/settings.json)",
                )
            )
            found.append(skipped)
            continue
        found.append(parse_servers({"mcpServers": servers}, "user", environ, where))
    return found


def _path_keys(root: Path) -> list[str]:
    """The spellings Claude Code may have used for the workspace's path."""
    keys = [str(root)]
    try:
        resolved = str(root.resolve())
    except OSError:
        return keys
    if resolved not in keys:
        keys.append(resolved)
    return keys


class _Collected:
    def __init__(self) -> None:
        self.enable_all: str | None = None
        self.enabled: dict[str, str] = {}
        self.disabled: dict[str, str] = {}
        self.ignored: list[str] = []

    def add_settings(self, settings: McpSettings) -> None:
        where = "agentls settings (mcp)"
        if settings.enable_all_project_mcp_servers:
            self.enable_all = f"enableAllProjectMcpServers in {where}"
        self._names(self.enabled, settings.enabled_mcpjson_servers, "enabledMcpjsonServers", where)
        self._names(
            self.disabled, settings.disabled_mcpjson_servers, "disabledMcpjsonServers", where
        )

    def add(self, found: ClaudeMcpApprovals | None, where: str, *, trusted: bool) -> None:
        if found is None:
            return
        self._names(self.disabled, found.disabled_mcpjson_servers, "disabledMcpjsonServers", where)
        enabling = bool(found.enable_all_project_mcp_servers or found.enabled_mcpjson_servers)
        if not trusted:
            if enabling:
                self.ignored.append(
                    f"{where}: enableAllProjectMcpServers / enabledMcpjsonServers are ignored "
                    "in a file inside the workspace (a repository cannot approve its own "
                    "servers); approve them yourself instead"
                )
            return
        if found.enable_all_project_mcp_servers and self.enable_all is None:
            self.enable_all = f"enableAllProjectMcpServers in {where}"
        self._names(self.enabled, found.enabled_mcpjson_servers, "enabledMcpjsonServers", where)

    @staticmethod
    def _names(target: dict[str, str], names: Iterable[str], key: str, where: str) -> None:
        for name in names:
            target.setdefault(name, f"{key} in {where}")

    def result(self) -> ProjectSwitches:
        return ProjectSwitches(
            self.enable_all, dict(self.enabled), dict(self.disabled), tuple(self.ignored)
        )
