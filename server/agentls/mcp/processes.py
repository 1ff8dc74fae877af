"""Leave no MCP server process behind.

The SDK's stdio transport closes the server's stdin, waits, then kills the server's process
group — but only if the server itself does not exit; a server that exits cleanly while a
child of its own keeps running (a `npx` wrapper, a spawned helper) leaves that child orphaned.
Every stdio server therefore starts with a unique marker in its environment, which its
descendants inherit, and after the transport closed we kill whatever still carries it (the
search is `process_guard`'s, shared with the process runner). Linux only
(`/proc/<pid>/environ`); elsewhere the SDK's own group kill is all there is.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from agentls.workspace import process_guard
from agentls.workspace.process_guard import is_zombie, new_marker

__all__ = [
    "MARKER_VAR",
    "kill_marked",
    "marked_processes",
    "new_marker",
    "process_alive",
    "server_pid",
]

log = logging.getLogger(__name__)

MARKER_VAR = "AGENTLS_MCP_SERVER_ID"


def marked_processes(marker: str, proc: Path = Path("/proc")) -> list[int]:
    """Pids of live (non-zombie) processes of the MCP server started with `marker`."""
    return process_guard.marked_processes(marker, MARKER_VAR, proc)


def server_pid(marker: str, proc: Path = Path("/proc")) -> int | None:
    """The marked process we started ourselves (its parent is this process), if any."""
    own = os.getpid()
    for pid in marked_processes(marker, proc):
        try:
            fields = (proc / str(pid) / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if len(fields) > 1 and fields[1] == str(own):
            return pid
    return None


def process_alive(pid: int, proc: Path = Path("/proc")) -> bool:
    """Alive and not a zombie (a dead child our event loop has not reaped yet)."""
    return (proc / str(pid)).exists() and not is_zombie(proc / str(pid))


def kill_marked(marker: str) -> list[int]:
    """SIGKILL every process still carrying the marker; returns their pids."""
    pids = process_guard.kill_marked(marker, MARKER_VAR)
    if pids:
        log.warning("killed %d leftover MCP server process(es): %s", len(pids), pids)
    return pids
