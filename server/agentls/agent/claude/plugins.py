"""Claude Code plugins and marketplaces: which plugins are enabled and what each brings.

Settings (`~/.claude/settings.json`, then each root's `.claude/settings.json` and
`.claude/settings.local.json`; a later file overrides single keys):

    "extraKnownMarketplaces": {"team": {"source": {"source": "directory", "path": "~/m"}}},
    "enabledPlugins": {"hookify@team": true}

Marketplaces Claude Code itself added (`~/.claude/plugins/known_marketplaces.json`, their
clones under `installLocation`) are known too. A marketplace is a folder with
`.claude-plugin/marketplace.json`, whose `plugins[]` name each plugin's folder (`source`:
`./plugins/x`, relative to the marketplace, never outside it). A plugin folder may hold
`.claude-plugin/plugin.json` (name, version, description; `commands`/`agents`/`skills`
extra paths, `hooks` and `mcpServers` as a path or inline) and the default folders
`commands/`, `agents/`, `skills/`, `hooks/hooks.json` and `.mcp.json`.

agentls reads local folders only: a `github`, `git` or `url` source is used when Claude
Code has cloned it (`installLocation`, or `~/.claude/plugins/marketplaces/<name>`) and is
otherwise skipped with a message saying how to make it local — nothing is downloaded at
run time. A plugin runs code (hooks, MCP servers), so one enabled (or a marketplace
declared) in a repository's own settings is held back until the workspace is trusted
(`agentls.agent.claude.trust`); a project may always *disable* one. Every skip has a reason in
`PluginSet.skipped` (shown by `agentls doctor`).
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, get_args

from agentls.config.safety import HookEvent

if TYPE_CHECKING:
    from agentls.agent.claude.prompt_commands import CommandCatalog, CommandSource, CustomCommand


__all__ = ["Plugin", "PluginSet", "load_plugins"]

PLUGIN_ROOT_VARIABLE = "${CLAUDE_PLUGIN_ROOT}"
MAX_JSON_BYTES = 1024 * 1024
_FETCHED_KINDS = ("github", "git", "url")


@dataclass(frozen=True)
class Plugin:
    """One enabled plugin whose folder is here."""

    name: str
    marketplace: str
    root: Path
    enabled_by: str
    """The settings file that enabled it."""
    user_level: bool
    manifest: Mapping[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.name}@{self.marketplace}"

    def folders(self, kind: str) -> list[Path]:
        """`commands`, `agents` or `skills`: the default folder plus the manifest's paths."""
        found = [self.root / kind]
        extra = self.manifest.get(kind)
        for entry in [extra] if isinstance(extra, str) else extra or []:
            if isinstance(entry, str) and (path := self._inside(entry)) is not None:
                found.append(path)
        return [p for p in dict.fromkeys(found) if p.exists()]

    def raw_hooks(self) -> tuple[object, str]:
        """The plugin's `hooks` object as written (`hooks/hooks.json` or the manifest's) and
        a problem reading it, if any; `HookConfig.of_plugin` makes it runnable."""
        raw: object = self.manifest.get("hooks")
        problem = ""
        if raw is None or isinstance(raw, str):
            file = self._inside(raw) if isinstance(raw, str) else self.root / "hooks/hooks.json"
            raw, problem = _read_json(file) if file is not None and file.is_file() else (None, "")
        if isinstance(raw, Mapping) and "hooks" in raw:
            raw = raw["hooks"]
        return raw, problem

    def mcp_servers(self) -> dict[str, object]:
        """The plugin's MCP servers (`.mcp.json` or the manifest's `mcpServers`)."""
        raw: object = self.manifest.get("mcpServers")
        if raw is None:
            raw = self.root / ".mcp.json"
        if isinstance(raw, str):
            raw = self._inside(raw)
        if isinstance(raw, Path):
            raw = _read_json(raw)[0] if raw.is_file() else None
        if isinstance(raw, Mapping) and isinstance(raw.get("mcpServers"), Mapping):
            raw = raw["mcpServers"]
        if not isinstance(raw, Mapping):
            return {}
        text = json.dumps(dict(raw)).replace(PLUGIN_ROOT_VARIABLE, str(self.root))
        servers = json.loads(text)
        return dict(servers) if isinstance(servers, dict) else {}

    def summary(self) -> str:
        """What the plugin brings, for `agentls doctor`."""
        parts = []
        for kind in ("commands", "agents"):
            count = sum(len(list(f.rglob("*.md"))) for f in self.folders(kind))
            if count:
                parts.append(f"{count} {kind}")
        skills = sum(len(list(f.glob("*/SKILL.md"))) for f in self.folders("skills"))
        if skills:
            parts.append(f"{skills} skills")
        hooks, _ = self.raw_hooks()
        events = (
            sorted(e for e, g in hooks.items() if e in HOOK_EVENTS and g)
            if isinstance(hooks, Mapping)
            else []
        )
        if events:
            parts.append(f"hooks ({', '.join(events)})")
        if servers := self.mcp_servers():
            parts.append(f"MCP servers ({', '.join(sorted(servers))})")
        return f"{self.key} ({self.root}): {', '.join(parts) or 'nothing agentls uses'}"

    def _inside(self, relative: str) -> Path | None:
        path = Path(os.path.realpath(self.root / relative.replace(PLUGIN_ROOT_VARIABLE, ".")))
        return path if path.is_relative_to(os.path.realpath(self.root)) else None


HOOK_EVENTS = frozenset(get_args(HookEvent))


@dataclass
class PluginSet:
    """The enabled plugins found here and every plugin or marketplace that was skipped."""

    plugins: list[Plugin] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)

    def folders(self, kind: str) -> list[tuple[Plugin, Path]]:
        return [(p, folder) for p in self.plugins for folder in p.folders(kind)]

    def report(self) -> list[str]:
        """Lines for `agentls doctor`."""
        lines = [plugin.summary() for plugin in self.plugins]
        return lines + [f"skipped: {why}" for why in self.skipped]


@dataclass(frozen=True)
class _Declared:
    value: Any
    label: str
    user_level: bool


@dataclass
class _Settings:
    enabled: dict[str, _Declared] = field(default_factory=dict)
    marketplaces: dict[str, _Declared] = field(default_factory=dict)
    catalogs: dict[Path, tuple[Any, str]] = field(default_factory=dict)
    """Each marketplace's `marketplace.json`, read once per `load_plugins`."""


def load_plugins(
    roots: Sequence[Path], home: Path | None = None, *, project_trusted: bool | None = None
) -> PluginSet:
    """The enabled plugins of this workspace (`project_trusted`: the workspace-trust
    decision; None assesses it from the remembered answer)."""
    home = home or Path.home()
    result = PluginSet()
    settings = _read_settings(roots, home, result)
    if project_trusted is None and _project_declares(settings):
        project_trusted = _trusted(roots)
    for key, declared in settings.enabled.items():
        if declared.value is not True:
            continue
        if not declared.user_level and not project_trusted:
            result.skipped.append(
                f"{key}: enabled in {declared.label}, a repository's own settings; held back "
                "until you trust this workspace (agentls trust, or enable it in "
                "~/.claude/settings.json)"
            )
            continue
        plugin = _resolve(key, declared, settings, home, bool(project_trusted), result)
        if plugin is not None:
            result.plugins.append(plugin)
    return result


def _read_settings(roots: Sequence[Path], home: Path, result: PluginSet) -> _Settings:
    settings = _Settings()
    known = home / ".claude" / "plugins" / "known_marketplaces.json"
    data, problem = _read_json(known) if known.is_file() else (None, "")
    if problem:
        result.skipped.append(problem)
    for name, entry in (data or {}).items():
        settings.marketplaces[str(name)] = _Declared(entry, str(known), True)
    files = [(home / ".claude" / "settings.json", True)]
    for root in roots:
        files += [(root / ".claude" / "settings.json", False)]
        files += [(root / ".claude" / "settings.local.json", False)]
    for path, user_level in files:
        data, problem = _read_json(path) if path.is_file() else (None, "")
        if problem:
            result.skipped.append(problem)
        if not isinstance(data, Mapping):
            continue
        for key, value in _mapping(data.get("enabledPlugins")).items():
            settings.enabled[str(key)] = _Declared(value, str(path), user_level)
        for name, entry in _mapping(data.get("extraKnownMarketplaces")).items():
            settings.marketplaces[str(name)] = _Declared(entry, str(path), user_level)
    return settings


def _project_declares(settings: _Settings) -> bool:
    declared = [*settings.enabled.values(), *settings.marketplaces.values()]
    return any(not d.user_level and d.value is not False for d in declared)


def _trusted(roots: Sequence[Path]) -> bool:
    from agentls.agent.claude.trust import assess_trust
    from agentls.config.project import load_project_layer

    if not roots:
        return False
    project = load_project_layer(Path(roots[0]))
    return assess_trust(roots, project=project).trusted


def _resolve(
    key: str,
    declared: _Declared,
    settings: _Settings,
    home: Path,
    trusted: bool,
    result: PluginSet,
) -> Plugin | None:
    name, _, market_name = key.partition("@")
    market = settings.marketplaces.get(market_name)
    if not name or market is None:
        result.skipped.append(
            f"{key}: enabled in {declared.label}, but no marketplace {market_name!r} is "
            "known (add it to extraKnownMarketplaces)"
        )
        return None
    if not market.user_level and not trusted:
        result.skipped.append(
            f"{key}: its marketplace {market_name!r} is declared in {market.label}, a "
            "repository's own settings; held back until you trust this workspace"
        )
        return None
    folder = _marketplace_folder(market_name, market, home, result)
    if folder is None:
        result.skipped.append(f"{key}: not loaded: its marketplace {market_name!r} was skipped")
        return None
    if folder not in settings.catalogs:
        settings.catalogs[folder] = _read_json(folder / ".claude-plugin" / "marketplace.json")
    return _plugin_in(folder, settings.catalogs[folder], name, market_name, declared, result)


def _marketplace_folder(name: str, market: _Declared, home: Path, result: PluginSet) -> Path | None:
    entry = _mapping(market.value)
    source = _mapping(entry.get("source"))
    kind = str(source.get("source", ""))
    installed = entry.get("installLocation")
    if isinstance(installed, str) and Path(installed).expanduser().is_dir():
        return Path(installed).expanduser()
    if kind in ("directory", "file"):
        raw = str(source.get("path", ""))
        path = Path(os.path.expanduser(raw))
        if not path.is_absolute():
            base = home if market.user_level else Path(market.label).parent.parent
            path = base / path
        if kind == "file" or path.name == "marketplace.json":
            path = path.parent.parent if path.parent.name == ".claude-plugin" else path.parent
        if (path / ".claude-plugin" / "marketplace.json").is_file():
            return path
        _skip_once(
            result,
            f"marketplace {name!r} ({market.label}): {path} has no .claude-plugin/marketplace.json",
        )
        return None
    clone = home / ".claude" / "plugins" / "marketplaces" / name
    if kind in _FETCHED_KINDS and (clone / ".claude-plugin" / "marketplace.json").is_file():
        return clone
    where = source.get("repo") or source.get("url") or kind or "no source"
    _skip_once(
        result,
        f"marketplace {name!r} ({market.label}) is a {kind or 'unknown'} source ({where}): "
        "agentls does not download marketplaces at run time. Clone it and declare it as "
        '{"source": {"source": "directory", "path": "<folder>"}} in extraKnownMarketplaces '
        "(or add it once with Claude Code's /plugin marketplace add)",
    )
    return None


def _skip_once(result: PluginSet, why: str) -> None:
    """A marketplace's reason, said once however many of its plugins are enabled."""
    if why not in result.skipped:
        result.skipped.append(why)


def _plugin_in(
    folder: Path,
    catalog: tuple[Any, str],
    name: str,
    market: str,
    declared: _Declared,
    result: PluginSet,
) -> Plugin | None:
    data, problem = catalog
    entries = _mapping(data).get("plugins")
    entry = next(
        (e for e in entries or [] if isinstance(e, Mapping) and e.get("name") == name), None
    )
    if entry is None:
        result.skipped.append(
            problem or f"{name}@{market}: marketplace {folder} lists no plugin {name!r}"
        )
        return None
    source = entry.get("source")
    if not isinstance(source, str):
        kind = _mapping(source).get("source", "unknown")
        result.skipped.append(
            f"{name}@{market}: its source is a {kind} source; agentls uses plugins whose "
            "folder is inside a local marketplace (a `./path` source)"
        )
        return None
    base = folder / str(_mapping(entry.get("metadata")).get("pluginRoot", ""))
    root = Path(os.path.realpath(base / source))
    if not root.is_relative_to(os.path.realpath(folder)) or not root.is_dir():
        result.skipped.append(
            f"{name}@{market}: its folder {source!r} is not a folder inside the marketplace"
        )
        return None
    manifest, problem = _read_json(root / ".claude-plugin" / "plugin.json")
    if problem and (root / ".claude-plugin" / "plugin.json").exists():
        result.skipped.append(f"{name}@{market}: {problem}")
        return None
    merged = {**dict(entry), **_mapping(manifest)}
    return Plugin(name, market, root, declared.label, declared.user_level, merged)


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _read_json(path: Path) -> tuple[Any, str]:
    try:
        if path.stat().st_size > MAX_JSON_BYTES:
            return None, f"{path}: larger than 1 MiB; ignored"
        return json.loads(path.read_text(encoding="utf-8")), ""
    except FileNotFoundError:
        return None, ""
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return None, f"{path}: cannot be read ({exc}); ignored"


def commands_with_plugins(roots: Sequence[Path], home: Path | None = None) -> CommandCatalog:
    """The custom commands of the user and the project (`discover_commands`) and those of
    the enabled plugins, named `/plugin:command`."""
    from agentls.agent.claude.prompt_commands import discover_commands

    home = home or Path.home()
    catalog = discover_commands(roots, home)
    for plugin, folder in load_plugins(roots, home).folders("commands"):
        for command in plugin_commands(plugin, folder, catalog):
            if catalog.find(command.name) is None:
                catalog.commands.append(command)
    return catalog


def plugin_commands(plugin: Plugin, folder: Path, catalog: CommandCatalog) -> list[CustomCommand]:
    """One plugin folder's commands, `${CLAUDE_PLUGIN_ROOT}` replaced (problems go to
    `catalog`)."""
    from agentls.agent.claude.prompt_commands import load_command

    root = str(plugin.root)
    found = []
    for path in sorted(folder.rglob("*.md")):
        source: CommandSource = "user" if plugin.user_level else "project"
        command = load_command(path, folder, source, catalog, where=f"plugin {plugin.key}")
        if command is None:
            continue
        found.append(
            dataclasses.replace(
                command,
                name=f"{plugin.name}:{command.name}",
                plugin=plugin.key,
                body=command.body.replace(PLUGIN_ROOT_VARIABLE, root),
                allowed_tools=tuple(
                    t.replace(PLUGIN_ROOT_VARIABLE, root) for t in command.allowed_tools
                ),
            )
        )
    return found
