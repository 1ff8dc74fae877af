"""Workspace trust: a repository's own settings that loosen safety wait for the user's yes.

A cloned repository can carry agentls settings (`.agentls.toml`, `[tool.agentls]` in its
`pyproject.toml`) and Claude Code's (`.claude/settings*.json`). Rules that *tighten* (deny
and ask rules, secret patterns, a stricter sandbox, plan mode) apply at once. What
*loosens* — allow rules, hooks, a permission mode other than default/plan, auto delivery,
`lint` / `tests` / `runCommand` commands, `languageServers`, and the project's own
language-server executables (`.venv/bin`, `node_modules/.bin`) — is held back until the
user trusts the workspace once. The answer is remembered per workspace and per content
(a SHA-256 over those settings): a pull that changes them asks again.

This module is the one place that says whether a workspace is trusted:

- `assess_trust` looks at the workspace and returns a `WorkspaceTrust` (its `state`, what
  is held back, the digest the answer is remembered by);
- `TrustStore` remembers answers (a private file: 0600 in a 0700 folder, under the user's
  config folder, next to the MCP approvals);
- `hold_back` is the project settings layer without its loosening parts.

Asking is the host's business (LSP `window/showMessageRequest`, the CLI's terminal or
`--trust`, the `agentls.trust` command). Other features that let a repository start
programs (an `.mcp.json`, say) pass their files to `assess_trust` as `extra` sources, so
one answer covers them.

The user-level `trustProjectSettings` setting (default true) is the switch above this:
`false` holds the loosening parts back always and never asks (state `disabled`).
"""

from __future__ import annotations

import contextlib
import datetime
import hashlib
import json
import logging
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import platformdirs

from agentls.config import ClaudeSettingsFile, Layer, validate_leniently
from agentls.config.base import field_meta
from agentls.config.model import AgentlsSettings
from agentls.config.problems import field_name
from agentls.config.project import PROJECT_FILE, project_file

__all__ = [
    "TRUST_FILE",
    "HeldBack",
    "TrustSource",
    "TrustState",
    "TrustStore",
    "WorkspaceTrust",
    "assess_trust",
    "hold_back",
]

log = logging.getLogger(__name__)

TRUST_FILE = "trusted-workspaces.json"
TrustState = Literal["trusted", "untrusted", "pending", "not_needed", "disabled"]
"""`trusted` / `untrusted`: the user's remembered answer for these settings; `pending`: not
asked yet (or the settings changed since); `not_needed`: nothing in the project loosens
safety; `disabled`: the user's `trustProjectSettings: false`."""

SAFE_MODES = frozenset({"default", "plan"})
"""Permission modes a project may choose without trust (they loosen nothing)."""
SAFE_RUN_MODES = frozenset({"review", "plan"})
TIGHTEN_ONLY = frozenset({"sandbox"})
"""Restricted settings whose project layer can only tighten (merged by
`agentls.sandbox.settings.merge_layers`), so they apply without trust."""
_PERMISSION_KEEP = frozenset({"ask", "deny", "disableBypassPermissionsMode"})
_CLAUDE_FILES = (".claude/settings.json", ".claude/settings.local.json")


@dataclass(frozen=True)
class HeldBack:
    """One thing the project asks for that loosens safety."""

    source: str
    """The file it is in (`.agentls.toml`, `pyproject.toml [tool.agentls]`, …)."""
    setting: str
    """`permissions.allow`, `hooks`, `lint`, …"""
    detail: str = ""

    def describe(self) -> str:
        what = f"{self.setting}: {self.detail}" if self.detail else self.setting
        return f"{what} ({self.source})"


@dataclass(frozen=True)
class TrustSource:
    """A settings file the trust answer covers: its label, its content and what in it is
    held back. Features with files of their own (`.mcp.json`) pass theirs to
    `assess_trust`."""

    label: str
    content: bytes
    held_back: tuple[HeldBack, ...] = ()


@dataclass(frozen=True)
class WorkspaceTrust:
    """The trust state of one workspace (its roots) for its current settings."""

    roots: tuple[Path, ...]
    state: TrustState
    digest: str
    sources: tuple[str, ...] = ()
    held_back: tuple[HeldBack, ...] = ()
    decided_at: str | None = None

    @property
    def trusted(self) -> bool:
        """Whether the project's loosening settings apply."""
        return self.state in ("trusted", "not_needed")

    @property
    def key(self) -> str:
        return workspace_key(self.roots)

    def summary(self) -> str:
        """One line for `agentls doctor` and logs."""
        held = "; ".join(h.describe() for h in self.held_back)
        if self.state == "not_needed":
            if self.sources:
                return "nothing to trust: the project's settings only tighten safety"
            return "nothing to trust: no project settings"
        if self.state == "trusted":
            return f"trusted (since {self.decided_at or 'earlier'}): {held}"
        why = {
            "untrusted": "you chose not to trust it",
            "pending": "not trusted yet",
            "disabled": "trustProjectSettings is false in your settings",
        }[self.state]
        return f"held back ({why}): {held}"

    def question(self) -> str:
        """The trust prompt."""
        items = "; ".join(h.describe() for h in self.held_back[:8])
        more = f"; and {len(self.held_back) - 8} more" if len(self.held_back) > 8 else ""
        where = ", ".join(str(r) for r in self.roots)
        return (
            f"agentls: the workspace {where} has its own settings that loosen safety: "
            f"{items}{more}. They apply only if you trust this workspace (you are asked again "
            "when they change). Trust it?"
        )

    def payload(self) -> dict[str, object]:
        """The `trust` entry of `agentls.status`."""
        return {
            "state": self.state,
            "trusted": self.trusted,
            "workspace": [str(r) for r in self.roots],
            "sources": list(self.sources),
            "held_back": [
                {"source": h.source, "setting": h.setting, "detail": h.detail}
                for h in self.held_back
            ]
            if not self.trusted
            else [],
            "loosening": [h.describe() for h in self.held_back],
            "digest": self.digest,
            "decided_at": self.decided_at,
        }


def workspace_key(roots: Sequence[Path]) -> str:
    return "\n".join(os.path.realpath(r) for r in roots)


class TrustStore:
    """Remembered answers per workspace and settings digest (a private JSON file)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or Path(platformdirs.user_config_dir("agentls")) / TRUST_FILE

    def decision(self, key: str, digest: str) -> tuple[bool, str | None] | None:
        """(trusted, when) for these settings, or None when never answered for them."""
        entry = self._load().get(key)
        if not isinstance(entry, dict) or entry.get("sha256") != digest:
            return None
        trusted = entry.get("trusted")
        when = entry.get("decided_at")
        if not isinstance(trusted, bool):
            return None
        return trusted, when if isinstance(when, str) else None

    def record(self, trust: WorkspaceTrust, trusted: bool) -> WorkspaceTrust:
        """Remember the answer for these settings; returns the new state. Raises OSError
        when the file cannot be written safely (the caller says so: an answer that is not
        remembered must not look remembered)."""
        from agentls.privatefiles import private_dir, write_private

        now = datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds")
        data = self._load()
        data[trust.key] = {
            "sha256": trust.digest,
            "trusted": trusted,
            "decided_at": now,
            "sources": list(trust.sources),
        }
        private_dir(self.path.parent)
        text = json.dumps({"version": 1, "workspaces": data}, indent=2, sort_keys=True)
        write_private(self.path, text + "\n")
        state: TrustState = "trusted" if trusted else "untrusted"
        if trust.state in ("not_needed", "disabled"):
            state = trust.state
        return WorkspaceTrust(trust.roots, state, trust.digest, trust.sources, trust.held_back, now)

    def forget(self, roots: Sequence[Path]) -> bool:
        data = self._load()
        if data.pop(workspace_key(roots), None) is None:
            return False
        from agentls.privatefiles import write_private

        write_private(self.path, json.dumps({"version": 1, "workspaces": data}, indent=2) + "\n")
        return True

    def _load(self) -> dict[str, object]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        found = data.get("workspaces") if isinstance(data, dict) else None
        return dict(found) if isinstance(found, dict) else {}


def assess_trust(
    roots: Sequence[Path],
    *,
    project: Layer,
    trust_project_settings: bool = True,
    read_claude: bool = True,
    store: TrustStore | None = None,
    extra: Sequence[TrustSource] = (),
) -> WorkspaceTrust:
    """The trust state of the workspace for its current settings (never raises for bad
    content: an unreadable file counts by its bytes, and holds nothing back by itself).

    `project` is the whole project layer (`agentls.config.project.load_project_layer`)."""
    root_list = tuple(Path(r) for r in roots)
    sources = _sources(root_list, project, read_claude) + list(extra)
    held = tuple(h for source in sources for h in source.held_back) + _project_programs(root_list)
    digest = _digest(sources)
    labels = tuple(s.label for s in sources)
    if not held:
        return WorkspaceTrust(root_list, "not_needed", digest, labels)
    if not trust_project_settings:
        return WorkspaceTrust(root_list, "disabled", digest, labels, held)
    answer = (store or TrustStore()).decision(workspace_key(root_list), digest)
    if answer is None:
        return WorkspaceTrust(root_list, "pending", digest, labels, held)
    trusted, when = answer
    state: TrustState = "trusted" if trusted else "untrusted"
    return WorkspaceTrust(root_list, state, digest, labels, held, when)


def hold_back(layer: Layer) -> Layer:
    """The project layer without what loosens safety (see the module docstring); its
    tightening parts stay. Driven by the settings' `restricted` metadata, so a setting
    added later and marked restricted is held back too."""
    values: dict[str, object] = {}
    for key, value in layer.values.items():
        kept = _kept(key, value)
        if kept is not None:
            values[key] = kept
    return Layer(layer.source, layer.level, values, list(layer.problems))


def _kept(key: str, value: Any) -> Any:
    name = field_name(AgentlsSettings, key)
    if name is None or not field_meta(AgentlsSettings, name).get("restricted"):
        return value
    if key in TIGHTEN_ONLY:
        return value
    if key == "permissions" and isinstance(value, Mapping):
        kept = {k: v for k, v in value.items() if k in _PERMISSION_KEEP}
        if value.get("defaultMode") in SAFE_MODES:
            kept["defaultMode"] = value["defaultMode"]
        return kept or None
    if key == "permissionMode":
        return value if value in SAFE_MODES else None
    if key == "mode":
        return value if value in SAFE_RUN_MODES else None
    return None


# -- what the workspace holds ---------------------------------------------------------------


def _sources(roots: tuple[Path, ...], project: Layer, read_claude: bool) -> list[TrustSource]:
    found: list[TrustSource] = []
    first = roots[0] if roots else None
    if first is not None:
        ours = _project_source(first, project)
        if ours is not None:
            found.append(ours)
    for root in roots:
        for name in _CLAUDE_FILES:
            claude = _claude_source(root, name, len(roots) > 1)
            if claude is not None:
                # in the digest either way (one answer whatever `readClaudeSettings` says);
                # nothing held back from files that are not read
                found.append(claude if read_claude else TrustSource(claude.label, claude.content))
    found.extend(_command_sources(roots))
    return found


def _command_sources(roots: tuple[Path, ...]) -> list[TrustSource]:
    """The project's custom commands that grant tools (`allowed-tools` in `.claude/commands`
    or `.agentls/commands`): held back until the workspace is trusted, like an allow rule,
    and in the digest, so a changed grant asks again (issue 27: `/review` with
    `allowed-tools: Bash(*)` ran commands in an untrusted repository without a prompt)."""
    from agentls.agent.claude.prompt_commands import discover_commands

    found: list[TrustSource] = []
    for command in discover_commands(roots).commands:
        if command.source != "project" or not command.allowed_tools:
            continue
        label = _relative_label(command.path, roots)
        tools = ", ".join(command.allowed_tools)
        held = HeldBack(label, "allowed-tools", f"/{command.name}: {tools}")
        found.append(TrustSource(label, f"allowed-tools: {tools}".encode(), (held,)))
    return found


def _relative_label(path: Path, roots: tuple[Path, ...]) -> str:
    for root in roots:
        with contextlib.suppress(ValueError):
            rel = path.relative_to(root).as_posix()
            return rel if len(roots) == 1 else f"{root.name}/{rel}"
    return str(path)


def _project_source(root: Path, project: Layer) -> TrustSource | None:
    """Our project file: `.agentls.toml` (its bytes), else `[tool.agentls]` (the table as
    parsed, so an ordinary edit elsewhere in pyproject.toml does not ask again)."""
    located = project_file(root)
    if located is None:
        return None
    path, table = located
    label = path.name if not table else f"{path.name} [tool.agentls]"
    if path.name == PROJECT_FILE:
        content = _read(path)
    else:
        content = json.dumps(table, sort_keys=True, default=str).encode()
    return TrustSource(label, content, _layer_items(project, label))


def _layer_items(layer: Layer, label: str) -> tuple[HeldBack, ...]:
    items: list[HeldBack] = []
    for key, value in layer.values.items():
        kept = _kept(key, value)
        if kept == value:
            continue
        if key == "permissions" and isinstance(value, Mapping):
            if value.get("allow"):
                items.append(HeldBack(label, "permissions.allow", _names(value["allow"])))
            mode = value.get("defaultMode")
            if mode is not None and mode not in SAFE_MODES:
                items.append(HeldBack(label, "permissions.defaultMode", str(mode)))
            for other in sorted(set(value) - _PERMISSION_KEEP - {"allow", "defaultMode"}):
                items.append(HeldBack(label, f"permissions.{other}", _short(value[other])))
            continue
        items.append(HeldBack(label, key, _describe(key, value)))
    return tuple(items)


def _claude_source(root: Path, name: str, several_roots: bool) -> TrustSource | None:
    path = root / name
    if not path.is_file():
        return None
    content = _read(path)
    label = f"{root.name}/{name}" if several_roots else name
    try:
        raw = json.loads(content)
    except ValueError:
        return TrustSource(label, content)
    if not isinstance(raw, dict):
        return TrustSource(label, content)
    checked = validate_leniently(ClaudeSettingsFile, raw, str(path)).model
    items: list[HeldBack] = []
    permissions = checked.permissions
    if permissions is not None:
        if permissions.allow:
            items.append(HeldBack(label, "permissions.allow", _names(permissions.allow)))
        if permissions.additional_directories:
            folders = _names(permissions.additional_directories)
            items.append(HeldBack(label, "permissions.additionalDirectories", folders))
        mode = permissions.default_mode
        if mode is not None and mode not in SAFE_MODES:
            items.append(HeldBack(label, "permissions.defaultMode", mode))
    if checked.hooks:
        items.append(HeldBack(label, "hooks", _hooks(checked.model_dump(by_alias=True)["hooks"])))
    for other in sorted(checked.model_fields_set - {"permissions", "hooks", "sandbox"}):
        value = getattr(checked, other)
        if value:
            items.append(HeldBack(label, other, _short(value)))
    return TrustSource(label, content, tuple(items))


def _project_programs(roots: tuple[Path, ...]) -> tuple[HeldBack, ...]:
    """Language servers code intelligence would start from the project's own folders
    (`.venv/bin`, `node_modules/.bin`): programs a repository can ship."""
    try:
        from agentls.codeintel.discovery import all_plans
        from agentls.codeintel.settings import LanguageServerSettings

        plans = all_plans(list(roots), LanguageServerSettings(trust_project=True))
    except Exception:
        log.exception("cannot look for the project's language servers")
        return ()
    real_roots = [os.path.realpath(r) for r in roots]
    found: dict[tuple[str, str], list[str]] = {}
    for plan in plans:
        if not plan.argv:
            continue
        program = os.path.realpath(plan.argv[0])
        if any(program.startswith(r.rstrip(os.sep) + os.sep) for r in real_roots):
            found.setdefault((plan.origin, plan.name), []).append(plan.language)
    programs = [
        HeldBack(origin, "language server", f"{name} ({', '.join(languages)})")
        for (origin, name), languages in found.items()
    ]
    # What the servers that would start load or run from the repository once trusted
    # (before trust they start without it: agentls.langservers.hardening).
    from agentls.codeintel.project_code import project_code_in

    available = {plan.name for plan in plans if plan.argv}
    loaded = [
        HeldBack(path, "language server code", f"{server} would load {what}")
        for server, path, what in project_code_in(roots, available)
    ]
    return tuple(programs + loaded)


def _digest(sources: Sequence[TrustSource]) -> str:
    digest = hashlib.sha256()
    for source in sources:
        digest.update(source.label.encode() + b"\0")
        digest.update(hashlib.sha256(source.content).hexdigest().encode() + b"\n")
    return digest.hexdigest()


def _read(path: Path) -> bytes:
    with contextlib.suppress(OSError):
        return path.read_bytes()
    return b"<unreadable>"


def _names(values: object) -> str:
    if isinstance(values, list | tuple):
        return ", ".join(str(v) for v in values[:6]) + (", …" if len(values) > 6 else "")
    return _short(values)


def _hooks(value: object) -> str:
    """`PreToolUse: ./check.sh, …` — the events and the commands that would run."""
    if not isinstance(value, Mapping):
        return _short(value)
    parts = []
    for event, groups in value.items():
        commands = [
            str(hook.get("command") or hook.get("url") or hook.get("prompt"))
            for group in groups or []
            if isinstance(group, Mapping)
            for hook in group.get("hooks") or []
            if isinstance(hook, Mapping)
        ]
        parts.append(f"{event}: {_names(commands)}")
    return "; ".join(parts)


def _describe(key: str, value: object) -> str:
    if key == "hooks":
        return _hooks(value)
    if key in ("lint", "tests") and isinstance(value, list):
        commands = [e.get("command", ()) for e in value if isinstance(e, dict)]
        return _names([" ".join(map(str, command)) for command in commands])
    if key == "languageServers" and isinstance(value, Mapping):
        return _names(
            [
                f"{lang}: {' '.join(map(str, (cfg or {}).get('command', ())))}"
                for lang, cfg in value.items()
            ]
        )
    if key == "allowedTools":
        return _names(value)
    return _short(value)


def _short(value: object, limit: int = 120) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"
