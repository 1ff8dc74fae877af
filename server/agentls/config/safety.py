"""Safety settings in Claude Code's shapes: permission rules, hooks, secrets, run_command.

The same classes validate our `agentls` section and Claude Code's own `settings.json`
files (`ClaudeSettingsFile`, which ignores the many keys of theirs we do not use).
How the sources combine (what a project may do, trust) is `agentls.agent.safety`.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import ConfigDict, Field, field_validator, model_validator

from agentls.config.base import PermissionMode, SettingsModel, meta
from agentls.config.problems import entry_error
from agentls.config.regex import RegexGroupsError, compile_linear

HookEvent = Literal[
    "PreToolUse",
    "PostToolUse",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
    "PostToolUseFailure",
    "PermissionRequest",
    "SubagentStart",
    "Setup",
]
HOOK_TYPES: tuple[str, ...] = ("command", "http", "prompt", "agent")
"""Claude Code's hook handler types: a shell command, a POST to a URL, one question to a
model, a read-only verifier agent."""
HOOK_TYPE_FIELD: dict[str, str] = {
    "command": "command",
    "http": "url",
    "prompt": "prompt",
    "agent": "prompt",
}
"""The field each handler type needs."""


class PermissionsSettings(SettingsModel):
    """Claude Code's permission rules, e.g. `{"allow": ["run_command(npm test:*)"],
    "deny": ["read_file(./.env)"], "defaultMode": "acceptEdits"}`."""

    allow: list[str] = Field(default_factory=list)
    """Calls that run without asking (`tool`, `tool(specifier)`, Claude Code's names too)."""
    ask: list[str] = Field(default_factory=list)
    """Calls that always ask."""
    deny: list[str] = Field(default_factory=list)
    """Calls that are refused; a tool-wide rule (`run_command`) hides the tool."""
    default_mode: PermissionMode | None = None
    """The permission mode of new sessions."""
    disable_bypass_permissions_mode: Literal["disable"] | None = None
    """`"disable"`: bypassPermissions cannot be used, whatever else enables it."""
    additional_directories: list[str] = Field(default_factory=list)
    """Folders outside the workspace the read tools (`read_file`, `grep`, `list_files`)
    may read without asking (`~/…` or absolute). Nothing outside the workspace is ever
    edited."""


class HookCommandSettings(SettingsModel):
    """One hook handler (Claude Code's protocol: the event as JSON; exit code 2 or a JSON
    decision blocks). `type` is `command` (a shell command line), `http` (the event POSTed
    to `url`), `prompt` (the event put to a model with `prompt`) or `agent` (a read-only
    verifier agent with `prompt`)."""

    type: str = "command"
    """`command`, `http`, `prompt` or `agent` (Claude Code's handler types)."""
    command: str | None = None
    """`command` hooks: a shell command line (run with /bin/sh)."""
    url: str | None = None
    """`http` hooks: the http(s) URL the event is POSTed to (as JSON). Loopback and private
    addresses only when `webFetch.allowedPrivateAddresses` allows them."""
    headers: dict[str, str] = Field(default_factory=dict)
    """`http` hooks: request headers; `$VAR` / `${VAR}` in a value is replaced by the
    variable when `allowedEnvVars` lists it (by nothing otherwise)."""
    allowed_env_vars: list[str] = Field(default_factory=list)
    """`http` hooks: the environment variables header values may use."""
    prompt: str | None = None
    """`prompt` and `agent` hooks: what the model is asked; `$ARGUMENTS` is replaced by the
    event's JSON (appended when absent). It answers `{"ok": true}` or `{"ok": false,
    "reason": "…"}`."""
    model: str | None = None
    """`prompt` and `agent` hooks: the model (an alias such as `haiku`, or an id); default:
    the session's."""
    timeout: float = Field(default=60.0, gt=0)
    """Seconds before the hook is stopped (at most 3600; default 60, 30 for `prompt`)."""
    pass_credentials: bool = False
    """Give this hook the agent's API key in its environment (`ANTHROPIC_API_KEY`). Hooks
    get the scrubbed environment otherwise; honoured in user settings only."""
    if_: str | None = Field(default=None, alias="if")
    """Run only for tool calls this permission rule matches, e.g. `Bash(rm *)` or
    `Edit(src/**)` (tool events only)."""
    async_: bool = Field(default=False, alias="async")
    """Run in the background: the call goes on at once and the hook's output is not
    read."""
    async_rewake: bool = Field(default=False, alias="asyncRewake")
    """Claude Code runs such a hook in the background and wakes the agent with what it
    reports; agentls runs it in the background like `async` (its output is not read)."""
    rewake_message: str | None = None
    """With `asyncRewake`: Claude Code's text before the hook's report (not used here)."""
    rewake_summary: str | None = None
    """With `asyncRewake`: Claude Code's one-line summary of the report (not used here)."""
    status_message: str | None = None
    """Shown while the hook runs."""

    @field_validator("type")
    @classmethod
    def _known_type(cls, value: str) -> str:
        if value not in HOOK_TYPES:
            raise entry_error(
                f'hook type "{value}" is not a hook type Claude Code or agentls knows (one of '
                f"{', '.join(HOOK_TYPES)}). This hook is skipped"
            )
        return value

    @model_validator(mode="after")
    def _has_its_field(self) -> HookCommandSettings:
        """(A plain error here: the hook entry itself is dropped, not its group.)"""
        name = HOOK_TYPE_FIELD[self.type]
        value = getattr(self, name)
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"a {self.type} hook needs a non-empty `{name}`")
        if self.type == "http" and not value.strip().lower().startswith(("http://", "https://")):
            raise ValueError(f"`url` {value!r} must be an http:// or https:// URL")
        return self


class HookMatcherSettings(SettingsModel):
    """Hooks for the tools whose name matches `matcher` (a regex; empty or `*`: all)."""

    matcher: str = ""
    """Tool names as a regular expression, ours or Claude Code's (`Edit|Write`)."""
    hooks: list[HookCommandSettings] = Field(min_length=1)
    """The commands to run."""

    @field_validator("matcher")
    @classmethod
    def _valid_regex(cls, value: str) -> str:
        if value.strip() not in ("", "*"):
            try:
                compile_linear(value.strip())
            except RegexGroupsError as exc:
                raise entry_error(f"matcher {value!r} is not a valid regex ({exc})") from None
        return value


HooksSettings = dict[HookEvent, list[HookMatcherSettings]]
"""`{"PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", ...}]}]}`."""


class SecretsSettings(SettingsModel):
    """Which files hold secrets (never read, never sent to the model). A list is short for
    `{"extraPatterns": [...]}`."""

    patterns: list[str] | None = Field(default=None, json_schema_extra=meta(user_only=True))
    """Replace the built-in patterns (`.env*`, keys, cloud credentials). User settings only."""
    exceptions: list[str] | None = Field(default=None, json_schema_extra=meta(user_only=True))
    """Replace the built-in exceptions (`.env.example`, …). User settings only."""
    extra_patterns: list[str] = Field(default_factory=list)
    """Patterns added to the built-in (or your) list; a project may add them too."""

    @model_validator(mode="before")
    @classmethod
    def _list_is_extra(cls, value: Any) -> Any:
        return {"extraPatterns": value} if isinstance(value, list) else value


class RunCommandSettings(SettingsModel):
    """Where the `run_command` tool runs commands and for how long."""

    where: Literal["shadow", "workspace"] = "shadow"
    """`shadow`: a private copy of the workspace with the staged edits; `workspace`: your
    real tree, without the sandbox (every command asks unless an allow rule covers it)."""
    auto_allow_read_only: bool = True
    """Run shell commands that only read (`ls`, `cat`, `git status`, `git log`, … — the set
    in docs/claude-code.md) without asking, when they run in the sandbox."""
    timeout: float = Field(default=120.0, gt=0, le=600)
    """Default seconds before a command and its children are killed (the model may ask for
    up to 600)."""


class ClaudePermissions(PermissionsSettings):
    """`permissions` of Claude Code's settings files: their other keys are theirs."""

    model_config = ConfigDict(extra="ignore")


class ClaudeSettingsFile(SettingsModel):
    """The parts of Claude Code's `settings.json` we use; its other keys are ignored (and
    listed once in a warning: `agentls.agent.claude.settings.unsupported_keys`)."""

    model_config = ConfigDict(extra="ignore")

    permissions: ClaudePermissions | None = None
    hooks: HooksSettings | None = None
    sandbox: dict[str, object] | None = None
    """Claude Code's `sandbox` section, raw: validated when the layers are merged (a
    project's may only tighten the user's; `agentls.sandbox.settings.merge_layers`)."""
    env: dict[str, str] | None = None
    """Variables for every command, hook and MCP server."""
    model: str | None = None
    """The model (`sonnet`, `opus`, `haiku` or a model id)."""
    api_key_helper: str | None = None
    """A command whose output is the API key (user and managed settings only)."""
    always_thinking_enabled: bool | None = None
    """Extended thinking on by default."""
    disable_all_hooks: bool | None = None
    """Run no hooks at all."""
    allow_managed_hooks_only: bool | None = None
    """Managed settings only: run no hooks but the managed ones."""
    allow_managed_permission_rules_only: bool | None = None
    """Managed settings only: apply no permission rules but the managed ones."""
    enabled_plugins: dict[str, object] | None = None
    """Claude Code plugins switched on or off (`"name@marketplace": true`); read by
    `agentls.agent.claude.plugins` (a project's wait for workspace trust)."""
    extra_known_marketplaces: dict[str, object] | None = None
    """Marketplaces besides the ones Claude Code added (`agentls.agent.claude.plugins`)."""
