"""Noticing changes on disk when no one reports them: a cheap stat walk, repeated.

A `git checkout`, a formatter or another editor changes files behind the agent's back.
Editors that watch files say so (LSP `didChangeWatchedFiles`); for the others the host
polls: every few seconds the workspace's files (ignore rules applied) are stat'ed in a
thread and each created, modified or deleted file goes to `Workspace.notify_disk_change`,
which re-indexes that file only.

The first pass does not `stat` every file: at start the poll only lists the files (the
walk, which a new server has just done: served from its change feed), and the first
`stat` pass, one interval later, reports each file created or deleted since that listing
and each file whose mtime or ctime is not older than the start (less the racy window: a
file's timestamp may lag the clock by a tick). A server that answers one call and exits
(`agentls tool`) never stats the tree, and a new server's first search no longer competes
with a `stat` of every file (issue 33: the first grep in a new server).
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from agentls.workspace.core import Workspace
from agentls.workspace.dircache import RACY_WINDOW_NS

__all__ = [
    "POLL_SECONDS",
    "Snapshot",
    "changed_paths",
    "changed_since",
    "poll_disk",
    "snapshot",
]

POLL_SECONDS = 10.0
"""Default poll interval; `AGENTLS_DISK_POLL_SECONDS` overrides it."""
Snapshot = dict[str, tuple[int, int]]


def snapshot(workspace: Workspace) -> Snapshot:
    """Each file's (mtime, size)."""
    return _stat_walk(workspace)[0]


def _stat_walk(workspace: Workspace) -> tuple[Snapshot, dict[str, int]]:
    """Each file's (mtime, size), and the later of its mtime and ctime."""
    found: Snapshot = {}
    latest: dict[str, int] = {}
    for name in workspace.file_strs():
        try:
            stat = os.stat(name)
        except OSError:
            continue
        found[name] = (stat.st_mtime_ns, stat.st_size)
        latest[name] = max(stat.st_mtime_ns, stat.st_ctime_ns)
    return found, latest


def changed_since(listed: frozenset[str], latest: dict[str, int], since_ns: int) -> list[str]:
    """Files created, deleted or changed since a listing taken at `since_ns` without
    stats: `latest` holds each file's later of mtime and ctime now (a tool that sets an
    mtime back cannot set the ctime back)."""
    changed = [name for name, at in latest.items() if name not in listed or at >= since_ns]
    return changed + [name for name in listed if name not in latest]


def changed_paths(before: Snapshot, after: Snapshot) -> list[str]:
    """Created, modified and deleted files between two snapshots."""
    changed = [name for name, stamp in after.items() if before.get(name) != stamp]
    return changed + [name for name in before if name not in after]


async def poll_disk(workspace: Workspace, interval: float = POLL_SECONDS) -> None:
    """Report disk changes to the workspace forever (cancel the task to stop)."""
    since = time.time_ns() - RACY_WINDOW_NS
    listed = await asyncio.to_thread(lambda: frozenset(workspace.file_strs()))
    await asyncio.sleep(interval)
    previous, latest = await asyncio.to_thread(_stat_walk, workspace)
    for name in changed_since(listed, latest, since):
        workspace.notify_disk_change(Path(name))
    while True:
        await asyncio.sleep(interval)
        current = await asyncio.to_thread(snapshot, workspace)
        for name in changed_paths(previous, current):
            workspace.notify_disk_change(Path(name))
        previous = current
