"""`AgentlsSettings`: the `agentls` settings section, the root of the settings tree."""

from __future__ import annotations

from collections.abc import Mapping

from pydantic import Field, field_validator
from pydantic.config import JsonDict

from agentls.config.base import PermissionMode, RunMode, meta
from agentls.config.checks import ChecksSettings, LintEntry, TestEntry
from agentls.config.code_intel import LanguageServerConfig
from agentls.config.loop import LoopSettings
from agentls.config.mcp import McpSettings
from agentls.config.safety import (
    HooksSettings,
    PermissionsSettings,
    RunCommandSettings,
    SecretsSettings,
)
from agentls.config.sandbox import SandboxSettings
from agentls.config.tool_search import ToolSearchSettings
from agentls.config.web import WebFetchSettings, WebSearchSettings


def _or_list_of_strings(schema: JsonDict) -> None:
    """The schema of an object that may also be written as a list (`secrets: [...]`)."""
    shape = {k: schema.pop(k) for k in list(schema) if k not in ("description", "default")}
    schema["anyOf"] = [shape, {"type": "array", "items": {"type": "string"}}]


class AgentlsSettings(LoopSettings):
    """The `agentls` section: editor settings, `.agentls.toml`, `[tool.agentls]`, and (for the
    fields that name a variable) the environment. The model and loop fields are inherited
    from `LoopSettings`."""

    mode: RunMode = Field(
        default="review",
        json_schema_extra={
            **meta(restricted=True),
            "enumDescriptions": [
                "Edits arrive at the end of a run in the refactor preview.",
                "Edits are applied as the agent makes them.",
                "Read-only: no write tools.",
            ],
        },
    )
    """How a run's edits reach you when the command does not say: `review` (staged, shown at
    the end), `auto` (applied as the agent makes them), `plan` (read-only tools)."""
    instructions: str = ""
    """Extra instructions appended to the system prompt."""
    allowed_tools: tuple[str, ...] = Field(default=(), json_schema_extra=meta(restricted=True))
    """Tools that run without asking (shorthand for `permissions.allow` rules)."""
    ask_tools: tuple[str, ...] = ()
    """Tools that always ask (shorthand for `permissions.ask` rules)."""
    permissions: PermissionsSettings = Field(
        default_factory=PermissionsSettings, json_schema_extra=meta(restricted=True)
    )
    """Permission rules in Claude Code's format (also read from `.claude/settings*.json`)."""
    permission_mode: PermissionMode | None = Field(
        default=None, json_schema_extra=meta(restricted=True)
    )
    """The permission mode of new sessions (`default`, `acceptEdits`, `plan`,
    `bypassPermissions`); same as `permissions.defaultMode`."""
    hooks: HooksSettings = Field(default_factory=dict, json_schema_extra=meta(restricted=True))
    """Commands run around tool calls and prompts, in Claude Code's format and protocol."""
    secrets: SecretsSettings = Field(
        default_factory=SecretsSettings, json_schema_extra=_or_list_of_strings
    )
    """Files that hold secrets: never read by a tool, never shown to the model."""
    read_claude_settings: bool = Field(default=True, json_schema_extra=meta(user_only=True))
    """Also read Claude Code's `~/.claude/settings.json` and `.claude/settings*.json`."""
    trust_project_settings: bool = Field(default=True, json_schema_extra=meta(user_only=True))
    """`true`: a project's settings that loosen safety (allow rules, hooks, modes, commands,
    language servers) apply once you trust the workspace (asked once per workspace and
    settings content); `false`: never, and no question — only what tightens applies."""
    allow_bypass_permissions: bool = Field(
        default=False, json_schema_extra=meta(user_only=True, restricted=True)
    )
    """Allow the `bypassPermissions` mode (every call runs without asking)."""
    run_command: RunCommandSettings = Field(
        default_factory=RunCommandSettings, json_schema_extra=meta(restricted=True)
    )
    """Where the `run_command` tool runs and its default timeout."""
    sandbox: SandboxSettings = Field(
        default_factory=SandboxSettings, json_schema_extra=meta(restricted=True)
    )
    """The OS sandbox of `run_command`, `run_tests` and `lint` (docs/sandbox.md); a project
    file may only tighten it."""
    lint: list[LintEntry] = Field(default_factory=list, json_schema_extra=meta(restricted=True))
    """Linters to run besides or instead of the detected ones (docs/lint-and-tests.md); a
    project file's apply once the workspace is trusted (docs/security.md)."""
    tests: list[TestEntry] = Field(default_factory=list, json_schema_extra=meta(restricted=True))
    """Test commands to run instead of the detected runner (docs/lint-and-tests.md); a
    project file's apply once the workspace is trusted (docs/security.md)."""

    checks: ChecksSettings = Field(default_factory=ChecksSettings)
    """Checks of the agent's edits agentls runs by itself: after each edit, before review
    (docs/review.md)."""

    language_servers: dict[str, LanguageServerConfig | bool] = Field(
        default_factory=dict, json_schema_extra=meta(restricted=True)
    )
    """Language servers agentls starts itself for code intelligence, by language:
    `{command, initializationOptions?, settings?, extensions?, enabled?}`
    (docs/code-intelligence.md); a project file's apply once the workspace is trusted.
    `autoInstall: true` lets agentls install a missing registry server from npm or PyPI
    (pinned version, agentls's own cache) after asking."""

    @field_validator("language_servers")
    @classmethod
    def _auto_install_is_the_only_flag(
        cls, value: dict[str, LanguageServerConfig | bool]
    ) -> dict[str, LanguageServerConfig | bool]:
        for key, entry in value.items():
            if isinstance(entry, bool) != (key == "autoInstall"):
                want = "true or false" if key == "autoInstall" else "a server table"
                raise ValueError(f"`languageServers.{key}` must be {want}")
        return value

    language_server_idle_timeout: float = Field(default=600.0, ge=0)
    """Seconds a language server agentls started may sit unused before it is stopped (it
    starts again on the next query); 0: never stopped for being idle."""
    language_server_memory_budget: int = Field(default=0, ge=0)
    """MiB of resident memory all of agentls's language servers may use together; over it,
    the least recently used server is stopped. 0: no budget."""
    language_server_max_restarts: int = Field(default=3, ge=0, le=20)
    """How often a crashed language server is restarted within ten minutes; after that it
    stays down, and queries say why, until the settings change."""
    editor_queries: list[str] | bool | None = None
    """The `agentls/editorQuery` methods this editor answers with its own language features
    (a client announces them in its initialization options; `true`: all of them)."""
    editor_query_timeout: float | None = Field(default=None, gt=0, le=120)
    """Seconds the editor gets to answer one `agentls/editorQuery` (default 5)."""

    @field_validator("lint", "tests", mode="before")
    @classmethod
    def _one_entry_as_a_table(cls, value: object) -> object:
        """One entry may be written as a table (`[tool.agentls.tests]`) instead of a list."""
        return [value] if isinstance(value, Mapping) else value

    env: dict[str, str] = Field(default_factory=dict, json_schema_extra=meta(restricted=True))
    """Environment variables for every command, hook and MCP server agentls starts
    (Claude Code's `env`). From a project file, variables that change which code runs
    (`PATH`, `LD_*`, `NODE_OPTIONS`, `PYTHONPATH`, …) are dropped and reported."""

    mcp: McpSettings = Field(default_factory=McpSettings, json_schema_extra=meta(user_only=True))
    """MCP servers and how they are run (docs/mcp.md)."""
    tool_search: ToolSearchSettings = Field(default_factory=ToolSearchSettings)
    """When MCP tools are deferred behind `tool_search` (docs/mcp.md)."""
    web_fetch: WebFetchSettings = Field(default_factory=WebFetchSettings)
    """Limits of the `web_fetch` tool and the private addresses it may reach (docs/tools.md)."""
    web_search: WebSearchSettings = Field(default_factory=WebSearchSettings)
    """Anthropic's server-side web search: when it is offered, its limits (docs/tools.md)."""
