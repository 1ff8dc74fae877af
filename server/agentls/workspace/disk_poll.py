"""Noticing changes on disk when no one reports them: a cheap stat walk, repeated.

A `git checkout`, a formatter or another editor changes files behind the agent's back.
Editors that watch files say so (LSP `didChangeWatchedFiles`); for the others the host
polls: every few seconds the workspace's files (ignore rules applied) are stat'ed in a
thread and each created, modified or deleted file goes to `Workspace.notify_disk_change`,
which re-indexes that file only.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from agentls.workspace.core import Workspace

__all__ = ["POLL_SECONDS", "Snapshot", "changed_paths", "poll_disk", "snapshot"]

POLL_SECONDS = 10.0
"""Default poll interval; `AGENTLS_DISK_POLL_SECONDS` overrides it."""
Snapshot = dict[str, tuple[int, int]]


def snapshot(workspace: Workspace) -> Snapshot:
    """Each file's (mtime, size)."""
    found: Snapshot = {}
    for name in workspace.file_strs():
        try:
            stat = os.stat(name)
        except OSError:
            continue
        found[name] = (stat.st_mtime_ns, stat.st_size)
    return found


def changed_paths(before: Snapshot, after: Snapshot) -> list[str]:
    """Created, modified and deleted files between two snapshots."""
    changed = [name for name, stamp in after.items() if before.get(name) != stamp]
    return changed + [name for name in before if name not in after]


async def poll_disk(workspace: Workspace, interval: float = POLL_SECONDS) -> None:
    """Report disk changes to the workspace forever (cancel the task to stop)."""
    previous = await asyncio.to_thread(snapshot, workspace)
    while True:
        await asyncio.sleep(interval)
        current = await asyncio.to_thread(snapshot, workspace)
        for name in changed_paths(previous, current):
            workspace.notify_disk_change(Path(name))
        previous = current
