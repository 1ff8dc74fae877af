"""Symbols of dependency files, shared by every workspace of the user (issue 33, item 5).

Two projects with the same `site-packages`, `node_modules` or `.d.ts` bundles would each
parse them with tree-sitter on their first start. This cache keys a dependency file's
extracted symbols by what determines them: the sha256 of the file's bytes, the extractor's
fingerprint (grammars, queries, rules) and the language. A second workspace then reads and
hashes those files (~1 GB/s) instead of parsing them (~10 MB/s), and indexes only its own
code. The per-workspace SQLite store (`store.py`) still serves warm starts by path.

Safety: one folder per user under the user cache dir (0700, entries 0600, a folder owned
by someone else or open to others is not used). A repository cannot plant entries: they live
outside the workspace and a key is a content hash. Entries are JSON (never unmarshalled
code), checked for shape and re-packed by `records.pack`, so a truncated, corrupt or
hostile entry is a miss that is parsed and written again, never an exception. The caller
writes only files its secret rules do not exclude (`SymbolIndex.flush`). Size is bounded:
hits refresh an entry's mtime, and the oldest entries go once the folder exceeds
`MAX_BYTES` (least recently used first).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path

import platformdirs

from agentls.index.extract import Row
from agentls.index.languages import fingerprint, language_for
from agentls.index.model import KINDS_BY_CODE
from agentls.index.records import Packed, pack

log = logging.getLogger(__name__)

MAX_BYTES = 256_000_000
"""The folder's size bound; eviction brings it down to `KEEP_FRACTION` of this."""
KEEP_FRACTION = 0.8
_MAGIC = b"agentls-deps 1\n"
_ROW_TYPES = (str, int, str, int, int, int, int, int, int, int, int, int, str)


def default_dir() -> Path:
    """`<user cache>/agentls/index/deps`."""
    return Path(platformdirs.user_cache_dir("agentls")) / "index" / "deps"


class DepCache:
    """A content-addressed folder of extracted symbols; thread- and process-safe (entries
    are written to a temporary file and renamed into place)."""

    def __init__(self, root: Path, max_bytes: int = MAX_BYTES) -> None:
        self.root = root
        self.max_bytes = max_bytes
        self._usable: bool | None = None
        self._version = ""

    def key(self, path: str, data: bytes) -> str | None:
        """The entry key of `data` read from `path` (None: no grammar for the file)."""
        spec = language_for(path)
        if spec is None:
            return None
        if not self._version:
            self._version = fingerprint()
        h = hashlib.sha256(f"{self._version}\0{spec.name}\0".encode())
        h.update(data)
        return h.hexdigest()

    def _entry(self, key: str) -> Path:
        return self.root / key[:2] / key

    def usable(self) -> bool:
        """Whether the folder exists (made 0700) and only this user can write to it."""
        if self._usable is None:
            self._usable = self._prepare()
        return self._usable

    def _prepare(self) -> bool:
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            st = self.root.stat()
            if st.st_uid != os.getuid():
                log.warning("dependency symbol cache %s is not ours: not used", self.root)
                return False
            if st.st_mode & 0o077:
                os.chmod(self.root, 0o700)
        except OSError as exc:
            log.warning("dependency symbol cache %s unusable: %s", self.root, exc)
            return False
        return True

    def get(self, key: str) -> Packed | None:
        """The symbols stored under `key`, or None (missing, corrupt or hostile: a miss)."""
        if not self.usable():
            return None
        entry = self._entry(key)
        try:
            with open(entry, "rb") as fh:
                raw = fh.read()
        except OSError:
            return None
        packed = decode(raw)
        if packed is None:
            log.info("dependency symbol cache: dropping a bad entry %s", entry.name)
            with contextlib.suppress(OSError):
                entry.unlink()
            return None
        with contextlib.suppress(OSError):
            os.utime(entry)  # recently used: evicted last
        return packed

    def put(self, items: Iterable[tuple[str, Packed]]) -> int:
        """Store each (key, symbols); returns how many were written."""
        if not self.usable():
            return 0
        written = 0
        for key, packed in items:
            entry = self._entry(key)
            try:
                entry.parent.mkdir(mode=0o700, exist_ok=True)
                fd, tmp = tempfile.mkstemp(dir=entry.parent, prefix=".tmp-")  # 0600
                with os.fdopen(fd, "wb") as fh:
                    fh.write(encode(packed))
                os.replace(tmp, entry)
                written += 1
            except OSError as exc:
                log.warning("dependency symbol cache: cannot write %s: %s", entry, exc)
                with contextlib.suppress(OSError, UnboundLocalError):
                    os.unlink(tmp)
                break
        return written

    def evict(self) -> int:
        """Delete the least recently used entries while the folder exceeds `max_bytes`;
        returns how many were deleted."""
        if not self.usable():
            return 0
        entries: list[tuple[float, int, str]] = []
        total = 0
        for folder in _scandir(str(self.root)):
            if not folder.is_dir(follow_symlinks=False):
                continue
            for item in _scandir(folder.path):
                with contextlib.suppress(OSError):
                    st = item.stat(follow_symlinks=False)
                    entries.append((st.st_mtime, st.st_size, item.path))
                    total += st.st_size
        if total <= self.max_bytes:
            return 0
        entries.sort()
        goal = self.max_bytes * KEEP_FRACTION
        deleted = 0
        for _, size, path in entries:
            if total <= goal:
                break
            with contextlib.suppress(OSError):
                os.unlink(path)
                total -= size
                deleted += 1
        return deleted


def _scandir(path: str) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError:
        return []


def encode(packed: Packed) -> bytes:
    """An entry: a magic line, then JSON of the skip reason and the rows."""
    rows = _rows(packed)
    return _MAGIC + json.dumps([packed.skipped, rows], separators=(",", ":")).encode()


def _rows(packed: Packed) -> list[Row]:
    from agentls.index.records import FileRecord

    rec = FileRecord(Path(), 0, 0, packed)
    return [rec.row(i) for i in range(len(rec))]


def decode(raw: bytes) -> Packed | None:
    """The symbols of an entry, or None when it is not exactly what `encode` writes."""
    if not raw.startswith(_MAGIC):
        return None
    try:
        skipped, items = json.loads(raw[len(_MAGIC) :])
    except (ValueError, TypeError, RecursionError):
        return None
    if not isinstance(skipped, str) or not isinstance(items, list):
        return None
    rows: list[Row] = []
    for item in items:
        row = _row(item, len(rows))
        if row is None:
            return None
        rows.append(row)
    if skipped and rows:
        return None
    return pack(rows, skipped)


def _row(item: object, index: int) -> Row | None:
    """`item` as a symbol row, or None when it is malformed (kinds, parents, newlines)."""
    if not isinstance(item, list) or len(item) != len(_ROW_TYPES):
        return None
    for value, kind in zip(item, _ROW_TYPES, strict=True):
        if type(value) is not kind:
            return None
    name, code, parent = item[0], item[1], item[3]
    if "\n" in name or not 0 <= code < len(KINDS_BY_CODE) or not -1 <= parent < index:
        return None
    if any(n < 0 for n in item[4:12]):
        return None
    row: Row = tuple(item)
    return row
