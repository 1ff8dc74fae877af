"""Starting `agentls serve` for a CLI command, with nothing heavy imported.

A one-shot command (`agentls tool` without `--reuse`) needs the server and its own LSP
client: two interpreters importing pygls and lsprotocol, and the server the agent host
too. Started one after the other they add up (issue 33); `agentls tool` therefore starts
the server first and imports its client while the server starts, on the other core.
`ServerConnection` adopts the started process; it starts one itself when given none.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass
class Spawned:
    """A started `agentls serve --stdio` and the log file it writes."""

    process: asyncio.subprocess.Process
    log_file: Path
    own_log: bool
    """The log file is a temporary one of ours (kept only when it records an error)."""
    adopted: bool = False
    """A `ServerConnection` talks to it (and ends it)."""

    async def discard(self) -> None:
        """End a server nobody connected to (the command failed first), and its log."""
        if self.process.returncode is None:
            with contextlib.suppress(OSError):
                os.killpg(self.process.pid, signal.SIGKILL)  # its own session
            await self.process.wait()
        if self.own_log:
            self.log_file.unlink(missing_ok=True)


async def spawn_server(
    workspace: Path, env: Mapping[str, str] | None = None, log_file: Path | None = None
) -> Spawned:
    """Start the server for `workspace` in its own session (a terminal's Ctrl-C is the
    CLI's to handle), ending with this process (parentwatch). Raises OSError."""
    from agentls import credentials
    from agentls.parentwatch import PARENT_ENV

    own_log = log_file is None
    if log_file is None:
        handle, name = tempfile.mkstemp(prefix="agentls-serve-", suffix=".log")
        os.close(handle)
        log_file = Path(name)
    server_env = dict(credentials.environ() if env is None else env)
    server_env.setdefault("PYTHONUNBUFFERED", "1")
    server_env[PARENT_ENV] = str(os.getpid())  # the server ends when we do
    try:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "agentls",
            "serve",
            "--stdio",
            "--log-file",
            str(log_file),
            stdout=asyncio.subprocess.PIPE,
            stdin=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=server_env,
            cwd=str(workspace),
            start_new_session=True,
        )
    except OSError:
        if own_log:
            log_file.unlink(missing_ok=True)
        raise
    return Spawned(process, log_file, own_log)
