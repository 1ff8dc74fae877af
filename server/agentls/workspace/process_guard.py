"""A guard around `run_process` for processes that escape their process group.

Why: `run_process` kills the child's process group, which misses two cases:

1. cancellation that arrives while `asyncio.create_subprocess_exec` is still setting up
   the pipes: the child is already running, but `run_process` never got a handle to stop
   it (seen on a loaded machine: the shell had already started its grandchildren);
2. a descendant that moved to a new session or group (`setsid`, a daemonising tool).

Both still carry the environment they were started with, so each run gets a unique marker
variable, and after the run — finished, timed out or cancelled — every process whose
environment holds the marker is killed. A program that scrubs its whole environment
(`env -i`) and calls `setsid` still escapes; nothing short of cgroups catches that.
Linux only (`/proc`); elsewhere the guard does nothing beyond `run_process`.
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

__all__ = ["MARKER_VAR", "kill_marked", "run_guarded"]

MARKER_VAR = "AGENTLS_RUN_ID"


def kill_marked(marker: str) -> int:
    """SIGKILL every process whose environment holds `MARKER_VAR=marker`; returns how many."""
    proc = Path("/proc")
    if not proc.is_dir():
        return 0
    needle = f"{MARKER_VAR}={marker}".encode()
    own = os.getpid()
    killed = 0
    for entry in proc.iterdir():
        if not entry.name.isdigit() or int(entry.name) == own:
            continue
        try:
            environ = (entry / "environ").read_bytes()
        except OSError:
            continue
        if needle + b"\0" in environ or environ.endswith(needle):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry.name), signal.SIGKILL)
                killed += 1
    return killed


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
    marker = uuid.uuid4().hex
    marked = {**(env or {}), MARKER_VAR: marker}
    try:
        return await run_process(argv, env=marked, **options)
    finally:
        # Synchronous on purpose: it must also run while the task is being cancelled.
        kill_marked(marker)
