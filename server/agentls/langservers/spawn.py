"""The one place a language-server process is started.

Every server agentls runs goes through `spawn_language_server`, so a sandbox can wrap them
all in one place later. The process gets its own session (its process group can be ended
as a whole: servers fork helpers — tsserver, typing installers), the workspace root as its
working directory, and an environment without the agent's credentials or other
secret-looking variables. Its stderr is drained into a short tail kept for crash reports:
an unread pipe would block a chatty server once it fills up.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentls.workspace.process import scrub_env

STDERR_TAIL_LINES = 20


@dataclass
class SpawnedServer:
    """A running server process and the tail of what it wrote to stderr."""

    process: asyncio.subprocess.Process
    argv: tuple[str, ...]
    stderr_tail: deque[str] = field(default_factory=lambda: deque(maxlen=STDERR_TAIL_LINES))
    _drain: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    def last_error_line(self) -> str:
        """The last non-empty stderr line (for "it crashed: …" messages)."""
        for line in reversed(self.stderr_tail):
            if line.strip():
                return line.strip()[:300]
        return ""

    def kill_group(self, sig: int = signal.SIGKILL) -> None:
        """Signal the server's whole process group (it leads its own session)."""
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.process.pid, sig)


async def spawn_language_server(
    argv: Sequence[str], *, cwd: Path, extra_env: Mapping[str, str] | None = None
) -> SpawnedServer:
    """Start `argv` with stdio pipes; raises `OSError` when it cannot be started."""
    env = scrub_env()
    env.update(extra_env or {})
    process = await asyncio.create_subprocess_exec(
        *argv,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=str(cwd),
        env=env,
        start_new_session=True,
    )
    spawned = SpawnedServer(process, tuple(argv))
    spawned._drain = asyncio.get_running_loop().create_task(_drain(spawned))
    return spawned


async def _drain(spawned: SpawnedServer) -> None:
    stream = spawned.process.stderr
    if stream is None:
        return
    pending = b""
    while True:
        try:
            chunk = await stream.read(65536)
        except OSError:
            return
        if not chunk:
            break
        *lines, pending = (pending + chunk).split(b"\n")
        pending = pending[-4096:]
        for line in lines:
            spawned.stderr_tail.append(line[:4096].decode("utf-8", "replace").rstrip())
    if pending:
        spawned.stderr_tail.append(pending.decode("utf-8", "replace").rstrip())
