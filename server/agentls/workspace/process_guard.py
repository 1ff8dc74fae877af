"""A guard around `run_process` for processes that escape their process group.

Why: `run_process` kills the child's process group (and, unconfined on Linux, the
supervisor kills what it adopted), which can still miss:

1. cancellation that arrives while `asyncio.create_subprocess_exec` is still setting up
   the pipes: the child is already running, but `run_process` never got a handle to stop
   it (seen on a loaded machine: the shell had already started its grandchildren);
2. a descendant that moved to a new session or group (`setsid`, a daemonising tool) and
   outlived a supervisor that was itself SIGKILLed.

Both still carry the environment they were started with, so each run gets a unique marker
variable, and after the run — finished, timed out or cancelled — every process whose
environment holds the marker is killed. `kill_marked` is the one implementation of this
search; the MCP client uses it for its servers too (with its own variable). Linux only
(`/proc`); elsewhere the guard does nothing beyond `run_process`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import uuid
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentls.workspace.process import ProcessResult, run_process

__all__ = ["MARKER_VAR", "kill_marked", "marked_processes", "new_marker", "run_guarded"]

MARKER_VAR = "AGENTLS_RUN_ID"


def new_marker() -> str:
    return uuid.uuid4().hex


def marked_processes(marker: str, var: str = MARKER_VAR, proc: Path = Path("/proc")) -> list[int]:
    """Pids of live (non-zombie) processes whose environment holds `var=marker`."""
    needle = f"{var}={marker}".encode()
    try:
        entries = os.listdir(proc)
    except OSError:
        return []
    own = os.getpid()
    found: list[int] = []
    for entry in entries:
        if not entry.isdigit() or int(entry) == own:
            continue
        try:
            environ = (proc / entry / "environ").read_bytes()
        except OSError:
            continue
        if needle in environ.split(b"\0") and not is_zombie(proc / entry):
            found.append(int(entry))
    return found


def is_zombie(path: Path) -> bool:
    """Whether the process at `/proc/<pid>` is gone or a zombie (`path` is that folder)."""
    try:
        stat = (path / "stat").read_text()
    except OSError:
        return True
    # The state follows the parenthesised command name, which may itself contain spaces.
    return stat.rpartition(")")[2].split()[:1] in (["Z"], ["X"])


def kill_marked(marker: str, var: str = MARKER_VAR) -> list[int]:
    """SIGKILL every process still carrying `var=marker`; returns their pids."""
    pids = marked_processes(marker, var)
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
    return pids


async def run_guarded(
    argv: list[str],
    *,
    env: Mapping[str, str] | None = None,
    **options: Any,
) -> ProcessResult:
    """`run_process` with the marker set, and every marked leftover killed afterwards.

    Takes the same keyword options as `run_process`; cancellation propagates unchanged
    (`ProcessCancelled` when the runner stopped the group, else `CancelledError`).
    """
    marker = new_marker()
    marked = {**(env or {}), MARKER_VAR: marker}
    try:
        return await run_process(argv, env=marked, **options)
    finally:
        # Synchronous on purpose: it must also run while the task is being cancelled.
        kill_marked(marker)
