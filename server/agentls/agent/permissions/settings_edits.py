"""Edits to the agent's settings inside a shared file: `[tool.agentls]` of `pyproject.toml`.

`.agentls.toml` and `.claude/**` are protected by their path (`policy.PROTECTED_PATHS`):
every edit to them asks. `pyproject.toml` is an ordinary project file — a dependency bump
must not ask — but its `[tool.agentls]` table is agentls's project settings (permissions,
hooks, commands). So a write tool's call on a `pyproject.toml` is judged by its effect: the
table before and after the call, both parsed by the settings loader's own reader
(`agentls.config.project.settings_table`), so every TOML spelling of the same table —
`[tool."agentls"]`, dotted keys `tool.agentls.hooks = …`, an inline `tool = {agentls = …}`
— counts. A change that makes the file unreadable as TOML drops the whole table (its deny
rules too), so it counts as well. When the effect cannot be computed (a tool this module
does not know), the call asks.

The permission policy calls `settings_table_change` from its reasons to ask that no allow
rule overrides (bypass mode denies them), like a protected path.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentls.agent.protocol.messages import JsonObject
from agentls.config.project import PYPROJECT, settings_table
from agentls.errors import WorkspaceError
from agentls.workspace.textio import newline_of, with_newlines

if TYPE_CHECKING:
    from agentls.agent.framework.context import ToolContext

__all__ = ["settings_table_change"]

_PATH_KEYS = ("path", "new_path", "file_path", "paths")
"""The inputs that name files (as `guards.call_subject` reads them)."""
_UNKNOWN = object()
"""The effect of a call this module cannot compute."""


def settings_table_change(tool: str, raw: JsonObject, ctx: ToolContext) -> str | None:
    """Why this write call needs the user's approval because it changes the agent's
    settings table in a `pyproject.toml`; None when it does not touch one."""
    for key, path in _pyproject_inputs(tool, raw, ctx):
        before = _current(ctx, path)
        after = _after(tool, key, raw, ctx, before)
        if after is _UNKNOWN or settings_table(before) != settings_table(_text(after)):
            shown = ctx.workspace.display(path)
            return (
                f"this changes the [tool.agentls] table of {shown}, which holds agentls's "
                "own settings (permissions, hooks, commands); changing it needs the user's "
                "approval"
            )
    return None


def _pyproject_inputs(tool: str, raw: JsonObject, ctx: ToolContext) -> list[tuple[str, Path]]:
    """(input key, resolved path) of every path input naming a pyproject.toml — as written
    or through a symlink."""
    found: list[tuple[str, Path]] = []
    for key in _PATH_KEYS:
        value = raw.get(key)
        texts = value if isinstance(value, list) else [value]
        for text in texts:
            if not isinstance(text, str) or not text.strip():
                continue
            try:
                resolved = ctx.workspace.resolve(text)
            except (WorkspaceError, ValueError, OSError):
                continue
            written = os.path.basename(os.path.normpath(text.strip()))
            if PYPROJECT in (written.lower(), resolved.name.lower()):
                found.append((key, resolved))
    return found


def _current(ctx: ToolContext, path: Path) -> str | None:
    """The file as the session sees it (staged > buffer > disk); None when absent."""
    try:
        if not ctx.workspace.exists(path, ctx.changes):
            return None
        return ctx.workspace.load(path, ctx.changes).text
    except (WorkspaceError, OSError, UnicodeDecodeError):
        return _unreadable()


def _unreadable() -> str:
    return "\0 not text"  # parses as invalid TOML, like the loader sees it


def _after(tool: str, key: str, raw: JsonObject, ctx: ToolContext, before: str | None) -> Any:
    if tool == "write_file" and key == "path":
        return raw.get("content")
    if tool == "edit_file" and key == "path":
        return _edited(before, raw)
    if tool == "delete_file" and key == "path":
        return None
    if tool == "rename_file":
        if key == "path":
            return None  # the file moves away: its table with it
        source = raw.get("path")
        if key == "new_path" and isinstance(source, str):
            try:
                return _current(ctx, ctx.workspace.resolve(source))
            except WorkspaceError:
                return _UNKNOWN
    return _UNKNOWN


def _edited(before: str | None, raw: JsonObject) -> Any:
    """edit_file's result, computed the way the tool does (literal match, else the file's
    line endings); a call the tool will refuse (no match, ambiguous) changes nothing."""
    old, new = raw.get("old_string"), raw.get("new_string")
    if not isinstance(old, str) or not isinstance(new, str):
        return _UNKNOWN
    if old == "":
        return before or new  # the tool creates an empty or missing file, else refuses
    if before is None:
        return None
    newline = newline_of(before)
    for needle in (old, with_newlines(old, newline)):
        count = before.count(needle)
        if count == 0:
            continue
        if count > 1 and not raw.get("replace_all"):
            return before
        replacement = with_newlines(new, newline) if ("\n" in new or "\r" in new) else new
        return before.replace(needle, replacement)
    return before


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) or value is None else _unreadable()
