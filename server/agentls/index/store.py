"""The persistent cache: packed symbols per file, keyed by path and (mtime_ns, size).

On a warm start the index loads every file whose stat still matches without reading or
parsing it, and the search structure saved over them (one `segment` row), so it need not
sort and invert a hundred thousand names again. The cache is disposable: a different schema
or grammar fingerprint drops it, and any SQLite error disables persistence for this run
(logged) instead of failing the index.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import sqlite3
import threading
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

import platformdirs

from agentls.index.languages import fingerprint
from agentls.index.records import FileRecord, Packed

log = logging.getLogger(__name__)

SCHEMA = 4
"""Bump when the row format, kinds or extraction rules change."""


class CachedFile(NamedTuple):
    mtime_ns: int
    size: int
    packed: Packed


def default_cache_path(roots: Sequence[Path]) -> Path:
    """`<user cache>/agentls/index/<hash of the roots>.sqlite`: one cache per workspace."""
    key = "\0".join(sorted(str(Path(r).resolve()) for r in roots))
    digest = hashlib.sha256(key.encode()).hexdigest()[:16]
    return Path(platformdirs.user_cache_dir("agentls")) / "index" / f"{digest}.sqlite"


class IndexStore:
    """A small SQLite file. Thread-safe through one lock; writes are batched by the caller."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None
        self._broken = False

    def _conn(self) -> sqlite3.Connection | None:
        if self._db is not None or self._broken:
            return self._db
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=OFF")
            db.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT)")
            version = f"{SCHEMA}:{fingerprint()}"
            row = db.execute("SELECT value FROM meta WHERE key='version'").fetchone()
            if row is None or row[0] != version:
                db.execute("DROP TABLE IF EXISTS files")
                db.execute("DROP TABLE IF EXISTS segment")
                db.execute("INSERT OR REPLACE INTO meta VALUES ('version', ?)", (version,))
            db.execute(
                "CREATE TABLE IF NOT EXISTS files (path TEXT PRIMARY KEY, mtime_ns INTEGER,"
                " size INTEGER, skipped TEXT, names TEXT, kinds BLOB, offsets BLOB,"
                " rows BLOB, wordforms TEXT)"
            )
            db.execute("CREATE TABLE IF NOT EXISTS segment (id INTEGER PRIMARY KEY, data BLOB)")
            self._db = db
        except (sqlite3.Error, OSError) as exc:
            self._fail("open", exc)
        return self._db

    def _fail(self, what: str, exc: Exception) -> None:
        log.warning("symbol cache %s disabled (%s failed: %s)", self.path, what, exc)
        self._broken = True
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
        self._db = None

    def load(self) -> dict[str, CachedFile]:
        """Every cached file by path string."""
        with self._lock:
            db = self._conn()
            if db is None:
                return {}
            try:
                cur = db.execute(
                    "SELECT path, mtime_ns, size, skipped, names, kinds, offsets, rows,"
                    " wordforms FROM files"
                )
                return {
                    r[0]: CachedFile(r[1], r[2], Packed(r[3], r[4], r[5], r[6], r[7], r[8]))
                    for r in cur
                }
            except sqlite3.Error as exc:
                self._fail("load", exc)
                return {}

    def write(self, records: Iterable[FileRecord], removed: Iterable[str] = ()) -> None:
        """Upsert `records` and delete `removed` paths in one transaction."""
        with self._lock:
            db = self._conn()
            if db is None:
                return
            try:
                db.execute("BEGIN")
                db.executemany(
                    "INSERT OR REPLACE INTO files VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    ((r.path_str, r.mtime_ns, r.size, *r.packed()) for r in records),
                )
                db.executemany("DELETE FROM files WHERE path = ?", ((p,) for p in removed))
                db.execute("COMMIT")
            except sqlite3.Error as exc:
                self._fail("write", exc)

    def load_segment(self) -> bytes | None:
        """The saved search structure over the cached files (see `Segment.snapshot`)."""
        with self._lock:
            db = self._conn()
            if db is None:
                return None
            try:
                row = db.execute("SELECT data FROM segment WHERE id = 1").fetchone()
            except sqlite3.Error as exc:
                self._fail("load", exc)
                return None
            return bytes(row[0]) if row is not None else None

    def write_segment(self, data: bytes) -> None:
        with self._lock:
            db = self._conn()
            if db is None:
                return
            try:
                db.execute("INSERT OR REPLACE INTO segment VALUES (1, ?)", (data,))
            except sqlite3.Error as exc:
                self._fail("write", exc)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                with contextlib.suppress(sqlite3.Error):
                    self._db.close()
                self._db = None
