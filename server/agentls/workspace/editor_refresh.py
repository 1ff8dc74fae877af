"""Before a call runs: the editor's text of the files it names, into the buffer overlay.

For editors that answer only when asked (`agentls.workspace.editor_files`); the pipeline
calls `refresh_from_editor` after the permission step. Kept apart from the `EditorFiles`
protocol so the workspace's typed services (`agentls.workspace.services`) can name that
protocol without importing `Workspace`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path

from agentls.errors import WorkspaceError
from agentls.workspace.core import Workspace

log = logging.getLogger(__name__)

__all__ = ["refresh_from_editor"]


async def refresh_from_editor(
    workspace: Workspace, session_id: str, paths: Iterable[str | Path]
) -> None:
    """Put the editor's text of each file in `paths` into the buffer overlay.

    A file the editor has exactly as on disk leaves no buffer behind (later reads and disk
    changes go straight to the file); one with unsaved changes becomes a buffer until the
    next refresh. Folders, paths outside the workspace and files the editor cannot read are
    left alone.
    """
    files = workspace.services.editor_files
    if files is None:
        return
    for path in _named_files(workspace, paths):
        try:
            text = await files.read(session_id, path)
        except Exception:
            log.exception("reading %s through the editor failed", path)
            continue
        if text is None:
            continue
        current = workspace.buffer(path)
        if text == _disk_text(path):
            workspace.close_buffer(path)
        elif current is None or current.text != text:
            workspace.set_buffer(path, text, None)


def _named_files(workspace: Workspace, paths: Iterable[str | Path]) -> list[Path]:
    """The paths inside the workspace that are not folders, resolved, each once."""
    found: list[Path] = []
    for raw in dict.fromkeys(str(p) for p in paths):
        try:
            path = workspace.resolve(raw)
        except WorkspaceError:
            continue
        if not os.path.isdir(path) and path not in found:
            found.append(path)
    return found


def _disk_text(path: Path) -> str | None:
    try:
        with path.open(encoding="utf-8", newline="") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None
