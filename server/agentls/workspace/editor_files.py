"""Files an editor holds that it does not push to us: read through the editor on demand.

An LSP editor tells the server about every buffer it opens or changes (didOpen/didChange
→ `Workspace.set_buffer`). Other editors only answer when asked: ACP's `fs/read_text_file`
returns a file as the editor has it, unsaved changes included. A host whose editor works
that way gives the runtime an `EditorFiles` (`HostPorts.editor_files`, set on
`Workspace.services.editor_files`; tools see it as `ToolContext.services.editor_files`);
before a call runs, the pipeline asks it for each file the call names
(`agentls.workspace.editor_refresh`) and puts the answer into the buffer overlay, so
tools keep reading synchronously through
`Workspace.load` and see what the user sees.

Why after the permission step: asking the editor for a file is reading it. A call the
pipeline refuses (a secret file, a deny rule, a path outside the workspace) must not make
us read that file, even into memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

__all__ = ["EditorFiles"]


class EditorFiles(Protocol):
    """The editor's side: the text of one file as the editor has it now."""

    async def read(self, session_id: str, path: Path) -> str | None:
        """The editor's text of `path` (an unsaved buffer, else the file); None when the
        editor cannot say (not a text file, no such file, no answer in time). Must not raise
        for those: a failed read means "use the disk"."""
        ...
