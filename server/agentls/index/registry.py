"""`index_for(workspace)`: the one `SymbolIndex` of a `Workspace`, built and kept current.

The index itself knows nothing about workspaces; this module wires them: the first call
starts a background build over `workspace.iter_files()` (ignore rules applied, persistent
cache reused), and a workspace listener re-indexes files whose buffer or disk content
changes. Updates are queued and applied on a small thread, coalesced, so the editor's event
loop never parses. The index is attached to the workspace (`Workspace.attached`).
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Final

from agentls.index.depcache import DepCache, default_dir
from agentls.index.languages import language_for
from agentls.index.store import default_cache_path
from agentls.index.symbol_index import Candidates, SymbolIndex
from agentls.workspace import ripgrep
from agentls.workspace.core import Attachment

if TYPE_CHECKING:
    from agentls.workspace.core import Workspace

log = logging.getLogger(__name__)


class _Default:
    pass


DEFAULT_CACHE: Final = _Default()
"""`index_for(cache_path=DEFAULT_CACHE)`: the per-workspace file under the user cache dir."""

COALESCE_S = 0.02
"""didChange notifications closer together than this are applied as one batch."""
COALESCE_MAX_S = 0.1
"""A steady stream of changes is still applied at least this often."""
FLUSH_IDLE_S = 1.0
"""The persistent cache is written once no change came for this long."""
THREAD_IDLE_S = 30.0
CHEAP_EDITS = 2
CHEAP_EDIT_CHARS = 400_000
"""Queued edits a query applies in the event loop: this many open documents of at most
this size each, re-parsed incrementally (~2 ms for a 3k-line file; a fallback to a whole
re-extraction costs ~4 ms per 100 kB)."""
DRAIN_WAIT_S = 2.0


class _IndexService:
    """What `index_for` attaches to a workspace: the index and its change feed."""

    def __init__(self, workspace: Workspace, cache_path: Path | None, shared: Path | None) -> None:
        self.index = SymbolIndex(cache_path, DepCache(shared) if shared is not None else None)
        self.index.excluded = _secret_filter(workspace)
        self.index.roots = tuple(str(root) for root in workspace.roots)
        self.index.candidates = _text_finder()
        self.updater = _Updater(workspace, self.index)
        self.index.before_query = self.updater.drain
        self.index.updates_waiting = self.updater.waiting
        self._unsubscribe = workspace.add_listener(self.updater.changed)

    def start(self, workspace: Workspace, workers: int) -> None:
        self.index.start_build(  # the workers read the disk
            workspace.iter_files(), workers=workers, first=workspace.open_paths()
        )
        self.updater.after_build(workspace)

    def close(self) -> None:
        self._unsubscribe()
        self.index.close()


_INDEX: Final = Attachment[_IndexService]("symbol index")


def _secret_filter(workspace: Workspace) -> Callable[[str], bool]:
    """Whether the workspace's current secret rules (or read-deny rules) hide a path: such
    files are never parsed, cached or shown. The rules are looked up on every call, as
    settings may replace them (`Workspace.services.secrets`); answers are memoised by the
    matcher."""
    ref = weakref.ref(workspace)

    def excluded(path: str) -> bool:
        ws = ref()
        return ws is not None and ws.services.secrets.blocks_reading(path, resolve=False)

    return excluded


_DEFINES = (
    r"(?i)\b(?:class|def|function|interface|type|enum|struct|trait|fn|func|module|"
    r"namespace|const|let|var|val|object|record|macro)\s+\*?"
)
"""What precedes a name where it is defined in most languages: files where the query's
name follows one of these are parsed first."""


def _text_finder() -> Candidates | None:
    """`SymbolIndex.candidates` by ripgrep: the files where a name follows a defining
    keyword (any case), in the order given; only when there are none, the files that
    mention it at all. One rg pass over the unparsed files in the usual case (a query
    during a cold build shares two cores with the build). None without rg."""
    rg = ripgrep.find_ripgrep()
    if rg is None:
        return None

    def matching(pattern: str, paths: list[str], fixed: bool) -> set[str]:
        runs = ripgrep.search(
            rg, pattern, paths, ignore_case=True, max_count=1, fixed_strings=fixed
        )
        return {hit.path for run in runs for hit in run.files}

    def find(literal: str, paths: list[str]) -> list[str]:
        defining = matching(_DEFINES + literal.replace("$", "\\$"), paths, False)
        if defining:
            return [path for path in paths if path in defining]
        mentioning = matching(literal, paths, True)
        return [path for path in paths if path in mentioning]

    return find


def index_for(
    workspace: Workspace,
    *,
    cache_path: Path | _Default | None = DEFAULT_CACHE,
    shared_cache: Path | _Default | None = DEFAULT_CACHE,
    workers: int = 2,
    hold_persistence: bool = False,
) -> SymbolIndex:
    """The workspace's index, created and built in the background on first use.

    `cache_path`, `shared_cache` (the folder of dependency symbols shared across
    workspaces, see `depcache`; by default the user's when `cache_path` is the default too,
    else none), `workers` and `hold_persistence` (see `SymbolIndex.hold_persistence`)
    only matter on that first call. The returned index may still
    be building: check `is_ready`, or read `partial` on results. It lives on the workspace
    (closed by `Workspace.close`, or `forget`).
    """
    created: list[_IndexService] = []

    def create() -> _IndexService:
        path = (
            default_cache_path(workspace.roots) if isinstance(cache_path, _Default) else cache_path
        )
        if isinstance(shared_cache, _Default):
            shared = default_dir() if isinstance(cache_path, _Default) else None
        else:
            shared = shared_cache
        created.append(_IndexService(workspace, path, shared))
        if hold_persistence:
            created[0].index.hold_persistence()
        return created[0]

    service = workspace.attached(_INDEX, create)
    if created:
        service.start(workspace, workers)
    return service.index


class _Updater:
    """Applies queued file changes to the index, newest content wins.

    A change is applied on the updater's own thread as soon as it arrives; changes that
    come faster than `COALESCE_S` apart (a burst of didChange) are applied together once
    they pause. A query does not wait for either: `drain` applies whatever is queued in
    the query's own thread first, so an edit is visible to the very next request. The
    persistent cache is written once the queue has been idle for `FLUSH_IDLE_S`.
    """

    def __init__(self, workspace: Workspace, index: SymbolIndex) -> None:
        self._workspace = weakref.ref(workspace)
        self._index = index
        self._pending: set[Path] = set()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._last_change = 0.0
        self._busy = 0
        """Batches being applied right now (a query waits for them: they may hold its edit)."""
        self._unflushed = False

    def after_build(self, workspace: Workspace) -> None:
        """Open buffers may differ from disk (the build reads disk): queue them."""
        for path in workspace.open_paths():
            self.changed(path)

    def changed(self, path: Path) -> None:
        if language_for(path) is None:
            return
        with self._cond:
            self._pending.add(path)
            self._last_change = time.monotonic()
            self._cond.notify_all()
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="symbol-index-updates", daemon=True
                )
                self._thread.start()

    def waiting(self, besides: str | None) -> list[str] | None:
        """The queued changes of files other than `besides` when a query may apply them
        itself in the event loop: at most `CHEAP_EDITS` open documents whose next
        re-index is incremental (a few milliseconds, see
        `SymbolIndex.reparses_incrementally`). That saves a query two thread hops (each
        a scheduling delay on a busy machine) after every keystroke. None when other
        changes are queued or a batch is being applied (the query runs in a thread)."""
        with self._cond:
            if self._busy > 0:
                return None
            others = [p for p in self._pending if str(p) != besides]
        if len(others) > CHEAP_EDITS:
            return None
        workspace = self._workspace()
        if not all(self._cheap(workspace, path) for path in others):
            return None
        return [str(path) for path in others]

    def _cheap(self, workspace: Workspace | None, path: Path) -> bool:
        buffer = workspace.buffer(path) if workspace is not None else None
        return (
            buffer is not None
            and len(buffer.text) <= CHEAP_EDIT_CHARS
            and self._index.reparses_incrementally(str(path))
        )

    def drain(self) -> None:
        """Apply every queued change now, in the calling thread, and wait for a batch the
        updater is applying: a query must see the edit that came before it."""
        with self._cond:
            batch, self._pending = self._pending, set()
            if batch:
                self._busy += 1
        if batch:
            self._apply(batch)
        with self._cond:
            self._cond.wait_for(lambda: self._busy == 0, timeout=DRAIN_WAIT_S)

    def _run(self) -> None:
        idle = 0.0
        while True:
            with self._cond:
                if not self._pending:
                    self._cond.wait(timeout=FLUSH_IDLE_S)
                if not self._pending:
                    flush, self._unflushed = self._unflushed, False
                    idle = 0.0 if flush else idle + FLUSH_IDLE_S
                    if idle >= THREAD_IDLE_S:
                        self._thread = None
                        return
                    batch: set[Path] = set()
                else:
                    flush, idle = False, 0.0
                    batch = self._take_when_quiet()
            if flush:
                self._index.flush()
            elif batch:
                self._apply(batch)

    def _take_when_quiet(self) -> set[Path]:
        """The queued paths, once changes have paused for `COALESCE_S` (at most
        `COALESCE_MAX_S` of waiting); lock held."""
        deadline = time.monotonic() + COALESCE_MAX_S
        while (wait := self._last_change + COALESCE_S - time.monotonic()) > 0:
            if time.monotonic() >= deadline:
                break
            self._cond.wait(timeout=wait)
        batch, self._pending = self._pending, set()
        if batch:
            self._busy += 1
        return batch

    def _apply(self, batch: set[Path]) -> None:
        """Refresh `batch` (counted in `_busy` by the caller)."""
        try:
            workspace = self._workspace()
            if workspace is not None:
                for path in batch:
                    self._refresh(workspace, path)
        finally:
            with self._cond:
                self._busy -= 1
                self._unflushed = True
                self._cond.notify_all()

    def _refresh(self, workspace: Workspace, path: Path) -> None:
        index = self._index
        try:
            if not workspace.contains(path) or workspace.is_ignored(path, False):
                index.remove_file(path)
                return
            buffer = workspace.buffer(path)
            if buffer is not None:
                index.update_file(path, buffer.text, -1, -1)
                return
            try:
                st = path.stat()
                data = path.read_bytes()
            except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
                index.remove_file(path)
                return
            index.update_file(path, data, st.st_mtime_ns, st.st_size)
        except Exception:
            log.exception("symbol index update failed for %s", path)


def forget(workspace: Workspace) -> None:
    """Drop the workspace's index (tests, workspace reconfiguration) and close it."""
    service = workspace.detach(_INDEX)
    if service is not None:
        service.close()
