"""Entry point of a symbol-index worker process (`python -m agentls.index._worker_main`).

Separate from `worker.py` so running it does not re-execute a module the package already
imported. Workers run at a lower CPU priority (`WORKER_NICE`): a cold build keeps both
cores busy for seconds, and the user's requests meanwhile (a grep's ripgrep, the server's
own answers) must not queue behind it (issue 33).
"""

import contextlib
import os
import sys

from agentls.index.worker import WORKER_NICE, serve

with contextlib.suppress(OSError):
    os.nice(WORKER_NICE)
serve(sys.stdin.buffer, sys.stdout.buffer)
