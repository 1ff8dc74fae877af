"""Leave no MCP server process behind.

The SDK's stdio transport closes the server's stdin, waits, then kills the server's process
group — but only if the server itself does not exit; a server that exits cleanly while a
child of its own keeps running (a `npx` wrapper, a spawned helper) leaves that child orphaned.
Every stdio server therefore starts with a unique marker in its environment, which its
descendants inherit, and after the transport closed we kill whatever still carries it.
Linux only (`/proc/<pid>/environ`); elsewhere the SDK's own group kill is all there is.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import uuid
from pathlib import Path

log = logging.getLogger(__name__)

MARKER_VAR = "AGENTLS_MCP_SERVER_ID"


def new_marker() -> str:
    return uuid.uuid4().hex


def marked_processes(marker: str, proc: Path = Path("/proc")) -> list[int]:
    """Pids of live (non-zombie) processes whose environment carries the marker."""
    needle = f"{MARKER_VAR}={marker}".encode()
    found: list[int] = []
    try:
        entries = os.listdir(proc)
    except OSError:
        return found
    own = os.getpid()
    for entry in entries:
        if not entry.isdigit() or int(entry) == own:
            continue
        try:
            environ = (proc / entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0") and not _is_zombie(proc / entry):
            found.append(int(entry))
    return found


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
    return (proc / str(pid)).exists() and not _is_zombie(proc / str(pid))


def _is_zombie(path: Path) -> bool:
    try:
        stat = (path / "stat").read_text()
    except OSError:
        return True
    # The state follows the parenthesised command name, which may itself contain spaces.
    return stat.rpartition(")")[2].split()[:1] == ["Z"]


def kill_marked(marker: str) -> list[int]:
    """SIGKILL every process still carrying the marker; returns their pids."""
    pids = marked_processes(marker)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    if pids:
        log.warning("killed %d leftover MCP server process(es): %s", len(pids), pids)
    return pids
