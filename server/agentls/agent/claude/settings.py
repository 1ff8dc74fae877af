"""Claude Code's settings files beyond rules and hooks: managed settings, `env`, `model`,
and the keys agentls does not use.

- **Managed settings** (`/etc/claude-code/managed-settings.json` on Linux,
  `/Library/Application Support/ClaudeCode/managed-settings.json` on macOS, plus
  `managed-settings.d/*.json` next to it, in name order) are an administrator's: they come
  last, so their mode, `env`, `model` and `apiKeyHelper` win, their deny rules hold
  everywhere, and `allowManagedPermissionRulesOnly` / `allowManagedHooksOnly` drop every
  other source's rules / hooks. `AGENTLS_MANAGED_SETTINGS` names another file (tests, or a
  machine that keeps it elsewhere).
- **`env`** is passed to every command, hook and MCP server. A project's `env` may not set
  variables that change which code runs (`PATH`, `LD_PRELOAD`, `NODE_OPTIONS`,
  `PYTHONPATH`, `GIT_*`, …) or where traffic and trust go (`*_PROXY`, CA bundles): a
  cloned repository could otherwise make an allowed `npm test`, a user's own MCP server or
  hook run its code outside the sandbox. The agent's credentials are never set this way.
- **`model`**: an alias (`sonnet`, `opus`, `haiku`) or a model id.
- Keys agentls does not use are listed once, by file, instead of being ignored silently.
"""

from __future__ import annotations

import fnmatch
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentls.agent.rules.shell import SAFE_ENV_VARIABLES
from agentls.config.loop import DEFAULT_MODEL
from agentls.credentials import CREDENTIAL_VARS

__all__ = [
    "MANAGED_SETTINGS_VARIABLE",
    "MODEL_ALIASES",
    "filter_env",
    "managed_settings_files",
    "resolve_model",
    "unsupported_keys",
]

MANAGED_SETTINGS_VARIABLE = "AGENTLS_MANAGED_SETTINGS"
_MANAGED_DEFAULTS = {
    "darwin": Path("/Library/Application Support/ClaudeCode/managed-settings.json"),
}
_MANAGED_LINUX = Path("/etc/claude-code/managed-settings.json")

SUPPORTED_KEYS: frozenset[str] = frozenset(
    {
        "$schema",
        "permissions",
        "hooks",
        "sandbox",
        "env",
        "model",
        "apiKeyHelper",
        "alwaysThinkingEnabled",
        "disableAllHooks",
        "allowManagedHooksOnly",
        "allowManagedPermissionRulesOnly",
        # read by agentls's MCP support (docs/mcp.md)
        "outputStyle",
        "enabledPlugins",
        "extraKnownMarketplaces",
        "enableAllProjectMcpServers",
        "enabledMcpjsonServers",
        "disabledMcpjsonServers",
    }
)
SUPPORTED_PERMISSION_KEYS: frozenset[str] = frozenset(
    {"allow", "ask", "deny", "defaultMode", "disableBypassPermissionsMode", "additionalDirectories"}
)
SUPPORTED_SANDBOX_KEYS: frozenset[str] = frozenset(
    {"enabled", "excludedCommands", "allowUnsandboxedCommands", "network", "caches"}
    | {"fallback", "limits", "allowLocalBinding"}
)

MODEL_ALIASES: dict[str, str] = {
    "sonnet": DEFAULT_MODEL,
    "opus": "claude-opus-5-5",
    "haiku": "claude-haiku-5-5",
    "fable": "claude-fable-5-1",
}
"""Claude Code's model aliases (first-party ids); a full model id is used as it is.
`ANTHROPIC_DEFAULT_{SONNET,OPUS,HAIKU,FABLE}_MODEL` name another model for an alias, as in
Claude Code; `opusplan` means `opus`, `best` the most capable (`opus`), `default` the
default model, and a `[1m]` suffix is dropped."""

PROJECT_ENV_DENIED: tuple[str, ...] = (
    "PATH",
    "*PATH",
    "LD_*",
    "DYLD_*",
    "*_OPTIONS",
    "*_OPTS",
    "*OPT",
    "*LIB",
    "PYTHON*",
    "NODE_*",
    "NPM_CONFIG_*",
    "BASH_*",
    "ENV",
    "SHELL*",
    "BASHOPTS",
    "PS4",
    "IFS",
    "PROMPT_COMMAND",
    "ZDOTDIR",
    "HOME",
    "GIT_*",
    "GEM_*",
    "BUNDLE_*",
    "RUBY*",
    "PERL*",
    "CARGO_*",
    "RUST*",
    "GO*",
    "CC",
    "CXX",
    "LESS*",
    "*PAGER",
    "EDITOR",
    "VISUAL",
    "BROWSER",
    "*_PROXY",
    "SSL_*",
    "*_CA_BUNDLE",
    "NODE_EXTRA_CA_CERTS",
    "SSH_*",
    "GPG_*",
    "GNUPG*",
    "HOSTALIASES",
    "ANTHROPIC_*",
    "AGENTLS_*",
    "CLAUDE_*",
    "XDG_*",
    "TMPDIR",
)
"""Variable names (upper-cased) a project's `env` may not set."""


def managed_settings_files(path: Path | None = None) -> list[Path]:
    """The managed settings file and its `managed-settings.d/*.json` drop-ins (existing
    ones only), lowest first."""
    configured = os.environ.get(MANAGED_SETTINGS_VARIABLE)
    base = path or (Path(configured) if configured else _platform_path())
    files = [base] if base.is_file() else []
    drop_ins = base.parent / "managed-settings.d"
    if drop_ins.is_dir():
        files += sorted(p for p in drop_ins.glob("*.json") if p.is_file())
    return files


def _platform_path() -> Path:
    return _MANAGED_DEFAULTS.get(sys.platform, _MANAGED_LINUX)


def unsupported_keys(data: Mapping[str, Any]) -> list[str]:
    """The keys of one Claude Code settings file that agentls does not use."""
    found = [key for key in data if key not in SUPPORTED_KEYS]
    for section, known in (
        ("permissions", SUPPORTED_PERMISSION_KEYS),
        ("sandbox", SUPPORTED_SANDBOX_KEYS),
    ):
        value = data.get(section)
        if isinstance(value, Mapping):
            found += [f"{section}.{key}" for key in value if key not in known]
    return found


def filter_env(
    env: Mapping[str, str], source: str, *, user_level: bool
) -> tuple[dict[str, str], list[str]]:
    """The variables of one `env` section that apply, and a problem per dropped one."""
    kept: dict[str, str] = {}
    problems: list[str] = []
    for name, value in env.items():
        if name in CREDENTIAL_VARS:
            problems.append(
                f"{source}: env.{name} is not passed on (agentls never gives its credentials "
                "to commands, hooks or servers); set it in the environment agentls starts in"
            )
            continue
        if not user_level and _denied_for_project(name):
            problems.append(
                f"{source}: env.{name} is ignored: a project may not set variables that "
                "change which program runs or where its traffic goes; set it in your user "
                "settings"
            )
            continue
        kept[name] = str(value)
    return kept, problems


def _denied_for_project(name: str) -> bool:
    """`PROJECT_ENV_DENIED`, except the variables that change no code path (`NODE_ENV`,
    `RUST_LOG`, …: `agentls.agent.rules.shell.SAFE_ENV_VARIABLES`)."""
    upper = name.upper()
    if upper in SAFE_ENV_VARIABLES:
        return False
    return any(fnmatch.fnmatchcase(upper, pattern) for pattern in PROJECT_ENV_DENIED)


def resolve_model(name: str) -> tuple[str, str | None]:
    """A Claude Code `model` value as a model id, and a note when it was translated."""
    text = name.strip()
    base = text.split("[", 1)[0].strip().lower()
    if base in ("default", ""):
        return DEFAULT_MODEL, None
    if base in ("opusplan", "best"):
        base = "opus"
    if base in MODEL_ALIASES:
        override = os.environ.get(f"ANTHROPIC_DEFAULT_{base.upper()}_MODEL", "").strip()
        model = override or MODEL_ALIASES[base]
        return model, f"the model alias {text!r} means {model}"
    return text, None


def is_model_alias(name: str) -> bool:
    """Whether `name` is one of Claude Code's aliases (not a model id)."""
    base = name.split("[", 1)[0].strip().lower()
    return base in MODEL_ALIASES or base in ("opusplan", "best", "default")
