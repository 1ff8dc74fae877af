"""Folders outside the workspace that the read tools may reach.

What is allowed outside the workspace, and what is not:

- **read** (`read_file`, `grep`, `list_files`): files under a folder of
  `permissions.additionalDirectories` (without asking), or named by a `Read(~/…)` /
  `Read(//abs/…)` allow rule (the rule decides which files run without asking; others
  there are asked for). Paths must be absolute there (`~` is not expanded by the tools).
  Secret files stay refused there as everywhere.
- **never**: edits, renames, deletions, code intelligence or staged changes outside the
  workspace roots. Shell commands see the rest of the system read-only in the sandbox
  anyway; the read-only command set (`agentls.agent.rules.readonly`) reads only inside
  the workspace and `additionalDirectories`.

The runtime sets the folders (`Workspace.services.read_roots`) whenever the settings are (re)loaded;
the tools resolve paths with `resolve_readable`, which refuses everything else with a
message naming the settings.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from agentls.errors import WorkspaceError
from agentls.workspace.core import Workspace

__all__ = ["resolve_readable"]


def resolve_readable(workspace: Workspace, path: str | Path) -> Path:
    """`Workspace.resolve`, or a path (absolute, symlinks resolved) inside a read root."""
    try:
        return workspace.resolve(path)
    except WorkspaceError as error:
        folders = workspace.services.read_roots
        raw = str(path).strip()
        if not folders or not os.path.isabs(raw):
            raise _with_hint(error, folders) from None
        real = Path(os.path.realpath(raw))
        if any(real == f or real.is_relative_to(f) for f in folders):
            return real
        raise _with_hint(error, folders) from None


def _with_hint(error: WorkspaceError, folders: Sequence[Path]) -> WorkspaceError:
    if folders:
        shown = ", ".join(str(f) for f in folders)
        hint = (
            f" Outside it, only these folders can be read (by absolute path; the user's "
            f"`permissions.additionalDirectories` and `Read(…)` rules): {shown}."
        )
    else:
        hint = (
            " Folders outside it can be read when the user lists them in "
            "`permissions.additionalDirectories` or allows them with a `Read(//path/**)` rule."
        )
    return WorkspaceError(f"{error}{hint}")
