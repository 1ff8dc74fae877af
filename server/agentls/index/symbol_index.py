"""`SymbolIndex`: every definition in the workspace, searchable by name and per file.

The seam is deliberately narrow (paths, bytes, stat values, a read callback) so the index
does not depend on the workspace classes; `registry.index_for` wires it to a `Workspace`.

Structure: one `FileRecord` per file; search structures are immutable `Segment`s plus a short
list of "loose" records changed since the last segment was made. An edit re-parses one file
(~1 ms), marks the old record dead and appends the new one to the loose list, so it is
queryable at once; queries scan the few loose symbols directly and fold them into a small
segment once there are enough, merging segments of similar size (LSM-style) so no edit ever
rebuilds the whole structure.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path

from agentls.index.depcache import DepCache
from agentls.index.extract import MAX_FILE_BYTES, TOO_LARGE
from agentls.index.languages import language_for
from agentls.index.matching import parse_query
from agentls.index.model import IndexState, SearchResult, Symbol
from agentls.index.priority import build_order, is_vendored
from agentls.index.ranking import (
    KindFilter,
    Ranker,
    acceptor,
    kind_codes,
    listing,
    overlay_records,
)
from agentls.index.records import FileRecord, pack
from agentls.index.reparse import RecentTrees
from agentls.index.segment import Segment
from agentls.index.store import CachedFile, IndexStore
from agentls.index.worker import Batch, Results, parse_batch, parse_file, run_pool

log = logging.getLogger(__name__)

LOOSE_MAX = 128
"""Loose symbols scanned directly before a query folds them into a segment."""
DEAD_MAX = 10_000
"""Dead entries (of replaced files) tolerated in segments before the structure is rebuilt
(also a quarter of all symbols, whichever is larger)."""
FOLD_INLINE_MAX = 4_000
"""Symbols a query may fold into segments in the event loop (~5 ms; see `answers_now`)."""
DIRECT_SCAN_MAX = 20_000
"""A path filter that leaves at most this many symbols is answered by scanning them."""
PARALLEL_MIN_BYTES = 2_000_000
"""Below this much source, worker start-up (~0.2 s) costs more than it saves."""
_BATCH_BYTES = 512_000
_BATCH_FILES = 64
ON_DEMAND_FILES = 24
"""Files a query parses itself during a cold build (those that define its name)."""
ON_DEMAND_BYTES = 1_000_000
"""...and at most this much source (after the first file): bundles that also define the
name come last in the build order and are left to the build."""
ON_DEMAND_MIN_CHARS = 3
LISTING_WAIT_S = 2.0
"""How long a query during a cold build waits for the file listing (to know M and the
files to parse on demand); the listing takes well under a second on 10k files."""
_NAME_RUN = re.compile(r"[A-Za-z0-9_$]+")

Entry = tuple[Path, int, int]
"""A file the build must parse: path, mtime_ns, size."""
Candidates = Callable[[str, list[str]], list[str]]
"""Given a literal and paths, those whose text contains it (case-insensitively)."""


class SymbolIndex:
    """Definitions of many files, persisted in `cache_path` (None: memory only).

    Thread-safe: builds run on their own thread (and worker processes), edits and queries
    may come from any thread. Queries during the first build answer from what is indexed so
    far and say `partial`.
    """

    def __init__(self, cache_path: Path | None = None, shared: DepCache | None = None) -> None:
        self._store = IndexStore(cache_path) if cache_path is not None else None
        self._shared = shared
        """Symbols of dependency files shared with the user's other workspaces (see
        `depcache`): a build looks vendored files up by content before parsing them."""
        self._share_wanted: dict[str, str] = {}
        """Dependency files the build parses, by path: their content key."""
        self._share_ready: dict[str, tuple[str, FileRecord]] = {}
        """Parsed dependency files whose symbols the next `flush` shares."""
        self._shared_files = 0
        self.roots: tuple[str, ...] = ()
        """The workspace's folders (set by the registry): paths below them decide what is a
        dependency; without them, the folder all indexed files share."""
        self._lock = threading.RLock()
        self._built = threading.Condition(self._lock)
        self._build_lock = threading.Lock()
        self._records: dict[str, FileRecord] = {}
        self._segments: list[Segment] = []
        self._loose: list[FileRecord] = []
        self._loose_symbols = 0
        self._symbols = 0
        self._dead_symbols = 0
        self._seq = 0
        self._dirty: dict[str, FileRecord | None] = {}
        self._touched: set[str] | None = None
        self._tickets: dict[str, int] = {}
        """Per path, how many edits were started: a slow parse must not undo a newer one."""
        self._building = False
        self._ever_built = False
        self._closed = False
        self._parsed = 0
        self._cached = 0
        self._saver: threading.Thread | None = None
        self._compacting = False
        self._unsaved_base: Segment | None = None
        """A base segment built since the last flush: saved for the next warm start."""
        self._recent_trees = RecentTrees()
        """Trees of the files edited last: their next edit re-parses incrementally."""
        self._pending: OrderedDict[str, Entry] = OrderedDict()
        """Files the running build has still to parse, in parse order (see `priority`)."""
        self._todo: dict[str, Entry] = {}
        self._serving = threading.Event()
        """Set once queries get useful answers: the cache is served, or the files listed."""
        self._listed = threading.Event()
        """Set once the running build knows every file (M in "N of M")."""
        self._build_total = 0
        self._build_done = 0
        self.candidates: Candidates | None = None
        """A fast text search (ripgrep, set by the registry): during a cold build, a query
        first parses the not-yet-parsed files containing its name, so exact and prefix
        answers are complete from the first second."""
        self._buffer_texts: dict[str, bytes] = {}
        """The text each buffer-sourced record was made from (open documents only)."""
        self.before_query: Callable[[], None] | None = None
        """Called first by every query: applies queued edits (set by the registry)."""
        self._persist = threading.Event()
        self._persist.set()
        self.excluded: Callable[[str], bool] | None = None
        """Paths never parsed, stored or shown (the workspace's secret files and read-deny
        rules, set by `registry.index_for`). Asked again at query time, so rules that
        change later hide what was indexed before them."""
        self.updates_waiting: Callable[[str | None], list[str] | None] | None = None
        """Queued edits of files other than the given one that a query may apply itself
        at little cost (open documents), or None when others wait or are being applied
        (set by the registry): a query would first apply or wait for them."""

    # ----------------------------------------------------------------------- state

    @property
    def state(self) -> IndexState:
        with self._lock:
            return IndexState(
                files=len(self._records),
                symbols=self._symbols,
                parsed_files=self._parsed,
                cached_files=self._cached,
                shared_files=self._shared_files,
                skipped_files=sum(1 for r in self._records.values() if r.skipped),
                building=self._building,
                ready=self._ever_built and not self._building,
                total_files=self._build_total,
                indexed_files=self._build_done,
            )

    @property
    def is_ready(self) -> bool:
        """True once a build finished (queries before that are partial)."""
        return self._ever_built and not self._building

    def wait_built(self, timeout: float | None = None) -> bool:
        """Block until no build is running (or `timeout` seconds); True when idle."""
        with self._lock:
            return self._built.wait_for(lambda: not self._building, timeout)

    def wait_serving(self, timeout: float | None = None) -> bool:
        """Block until queries get useful answers (a warm start serves its cache, a cold one
        has listed its files and can parse a query's files first), or `timeout` seconds."""
        return self._serving.wait(timeout)

    def answers_now(self, path: Path | str | None = None) -> bool:
        """Whether a query now costs only its own search, plus at most a few milliseconds
        of re-indexing: the build is done, no edit of another file than `path` is queued
        or being applied except incremental re-parses of open documents, and folding the
        loose records (with those edits) into segments is small. An event loop runs such
        a query inline (handing it to a thread costs more than the query);
        `buffer_outline(path)` may still re-parse `path` itself."""
        if not self.is_ready:
            return False
        waiting = self.updates_waiting
        queued = [] if waiting is None else waiting(None if path is None else str(path))
        if queued is None:
            return False
        with self._lock:
            extra = sum(len(r) for k in queued if (r := self._records.get(k)) is not None)
            return self._fold_cost(extra) <= FOLD_INLINE_MAX

    def _fold_cost(self, extra: int) -> int:
        """Symbols the next `_fold` would put into new segments, were `extra` more loose
        symbols added first (lock held; an upper bound: merges drop dead entries)."""
        loose = self._loose_symbols + extra
        if loose <= LOOSE_MAX:
            return 0
        sizes = [len(s) for s in self._segments]
        cost = last = loose
        while sizes and sizes[-1] <= 2 * last:
            last += sizes.pop()
            cost += last
        return cost

    def reparses_incrementally(self, key: str) -> bool:
        """Whether the next `update_file` of `key` starts from its last tree and rows."""
        return key in self._recent_trees

    def __contains__(self, path: object) -> bool:
        return str(path) in self._records

    # ----------------------------------------------------------------------- edits

    def update_file(self, path: Path, text: str | bytes, mtime_ns: int, size: int) -> None:
        """(Re)index one file from its current text; queryable when this returns.

        `mtime_ns`/`size` are the disk stat the text corresponds to; pass `mtime_ns=-1` for
        text that is not on disk (an unsaved buffer) so a later start re-parses the file.
        Files without a grammar are ignored.
        """
        if language_for(path) is None or self._is_excluded(str(path)):
            self.remove_file(path)
            return
        data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
        key = str(path)
        with self._lock:
            ticket = self._tickets[key] = self._tickets.get(key, 0) + 1
        packed = parse_file(key, data, self._recent_trees)  # unlocked: the slow part
        rec = FileRecord(path, mtime_ns, size, packed)
        with self._lock:
            if self._tickets.get(key) != ticket:
                return  # a newer update of this file overtook us while we parsed
            if self._touched is not None:
                self._touched.add(key)
            self._parsed += 1
            self._install(rec)
            self._dirty[key] = rec
            if mtime_ns == -1:
                self._buffer_texts[key] = data
            else:
                self._buffer_texts.pop(key, None)

    def remove_file(self, path: Path) -> None:
        key = str(path)
        self._recent_trees.forget(key)
        with self._lock:
            self._buffer_texts.pop(key, None)
            self._tickets[key] = self._tickets.get(key, 0) + 1
            if self._touched is not None:
                self._touched.add(key)
            old = self._records.pop(key, None)
            if old is not None:
                self._retire(old)
                self._dirty[key] = None

    def _install(self, rec: FileRecord) -> None:
        """Make `rec` current (lock held)."""
        old = self._records.get(rec.path_str)
        if old is not None:
            self._retire(old)
            if len(old) and any(r is old for r in self._loose):
                # Never folded into a segment: it leaves the loose list instead of
                # becoming a dead entry (a file being typed in replaces itself).
                self._loose = [r for r in self._loose if r is not old]
                self._loose_symbols -= len(old)
                self._dead_symbols -= len(old)
        self._seq += 1
        rec.seq = self._seq
        self._records[rec.path_str] = rec
        self._symbols += len(rec)
        if len(rec):
            self._loose.append(rec)
            self._loose_symbols += len(rec)

    def _retire(self, old: FileRecord) -> None:
        old.alive = False
        self._symbols -= len(old)
        self._dead_symbols += len(old)

    # ----------------------------------------------------------------------- build

    def build(
        self,
        files: Iterable[Path],
        read: Callable[[Path], bytes] | None = None,
        workers: int = 2,
        first: Iterable[Path] = (),
    ) -> IndexState:
        """Index `files` (absolute paths), reusing the persistent cache for unchanged ones.

        Files the index holds but `files` does not list are dropped. Runs in the calling
        thread; use `start_build` for the background. Parsing uses `workers` processes when
        there is enough to parse. `read` supplies file contents; None reads them from disk
        (in the worker processes). `first`: files to parse before all others (the editor's
        open documents; see `priority` for the order of the rest).
        """
        with self._build_lock:
            with self._lock:
                self._building = True
                self._touched = set()
                self._listed.clear()
                self._build_total = self._build_done = 0
            try:
                self._build(files, read, workers, [str(p) for p in first])
            finally:
                with self._lock:
                    self._building = False
                    self._ever_built = True
                    self._touched = None
                    self._pending.clear()
                    self._share_wanted.clear()
                    self._todo = {}
                    self._listed.set()
                    self._serving.set()
                    self._built.notify_all()
            self.flush()
            return self.state

    def start_build(
        self,
        files: Iterable[Path],
        read: Callable[[Path], bytes] | None = None,
        workers: int = 2,
        first: Iterable[Path] = (),
    ) -> threading.Thread:
        """`build` on a daemon thread; the thread is returned for callers that want to join."""
        thread = threading.Thread(
            target=self._safe_build,
            args=(files, read, workers, list(first)),
            name="symbol-index",
            daemon=True,
        )
        with self._lock:
            self._building = True
        thread.start()
        return thread

    def _safe_build(
        self,
        files: Iterable[Path],
        read: Callable[[Path], bytes] | None,
        workers: int,
        first: list[Path],
    ) -> None:
        try:
            self.build(files, read, workers, first)
        except Exception:
            log.exception("symbol index build failed")

    def _build(
        self,
        files: Iterable[Path],
        read: Callable[[Path], bytes] | None,
        workers: int,
        first: list[str],
    ) -> None:
        cached = self._store.load() if self._store is not None else {}
        saved = self._store.load_segment() if self._store is not None and cached else None
        early = self._serve_from_cache(cached, saved)
        walked = self._walk(files, cached, early)
        if walked is None:
            return
        seen, todo, confirmed = walked
        order = build_order(((k, e[1], e[2]) for k, e in todo.items()), first)
        with self._lock:
            self._todo = todo
            self._pending = OrderedDict((key, todo[key]) for key, _, _ in order)
            self._build_done += confirmed
            self._cached += confirmed
            self._build_total = self._build_done + len(todo)  # cached ones are in already
        self._listed.set()
        self._serving.set()
        self._parse_all(todo, read, workers)
        if self._closed:
            return
        self._drop_gone(seen, cached, saved, early=early)

    def _walk(
        self, files: Iterable[Path], cached: Mapping[str, CachedFile], early: bool
    ) -> tuple[set[str], dict[str, Entry], int] | None:
        """List the indexable files: ingest the ones the cache holds unchanged, return the
        rest to parse (seen keys, files to parse, how many cached ones were confirmed).
        None when the index was closed meanwhile."""
        seen: set[str] = set()
        todo: dict[str, Entry] = {}
        reuse: list[FileRecord] = []
        confirmed = 0
        for path in files:
            if self._closed:
                return None
            key = str(path)
            if language_for(path) is None or key in seen or self._is_excluded(key):
                continue
            seen.add(key)
            try:
                st = path.stat()
            except OSError:
                continue
            hit = cached.get(key)
            if hit is not None and hit.mtime_ns == st.st_mtime_ns and hit.size == st.st_size:
                if early and self._holds(key, hit.mtime_ns, hit.size):
                    confirmed += 1  # served from the cache already, and still current
                    continue
                reuse.append(FileRecord(path, hit.mtime_ns, hit.size, hit.packed))
                if len(reuse) >= 512:
                    self._ingest(reuse, cached=True)
                    reuse = []
            elif st.st_size > MAX_FILE_BYTES:
                too_big = FileRecord(path, st.st_mtime_ns, st.st_size, pack([], TOO_LARGE))
                self._ingest([too_big], counted=True)
            else:
                todo[key] = (path, st.st_mtime_ns, st.st_size)
        self._ingest(reuse, cached=True)
        return seen, todo, confirmed

    def _drop_gone(
        self, seen: set[str], cached: Mapping[str, CachedFile], saved: bytes | None, *, early: bool
    ) -> None:
        """After the walk: retire what is no longer there, then compact or adopt the saved
        search structure."""
        with self._lock:
            gone = [k for k in self._records if k not in seen and k not in (self._touched or ())]
            for key in gone:
                self._retire(self._records.pop(key))
                self._dirty[key] = None
        if early:
            self._compact_if_stale()
        elif saved is None or not self._adopt(saved):
            self.compact()
        for key in set(cached) - seen:
            with self._lock:
                self._dirty.setdefault(key, None)

    def _serve_from_cache(self, cached: Mapping[str, CachedFile], saved: bytes | None) -> bool:
        """Warm start: before the walk confirms anything, install every cached file and the
        saved search structure, so queries answer from the cache at once (marked partial);
        the walk then re-parses what changed and drops what is gone. Only for a first
        build over an empty index with a usable saved structure. The records and the
        structure are installed together: a query in between would otherwise fold
        thousands of loose records into a new segment."""
        if saved is None or not cached:
            return False
        records = {
            key: FileRecord(Path(key), hit.mtime_ns, hit.size, hit.packed)
            for key, hit in cached.items()
            if not self._is_excluded(key)
        }
        loaded = Segment.from_snapshot(saved, records)
        if loaded is None:
            return False
        segment, covered = loaded
        newer = [r for r in records.values() if len(r) and id(r) not in covered]
        dead = sum(len(r) for r in segment.records if id(r) not in covered)
        with self._lock:
            if self._records or dead > max(DEAD_MAX, sum(map(len, records.values())) // 4):
                return False
            for rec in records.values():
                self._seq += 1
                rec.seq = self._seq
                self._records[rec.path_str] = rec
                self._symbols += len(rec)
            self._segments = [segment]
            self._loose = newer
            self._loose_symbols = sum(len(r) for r in newer)
            self._dead_symbols = dead
        self._serving.set()
        log.info(
            "symbol cache: reused the saved search structure (%d stale entries, %d files new);"
            " answering from it while the files are checked",
            dead,
            len(newer),
        )
        return True

    def _holds(self, key: str, mtime_ns: int, size: int) -> bool:
        rec = self._records.get(key)
        return rec is not None and rec.alive and rec.mtime_ns == mtime_ns and rec.size == size

    def _compact_if_stale(self) -> None:
        with self._lock:
            stale = self._dead_symbols > max(DEAD_MAX, self._symbols // 4)
        if stale:
            self.compact()

    def _parse_all(
        self,
        todo: dict[str, Entry],
        read: Callable[[Path], bytes] | None,
        workers: int,
    ) -> None:
        total = sum(entry[2] for entry in todo.values())
        parallel = workers >= 2 and total >= PARALLEL_MIN_BYTES

        def content(path: Path) -> bytes | None:
            """The file's bytes, or None when a worker will read it from disk itself."""
            if read is None:
                return None if parallel else path.read_bytes()
            return read(path)

        def on_results(results: Results) -> None:
            self._ingest_results(todo, results)

        def shared(entry: Entry) -> bytes | None:
            """A dependency file's bytes to parse, or None when the shared cache had its
            symbols (installed now)."""
            return self._from_shared(entry, read(entry[0]) if read else entry[0].read_bytes())

        base = self._dependency_base(todo)
        batches = self._pending_batches(content, shared, base)
        if parallel:
            run_pool(batches, on_results, workers)
        else:
            for batch in batches:
                on_results(parse_batch(batch))

    def _dependency_base(self, todo: Mapping[str, Entry]) -> int | None:
        """The length of the folder prefix below which path parts mark dependencies (the
        workspace's roots, else the prefix the files share as in `priority.build_order`),
        or None without a usable shared cache."""
        if self._shared is None or not todo or not self._shared.usable():
            return None
        folders = list(self.roots) or list(todo)
        return (
            len(os.path.commonpath(folders))
            if len(folders) > 1
            else len(folders[0]) * bool(self.roots)
        )

    def _from_shared(self, entry: Entry, data: bytes) -> bytes | None:
        """Install a dependency file from the shared cache (None), or note its content
        key so `flush` shares what the build parses (its bytes are returned)."""
        shared = self._shared
        path, mtime_ns, size = entry
        key = shared.key(str(path), data) if shared is not None else None
        if shared is None or key is None:
            return data
        packed = shared.get(key)
        if packed is None:
            with self._lock:
                self._share_wanted[str(path)] = key
            return data
        self._ingest([FileRecord(path, mtime_ns, size, packed)], counted=True)
        with self._lock:
            self._shared_files += 1
        return None

    def _pending_batches(
        self,
        content: Callable[[Path], bytes | None],
        shared: Callable[[Entry], bytes | None],
        base: int | None,
    ) -> Iterator[Batch]:
        """The pending files in build order, in batches of about `_BATCH_BYTES`; with a
        `base`, dependency files go through `shared` (the shared cache) instead."""
        batch: Batch = []
        size = 0
        while (entry := self._next_pending()) is not None:
            if self._closed:
                return
            path, _, stat_size = entry
            try:
                if base is not None and is_vendored(str(path)[base:], stat_size):
                    data = shared(entry)
                    if data is None:
                        continue
                else:
                    data = content(path)
            except Exception as exc:  # unreadable now: skip, a later change re-adds it
                log.debug("cannot read %s: %s", path, exc)
                continue
            batch.append((str(path), data))
            size += stat_size if data is None else len(data)
            if size >= _BATCH_BYTES or len(batch) >= _BATCH_FILES:
                yield batch
                batch, size = [], 0
        if batch:
            yield batch

    def _ingest_results(self, todo: dict[str, Entry], results: Results) -> None:
        recs = []
        for key, packed in results:
            if packed is None:
                continue  # could not be read: skipped, like a read error above
            path, mtime_ns, size = todo[key]
            recs.append(FileRecord(path, mtime_ns, size, packed))
        self._ingest(recs, parsed=True, counted=True)
        if self._share_wanted:
            with self._lock:
                for rec in recs:
                    key = self._share_wanted.pop(rec.path_str, "")
                    if key and self._records.get(rec.path_str) is rec:
                        self._share_ready[rec.path_str] = (key, rec)

    def _next_pending(self) -> Entry | None:
        with self._lock:
            if not self._pending:
                return None
            return self._pending.popitem(last=False)[1]

    # ----------------------------------------------------------------------- on demand

    def parse_now(self, keys: Iterable[str]) -> int:
        """Parse these files of the running build now, in the calling thread (a query
        needs them); the build will not parse them again. Returns how many were parsed."""
        with self._lock:
            entries = [self._pending.pop(key) for key in keys if key in self._pending]
        recs = []
        for path, mtime_ns, size in entries:
            try:
                data = path.read_bytes()
            except OSError:
                continue
            recs.append(FileRecord(path, mtime_ns, size, parse_file(str(path), data)))
        self._ingest(recs, parsed=True, counted=True)
        return len(recs)

    def _answer_first(self, query: str) -> None:
        """During a cold build: parse the not-yet-parsed files that contain the query's
        name (found by `candidates`, a fast text search), so exact and prefix answers are
        complete before the build reaches those files."""
        finder = self.candidates
        runs = [run for run in _NAME_RUN.findall(query) if len(run) >= ON_DEMAND_MIN_CHARS]
        if finder is None or not runs:
            return
        # Nothing to answer from yet: wait until the cache is served (warm) or the files
        # are listed (cold), which is what lets this query be answered well.
        self._serving.wait(LISTING_WAIT_S)
        with self._lock:
            pending = list(self._pending)
        if not pending:
            return
        try:
            hits = finder(max(runs, key=len), pending)
        except Exception:
            log.exception("finding the files of a query failed")
            return
        chosen: list[str] = []
        size = 0
        with self._lock:
            for key in hits[:ON_DEMAND_FILES]:
                entry = self._pending.get(key)
                if entry is None:
                    continue
                if chosen and size + entry[2] > ON_DEMAND_BYTES:
                    break
                chosen.append(key)
                size += entry[2]
        self.parse_now(chosen)

    def _ingest(
        self,
        recs: list[FileRecord],
        *,
        cached: bool = False,
        parsed: bool = False,
        counted: bool = False,
    ) -> None:
        """Install records of a build (`counted`/`cached`: toward its N of M)."""
        with self._lock:
            touched = self._touched or ()
            if counted or cached:
                self._build_done += len(recs)
            for rec in recs:
                if rec.path_str in touched:
                    continue  # an edit arrived during the build: it is newer
                self._install(rec)
                if cached:
                    self._cached += 1
                else:
                    self._dirty[rec.path_str] = rec
                    if parsed:
                        self._parsed += 1

    # ----------------------------------------------------------------------- structure

    def compact(self) -> None:
        """Rebuild the search structure as one segment (after a build; cheap to skip)."""
        with self._lock:
            records = list(self._records.values())
            seq = self._seq
        segment = Segment(records)  # slow part, outside the lock: edits keep flowing
        segment.prepare()
        with self._lock:
            newer = [r for r in self._records.values() if r.seq > seq and len(r)]
            self._segments = [segment]
            self._loose = newer
            self._loose_symbols = sum(len(r) for r in newer)
            self._dead_symbols = sum(len(r) for r in records if not r.alive)
            self._unsaved_base = segment

    def _adopt(self, saved: bytes) -> bool:
        """Use the segment saved by an earlier run (warm start): files changed since are
        skipped in it and searched as loose records instead. False when it is unusable or
        too stale (then `compact` builds, and the next flush saves, a new one)."""
        with self._lock:
            current = dict(self._records)
        loaded = Segment.from_snapshot(saved, current)
        if loaded is None:
            log.info("symbol cache: the saved search structure is unusable; rebuilding it")
            return False
        segment, covered = loaded
        dead = sum(len(r) for r in segment.records if id(r) not in covered)
        with self._lock:
            if dead > max(DEAD_MAX, self._symbols // 4):
                return False
            newer = [r for r in self._records.values() if len(r) and id(r) not in covered]
            self._segments = [segment]
            self._loose = newer
            self._loose_symbols = sum(len(r) for r in newer)
            self._dead_symbols = dead
        log.info(
            "symbol cache: reused the saved search structure (%d stale entries, %d files new)",
            dead,
            len(newer),
        )
        return True

    def _fold(self) -> None:
        """Move loose records into a segment and merge similar-sized segments (lock held)."""
        if self._loose_symbols <= LOOSE_MAX:
            return
        segments = [*self._segments, Segment(self._loose)]
        self._loose, self._loose_symbols = [], 0
        while len(segments) >= 2 and len(segments[-2]) <= 2 * len(segments[-1]):
            pair = (*segments[-2].records, *segments[-1].records)
            # A merge leaves dead entries out (`Segment` keeps live records only): they no
            # longer count toward the compaction that would rebuild everything.
            self._dead_symbols -= sum(len(r) for r in pair if not r.alive)
            segments[-2:] = [Segment(pair)]
        self._segments = segments
        if self._dead_symbols > max(DEAD_MAX, self._symbols // 4) and not self._compacting:
            # Rebuilding everything takes ~0.5 s per 100k symbols: not under the lock that
            # every query and edit waits for. Dead entries are skipped until it is done.
            log.info(
                "symbol index: compacting in the background (%d dead entries)", self._dead_symbols
            )
            self._compacting = True
            threading.Thread(
                target=self._compact_in_background, name="symbol-index-compact", daemon=True
            ).start()

    def _compact_in_background(self) -> None:
        try:
            self.compact()
        except Exception:
            log.exception("compacting the symbol index failed")
        finally:
            with self._lock:
                self._compacting = False

    # ----------------------------------------------------------------------- persistence

    def hold_persistence(self) -> None:
        """Keep changes in memory only until `allow_persistence` (a server holds them
        until the user's secret rules are loaded, so no secret's symbols reach the disk)."""
        self._persist.clear()

    def allow_persistence(self) -> None:
        self._persist.set()
        self.flush()

    def flush(self) -> None:
        """Write changed files to the persistent cache (batched; call after edits settle),
        and a newly built base segment (for the next warm start). Files excluded by then
        are deleted from the cache instead of written."""
        if not self._persist.is_set():
            return
        with self._lock:
            dirty, self._dirty = self._dirty, {}
            base, self._unsaved_base = self._unsaved_base, None
        self._share()
        if self._store is None:
            return
        if dirty:
            keep = {k: r for k, r in dirty.items() if r is not None and not self._is_excluded(k)}
            self._store.write(keep.values(), [k for k in dirty if k not in keep])
        if base is not None:
            self._save_base(base)

    def _share(self) -> None:
        """Write the dependency files parsed since the last flush to the shared cache,
        unless a rule now excludes them or an edit replaced them; then bound its size."""
        with self._lock:
            ready, self._share_ready = self._share_ready, {}
            current = [
                (key, rec)
                for path, (key, rec) in ready.items()
                if self._records.get(path) is rec and rec.alive
            ]
        items = [(key, rec.packed()) for key, rec in current if not self._is_excluded(rec.path_str)]
        if self._shared is not None and items and self._shared.put(items):
            self._shared.evict()

    def _save_base(self, base: Segment) -> None:
        """Save `base` for the next warm start on a background thread (~0.2 s for 100k
        symbols that a build need not wait for); `close` waits for it."""
        store = self._store
        if store is None:
            return

        def save() -> None:
            try:
                store.write_segment(base.snapshot())
            except Exception:
                log.exception("saving the symbol index structure failed")

        with self._lock:
            previous = self._saver
            self._saver = threading.Thread(target=save, name="symbol-index-save", daemon=True)
            saver = self._saver
        if previous is not None:
            previous.join()
        saver.start()

    def close(self) -> None:
        """Stop a running build, persist pending changes, release the cache file."""
        self._closed = True
        with self._build_lock:
            pass
        self.flush()
        saver = self._saver
        if saver is not None:
            saver.join()
        if self._store is not None:
            self._store.close()

    # ----------------------------------------------------------------------- queries

    def document_symbols(self, path: Path) -> list[Symbol]:
        """The file's outline as a tree (empty if the file is not indexed)."""
        if self.before_query is not None:
            self.before_query()
        key = str(path)
        rec = self._records.get(key)
        return rec.outline() if rec is not None and not self._is_excluded(key) else []

    def buffer_outline(self, path: Path, text: str | bytes) -> list[Symbol] | None:
        """The outline of an open document's current `text`, from the index: its record
        when it was made from exactly this text, else re-indexed now (an incremental
        re-parse from the file's last tree, ~1 ms for 500 lines). None when the file has
        no grammar, is too large or generated, or is excluded."""
        key = str(path)
        if language_for(path) is None or self._is_excluded(key):
            return None
        if self.before_query is not None:
            self.before_query()  # the edit may be queued or being applied: no second parse
        data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
        with self._lock:
            rec = self._records.get(key)
            current = rec is not None and self._buffer_texts.get(key) == data
        if not current:
            self.update_file(path, data, -1, len(data))
            rec = self._records.get(key)
        if rec is None or rec.skipped:
            return None
        return rec.outline()

    def disk_outline(self, path: Path, mtime_ns: int, size: int) -> list[Symbol] | None:
        """The indexed outline of a file on disk when the index holds this very version
        (same stat), else None (the caller parses the file itself)."""
        key = str(path)
        rec = self._records.get(key)
        if rec is None or rec.skipped or self._is_excluded(key):
            return None
        if rec.mtime_ns != mtime_ns or rec.size != size:
            return None
        return rec.outline()

    def _is_excluded(self, key: str) -> bool:
        excluded = self.excluded
        return excluded is not None and excluded(key)

    def search(
        self,
        query: str,
        kind: KindFilter = None,
        path_prefix: Path | str | None = None,
        limit: int = 50,
        open_paths: Iterable[Path | str] = (),
        overlay: Mapping[Path, str | bytes | None] | None = None,
    ) -> SearchResult:
        """Definitions ranked exact > prefix > word > fuzzy (see matching.py).

        Ties go to case-exact matches, then files in `open_paths`, then shorter names.
        `path_prefix` keeps files whose absolute path starts with it. "Outer.name" also
        requires "Outer" to end the container. An empty query lists definitions (in path
        order) when a kind or path filter is given.

        `overlay` replaces files for this query only (a session's staged edits): text is
        parsed (cached by content) and searched instead of the indexed version; None hides
        the file (deleted).
        """
        if self.before_query is not None:
            self.before_query()
        if self._building and self.candidates is not None:
            self._answer_first(query)
        q = parse_query(query)
        kinds = kind_codes(kind)
        prefix = str(path_prefix) if path_prefix else None
        opened = {str(p) for p in open_paths}
        hidden = frozenset(str(p) for p in overlay) if overlay else frozenset()
        extra = overlay_records(overlay) if overlay else []
        with self._lock:
            self._fold()
            segments = list(self._segments)
            loose = list(self._loose)
            partial = self._building
            scoped = (
                [r for r in self._records.values() if r.path_str.startswith(prefix)]
                if prefix is not None
                else None
            )
        accept = acceptor(kinds, prefix, q.qualifier, hidden, self.excluded)
        accept_extra = acceptor(kinds, prefix, q.qualifier, frozenset(), self.excluded)
        limit = max(1, limit)
        if q.empty:
            if scoped is None and kinds is None:
                return SearchResult([], partial)
            pool = scoped if scoped is not None else self._all_records()
            pairs = [(r, accept) for r in pool] + [(r, accept_extra) for r in extra]
            listed = listing(pairs, limit)
            return SearchResult(listed, partial)
        ranker = Ranker(q, opened)
        ranker.scan_records(extra, accept_extra)
        if scoped is not None and sum(len(r) for r in scoped) <= DIRECT_SCAN_MAX:
            ranker.scan_records(scoped, accept)
            return SearchResult(ranker.best(limit), partial)
        ranker.scan_records(loose, accept)
        ranker.search_segments(segments, accept, limit)
        return SearchResult(ranker.best(limit), partial)

    def _all_records(self) -> list[FileRecord]:
        with self._lock:
            return list(self._records.values())


__all__ = ["SymbolIndex"]
