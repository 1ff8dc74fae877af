"""Editor-facing configuration: one typed model, several sources, safe defaults.

Precedence, lowest first (a later source overrides the fields it sets):

1. built-in defaults;
2. the environment (`ANTHROPIC_*` credentials and endpoint, `AGENTLS_*` loop settings);
3. the project file: `.agentls.toml` in the first workspace root, else the `[tool.agentls]`
   table of its `pyproject.toml` (a project cannot set credentials or the endpoint, so a
   cloned repository cannot redirect the user's key);
4. the editor: `initializationOptions`, replaced by each `workspace/didChangeConfiguration`
   (section `agentls`).

Every field is validated on its own: an invalid value is reported (the caller shows the
message) and dropped, so the rest of the configuration still applies and the server never
starts from a half-understood state.
"""

from __future__ import annotations

import logging
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agentls.codeintel.settings import LanguageServersSetting

log = logging.getLogger(__name__)

Mode = Literal["review", "auto", "plan"]
SECTION = "agentls"
PROJECT_FILE = ".agentls.toml"


class AgentlsConfig(BaseModel):
    """The `agentls` settings section (camelCase keys, as editors write settings)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)

    model: str | None = Field(default=None, min_length=1)
    max_tokens: int | None = Field(default=None, ge=1, le=1_000_000, alias="maxTokens")
    max_turns: int | None = Field(default=None, ge=1, le=1_000, alias="maxTurns")
    temperature: float | None = Field(default=None, ge=0.0, le=1.0)
    request_timeout: float | None = Field(default=None, gt=0, alias="requestTimeout")
    base_url: str | None = Field(default=None, alias="baseUrl")
    mode: Mode = "review"
    """Default edit delivery for `agentls.run` when the command does not say."""
    allowed_tools: tuple[str, ...] = Field(default=(), alias="allowedTools")
    """Shorthand for `permissions.allow` rules (e.g. `["edit_file", "write_file"]`)."""
    ask_tools: tuple[str, ...] = Field(default=(), alias="askTools")
    """Shorthand for `permissions.ask` rules: these tools always need the user's approval."""
    # -- safety (read by `agentls.agent.settings_files.load_safety`, which reports problems)
    permissions: dict[str, Any] | None = None
    """Claude-Code-style rules: `{"allow": [...], "ask": [...], "deny": [...], "defaultMode"}`."""
    permission_mode: str | None = Field(default=None, alias="permissionMode")
    hooks: dict[str, Any] | None = None
    secrets: dict[str, Any] | list[str] | None = None
    read_claude_settings: bool | None = Field(default=None, alias="readClaudeSettings")
    trust_project_settings: bool | None = Field(default=None, alias="trustProjectSettings")
    allow_bypass_permissions: bool | None = Field(default=None, alias="allowBypassPermissions")
    run_command: dict[str, Any] | None = Field(default=None, alias="runCommand")
    """`{"where": "shadow" | "workspace", "timeout": seconds}` for the run_command tool."""
    mcp: dict[str, Any] | None = None
    """MCP servers, Claude Code's `{"mcpServers": {...}}` shape plus options (docs/mcp.md)."""
    tool_search: dict[str, Any] | None = Field(default=None, alias="toolSearch")
    """When MCP tools are deferred behind `tool_search` (see docs/mcp.md)."""
    instructions: str = ""
    """Extra project instructions appended to the system prompt."""
    language_servers: LanguageServersSetting | None = Field(default=None, alias="languageServers")
    """`{language: {command, initializationOptions?, settings?}}` (docs/code-intelligence.md)."""
    editor_queries: list[str] | bool | None = Field(default=None, alias="editorQueries")
    """The `agentls/editorQuery` methods the client answers (initializationOptions)."""
    editor_query_timeout: float | None = Field(
        default=None, gt=0, le=120, alias="editorQueryTimeout"
    )
    """Seconds the editor gets to answer one `agentls/editorQuery` (default 5)."""

    def settings_overrides(self) -> dict[str, Any]:
        """The fields that map onto `AgentSettings`, only where set."""
        names = ("model", "max_tokens", "max_turns", "temperature", "request_timeout", "base_url")
        return {name: getattr(self, name) for name in names if getattr(self, name) is not None}


SAFETY_FIELDS = (
    "permissions",
    "permission_mode",
    "hooks",
    "secrets",
    "read_claude_settings",
    "trust_project_settings",
    "allow_bypass_permissions",
    "run_command",
)
PROJECT_FORBIDDEN = frozenset({"baseUrl", "base_url", "mcp"})
"""A project file may not point the agent at another endpoint or start MCP servers
(a workspace `.mcp.json` needs its own approval)."""


def safety_section(values: Mapping[str, Any]) -> dict[str, Any]:
    """The safety keys of one validated layer, spelled as the user wrote them (camelCase);
    the `allowedTools`/`askTools` shorthands become `permissions` rules."""
    fields = AgentlsConfig.model_fields
    section = {fields[k].alias or k: v for k, v in values.items() if k in SAFETY_FIELDS}
    shorthands = (("allowed_tools", "allow"), ("ask_tools", "ask"))
    if any(values.get(name) for name, _ in shorthands):
        permissions = dict(section.get("permissions") or {})
        for name, kind in shorthands:
            extra = list(values.get(name) or ())
            if extra:
                permissions[kind] = [*(permissions.get(kind) or []), *extra]
        section["permissions"] = permissions
    return section


@dataclass
class ConfigResult:
    """A validated configuration plus the problems found on the way (for the user)."""

    values: dict[str, Any] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)


def validate_section(
    raw: object, source: str, *, forbidden: frozenset[str] = frozenset()
) -> ConfigResult:
    """Keep each valid field of `raw`; describe each invalid or unknown one."""
    result = ConfigResult()
    if raw is None:
        return result
    if not isinstance(raw, Mapping):
        result.problems.append(
            f"{source}: expected an object of agentls settings, got {type(raw).__name__}"
        )
        return result
    fields_by_key = {**AgentlsConfig.model_fields}
    aliases = {f.alias: name for name, f in fields_by_key.items() if f.alias}
    for key, value in raw.items():
        name = aliases.get(str(key), str(key))
        if key in forbidden:
            result.problems.append(f"{source}: `{key}` cannot be set here; ignored")
            continue
        if name not in fields_by_key:
            known = ", ".join(sorted(f.alias or n for n, f in fields_by_key.items()))
            result.problems.append(f"{source}: unknown setting `{key}` (known: {known})")
            continue
        try:
            AgentlsConfig.model_validate({name: value})
        except ValidationError as exc:
            why = "; ".join(e["msg"] for e in exc.errors(include_url=False))
            result.problems.append(
                f"{source}: `{key}` = {value!r} is invalid ({why}); using the default"
            )
            continue
        result.values[name] = value
    return result


def load_project_config(root: Path | None) -> ConfigResult:
    """Settings from `.agentls.toml`, else `[tool.agentls]` in `pyproject.toml`."""
    if root is None:
        return ConfigResult()
    dedicated = root / PROJECT_FILE
    if dedicated.is_file():
        return _from_toml(dedicated, None)
    pyproject = root / "pyproject.toml"
    if pyproject.is_file():
        return _from_toml(pyproject, ("tool", SECTION))
    return ConfigResult()


def _from_toml(path: Path, table: tuple[str, ...] | None) -> ConfigResult:
    try:
        data: Any = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        return ConfigResult(problems=[f"{path.name}: cannot read it ({exc}); ignored"])
    for key in table or ():
        data = data.get(key) if isinstance(data, dict) else None
    if data is None:
        return ConfigResult()
    label = path.name if table is None else f"{path.name} [{'.'.join(table)}]"
    return validate_section(data, label, forbidden=PROJECT_FORBIDDEN)


def unwrap_section(raw: object) -> object:
    """Editors send either `{agentls: {...}}` or the section itself; accept both."""
    if isinstance(raw, Mapping) and SECTION in raw and isinstance(raw[SECTION], Mapping):
        return raw[SECTION]
    return raw


@dataclass
class ConfigState:
    """The layered configuration of one server; `current` is always valid."""

    project: dict[str, Any] = field(default_factory=dict)
    editor: dict[str, Any] = field(default_factory=dict)
    current: AgentlsConfig = field(default_factory=AgentlsConfig)

    def set_project(self, result: ConfigResult) -> list[str]:
        self.project = result.values
        return self._rebuild(result.problems)

    def set_editor(self, raw: object, source: str) -> list[str]:
        result = validate_section(unwrap_section(raw), source)
        self.editor = result.values
        return self._rebuild(result.problems)

    def _rebuild(self, problems: list[str]) -> list[str]:
        merged = {**self.project, **self.editor}
        try:
            self.current = AgentlsConfig.model_validate(merged)
        except ValidationError as exc:  # each field passed alone; combined can't fail, but be safe
            log.warning("configuration rejected as a whole: %s", exc)
            self.current = AgentlsConfig()
            problems = [*problems, f"configuration rejected, using defaults: {exc}"]
        return problems
