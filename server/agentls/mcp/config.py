"""MCP server configuration in Claude Code's `.mcp.json` shape, from three places.

    {"mcpServers": {
        "files":  {"command": "npx", "args": ["-y", "@scope/server"], "env": {"TOKEN": "${TOKEN}"}},
        "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {...}},
        "legacy": {"type": "sse", "url": "https://example.com/sse"}}}

Sources, highest precedence first when two define the same name:
1. `config` — our own settings (the editor's `initializationOptions.mcp`, or the CLI's);
2. `local` — Claude Code's local-scope servers of this workspace (`~/.claude.json`,
   `projects[<path>].mcpServers`; see `agentls.mcp.claude`);
3. `project` — `.mcp.json` in the workspace root, used only once the user approved it
   (it can start arbitrary programs; see `agentls.mcp.approval`);
4. `user` — `mcp.json` in `platformdirs.user_config_dir("agentls")` (`~/.config/agentls/mcp.json`
   on Linux), and optionally Claude Code's user-scope servers from `~/.claude.json`.

`${VAR}` and `${VAR:-default}` are expanded from the environment in commands, arguments,
`env` values, URLs and headers, as Claude Code does; a missing variable without a default
makes that one server fail with a message naming the variable.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

import platformdirs
from pydantic import ValidationError

from agentls.config import McpSettings
from agentls.config.files import read_settings_file
from agentls.config.mcp import (
    InvalidMcpServer,
    McpServerConfig,
    McpServerEntry,
    McpServersFile,
    needs_transport,
    server_entries,
)

Source = Literal["config", "local", "project", "user"]
"""Where a server is defined: our settings, Claude Code's local scope (`~/.claude.json`,
this workspace), the workspace's `.mcp.json`, or a user-level file."""
PROJECT_FILE = ".mcp.json"
USER_FILE = "mcp.json"


def user_config_path() -> Path:
    """Where the user-level server list lives (`~/.config/agentls/mcp.json` on Linux)."""
    return Path(platformdirs.user_config_dir("agentls")) / USER_FILE


@dataclass(frozen=True)
class StdioServer:
    name: str
    source: Source
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None

    @property
    def transport(self) -> str:
        return "stdio"

    def describe(self) -> str:
        return " ".join([self.command, *self.args])


@dataclass(frozen=True)
class RemoteServer:
    name: str
    source: Source
    url: str
    kind: Literal["http", "sse"] = "http"
    headers: Mapping[str, str] = field(default_factory=dict)

    @property
    def transport(self) -> str:
        return self.kind

    def describe(self) -> str:
        return f"{self.kind} {self.url}"


ServerSpec = StdioServer | RemoteServer


@dataclass(frozen=True)
class ConfigProblem:
    """A server entry (or a whole file) that could not be used; shown in `status()`."""

    name: str
    source: Source
    message: str


McpOptions = McpSettings
"""How the manager runs servers: the `mcp` settings object (`agentls.config.McpSettings`)."""


@dataclass
class ParsedServers:
    servers: dict[str, ServerSpec] = field(default_factory=dict)
    problems: list[ConfigProblem] = field(default_factory=list)


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class MissingVariable(ValueError):
    pass


def expand(text: str, environ: Mapping[str, str]) -> str:
    """`${VAR}` / `${VAR:-default}` from the environment; a missing VAR without default raises."""

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in environ:
            return environ[name]
        if default is not None:
            return default
        raise MissingVariable(f"environment variable {name} is not set (used as ${{{name}}})")

    return _VAR.sub(replace, text)


def parse_servers(
    data: object, source: Source, environ: Mapping[str, str], origin: str = ""
) -> ParsedServers:
    """Servers from one file's `{"mcpServers": {...}}` object, validated once
    (`McpServersFile`); bad entries become problems."""
    where = origin or source
    if not isinstance(data, Mapping):
        return ParsedServers(
            problems=[ConfigProblem("*", source, f"{where}: expected a JSON object")]
        )
    try:
        entries = McpServersFile.model_validate(data).mcp_servers
    except ValidationError:
        return ParsedServers(
            problems=[ConfigProblem("*", source, f"{where}: `mcpServers` must be an object")]
        )
    return servers_of(entries, source, environ, where)


def servers_of(
    entries: Mapping[str, McpServerEntry], source: Source, environ: Mapping[str, str], where: str
) -> ParsedServers:
    """Specs of entries already validated (the settings' `mcpServers`, or a file's), with
    `${VAR}` expanded; invalid entries and missing variables become that server's problem."""
    result = ParsedServers()
    for name, entry in entries.items():
        try:
            if isinstance(entry, InvalidMcpServer):
                raise ValueError(entry.problem)
            result.servers[name] = _spec(name, entry, source, environ)
        except ValueError as exc:
            result.problems.append(ConfigProblem(name, source, f"{where}: {exc}"))
    return result


def parse_server(
    name: str, entry: object, source: Source, environ: Mapping[str, str]
) -> ServerSpec:
    """One entry, validated by the settings model (`McpServerConfig`, the shape the docs
    and the JSON Schema show), then `${VAR}` expanded. Raises `ValueError` with the reason."""
    checked = server_entries({name: entry})[name]
    if isinstance(checked, InvalidMcpServer):
        raise ValueError(checked.problem)
    return _spec(name, checked, source, environ)


def _spec(
    name: str, config: McpServerConfig, source: Source, environ: Mapping[str, str]
) -> ServerSpec:
    kind = config.type
    if config.command is not None and kind in (None, "stdio"):
        if not config.command.strip():
            raise ValueError(f"server {name!r}: `command` must be a non-empty string")
        return StdioServer(
            name,
            source,
            expand(config.command, environ),
            tuple(expand(a, environ) for a in config.args),
            {k: expand(v, environ) for k, v in config.env.items()},
            expand(config.cwd, environ) if config.cwd is not None else None,
        )
    if kind in ("http", "sse", "streamable-http") or (kind is None and config.url is not None):
        url = config.url
        if url is None or not url.startswith(("http://", "https://")):
            raise ValueError(f"server {name!r}: `url` must be an http(s) URL")
        return RemoteServer(
            name,
            source,
            expand(url, environ),
            "sse" if kind == "sse" else "http",
            {k: expand(v, environ) for k, v in config.headers.items()},
        )
    raise ValueError(needs_transport(name, kind))


def read_json_file(path: Path) -> tuple[object | None, str | None]:
    """(data, None), (None, None) when the file does not exist, or (None, problem); no size
    limit (Claude Code's `~/.claude.json` holds more than servers)."""
    return read_settings_file(path, max_bytes=None)


def claude_code_user_servers(home: Path | None = None) -> Path:
    """Claude Code keeps its user-scope servers in `~/.claude.json` (`mcpServers`)."""
    return (home or Path.home()) / ".claude.json"
