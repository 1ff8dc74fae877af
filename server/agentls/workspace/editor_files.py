"""Files an editor holds that it does not push to us: read through the editor on demand.

An LSP editor tells the server about every buffer it opens or changes (didOpen/didChange
→ `Workspace.set_buffer`). Other editors only answer when asked: ACP's `fs/read_text_file`
returns a file as the editor has it, unsaved changes included. A host whose editor works
that way gives the runtime an `EditorFiles` (`HostPorts.editor_files`, installed with
`use_editor_files`; tools see it as `ToolContext.services.editor_files`); before a call
runs, the pipeline asks it for each file the call names (`refresh_from_editor`) and puts
the answer into the buffer overlay, so tools keep reading synchronously through
`Workspace.load` and see what the user sees.

Why after the permission step: asking the editor for a file is reading it. A call the
pipeline refuses (a secret file, a deny rule, a path outside the workspace) must not make
us read that file, even into memory.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Protocol

from agentls.errors import WorkspaceError
from agentls.workspace.core import Attachment, Workspace

log = logging.getLogger(__name__)

__all__ = ["EditorFiles", "editor_files_of", "refresh_from_editor", "use_editor_files"]


class EditorFiles(Protocol):
    """The editor's side: the text of one file as the editor has it now."""

    async def read(self, session_id: str, path: Path) -> str | None:
        """The editor's text of `path` (an unsaved buffer, else the file); None when the
        editor cannot say (not a text file, no such file, no answer in time). Must not raise
        for those: a failed read means "use the disk"."""
        ...


EDITOR_FILES: Attachment[EditorFiles | None] = Attachment("editor_files")


def use_editor_files(workspace: Workspace, files: EditorFiles | None) -> None:
    """Read named files through `files` from now on (None: stop)."""
    workspace.attach(EDITOR_FILES, files)


def editor_files_of(workspace: Workspace) -> EditorFiles | None:
    return workspace.attached(EDITOR_FILES, lambda: None)


async def refresh_from_editor(
    workspace: Workspace, session_id: str, paths: Iterable[str | Path]
) -> None:
    """Put the editor's text of each file in `paths` into the buffer overlay.

    A file the editor has exactly as on disk leaves no buffer behind (later reads and disk
    changes go straight to the file); one with unsaved changes becomes a buffer until the
    next refresh. Folders, paths outside the workspace and files the editor cannot read are
    left alone.
    """
    files = editor_files_of(workspace)
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
