"""Safety settings from every source, merged into one `Safety` the host builds from.

Sources (all optional), with what each may do:

- **user**: our `agentls` section as the editor sends it (user settings) and Claude Code's
  `~/.claude/settings.json`. Only the user level can enable `bypassPermissions`
  (`allowBypassPermissions: true`), replace the secret patterns, or mark project settings
  untrusted (`trustProjectSettings: false`).
- **project**: `.claude/settings.json`, `.claude/settings.local.json` (Claude Code's) and our
  project file section (`.agentls.toml`), read from each workspace root. A cloned repository
  can add rules, hooks and secret patterns, and choose a default mode other than bypass;
  it cannot weaken the secret protection or enable bypass. Until the user trusts the
  workspace (`agentls.agent.claude.trust`), and always with `trustProjectSettings: false`, only
  what tightens is used: its deny/ask rules, secret patterns, a default or plan mode and a
  stricter sandbox.

- **managed**: Claude Code's managed settings (`/etc/claude-code/managed-settings.json`,
  see `agentls.agent.claude.settings`), read last: an administrator's mode, `env`, `model`
  and `apiKeyHelper` win, and `allowManagedPermissionRulesOnly` / `allowManagedHooksOnly`
  drop every other source's rules / hooks.

Besides rules and hooks a source may give `env` (for commands, hooks and MCP servers; a
project's may not set variables that change which program runs), `model`, `apiKeyHelper`
(user and managed only), `alwaysThinkingEnabled`, `disableAllHooks` and
`permissions.additionalDirectories` (folders the read tools may read).

Every source is validated by the typed settings models of `agentls.config` (Claude Code's
files by `ClaudeSettingsFile`; the keys it does not use are listed once in a warning).
Every problem (unreadable file, bad JSON, invalid value, unparseable rule) is collected in
`Safety.problems` for the host to show; the offending part is ignored, never widened.
`sandbox` sections are merged so that project sources only tighten them
(`agentls.sandbox.settings.merge_layers`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypedDict

from agentls.agent.claude import settings as claude_settings
from agentls.agent.framework.registry import PoolFilter
from agentls.agent.hooks.commands import CommandHooks, HookConfig
from agentls.agent.permissions.approval import Approver, PermissionMode
from agentls.agent.permissions.policy import RulePolicy, check_mode
from agentls.agent.rules.rule import Rule, RuleSet, parse_rules
from agentls.agent.settings import ConfigError
from agentls.config import (
    ClaudeSettingsFile,
    Layer,
    Level,
    PermissionsSettings,
    RunCommandSettings,
    SecretsSettings,
    load_layer,
    merge_values,
    validate_leniently,
)
from agentls.config.files import read_settings_file
from agentls.config.safety import HooksSettings
from agentls.sandbox.settings import SandboxSettings, merge_layers
from agentls.workspace.secrets import (
    DEFAULT_SECRET_EXCEPTIONS,
    DEFAULT_SECRET_PATTERNS,
    Redactor,
    SecretMatcher,
)

__all__ = ["Safety", "SettingsSource", "claude_settings_files", "load_safety"]

log = logging.getLogger(__name__)

MAX_SETTINGS_BYTES = 1024 * 1024
DEFAULT_THINKING_BUDGET = 10_000
"""The thinking budget `alwaysThinkingEnabled: true` stands for."""
USER_LABEL = "agentls settings"
PROJECT_LABEL = "project agentls settings"


@dataclass(frozen=True)
class SettingsSource:
    """The safety parts of one validated settings source, and where it came from."""

    label: str
    user_level: bool
    root: Path
    permissions: PermissionsSettings = field(default_factory=PermissionsSettings)
    mode: PermissionMode | None = None
    """`permissions.defaultMode`, else our `permissionMode`."""
    hooks: HooksSettings = field(default_factory=dict)
    """Validated hooks (`HookConfig.from_settings` builds the runnable form)."""
    secrets: SecretsSettings | None = None
    sandbox: object | None = None
    """The raw `sandbox` section (validated by `merge_layers`, which knows the layer)."""
    managed: bool = False
    """Claude Code's managed settings (an administrator's; read last)."""
    env: Mapping[str, str] = field(default_factory=dict)
    model: str | None = None
    api_key_helper: str | None = None
    thinking: bool | None = None
    """`alwaysThinkingEnabled`."""
    disable_all_hooks: bool = False
    managed_hooks_only: bool = False
    managed_rules_only: bool = False
    unsupported: tuple[str, ...] = ()
    """Keys of a Claude Code file that agentls does not use."""

    @classmethod
    def of_claude_file(
        cls,
        label: str,
        data: ClaudeSettingsFile,
        user_level: bool,
        root: Path,
        *,
        managed: bool = False,
        unsupported: Sequence[str] = (),
    ) -> SettingsSource:
        permissions = data.permissions or PermissionsSettings()
        hooks = data.hooks or {}
        sandbox = _claude_sandbox(data.sandbox)
        mode = permissions.default_mode
        return cls(
            label,
            user_level or managed,
            root,
            permissions,
            mode,
            hooks,
            sandbox=sandbox,
            managed=managed,
            env=data.env or {},
            model=data.model,
            api_key_helper=data.api_key_helper,
            thinking=data.always_thinking_enabled,
            disable_all_hooks=bool(data.disable_all_hooks),
            managed_hooks_only=managed and bool(data.allow_managed_hooks_only),
            managed_rules_only=managed and bool(data.allow_managed_permission_rules_only),
            unsupported=tuple(unsupported),
        )

    @classmethod
    def of_section(cls, layer: Layer, root: Path) -> SettingsSource:
        """Our `agentls` section: the `allowedTools`/`askTools` shorthands become rules."""
        settings = layer.settings
        permissions = settings.permissions.model_copy(
            update={
                "allow": [*settings.permissions.allow, *settings.allowed_tools],
                "ask": [*settings.permissions.ask, *settings.ask_tools],
            }
        )
        hooks = settings.hooks if layer.sets("hooks") else {}
        secrets = settings.secrets if layer.sets("secrets") else None
        mode = settings.permissions.default_mode or settings.permission_mode
        user_level = layer.level == "user"
        sandbox = layer.values.get("sandbox")
        return cls(
            layer.source,
            user_level,
            root,
            permissions,
            mode,
            hooks,
            secrets,
            sandbox,
            env=settings.env,
        )


def claude_settings_files(roots: Sequence[Path], home: Path) -> list[tuple[Path, bool, Path]]:
    """(file, user_level, root) for Claude Code's settings: user first, then per root."""
    first = roots[0] if roots else home
    files = [(home / ".claude" / "settings.json", True, first)]
    for root in roots:
        files.append((root / ".claude" / "settings.json", False, root))
        files.append((root / ".claude" / "settings.local.json", False, root))
    return files


def _read_json(path: Path, problems: list[str]) -> Mapping[str, Any] | None:
    if not path.is_file():
        return None
    data, problem = read_settings_file(path, max_bytes=MAX_SETTINGS_BYTES)
    if problem is not None:
        problems.append(f"{problem}; ignored")
        return None
    if not isinstance(data, Mapping):
        problems.append(f"{path}: expected a JSON object; ignored")
        return None
    return data


def _claude_source(
    path: Path, user_level: bool, root: Path, problems: list[str], *, managed: bool = False
) -> SettingsSource | None:
    data = _read_json(path, problems)
    if data is None:
        return None
    checked = validate_leniently(ClaudeSettingsFile, data, str(path))
    problems.extend(str(p) for p in checked.problems)
    label = f"{path} (managed)" if managed else str(path)
    return SettingsSource.of_claude_file(
        label,
        checked.model,
        user_level,
        root,
        managed=managed,
        unsupported=claude_settings.unsupported_keys(data),
    )


class LoopOverrides(TypedDict, total=False):
    """`AgentSettings` fields Claude Code's files set (see `Safety.loop_overrides`)."""

    model: str
    api_key_helper: str
    thinking_budget: int


@dataclass
class Safety:
    """Everything the host needs: build a policy per session and one hook runner."""

    roots: list[Path]
    rules: RuleSet
    hook_config: HookConfig
    secrets: SecretMatcher
    mode: PermissionMode = "default"
    bypass_enabled: bool = False
    problems: list[str] = field(default_factory=list)
    redactor: Redactor = field(default_factory=Redactor)
    mode_error: str | None = None
    """Set when the configured default mode cannot be used (bypass not enabled)."""
    run_command: RunCommandSettings = field(default_factory=RunCommandSettings)
    """`runCommand`: the host builds the `run_command` tool from it (and `redactor`)."""
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    sandbox_hidden: tuple[Path, ...] = ()
    """Paths outside the workspace that deny rules for reading name: hidden from runs."""
    env: dict[str, str] = field(default_factory=dict)
    """`env` of every source: for commands, hooks and MCP servers."""
    model: str | None = None
    """`model` of Claude Code's files (an alias resolved), if any sets one."""
    model_managed: bool = False
    """The model comes from managed settings: it wins over every agentls setting."""
    api_key_helper: str | None = None
    """`apiKeyHelper` of Claude Code's user or managed settings."""
    thinking: bool = False
    """`alwaysThinkingEnabled` of Claude Code's files."""
    read_roots: tuple[Path, ...] = ()
    """`permissions.additionalDirectories`: read without asking."""
    rule_read_roots: tuple[Path, ...] = ()
    """Folders outside the workspace that `Read(…)` allow rules name: the read tools may
    reach them, and the rules decide which files there run without asking."""

    def check_mode(self, mode: str | None = None) -> PermissionMode:
        """The mode to use (default: the configured one); raises `ConfigError` — e.g.
        `BypassNotAllowed` — when it may not be used, so the run refuses to start."""
        if mode is None and self.mode_error is not None:
            raise ConfigError(self.mode_error)
        return check_mode(mode or self.mode, bypass_enabled=self.bypass_enabled)

    def policy(self, approver: Approver | None = None, mode: str | None = None) -> RulePolicy:
        """A new `RulePolicy` (one per session keeps "allow for this session" per session)."""
        return RulePolicy(
            self.rules,
            mode=self.check_mode(mode),
            approver=notifying(approver, self),
            secrets=self.secrets,
            bypass_enabled=self.bypass_enabled,
            read_only_commands=self.run_command.auto_allow_read_only,
            read_roots=self.read_roots,
        )

    def hooks(
        self,
        on_problem: Callable[[str], None] | None = None,
        *,
        transcript_dir: Path | None = None,
        permission_mode: Callable[[], str] | None = None,
        private_addresses: Sequence[str] = (),
    ) -> CommandHooks:
        """The hook runner (what it sends to hook commands never carries a credential);
        `private_addresses`: `webFetch.allowedPrivateAddresses`, for http hooks."""
        return CommandHooks(
            self.hook_config,
            redactor=self.redactor,
            on_problem=on_problem,
            transcript_dir=transcript_dir,
            permission_mode=permission_mode or (lambda: self.mode),
            extra_env=self.env,
            cwd=self.roots[0] if self.roots else None,
            private_addresses=private_addresses,
        )

    def loop_overrides(self, explicit: Collection[str]) -> LoopOverrides:
        """What Claude Code's files set for a session's `AgentSettings`: `model` (managed
        settings win over everything; otherwise only where no agentls setting chose one),
        `apiKeyHelper`, and `alwaysThinkingEnabled` (a thinking budget), each where the
        agentls settings (`explicit`: the keys they set) leave it open."""
        found: LoopOverrides = {}
        if self.model and (self.model_managed or "model" not in explicit):
            found["model"] = self.model
        if self.api_key_helper and "apiKeyHelper" not in explicit:
            found["api_key_helper"] = self.api_key_helper
        if self.thinking and "thinkingBudget" not in explicit:
            found["thinking_budget"] = DEFAULT_THINKING_BUDGET
        return found

    @property
    def readable_roots(self) -> tuple[Path, ...]:
        """Every folder outside the workspace the read tools may reach."""
        return tuple(dict.fromkeys((*self.read_roots, *self.rule_read_roots)))

    def pool_filter(self, mode: str | None = None) -> PoolFilter:
        """Plan mode offers read-only tools only; tool-wide deny rules remove tools."""
        chosen = self.check_mode(mode)
        return PoolFilter(read_only=chosen == "plan", denied=self.rules.denies_tool)


def load_safety(
    roots: Sequence[Path],
    *,
    section: Layer | Mapping[str, Any] | None = None,
    project_section: Layer | Mapping[str, Any] | None = None,
    home: Path | None = None,
    known_tools: Collection[str] | None = None,
    credentials: Sequence[str | None] = (),
    env: Mapping[str, str] | None = None,
    project_trusted: bool | None = None,
    managed_settings: Path | None = None,
) -> Safety:
    """Read and merge every safety source; never raises for bad content (see `problems`).

    `section` is our settings section at user level (the editor's), `project_section` the
    one from the project file: validated layers (whose problems the host has shown), or
    raw objects validated here (their problems join `problems`). `credentials` adds key
    values to redact besides the `ANTHROPIC_*` variables of `env` (default: the process
    environment). `project_trusted` is the workspace-trust decision
    (`agentls.agent.claude.trust.assess_trust`): False uses only what tightens safety from the
    project's sources, like `trustProjectSettings: false`; hosts pass it (None: only the
    user's `trustProjectSettings` decides, for callers that assessed nothing).
    `managed_settings` is the managed settings file (default: Claude Code's place for this
    OS, or `AGENTLS_MANAGED_SETTINGS`).
    """
    root_list = [Path(r) for r in roots]
    home = home or Path.home()
    problems: list[str] = []
    user = _layer(section, USER_LABEL, "user", problems)
    project = _layer(project_section, PROJECT_LABEL, "project", problems)
    ours = user.settings
    first = root_list[0] if root_list else home
    sources: list[SettingsSource] = []
    if ours.read_claude_settings:
        for path, user_level, root in claude_settings_files(root_list, home):
            found = _claude_source(path, user_level, root, problems)
            if found is not None:
                sources.append(found)
    if project.values:
        sources.append(SettingsSource.of_section(project, first))
    if user.values:
        sources.append(SettingsSource.of_section(user, first))
    for path in claude_settings.managed_settings_files(managed_settings):
        found = _claude_source(path, True, first, problems, managed=True)
        if found is not None:
            sources.append(found)
    trust_project = ours.trust_project_settings and project_trusted is not False
    merged = _merge_sources(sources, trust_project, root_list, home, known_tools)
    if ours.read_claude_settings:
        _add_plugin_hooks(merged, sources, root_list, home, trust_project)
    problems.extend(merged.problems)
    problems.extend(_unsupported_notice(sources))
    bypass = ours.allow_bypass_permissions and not merged.bypass_disabled
    secrets = SecretMatcher(
        patterns=merged.patterns,
        exceptions=merged.exceptions,
        roots=root_list,
        deny_reads=merged.rules.read_denial,
    )
    problems.extend(secrets.problems)
    problems.extend(merged.hooks.problems)
    problems.extend(_output_style_problem(roots, home))
    mode_error = None
    if merged.mode == "bypassPermissions" and not bypass:
        mode_error = (
            f"{merged.mode_source} selects bypassPermissions mode, which is not enabled: set "
            "`allowBypassPermissions: true` in your user-level agentls settings. Nothing was "
            "started"
        )
        problems.append(mode_error)
    project_run = project.section("runCommand") if trust_project else {}
    run_command = RunCommandSettings.model_validate(
        merge_values(project_run, user.section("runCommand"))
    )
    sandbox, sandbox_problems = merge_layers(
        (s.label, s.sandbox, s.user_level) for s in sources if s.sandbox is not None
    )
    problems.extend(sandbox_problems)
    return Safety(
        roots=root_list,
        rules=merged.rules,
        hook_config=merged.hooks,
        secrets=secrets,
        mode=merged.mode,
        bypass_enabled=bypass,
        problems=problems,
        redactor=Redactor.from_env(env, [*credentials]),
        mode_error=mode_error,
        run_command=run_command,
        sandbox=sandbox,
        sandbox_hidden=_denied_outside(merged.rules, root_list),
        env=merged.env,
        model=merged.model,
        model_managed=merged.model_managed,
        api_key_helper=merged.api_key_helper,
        thinking=merged.thinking,
        read_roots=_folders(merged.additional_directories, first, home),
        rule_read_roots=_allowed_outside(merged.rules, root_list),
    )


def _layer(
    raw: Layer | Mapping[str, Any] | None, label: str, level: Level, problems: list[str]
) -> Layer:
    if isinstance(raw, Layer):
        return raw
    layer = load_layer(raw, label, level)
    problems.extend(str(p) for p in layer.problems)
    return layer


@dataclass
class _Merged:
    """The sources combined: rules and hooks accumulate, the last mode wins."""

    rules: RuleSet = field(default_factory=RuleSet)
    hooks: HookConfig = field(default_factory=HookConfig)
    mode: PermissionMode = "default"
    mode_source: str = ""
    bypass_disabled: bool = False
    patterns: list[str] = field(default_factory=lambda: list(DEFAULT_SECRET_PATTERNS))
    exceptions: list[str] = field(default_factory=lambda: list(DEFAULT_SECRET_EXCEPTIONS))
    problems: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    model: str | None = None
    model_managed: bool = False
    api_key_helper: str | None = None
    thinking: bool = False
    additional_directories: list[str] = field(default_factory=list)


def _merge_sources(
    sources: Sequence[SettingsSource],
    trust_project: bool,
    roots: Sequence[Path],
    home: Path,
    known_tools: Collection[str] | None,
) -> _Merged:
    merged = _Merged()
    rules_only_managed = any(s.managed_rules_only for s in sources)
    for source in sources:
        trusted = source.user_level or trust_project
        if source.managed or not rules_only_managed:
            _add_rules(merged, source, trusted, home, known_tools)
        if source.mode == "bypassPermissions" and not (source.user_level or source.managed):
            merged.problems.append(_PROJECT_BYPASS.format(label=source.label))
        elif source.mode is not None and (trusted or source.mode in ("default", "plan")):
            merged.mode, merged.mode_source = source.mode, source.label
        if source.permissions.disable_bypass_permissions_mode == "disable":
            merged.bypass_disabled = True
        if source.hooks and trusted and _hooks_apply(source, sources):
            merged.hooks.merge(
                HookConfig.from_settings(
                    source.hooks, source.label, user_level=source.user_level, root=source.root
                )
            )
        if source.secrets is not None:
            _add_secrets(merged, source.secrets, source.user_level)
        if trusted:
            _add_extras(merged, source)
    return merged


def _add_plugin_hooks(
    merged: _Merged,
    sources: Sequence[SettingsSource],
    roots: Sequence[Path],
    home: Path,
    trusted: bool,
) -> None:
    """Enabled plugins' `hooks/hooks.json` (held back like other hooks: `disableAllHooks`,
    managed `allowManagedHooksOnly`; plugins a project enabled wait for trust)."""
    from agentls.agent.claude.plugins import load_plugins

    if any(s.disable_all_hooks or s.managed_hooks_only for s in sources):
        return
    for plugin in load_plugins(roots, home, project_trusted=trusted).plugins:
        config, problem = HookConfig.of_plugin(plugin)
        merged.hooks.merge(config)
        if problem:
            merged.problems.append(problem)


_PROJECT_BYPASS = (
    "{label} sets the permission mode bypassPermissions, which a project may not set, "
    "trusted or not (only your user-level settings may, with `allowBypassPermissions`); "
    "ignored: the mode stays as your settings say"
)


def _hooks_apply(source: SettingsSource, sources: Sequence[SettingsSource]) -> bool:
    """`disableAllHooks` (managed: every hook; elsewhere: all but the managed ones) and
    managed `allowManagedHooksOnly`."""
    if any(s.managed and s.disable_all_hooks for s in sources):
        return False
    if source.managed:
        return True
    return not any(s.managed_hooks_only or s.disable_all_hooks for s in sources)


def _add_rules(
    merged: _Merged,
    source: SettingsSource,
    trusted: bool,
    home: Path,
    known_tools: Collection[str] | None,
) -> None:
    lists: dict[str, object] = {"ask": source.permissions.ask, "deny": source.permissions.deny}
    if trusted:
        lists["allow"] = source.permissions.allow
        merged.additional_directories += source.permissions.additional_directories
    found, rule_problems = parse_rules(
        lists, source.label, root=source.root, home=home, known_tools=known_tools
    )
    merged.rules.extend(found)
    merged.problems.extend(rule_problems)


def _add_extras(merged: _Merged, source: SettingsSource) -> None:
    """`env`, `model`, `apiKeyHelper`, `alwaysThinkingEnabled` of a trusted source (later
    sources override earlier ones; managed settings come last)."""
    env, problems = claude_settings.filter_env(
        source.env, source.label, user_level=source.user_level
    )
    merged.env.update(env)
    merged.problems.extend(problems)
    if source.model and not merged.model_managed:
        model, note = claude_settings.resolve_model(source.model)
        merged.model, merged.model_managed = model, source.managed
        if note:
            log.info("%s: %s", source.label, note)
    if source.api_key_helper:
        if source.user_level:
            merged.api_key_helper = source.api_key_helper
        else:
            merged.problems.append(
                f"{source.label}: apiKeyHelper is ignored in a project's settings (it would "
                "choose the command that supplies your API key); set it in your user settings"
            )
    if source.thinking is not None:
        merged.thinking = source.thinking


def _add_secrets(merged: _Merged, secrets: SecretsSettings, user_level: bool) -> None:
    """A user may replace the patterns and exceptions; anyone may add patterns (a project's
    replacements never get here: they are dropped, and reported, when its layer loads)."""
    if user_level and secrets.patterns is not None:
        merged.patterns = list(secrets.patterns)
    if user_level and secrets.exceptions is not None:
        merged.exceptions = list(secrets.exceptions)
    merged.patterns = [*merged.patterns, *secrets.extra_patterns]


_CLAUDE_ONLY_SANDBOX = frozenset(
    {"autoAllowBashIfSandboxed", "enableWeakerNestedSandbox", "ignoreViolations"}
)
_CLAUDE_ONLY_NETWORK = frozenset({"allowUnixSockets", "httpProxyPort", "socksProxyPort"})


def _claude_sandbox(raw: Mapping[str, Any] | None) -> object | None:
    """A Claude Code file's `sandbox` section without the keys that configure Claude Code
    itself and mean nothing to agentls (dropped silently, not reported)."""
    if raw is None:
        return None
    section = {k: v for k, v in raw.items() if k not in _CLAUDE_ONLY_SANDBOX}
    network = section.get("network")
    if isinstance(network, Mapping):
        section["network"] = {k: v for k, v in network.items() if k not in _CLAUDE_ONLY_NETWORK}
    return section


def _denied_outside(rules: RuleSet, roots: Sequence[Path]) -> tuple[Path, ...]:
    """The folders that deny rules for reading name outside the workspace (their literal
    part: `Read(~/private/**)` → `~/private`); a sandboxed run must not see them."""
    found: list[Path] = []
    for rule in rules.of("deny"):
        matcher = rule.path
        base, pattern = getattr(matcher, "base", None), getattr(matcher, "pattern", None)
        reads = rule.covers_tool("read_file") or rule.covers_tool("grep")
        if not reads or not isinstance(base, str) or not isinstance(pattern, str):
            continue
        literal: list[str] = []
        for part in pattern.strip("/").split("/"):
            if not part or any(c in part for c in "*?[!\\"):
                break
            literal.append(part)
        path = Path(base, *literal)
        if not any(path == r or path.is_relative_to(r) for r in roots):
            found.append(path)
    return tuple(dict.fromkeys(found))


_NOTIFIED: set[str] = set()
"""Unsupported-key notices already given by this process (each is shown once)."""


def _unsupported_notice(sources: Sequence[SettingsSource]) -> list[str]:
    """One line listing the Claude Code keys agentls does not use, once per process."""
    parts = [f"{', '.join(s.unsupported)} ({s.label})" for s in sources if s.unsupported]
    if not parts:
        return []
    text = (
        "Claude Code settings agentls does not use (ignored): "
        + "; ".join(parts)
        + ". See docs/claude-code.md for what is supported"
    )
    if text in _NOTIFIED:
        return []
    _NOTIFIED.add(text)
    return [text]


def _folders(entries: Sequence[str], root: Path, home: Path) -> tuple[Path, ...]:
    """`additionalDirectories` entries as absolute, resolved folders (`~/…` is under the
    home folder, a relative one under the first workspace root)."""
    found: list[Path] = []
    for entry in entries:
        text = entry.strip()
        if not text:
            continue
        path = home / text[2:] if text.startswith("~/") else home if text == "~" else Path(text)
        path = path if path.is_absolute() else root / path
        found.append(Path(os.path.realpath(path)))
    return tuple(dict.fromkeys(found))


def _allowed_outside(rules: RuleSet, roots: Sequence[Path]) -> tuple[Path, ...]:
    """The folders `Read(~/…)` / `Read(//…)` allow rules name outside the workspace (their
    literal part, as `_denied_outside` finds it for deny rules)."""
    found: list[Path] = []
    for rule in rules.of("allow"):
        if not rule.covers_tool("read_file"):
            continue
        path = _literal_folder(rule)
        if path is not None and not any(path == r or path.is_relative_to(r) for r in roots):
            found.append(Path(os.path.realpath(path)))
    return tuple(dict.fromkeys(found))


def _literal_folder(rule: Rule) -> Path | None:
    matcher = rule.path
    base, pattern = getattr(matcher, "base", None), getattr(matcher, "pattern", None)
    if not isinstance(base, str) or not isinstance(pattern, str):
        return None
    literal: list[str] = []
    for part in pattern.strip("/").split("/"):
        if not part or any(c in part for c in "*?[!\\"):
            break
        literal.append(part)
    return Path(base, *literal)


def notifying(approver: Approver | None, safety: Safety) -> Approver | None:
    """The approver, asking PermissionRequest hooks first and telling Notification hooks
    when a prompt opens."""
    config = safety.hook_config
    wanted = config.commands("Notification", "permission_prompt") or any(
        g.event == "PermissionRequest" for g in config.groups
    )
    if approver is None or not wanted:
        return approver
    from agentls.agent.hooks.commands import NotifyingApprover

    return NotifyingApprover(approver, safety.hooks())


def _output_style_problem(roots: Sequence[Path], home: Path) -> list[str]:
    """An `outputStyle` that names no style file is said, not only logged."""
    from agentls.agent.claude.output_styles import style_problem

    return style_problem(roots, home)
