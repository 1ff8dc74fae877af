"""MCP: which servers to start (Claude Code's `mcpServers` shape) and how (docs/mcp.md)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agentls.config.base import SettingsModel


class McpServerConfig(SettingsModel):
    """One server, as in Claude Code's `.mcp.json`. `${VAR}` and `${VAR:-default}` are
    expanded from the environment. Every entry — in the settings, `.mcp.json`, the user's
    files — is validated by this model in `agentls.mcp.config.parse_server`, which reports a
    bad entry as that server's failure in `agentls.status` (so settings keep entries as
    objects until then)."""

    type: Literal["stdio", "http", "sse", "streamable-http"] | None = None
    """Transport (default: stdio with `command`, http with `url`)."""
    command: str | None = None
    """The program of a stdio server."""
    args: list[str] = Field(default_factory=list)
    """Its arguments."""
    env: dict[str, str] = Field(default_factory=dict)
    """Extra environment variables for it."""
    cwd: str | None = None
    """Its working directory (default: the workspace root)."""
    url: str | None = None
    """The http(s) URL of a remote server."""
    headers: dict[str, str] = Field(default_factory=dict)
    """HTTP headers for a remote server."""


TRANSPORTS = ("stdio", "http", "sse", "streamable-http")


class _Entry(McpServerConfig):
    """`McpServerConfig` ignoring keys agentls does not use (Claude Code's files carry
    more, e.g. `oauth`)."""

    model_config = ConfigDict(extra="ignore")


class InvalidMcpServer(BaseModel):
    """An entry that is not a server: kept, with why, so that it fails alone (shown as that
    server's failure in `agentls.status`) instead of taking the other servers with it."""

    model_config = ConfigDict(frozen=True)

    problem: str


McpServerEntry = McpServerConfig | InvalidMcpServer
"""One `mcpServers` entry after its one validation: a server, or why it is not one."""


def server_entries(raw: object) -> dict[str, McpServerEntry]:
    """Each entry of an `mcpServers` object validated once, as `McpServerConfig` (unknown
    keys ignored, as Claude Code's files carry more) or `InvalidMcpServer`. Raises
    `ValueError` when `raw` is not an object at all."""
    if not isinstance(raw, Mapping):
        raise ValueError("`mcpServers` must be an object")
    return {str(name): _entry(str(name), value) for name, value in raw.items()}


def _entry(name: str, value: object) -> McpServerEntry:
    if isinstance(value, McpServerConfig | InvalidMcpServer):
        return value
    if not isinstance(value, Mapping):
        return InvalidMcpServer(problem=f"server {name!r}: expected an object")
    kind = value.get("type")
    if kind not in (None, *TRANSPORTS):
        return InvalidMcpServer(problem=needs_transport(name, kind))
    try:
        return _Entry.model_validate(value)
    except ValidationError as exc:
        problems = "; ".join(
            f"`{'.'.join(str(p) for p in err['loc'])}` {err['msg'].lower()}"
            for err in exc.errors(include_url=False)[:3]
        )
        return InvalidMcpServer(problem=f"server {name!r}: {problems}")


def needs_transport(name: str, kind: object) -> str:
    """The message for an entry with neither a command nor an http(s) transport."""
    return (
        f"server {name!r}: needs `command` (stdio) or `type` http/sse with a `url` "
        f"(got type {kind!r})"
    )


class McpServersFile(BaseModel):
    """A file in Claude Code's `.mcp.json` shape (`.mcp.json`, `~/.config/agentls/mcp.json`,
    `~/.claude.json`, a plugin's `.mcp.json`); keys other than `mcpServers` are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True, populate_by_name=True)

    mcp_servers: dict[str, McpServerEntry] = Field(default_factory=dict, alias="mcpServers")

    @field_validator("mcp_servers", mode="before")
    @classmethod
    def _each_entry(cls, raw: object) -> dict[str, McpServerEntry]:
        return server_entries(raw)


class McpSettings(SettingsModel):
    """MCP servers and how they are run. Editor or user settings only: a project's servers
    come from its `.mcp.json`, after the user approved that file."""

    mcp_servers: dict[str, McpServerEntry] = Field(
        default_factory=dict,
        json_schema_extra=lambda schema: schema.update(  # when a schema is generated
            additionalProperties=McpServerConfig.model_json_schema()
        ),
    )
    """Servers by name: `{"files": {"command": "npx", "args": [...]}, "remote": {"type":
    "http", "url": "https://…"}}`."""

    @field_validator("mcp_servers", mode="before")
    @classmethod
    def _each_entry(cls, raw: object) -> dict[str, McpServerEntry]:
        return server_entries(raw)

    startup: Literal["lazy", "eager"] = "lazy"
    """`lazy`: start the servers on the first agent run; `eager`: when the server starts."""
    startup_timeout: float = Field(default=30.0, gt=0, alias="startupTimeoutSeconds")
    """Seconds a server may take to start."""
    tool_timeout: float = Field(default=300.0, gt=0, alias="toolTimeoutSeconds")
    """Seconds one MCP tool call may take."""
    project_config: bool = True
    """Read the workspace's `.mcp.json` (each version needs your approval once)."""
    user_config: bool = True
    """Read your `~/.config/agentls/mcp.json`."""
    claude_code_user_config: bool = True
    """Also read Claude Code's user-scope servers from `~/.claude.json` (yours, like
    `~/.claude/settings.json`; `claude mcp add -s user` writes them)."""
    disabled: frozenset[str] = Field(default_factory=frozenset, alias="disabledServers")
    """Names of servers not to start, wherever they are defined."""
    claude_code_local_config: bool = True
    """Read Claude Code's local-scope servers of this workspace (`claude mcp add`, kept in
    `~/.claude.json` under `projects[<workspace path>].mcpServers`)."""
    startup_wait: float = Field(default=10.0, ge=0, alias="startupWaitSeconds")
    """Seconds a run waits for servers still starting; it then goes on without them (they
    keep starting and serve later sessions) and says which are slow."""
    enable_all_project_mcp_servers: bool = False
    """Approve every server of the workspace's `.mcp.json` without asking (Claude Code's
    key; the CLI's `--allow-mcp`). A repository's own files cannot set it."""
    enabled_mcpjson_servers: frozenset[str] = Field(default_factory=frozenset)
    """Servers of the workspace's `.mcp.json` approved by name (Claude Code's key; the
    CLI's `--allow-mcp=NAME`)."""
    disabled_mcpjson_servers: frozenset[str] = Field(default_factory=frozenset)
    """Servers of the workspace's `.mcp.json` never to start (Claude Code's key)."""


class ClaudeMcpApprovals(SettingsModel):
    """Claude Code's approval keys for `.mcp.json` servers, as its settings files and
    `~/.claude.json` (top level and `projects[<path>]`) hold them; other keys are ignored.
    Only user-level files may approve: a repository's `.claude/settings*.json` may only
    disable (see `agentls.mcp.claude`)."""

    model_config = ConfigDict(extra="ignore")

    enable_all_project_mcp_servers: bool | None = None
    enabled_mcpjson_servers: list[str] = Field(default_factory=list)
    disabled_mcpjson_servers: list[str] = Field(default_factory=list)
