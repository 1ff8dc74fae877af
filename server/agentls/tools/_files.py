"""Helpers shared by the file tools: path checks, the base state of a file, snippets.

Kept in one place so every file tool refuses paths the same way, records the same base
(text + buffer version) when it stages a change, and hands it to the edit sink alike.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from agentls.agent.framework.context import ToolContext
from agentls.errors import WorkspaceError
from agentls.workspace.ignore import VCS_DIRS
from agentls.workspace.read_roots import resolve_readable
from agentls.workspace.textio import number_line, split_lines
from agentls.workspace.view import LayeredView

MAX_LINE_CHARS = 2000
"""Longer lines are cut in read_file output (minified code would flood the context)."""


def path_problem(ctx: ToolContext, *paths: str) -> str | None:
    """The refusal message for the first path outside the workspace, if any (for
    `validate_input`, so a bad path is refused before any permission prompt)."""
    for raw in paths:
        try:
            ctx.workspace.resolve(raw)
        except WorkspaceError as exc:
            return str(exc)
    return None


def read_path_problem(ctx: ToolContext, *paths: str) -> str | None:
    """`path_problem` for the read tools: folders outside the workspace that the settings
    make readable count too (`agentls.workspace.read_roots`)."""
    for raw in paths:
        try:
            resolve_readable(ctx.workspace, raw)
        except WorkspaceError as exc:
            return str(exc)
    return None


def write_problem(ctx: ToolContext, *paths: str) -> str | None:
    """`path_problem`, plus: never change version-control metadata (.git/ and the like)."""
    problem = path_problem(ctx, *paths)
    if problem is not None:
        return problem
    for raw in paths:
        path = ctx.workspace.resolve(raw)
        display = ctx.workspace.display(path)
        if any(part in VCS_DIRS for part in display.split("/")):
            return (
                f"Refusing to change {display}: it is version-control metadata. Change the "
                "project's files instead."
            )
    return None


@dataclass(frozen=True)
class FileState:
    """A file as a write tool finds it, recorded as the base of the staged change."""

    exists: bool
    text: str | None
    """None when missing or not readable as text (binary, not UTF-8, too large)."""
    version: int | None


def file_state(ctx: ToolContext, path: Path) -> FileState:
    ws = ctx.workspace
    if not ws.is_file(path, ctx.changes):
        return FileState(False, None, None)
    try:
        snap = ws.load(path, ctx.changes)
    except WorkspaceError:
        return FileState(True, None, ws.version_of(path))
    return FileState(True, snap.text, snap.version)


async def after_staging(ctx: ToolContext, result: str, checked: Path | None = None) -> str:
    """A write tool's result once its change is staged: the problems the change introduced
    (`checked`: the file the tool changed; see `agentls.tools.after_edit`),
    then handed to the host's edit sink, which delivers it now when the run delivers edits
    as they happen (auto mode), so the model hears whether the editor applied it before its
    next call starts."""
    notes = []
    if checked is not None:
        from agentls.tools.after_edit import problems_note

        notes.append(await problems_note(ctx, checked))
    notes.append(await ctx.edits.staged(ctx))
    note = "\n\n".join(n for n in notes if n)
    return f"{result}\n\n{note}" if note else result


def refuse_folder_conflicts(ctx: ToolContext, path: Path) -> None:
    """A file cannot be created where a folder is, nor below something that is a file."""
    ws = ctx.workspace
    if ws.is_dir(path, ctx.changes):
        raise WorkspaceError(f"{ws.display(path)} is a directory; give a file path instead")
    for parent in path.parents:
        if not ws.contains(parent):
            break
        if ws.is_file(parent, ctx.changes):
            raise WorkspaceError(
                f"Cannot create {ws.display(path)}: {ws.display(parent)} is a file, not a folder"
            )


def relative_to(view: LayeredView, folder: Path | None) -> Callable[[str], str]:
    """How globs see a listed path: relative to the searched folder (posix), or to the
    workspace root when no folder was given; just the name when `folder` is a file."""
    if folder is None:
        return view.workspace.display
    if not view.is_dir(folder):
        return lambda path: os.path.basename(path)
    prefix = len(str(folder).rstrip(os.sep)) + 1

    def relative(path: str) -> str:
        return path[prefix:].replace(os.sep, "/")

    return relative


def cut_line(text: str, limit: int = MAX_LINE_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [line cut: {len(text)} chars]"


def snippet(text: str, first: int, last: int, context: int = 3) -> str:
    """Lines `first-context`..`last+context` of `text`, numbered like read_file."""
    lines = split_lines(text)
    start = max(1, first - context)
    end = min(len(lines), last + context)
    return "\n".join(number_line(n, cut_line(lines[n - 1], 300)) for n in range(start, end + 1))


def count_lines(text: str) -> int:
    return len(split_lines(text))
