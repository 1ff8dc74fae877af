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
import linecache
import logging
import sys
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)


def freeze_long_lived() -> None:
    """Exclude every object alive now from future collections (cheap: no collection),
    and hand the memory start-up freed back to the system (`release_free_memory`)."""
    drop_generated_sources()
    gc.freeze()
    log.debug("gc: %d objects frozen", gc.get_freeze_count())
    release_free_memory()


GENERATED_SOURCES = ("<attrs generated ", "<cattrs generated ")
"""`linecache` keys of the source of methods that attrs and cattrs generate."""


def drop_generated_sources() -> None:
    """Forget the source text attrs and cattrs keep of the methods they generate.

    They store it in `linecache` only so that a traceback through such a method can show
    its lines; for lsprotocol's ~580 classes that is 1.6–1.7 MB of an idle server's RSS
    (issue 33: ≤ 70 MB). The methods themselves are compiled already and unaffected; a
    traceback through one shows no source line. Dropped once pygls is imported (so that
    the host's imports reuse the memory) and again when start-up is over.
    """
    for key in [k for k in linecache.cache if k.startswith(GENERATED_SOURCES)]:
        linecache.cache.pop(key, None)


def release_free_memory() -> None:
    """Return the C heap's free pages to the system (glibc's `malloc_trim`).

    Start-up allocates and frees a lot (module code compiled or unmarshalled, pydantic
    schemas built, temporary lists of the first walk); glibc keeps freed pages in its
    arenas, and an idle server's RSS then counts them. A no-op where glibc is absent.
    """
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL("libc.so.6")
        libc.malloc_trim(0)
    except (OSError, AttributeError) as exc:  # musl and others: nothing to trim
        log.debug("malloc_trim unavailable: %s", exc)


M_ARENA_MAX = -8
"""glibc's `mallopt` parameter for the number of malloc arenas (malloc.h)."""


def limit_malloc_arenas(arenas: int = 1) -> None:
    """Make glibc's malloc share `arenas` arenas between all threads (call before any
    thread starts). By default each thread that allocates gets its own arena, up to 8 per
    core: the server imports its modules and builds its pydantic validators on worker
    threads, and each of those arenas then keeps its own free pages and fragments, which
    an idle server's RSS counts (0.6 MB here, issue 33). The server's threads mostly hold
    the GIL or wait on I/O, so they hardly contend for the one arena; Python's own small
    objects do not use malloc's arenas at all. A no-op where glibc is absent."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        ctypes.CDLL("libc.so.6").mallopt(M_ARENA_MAX, arenas)
    except (OSError, AttributeError) as exc:
        log.debug("mallopt unavailable: %s", exc)


def freeze_after(wait: Callable[[], object]) -> None:
    """Freeze once `wait` returns (e.g. the index's build), waiting in a daemon thread: an
    exit never waits for it."""

    def run() -> None:
        wait()
        freeze_long_lived()

    threading.Thread(target=run, name="agentls-gc-freeze", daemon=True).start()
