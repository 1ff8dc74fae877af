"""Ending a spawned `agentls serve` (or any child with piped stdio) whatever happened.

Tests and benches that drive a server by hand shut it down politely first; this is the
`finally:` part that kills it if it is still running and closes its pipes, so a failing run
leaves no process and no unclosed-file warning behind.
"""

from __future__ import annotations

import subprocess


def end_process(proc: subprocess.Popen[bytes]) -> None:
    """Kill `proc` if it still runs, wait for it, and close its stdin and stdout."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()
