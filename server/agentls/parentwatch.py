"""`agentls serve` ends when the process that started it dies, even while it is busy.

The CLI starts its server as a child on pipes. When the CLI was killed (SIGKILL, a closed
terminal), the server noticed only at its next read of stdin: one that was busy (a long
tool call, a regex that froze it) kept running, orphaned, until killed by hand. The CLI now
names itself in `PARENT_ENV`; the server then asks Linux for SIGTERM when its parent dies
(`PR_SET_PDEATHSIG`, delivered even while the event loop is blocked; SIGTERM's default
action ends the process, which has no handler for it) and, where there is no prctl, a
daemon thread compares the parent pid once a second.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import signal
import sys
import threading
import time

log = logging.getLogger(__name__)

PARENT_ENV = "AGENTLS_PARENT_PID"
"""Set by the CLI to its pid for the `agentls serve` it starts."""
PR_SET_PDEATHSIG = 1
POLL_S = 1.0


def die_with_parent() -> None:
    """Arm the death signal for the parent named in `PARENT_ENV` (nothing when unset),
    and take the variable out of the environment so no grandchild inherits it."""
    named = os.environ.pop(PARENT_ENV, "")
    if not named.isdigit():
        return
    parent = int(named)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() != parent:  # it died before the signal was armed
        _end()
    threading.Thread(target=_watch, args=(parent,), name="parent-watch", daemon=True).start()


def _watch(parent: int) -> None:
    while os.getppid() == parent:
        time.sleep(POLL_S)
    _end()


def _end() -> None:
    log.error("the process that started this server is gone; exiting")
    os.kill(os.getpid(), signal.SIGTERM)
