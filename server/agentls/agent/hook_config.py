"""Hook settings in Claude Code's format, parsed: which commands run for which event.

`{"hooks": {"PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command",
"command": "…", "timeout": 60, "if": "Edit(src/**)"}]}]}}` — the events, the matcher (a
regex over the tool name, ours or Claude Code's; for the other events over what they are
about: SessionStart's `source`, PreCompact's `trigger`, Notification's type, SessionEnd's
`reason`, SubagentStop's agent type) and, per command, an optional `if` rule in the
permission-rule syntax (`Bash(rm *)`), matched with the rule engine itself, part by part
of a compound command, so a hook guarding `rm` runs for `ls && rm -rf x` and not for `ls`.

Every malformed part is reported and skipped; Claude Code's `prompt`, `agent` and `http`
handler types are reported by name (agentls runs `command` hooks only).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import re2

from agentls.agent.hook_payload import hook_names
from agentls.agent.rules import Rule, parse_rule
from agentls.config.regex import RegexGroupsError, compile_linear
from agentls.config.safety import UNSUPPORTED_HOOK_TYPES

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


@dataclass(frozen=True)
class HookCommand:
    command: str
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
        from agentls.agent.guards import call_subject

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
        """Parse a `hooks` object; every malformed part is reported and skipped.
        `passCredentials` is honoured only in user-level settings."""
        config = cls()
        config.user_level = user_level
        if raw is None:
            return config
        if not isinstance(raw, Mapping):
            config.problems.append(f"{source}: `hooks` must be an object; ignored")
            return config
        for event, entries in raw.items():
            if event not in HOOK_EVENTS:
                config.problems.append(
                    f"{source}: hook event {event!r} is not supported by agentls (supported: "
                    f"{', '.join(HOOK_EVENTS)}); ignored"
                )
                continue
            if not isinstance(entries, list):
                config.problems.append(f"{source}: hooks.{event} must be a list; ignored")
                continue
            if event == "Setup" and entries:
                config.problems.append(
                    f"{source}: Setup hooks run with Claude Code's `--init` / `--maintenance`; "
                    "agentls has no such step, so they never run"
                )
            for index, entry in enumerate(entries):
                where = f"{source}: hooks.{event}[{index}]"
                group = _parse_group(event, entry, where, config, root)
                if group is not None:
                    config.groups.append(group)
        return config

    def merge(self, other: HookConfig) -> None:
        self.groups.extend(other.groups)
        self.problems.extend(other.problems)

    def commands(self, event: str, subject: str | None = None) -> list[HookCommand]:
        """The commands for an event (and tool or subject), `if` rules not yet applied."""
        found: list[HookCommand] = []
        seen: set[tuple[str, str | None]] = set()
        for group in self.groups:
            if group.event != event or not group.matches(subject):
                continue
            for command in group.commands:
                key = (command.command, command.condition)
                if key not in seen:
                    seen.add(key)
                    found.append(command)
        return found

    def __bool__(self) -> bool:
        return bool(self.groups)


def _parse_group(
    event: str, entry: object, where: str, config: HookConfig, root: Path | None
) -> HookGroup | None:
    if not isinstance(entry, Mapping):
        config.problems.append(f"{where} must be an object; ignored")
        return None
    matcher = entry.get("matcher", "")
    if not isinstance(matcher, str):
        config.problems.append(f"{where}: matcher must be a string; ignored")
        return None
    regex: re2._Regexp[str] | None = None
    if matcher.strip() not in ("", "*"):
        try:
            regex = compile_linear(matcher.strip())
        except RegexGroupsError as exc:
            config.problems.append(f"{where}: matcher {matcher!r} is not a valid regex ({exc})")
            return None
    hooks = entry.get("hooks")
    if not isinstance(hooks, list) or not hooks:
        config.problems.append(f"{where}: `hooks` must be a non-empty list; ignored")
        return None
    commands = [
        c
        for index, hook in enumerate(hooks)
        if (c := _parse_command(event, hook, f"{where}.hooks[{index}]", config, root))
    ]
    if not commands:
        return None
    return HookGroup(event, matcher, tuple(commands), regex)


def _parse_command(
    event: str, hook: object, at: str, config: HookConfig, root: Path | None
) -> HookCommand | None:
    if not isinstance(hook, Mapping):
        config.problems.append(f"{at} must be an object; ignored")
        return None
    kind = hook.get("type", "command")
    if kind != "command":
        why = UNSUPPORTED_HOOK_TYPES.get(str(kind), "it is not a hook type agentls knows")
        config.problems.append(
            f'{at}: hook type "{kind}" is not supported by agentls ({why}); only "command" '
            "hooks run. This hook is skipped"
        )
        return None
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        config.problems.append(f"{at}: `command` must be a non-empty string; ignored")
        return None
    timeout = hook.get("timeout", DEFAULT_HOOK_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        config.problems.append(f"{at}: timeout must be a positive number of seconds")
        timeout = DEFAULT_HOOK_TIMEOUT
    passes = _pass_credentials(hook, at, config)
    condition = _parse_condition(event, hook.get("if"), at, config)
    if condition is None:
        return None
    return HookCommand(
        command,
        min(float(timeout), MAX_HOOK_TIMEOUT),
        at,
        passes,
        condition or None,
        hook.get("async") is True,
        root,
    )


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


def _pass_credentials(hook: Mapping[str, Any], at: str, config: HookConfig) -> bool:
    value = hook.get("passCredentials", False)
    if not isinstance(value, bool):
        config.problems.append(f"{at}: passCredentials must be true or false; using false")
        return False
    if value and not config.user_level:
        config.problems.append(
            f"{at}: passCredentials can only be set in user settings (a project hook never "
            "gets the API key); ignored"
        )
        return False
    return value
