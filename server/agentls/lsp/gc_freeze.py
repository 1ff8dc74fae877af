"""Keep the garbage collector's full collections short in a long-lived server.

After start-up the server holds hundreds of thousands of long-lived objects (modules,
pydantic schemas, the symbol index); every full (generation 2) collection walks all of
them, which took 100–340 ms on a 2-core machine under load, a stall for whatever request
was running (issue 33: stalls while typing). `gc.freeze()` moves the objects alive now to
the permanent generation, which collections skip (the same collection then took 1 ms).
Objects freed later by reference counting are still freed; only garbage cycles that exist
at the moment of the freeze are kept, once.
"""

from __future__ import annotations

import gc
import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


def freeze_long_lived() -> None:
    """Exclude every object alive now from future collections (cheap: no collection)."""
    gc.freeze()
    log.debug("gc: %d objects frozen", gc.get_freeze_count())


def freeze_after(wait: Callable[[], object]) -> None:
    """Freeze once `wait` returns (e.g. the index's build), waiting in a daemon thread: an
    exit never waits for it."""

    def run() -> None:
        wait()
        freeze_long_lived()

    threading.Thread(target=run, name="agentls-gc-freeze", daemon=True).start()
