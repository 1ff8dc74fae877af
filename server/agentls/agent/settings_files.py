"""Safety settings from every source, merged into one `Safety` the host builds from.

Sources (all optional), with what each may do:

- **user**: our `agentls` section as the editor sends it (user settings) and Claude Code's
  `~/.claude/settings.json`. Only the user level can enable `bypassPermissions`
  (`allowBypassPermissions: true`), replace the secret patterns, or mark project settings
  untrusted (`trustProjectSettings: false`).
- **project**: `.claude/settings.json`, `.claude/settings.local.json` (Claude Code's) and our
  project file section (`.agentls.toml`), read from each workspace root. A cloned repository
  can add rules, hooks and secret patterns, and choose a default mode other than bypass;
  it cannot weaken the secret protection or enable bypass. With
  `trustProjectSettings: false` only its deny/ask rules and secret patterns are used.

Claude Code's shape is used for both: `{"permissions": {"allow": [], "ask": [], "deny": [],
"defaultMode": "acceptEdits"}, "hooks": {...}, "sandbox": {...}}`; our section also accepts
`permissionMode`, `secrets: {"patterns": [...], "extraPatterns": [...],
"exceptions": [...]}` and `readClaudeSettings: false`. `sandbox` is merged so that project
sources only tighten it (`agentls.sandbox.settings.merge_layers`).

Every problem (unreadable file, bad JSON, unparseable rule, bad hook) is collected in
`Safety.problems` for the host to show; the offending part is ignored, never widened.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from agentls.agent.hook_commands import CommandHooks, HookConfig
from agentls.agent.hooks import HookVerdicts
from agentls.agent.permissions import PERMISSION_MODES, Approver, PermissionMode
from agentls.agent.policy import RulePolicy, check_mode
from agentls.agent.registry import PoolFilter
from agentls.agent.rules import RuleSet, parse_rules
from agentls.agent.settings import ConfigError
from agentls.sandbox.settings import SandboxSettings, merge_layers
from agentls.workspace.secrets import (
    DEFAULT_SECRET_EXCEPTIONS,
    DEFAULT_SECRET_PATTERNS,
    Redactor,
    SecretMatcher,
)

if TYPE_CHECKING:
    from agentls.agent.tool import Tool
    from agentls.workspace.shadow import ShadowRegistry

__all__ = ["Safety", "SettingsSource", "claude_settings_files", "load_safety"]

log = logging.getLogger(__name__)

MAX_SETTINGS_BYTES = 1024 * 1024


@dataclass(frozen=True)
class SettingsSource:
    """One settings object and where it came from."""

    label: str
    data: Mapping[str, Any]
    user_level: bool
    root: Path


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
    verdicts: HookVerdicts = field(default_factory=HookVerdicts)
    mode_error: str | None = None
    """Set when the configured default mode cannot be used (bypass not enabled)."""
    run_command_where: Literal["shadow", "workspace"] = "shadow"
    run_command_timeout: float = 120.0
    sandbox: SandboxSettings = field(default_factory=SandboxSettings)
    sandbox_hidden: tuple[Path, ...] = ()
    """Paths outside the workspace that deny rules for reading name: hidden from runs."""

    def run_command_tool(self, shadows: ShadowRegistry | None = None) -> Tool[Any]:
        """The `run_command` tool as configured (`runCommand: {"where", "timeout"}`), with
        this configuration's credential redaction."""
        from agentls.tools.run_command import RunCommand, RunCommandConfig

        config = RunCommandConfig(
            where=self.run_command_where,
            timeout=self.run_command_timeout,
            redactor=self.redactor,
        )
        return RunCommand(config, shadows=shadows)

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
            verdicts=self.verdicts,
        )

    def hooks(
        self,
        on_problem: Callable[[str], None] | None = None,
        *,
        transcript_dir: Path | None = None,
        permission_mode: Callable[[], str] | None = None,
    ) -> CommandHooks:
        """The hook runner (also redacts the agent's credentials from tool output)."""
        return CommandHooks(
            self.hook_config,
            verdicts=self.verdicts,
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
    section: Mapping[str, Any] | None = None,
    project_section: Mapping[str, Any] | None = None,
    home: Path | None = None,
    known_tools: Collection[str] | None = None,
    credentials: Sequence[str | None] = (),
    env: Mapping[str, str] | None = None,
) -> Safety:
    """Read and merge every safety source; never raises for bad content (see `problems`).

    `section` is our settings section at user level (the editor's), `project_section` the
    one from the project file. `credentials` adds key values to redact besides the
    `ANTHROPIC_*` variables of `env` (default: the process environment).
    """
    root_list = [Path(r) for r in roots]
    home = home or Path.home()
    problems: list[str] = []
    ours_user = dict(section or {})
    ours_project = dict(project_section or {})
    read_claude = _flag(ours_user, "readClaudeSettings", True, problems, "agentls settings")
    trust = _flag(ours_user, "trustProjectSettings", True, problems, "agentls settings")
    first = root_list[0] if root_list else home
    sources: list[SettingsSource] = []
    if read_claude:
        for path, user_level, root in claude_settings_files(root_list, home):
            data = _read_json(path, problems)
            if data is not None:
                sources.append(SettingsSource(str(path), data, user_level, root))
    if ours_project:
        for key in ("allowBypassPermissions", "trustProjectSettings", "readClaudeSettings"):
            if key in ours_project:
                problems.append(f"project settings: `{key}` can only be set in user settings")
        sources.append(SettingsSource("project agentls settings", ours_project, False, first))
    if ours_user:
        sources.append(SettingsSource("agentls settings", ours_user, True, first))

    rules = RuleSet()
    hook_config = HookConfig()
    mode: PermissionMode = "default"
    mode_source = ""
    bypass_disabled = False
    patterns = list(DEFAULT_SECRET_PATTERNS)
    exceptions = list(DEFAULT_SECRET_EXCEPTIONS)
    for source in sources:
        trusted = source.user_level or trust
        permissions = source.data.get("permissions")
        if permissions is not None and not isinstance(permissions, Mapping):
            problems.append(f"{source.label}: `permissions` must be an object; ignored")
            permissions = None
        lists = dict(permissions or {})
        if not trusted:
            lists.pop("allow", None)
        found, rule_problems = parse_rules(
            lists, source.label, root=source.root, home=home, known_tools=known_tools
        )
        rules.extend(found)
        problems.extend(rule_problems)
        requested = (permissions or {}).get("defaultMode") or source.data.get("permissionMode")
        if requested is not None and trusted:
            if requested in PERMISSION_MODES:
                mode, mode_source = requested, source.label
            else:
                problems.append(
                    f"{source.label}: unknown permission mode {requested!r} "
                    f"(use one of {', '.join(PERMISSION_MODES)}); ignored"
                )
        if (permissions or {}).get("disableBypassPermissionsMode") == "disable":
            bypass_disabled = True
        if "hooks" in source.data and trusted:
            hook_config.merge(
                HookConfig.parse(source.data["hooks"], source.label, user_level=source.user_level)
            )
        patterns, exceptions = _secrets(source, patterns, exceptions, problems)
    bypass = bool(ours_user.get("allowBypassPermissions") is True) and not bypass_disabled
    secrets = SecretMatcher(
        patterns=patterns, exceptions=exceptions, roots=root_list, deny_reads=rules.read_denial
    )
    problems.extend(secrets.problems)
    problems.extend(hook_config.problems)
    mode_error = None
    if mode == "bypassPermissions" and not bypass:
        mode_error = (
            f"{mode_source} selects bypassPermissions mode, which is not enabled: set "
            "`allowBypassPermissions: true` in your user-level agentls settings. Nothing was "
            "started"
        )
        problems.append(mode_error)
    where, timeout = _run_command(ours_user, ours_project, problems)
    sandbox, sandbox_problems = merge_layers(_sandbox_layers(sources))
    problems.extend(sandbox_problems)
    extra = [*credentials]
    redactor = Redactor.from_env(env, extra)
    return Safety(
        roots=root_list,
        rules=rules,
        hook_config=hook_config,
        secrets=secrets,
        mode=mode,
        bypass_enabled=bypass,
        problems=problems,
        redactor=redactor,
        mode_error=mode_error,
        run_command_where=where,
        run_command_timeout=timeout,
        sandbox=sandbox,
        sandbox_hidden=_denied_outside(rules, root_list),
    )


_CLAUDE_ONLY_SANDBOX = frozenset(
    {"autoAllowBashIfSandboxed", "enableWeakerNestedSandbox", "ignoreViolations"}
)
_CLAUDE_ONLY_NETWORK = frozenset({"allowUnixSockets", "httpProxyPort", "socksProxyPort"})


def _sandbox_layers(sources: Sequence[SettingsSource]) -> list[tuple[str, object, bool]]:
    """Each source's `sandbox` section; in Claude Code's files its keys that agentls does
    not use are dropped silently (they configure Claude Code, not us)."""
    layers: list[tuple[str, object, bool]] = []
    for source in sources:
        raw = source.data.get("sandbox")
        if raw is None:
            continue
        if source.label.endswith(".json") and isinstance(raw, Mapping):
            raw = {k: v for k, v in raw.items() if k not in _CLAUDE_ONLY_SANDBOX}
            network = raw.get("network")
            if isinstance(network, Mapping):
                raw["network"] = {k: v for k, v in network.items() if k not in _CLAUDE_ONLY_NETWORK}
        layers.append((source.label, raw, source.user_level))
    return layers


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


def _run_command(
    user: Mapping[str, Any], project: Mapping[str, Any], problems: list[str]
) -> tuple[Literal["shadow", "workspace"], float]:
    """`runCommand: {"where": "shadow" | "workspace", "timeout": seconds}` (user wins)."""
    where: Literal["shadow", "workspace"] = "shadow"
    timeout = 120.0
    for label, data in (("project agentls settings", project), ("agentls settings", user)):
        raw = data.get("runCommand")
        if raw is None:
            continue
        if not isinstance(raw, Mapping):
            problems.append(f"{label}: `runCommand` must be an object; ignored")
            continue
        value = raw.get("where", where)
        if value in ("shadow", "workspace"):
            where = "workspace" if value == "workspace" else "shadow"
        else:
            problems.append(f'{label}: runCommand.where must be "shadow" or "workspace"')
        seconds = raw.get("timeout", timeout)
        if (
            isinstance(seconds, int | float)
            and not isinstance(seconds, bool)
            and 0 < seconds <= 600
        ):
            timeout = float(seconds)
        else:
            problems.append(f"{label}: runCommand.timeout must be 1–600 seconds; using {timeout:g}")
    return where, timeout


def _flag(
    data: Mapping[str, Any], key: str, default: bool, problems: list[str], where: str
) -> bool:
    value = data.get(key, default)
    if isinstance(value, bool):
        return value
    problems.append(f"{where}: `{key}` must be true or false; using {default}")
    return default


def _secrets(
    source: SettingsSource,
    patterns: list[str],
    exceptions: list[str],
    problems: list[str],
) -> tuple[list[str], list[str]]:
    raw = source.data.get("secrets")
    if raw is None:
        return patterns, exceptions
    if isinstance(raw, list):
        raw = {"extraPatterns": raw}
    if not isinstance(raw, Mapping):
        problems.append(f"{source.label}: `secrets` must be an object or a list; ignored")
        return patterns, exceptions
    for key in ("patterns", "exceptions"):
        if key in raw and not source.user_level:
            problems.append(
                f"{source.label}: `secrets.{key}` can only be changed in user settings "
                "(a project may only add patterns, with `extraPatterns`); ignored"
            )
    if source.user_level:
        replaced = _strings(raw.get("patterns"), source.label, "secrets.patterns", problems)
        if replaced is not None:
            patterns = replaced
        allowed = _strings(raw.get("exceptions"), source.label, "secrets.exceptions", problems)
        if allowed is not None:
            exceptions = allowed
    extra = _strings(raw.get("extraPatterns"), source.label, "secrets.extraPatterns", problems)
    if extra:
        patterns = [*patterns, *extra]
    return patterns, exceptions


def _strings(value: object, label: str, key: str, problems: list[str]) -> list[str] | None:
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"{label}: `{key}` must be a list of strings; ignored")
        return None
    return list(value)
