"""Entry point of a symbol-index worker process (`python -m agentls.index._worker_main`).

Separate from `worker.py` so running it does not re-execute a module the package already
imported.
"""

import sys

from agentls.index.worker import serve

serve(sys.stdin.buffer, sys.stdout.buffer)
