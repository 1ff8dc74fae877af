"""Hook settings in Claude Code's format, parsed: which commands run for which event.

`{"hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command",
"command": "…", "timeout": 60, "if": "Edit(src/**)"}]}]}}` — the events, the matcher (a
regex over the tool name, ours or Claude Code's; for the other events over what they are
about: SessionStart's `source`, PreCompact's `trigger`, Notification's type, SessionEnd's
`reason`, SubagentStop's agent type) and, per command, an optional `if` rule in the
permission-rule syntax (`Bash(rm *)`), matched with the rule engine itself, part by part
of a compound command, so a hook guarding `rm` runs for `ls && rm -rf x` and not for `ls`.

The settings are validated once, by the settings model (`agentls.config.safety`:
`HooksSettings`, each malformed part reported and skipped). Every handler type of Claude
Code's runs: `command`, `http` (`agentls.agent.hooks.http`), `prompt` and `agent`
(`agentls.agent.hooks.model`). This module only builds the runnable form from the
validated models and checks what depends on where the hook was written: an `if` rule's
syntax and event, `passCredentials` outside user settings, a `prompt` or `agent` hook on
an event where no model can be asked, an http hook's header variables.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

import re2

from agentls.agent.hooks.payload import hook_names
from agentls.agent.rules.rule import Rule, parse_rule
from agentls.config.regex import compile_linear
from agentls.config.safety import HookCommandSettings, HookMatcherSettings, HooksSettings

if TYPE_CHECKING:
    from agentls.agent.claude.plugins import Plugin

__all__ = [
    "DEFAULT_HOOK_TIMEOUT",
    "HOOK_EVENTS",
    "TOOL_EVENTS",
    "HookCommand",
    "HookConfig",
    "HookGroup",
]

TOOL_EVENTS: tuple[str, ...] = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PermissionRequest",
)
HOOK_EVENTS: tuple[str, ...] = (
    *TOOL_EVENTS,
    "SubagentStart",
    "Setup",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
    "SessionStart",
    "SessionEnd",
    "PreCompact",
    "Notification",
)
DEFAULT_HOOK_TIMEOUT = 60.0
MAX_HOOK_TIMEOUT = 3600.0
DEFAULT_TIMEOUTS: dict[str, float] = {"command": 60.0, "http": 60.0, "prompt": 30.0, "agent": 60.0}
"""A hook's timeout when it sets none (Claude Code's 30 s for `prompt`, 60 s for `agent`)."""
MODEL_EVENTS: tuple[str, ...] = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "UserPromptSubmit",
    "Stop",
    "SubagentStop",
)
"""Where `prompt` and `agent` hooks run: events inside a run, where the session's model
can be asked (Claude Code also runs them for PermissionRequest, which agentls asks outside
the run)."""


@dataclass(frozen=True)
class HookCommand:
    command: str
    """What the hook runs: the command line, the URL (`http`) or the prompt (`prompt`,
    `agent`); it names the hook in messages and the transcript."""
    timeout: float = DEFAULT_HOOK_TIMEOUT
    source: str = ""
    pass_credentials: bool = False
    """`"passCredentials": true` (user settings only): the hook gets ANTHROPIC_API_KEY /
    ANTHROPIC_AUTH_TOKEN; every other hook runs without them."""
    condition: str | None = None
    """The `if` rule (tool events only): the hook runs only for calls it matches."""
    background: bool = False
    """`"async": true`: started, not waited for; its output is not read."""
    root: Path | None = None
    """The folder the settings came from (relative paths of `if` rules start there)."""
    plugin_root: Path | None = None
    """A plugin's hook: its folder, set as `CLAUDE_PLUGIN_ROOT` for the command."""
    kind: str = "command"
    """Claude Code's handler type: `command`, `http`, `prompt` or `agent`."""
    headers: tuple[tuple[str, str], ...] = ()
    """`http`: the request headers as written (variables not yet replaced)."""
    allowed_env_vars: tuple[str, ...] = ()
    """`http`: the variables header values may use."""
    model: str | None = None
    """`prompt` / `agent`: the model to ask (None: the session's)."""
    user_level: bool = False
    """From the user's own settings: its http headers may use secret-looking variables it
    lists (a project's hook gets the scrubbed environment's only)."""

    def applies(self, tool: str, subject_of: SubjectFactory, fallback: Path) -> bool:
        """Whether the `if` rule (if any) matches this call."""
        if self.condition is None:
            return True
        rule = _condition(self.condition, str(self.root or fallback))
        if rule is None:
            return False
        return rule.matches_any(subject_of(tool))


class SubjectFactory:
    """Builds the rule `Subject` of one call on demand (only when a hook has an `if`)."""

    def __init__(self, input: Mapping[str, Any], roots: list[Path]) -> None:
        self.input = input
        self.roots = roots

    def __call__(self, tool: str) -> Any:
        from agentls.agent.permissions.guards import call_subject

        return call_subject(tool, dict(self.input), self.roots)


@lru_cache(maxsize=256)
def _condition(text: str, root: str) -> Rule | None:
    rule, _ = parse_rule(text, "deny", "hook `if`", root=Path(root))
    return rule


@dataclass(frozen=True)
class HookGroup:
    """One `{"matcher": …, "hooks": [...]}` entry of one event."""

    event: str
    matcher: str
    commands: tuple[HookCommand, ...]
    regex: re2._Regexp[str] | None = None
    """RE2, not `re`: the matcher may come from a cloned project's settings, and the names
    it is matched against from an MCP server (`(a+)+$` must not freeze the server)."""

    def matches(self, subject: str | None) -> bool:
        """`subject`: the tool (ours; Claude Code's names match too) or what the event is
        about (a SessionStart `source`, …)."""
        if self.regex is None or subject is None:
            return True
        names = hook_names(subject) if self.event in TOOL_EVENTS else [subject]
        return any(self.regex.fullmatch(name) for name in names)


@dataclass
class HookConfig:
    """Hooks from every settings source, merged (duplicates run once)."""

    groups: list[HookGroup] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    user_level: bool = True
    """Whether the source being parsed is the user's own (may pass credentials)."""

    @classmethod
    def parse(
        cls, raw: object, source: str, *, user_level: bool = True, root: Path | None = None
    ) -> HookConfig:
        """A raw `hooks` object, validated by the settings model (every malformed part
        reported and skipped), then built as `from_settings` does."""
        from agentls.config import load_layer

        layer = load_layer({"hooks": raw}, source, "user")
        config = cls.from_settings(layer.settings.hooks, source, user_level=user_level, root=root)
        config.problems[:0] = [str(problem) for problem in layer.problems]
        return config

    @classmethod
    def from_settings(
        cls, hooks: HooksSettings, source: str, *, user_level: bool = True, root: Path | None = None
    ) -> HookConfig:
        """The runnable hooks of validated settings. `passCredentials` is honoured only in
        user-level settings; a hook with an `if` rule that does not parse is skipped."""
        config = cls()
        config.user_level = user_level
        for event, groups in hooks.items():
            if event == "Setup" and groups:
                config.problems.append(
                    f"{source}: Setup hooks run with Claude Code's `--init` / `--maintenance`; "
                    "agentls has no such step, so they never run"
                )
            for index, group in enumerate(groups):
                where = f"{source}: hooks.{event}[{index}]"
                built = _group(event, group, where, config, root)
                if built is not None:
                    config.groups.append(built)
        return config

    @classmethod
    def of_plugin(cls, plugin: Plugin) -> tuple[HookConfig, str]:
        """A plugin's hooks (`hooks/hooks.json`), `${CLAUDE_PLUGIN_ROOT}` replaced (the variable
        is also set for the hook), and a problem reading them, if any."""
        raw, problem = plugin.raw_hooks()
        config = cls.parse(raw, f"plugin {plugin.key}", user_level=False, root=plugin.root)
        config.groups = [_in_plugin(group, plugin.root) for group in config.groups]
        return config, problem

    def merge(self, other: HookConfig) -> None:
        self.groups.extend(other.groups)
        self.problems.extend(other.problems)

    def commands(self, event: str, subject: str | None = None) -> list[HookCommand]:
        """The commands for an event (and tool or subject), `if` rules not yet applied."""
        found: list[HookCommand] = []
        seen: set[tuple[str, str, str | None]] = set()
        for group in self.groups:
            if group.event != event or not group.matches(subject):
                continue
            for command in group.commands:
                key = (command.kind, command.command, command.condition)
                if key not in seen:
                    seen.add(key)
                    found.append(command)
        return found

    def __bool__(self) -> bool:
        return bool(self.groups)


def _group(
    event: str, group: HookMatcherSettings, where: str, config: HookConfig, root: Path | None
) -> HookGroup | None:
    matcher = group.matcher.strip()
    regex = compile_linear(matcher) if matcher not in ("", "*") else None  # validated
    commands = [
        c
        for index, hook in enumerate(group.hooks)
        if (c := _command(event, hook, f"{where}.hooks[{index}]", config, root))
    ]
    if not commands:
        return None
    return HookGroup(event, group.matcher, tuple(commands), regex)


def _command(
    event: str, hook: HookCommandSettings, at: str, config: HookConfig, root: Path | None
) -> HookCommand | None:
    condition = _parse_condition(event, hook.if_, at, config)
    if condition is None:
        return None
    if hook.type in ("prompt", "agent") and event not in MODEL_EVENTS:
        config.problems.append(
            f"{at}: {hook.type} hooks run for {', '.join(MODEL_EVENTS)} (where the session's "
            f"model can be asked); not for {event}. This hook is skipped"
        )
        return None
    timeout = hook.timeout if "timeout" in hook.model_fields_set else DEFAULT_TIMEOUTS[hook.type]
    text = {"command": hook.command, "http": hook.url}.get(hook.type, hook.prompt) or ""
    if hook.type == "http":
        _check_headers(hook, at, config)
    return HookCommand(
        text.strip() if hook.type == "http" else text,
        min(timeout, MAX_HOOK_TIMEOUT),
        at,
        _pass_credentials(hook.pass_credentials, at, config),
        condition or None,
        hook.async_ or hook.async_rewake,
        root,
        kind=hook.type,
        headers=tuple(hook.headers.items()),
        allowed_env_vars=tuple(hook.allowed_env_vars),
        model=hook.model,
        user_level=config.user_level,
    )


def _check_headers(hook: HookCommandSettings, at: str, config: HookConfig) -> None:
    """Said at load, not per call: a header variable `allowedEnvVars` does not list (sent
    empty, as in Claude Code), and a secret-looking one a project's hook lists (agentls
    sends it empty: only the user's own hooks may send secrets)."""
    from agentls.agent.hooks.http import header_variables, withheld_variable

    listed = set(hook.allowed_env_vars)
    for name, value in hook.headers.items():
        for variable in header_variables(value):
            if variable not in listed:
                config.problems.append(
                    f"{at}: header {name!r} uses ${variable}, which `allowedEnvVars` does "
                    "not list; it is sent empty"
                )
            elif (why := withheld_variable(variable, user_level=config.user_level)) is not None:
                config.problems.append(f"{at}: header {name!r}: {why}")


def _parse_condition(event: str, value: object, at: str, config: HookConfig) -> str | None:
    """The `if` rule text, "" for none, or None when the hook must be skipped."""
    if value is None:
        return ""
    if not isinstance(value, str) or not value.strip():
        config.problems.append(f"{at}: `if` must be a permission rule such as Bash(rm *)")
        return None
    if event not in TOOL_EVENTS:
        config.problems.append(
            f"{at}: `if` applies to PreToolUse and PostToolUse hooks only; ignored here"
        )
        return ""
    rule, problem = parse_rule(value, "deny", f"{at} `if`", root=Path("/"))
    if rule is None:
        config.problems.append(f"{problem}; the hook is skipped")
        return None
    return value.strip()


def _pass_credentials(value: bool, at: str, config: HookConfig) -> bool:
    if value and not config.user_level:
        config.problems.append(
            f"{at}: passCredentials can only be set in user settings (a project hook never "
            "gets the API key); ignored"
        )
        return False
    return value


def _in_plugin(group: HookGroup, root: Path) -> HookGroup:
    from agentls.agent.claude.plugins import PLUGIN_ROOT_VARIABLE

    commands = tuple(
        dataclasses.replace(
            c,
            command=c.command.replace(PLUGIN_ROOT_VARIABLE, str(root))
            if c.kind == "command"
            else c.command,
            plugin_root=root,
        )
        for c in group.commands
    )
    return dataclasses.replace(group, commands=commands)
