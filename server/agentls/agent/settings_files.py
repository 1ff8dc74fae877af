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
  workspace (`agentls.agent.trust`), and always with `trustProjectSettings: false`, only
  what tightens is used: its deny/ask rules, secret patterns, a default or plan mode and a
  stricter sandbox.

Every source is validated by the typed settings models of `agentls.config` (Claude Code's
files by `ClaudeSettingsFile`, which ignores their other keys). Every problem (unreadable
file, bad JSON, invalid value, unparseable rule) is collected in `Safety.problems` for the
host to show; the offending part is ignored, never widened. `sandbox` sections are merged
so that project sources only tighten them (`agentls.sandbox.settings.merge_layers`).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentls.agent.hook_commands import CommandHooks, HookConfig
from agentls.agent.permissions import Approver, PermissionMode
from agentls.agent.policy import RulePolicy, check_mode
from agentls.agent.registry import PoolFilter
from agentls.agent.rules import RuleSet, parse_rules
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
    hooks: Mapping[str, Any] = field(default_factory=dict)
    """Validated hooks in Claude Code's shape (camelCase), for `HookConfig.parse`."""
    secrets: SecretsSettings | None = None
    sandbox: object | None = None
    """The raw `sandbox` section (validated by `merge_layers`, which knows the layer)."""

    @classmethod
    def of_claude_file(
        cls, label: str, data: ClaudeSettingsFile, user_level: bool, root: Path
    ) -> SettingsSource:
        permissions = data.permissions or PermissionsSettings()
        hooks: dict[str, Any] = {
            event: [m.model_dump(by_alias=True) for m in groups]
            for event, groups in (data.hooks or {}).items()
        }
        sandbox = _claude_sandbox(data.sandbox)
        mode = permissions.default_mode
        return cls(label, user_level, root, permissions, mode, hooks, sandbox=sandbox)

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
        hooks = layer.values.get("hooks", {})
        secrets = settings.secrets if layer.sets("secrets") else None
        mode = settings.permissions.default_mode or settings.permission_mode
        user_level = layer.level == "user"
        sandbox = layer.values.get("sandbox")
        return cls(layer.source, user_level, root, permissions, mode, hooks, secrets, sandbox)


def claude_settings_files(roots: Sequence[Path], home: Path) -> list[tuple[Path, bool, Path]]:
    """(file, user_level, root) for Claude Code's settings: user first, then per root."""
    first = roots[0] if roots else home
    files = [(home / ".claude" / "settings.json", True, first)]
    for root in roots:
        files.append((root / ".claude" / "settings.json", False, root))
        files.append((root / ".claude" / "settings.local.json", False, root))
    return files


def _read_json(path: Path, problems: list[str]) -> Mapping[str, Any] | None:
    try:
        if not path.is_file():
            return None
        if path.stat().st_size > MAX_SETTINGS_BYTES:
            problems.append(f"{path}: larger than 1 MiB; ignored")
            return None
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: cannot be read ({exc}); ignored")
        return None
    except ValueError as exc:
        problems.append(f"{path}: invalid JSON ({exc}); ignored")
        return None
    if not isinstance(data, Mapping):
        problems.append(f"{path}: expected a JSON object; ignored")
        return None
    return data


def _claude_source(
    path: Path, user_level: bool, root: Path, problems: list[str]
) -> SettingsSource | None:
    data = _read_json(path, problems)
    if data is None:
        return None
    checked = validate_leniently(ClaudeSettingsFile, data, str(path))
    problems.extend(str(p) for p in checked.problems)
    return SettingsSource.of_claude_file(str(path), checked.model, user_level, root)


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
            approver=approver,
            secrets=self.secrets,
            bypass_enabled=self.bypass_enabled,
        )

    def hooks(
        self,
        on_problem: Callable[[str], None] | None = None,
        *,
        transcript_dir: Path | None = None,
        permission_mode: Callable[[], str] | None = None,
    ) -> CommandHooks:
        """The hook runner (what it sends to hook commands never carries a credential)."""
        return CommandHooks(
            self.hook_config,
            redactor=self.redactor,
            on_problem=on_problem,
            transcript_dir=transcript_dir,
            permission_mode=permission_mode or (lambda: self.mode),
        )

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
) -> Safety:
    """Read and merge every safety source; never raises for bad content (see `problems`).

    `section` is our settings section at user level (the editor's), `project_section` the
    one from the project file: validated layers (whose problems the host has shown), or
    raw objects validated here (their problems join `problems`). `credentials` adds key
    values to redact besides the `ANTHROPIC_*` variables of `env` (default: the process
    environment). `project_trusted` is the workspace-trust decision
    (`agentls.agent.trust.assess_trust`): False uses only what tightens safety from the
    project's sources, like `trustProjectSettings: false`; hosts pass it (None: only the
    user's `trustProjectSettings` decides, for callers that assessed nothing).
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
    trust_project = ours.trust_project_settings and project_trusted is not False
    merged = _merge_sources(sources, trust_project, root_list, home, known_tools)
    problems.extend(merged.problems)
    bypass = ours.allow_bypass_permissions and not merged.bypass_disabled
    secrets = SecretMatcher(
        patterns=merged.patterns,
        exceptions=merged.exceptions,
        roots=root_list,
        deny_reads=merged.rules.read_denial,
    )
    problems.extend(secrets.problems)
    problems.extend(merged.hooks.problems)
    mode_error = None
    if merged.mode == "bypassPermissions" and not bypass:
        mode_error = (
            f"{merged.mode_source} selects bypassPermissions mode, which is not enabled: set "
            "`allowBypassPermissions: true` in your user-level agentls settings. Nothing was "
            "started"
        )
        problems.append(mode_error)
    project_run = project.values.get("runCommand", {}) if trust_project else {}
    run_command = RunCommandSettings.model_validate(
        merge_values(project_run, user.values.get("runCommand", {}))
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


def _merge_sources(
    sources: Sequence[SettingsSource],
    trust_project: bool,
    roots: Sequence[Path],
    home: Path,
    known_tools: Collection[str] | None,
) -> _Merged:
    merged = _Merged()
    for source in sources:
        trusted = source.user_level or trust_project
        lists: dict[str, object] = {"ask": source.permissions.ask, "deny": source.permissions.deny}
        if trusted:
            lists["allow"] = source.permissions.allow
        found, rule_problems = parse_rules(
            lists, source.label, root=source.root, home=home, known_tools=known_tools
        )
        merged.rules.extend(found)
        merged.problems.extend(rule_problems)
        if source.mode is not None and (trusted or source.mode in ("default", "plan")):
            merged.mode, merged.mode_source = source.mode, source.label
        if source.permissions.disable_bypass_permissions_mode == "disable":
            merged.bypass_disabled = True
        if source.hooks and trusted:
            merged.hooks.merge(
                HookConfig.parse(source.hooks, source.label, user_level=source.user_level)
            )
        if source.secrets is not None:
            _add_secrets(merged, source.secrets, source.user_level)
    return merged


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
