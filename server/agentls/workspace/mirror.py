"""`TreeMirror`: keeps copies of files equal to their sources, touching only what changed.

The file-level engine of the shadow workspace, kept apart from its layout and Python
policy. It works on path strings because a sync stats every file of the workspace and
`Path` objects would dominate the cost. Safety rules, enforced here for every write:

- copies are real files (or copy-on-write clones), never hard links or symlinks;
- the destination is unlinked first, so a symlink a process planted is replaced, not
  written through; a planted folder symlink is replaced the same way;
- cached bytecode of a rewritten `.py` file is dropped (Python validates bytecode by
  whole-second mtime and size, so two same-size edits within a second would run stale);
- paths the `exclude` predicate names (secret files) are never copied, nor is a file
  whose source is a symlink to such a path; a copy made before is removed.
"""

from __future__ import annotations

import contextlib
import errno
import glob
import hashlib
import os
import shutil
import stat
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["CopyFrom", "SyncStats", "TreeMirror"]

_FICLONE = 0x40049409  # Linux ioctl: share extents copy-on-write (a real copy, not a link)
_PY_SUFFIXES = (".py", ".pyw")
_COPY_CHUNK = 1024 * 1024


@dataclass
class SyncStats:
    """What one sync did (or, summed, all syncs so far)."""

    copied: int = 0
    written: int = 0
    removed: int = 0
    unchanged: int = 0
    seconds: float = 0.0

    def add(self, other: SyncStats) -> None:
        self.copied += other.copied
        self.written += other.written
        self.removed += other.removed
        self.unchanged += other.unchanged
        self.seconds += other.seconds


@dataclass(frozen=True)
class CopyFrom:
    """Overlay content that is another file on disk (a file renamed in the session)."""

    path: str


Overlay = bytes | CopyFrom | None
"""Overlay content of one path: its bytes, a file to copy, or None (deleted)."""

_Stat = tuple[int, int]  # (mtime_ns, size)


@dataclass(frozen=True)
class _Entry:
    source: Literal["disk", "overlay"]
    key: object  # disk: (source path, mtime_ns, size); overlay: digest of the content
    copy: _Stat  # our copy as we left it, to notice a process changing it


def _stat_key(st: os.stat_result) -> _Stat:
    return (st.st_mtime_ns, st.st_size)


def _never(path: str) -> bool:
    return False


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


class TreeMirror:
    """Mirrors files under source roots into destination roots.

    `pairs` maps each source root to its destination root; `bytecode_dirs` are the
    `PYTHONPYCACHEPREFIX` folders whose bytecode must be dropped with a rewritten source.
    """

    def __init__(
        self,
        pairs: Mapping[str, str],
        bytecode_dirs: Iterable[str] = (),
        exclude: Callable[[str], bool] | None = None,
    ) -> None:
        self._pairs = sorted(pairs.items(), key=lambda pair: -len(pair[0]))
        self._bytecode_dirs = tuple(bytecode_dirs)
        self._exclude = exclude or _never
        self._entries: dict[str, _Entry] = {}
        self._verified: set[str] = set()
        self._reflink = True

    def dest(self, path: str) -> str | None:
        """Where the copy of `path` lives; None outside every source root."""
        for root, target in self._pairs:
            if _under(path, root):
                return target + path[len(root) :]
        return None

    def paths(self) -> list[str]:
        """The source paths currently mirrored."""
        return list(self._entries)

    def apply(self, disk: Iterable[str], overlay: Mapping[str, Overlay]) -> SyncStats:
        """Make the mirror hold `disk` files overlaid by `overlay`, and nothing else we made."""
        started = time.monotonic()
        stats = SyncStats()
        self._verified.clear()
        seen: set[str] = set()
        for path in disk:
            if path in overlay or path in seen or self.dest(path) is None:
                continue
            if self._exclude(path):
                continue
            seen.add(path)
            self._sync_file(path, path, stats)
        for path, content in overlay.items():
            if self.dest(path) is None or self._exclude(path):
                continue
            seen.add(path)
            if content is None:
                if path in self._entries:
                    self._remove(path)
                    stats.removed += 1
            elif isinstance(content, CopyFrom):
                self._sync_file(path, content.path, stats)
            else:
                self._sync_bytes(path, content, stats)
        for path in [p for p in self._entries if p not in seen]:
            self._remove(path)
            stats.removed += 1
        stats.seconds = time.monotonic() - started
        return stats

    def clear(self) -> None:
        self._entries.clear()

    # -- one file -------------------------------------------------------------------------

    def _sync_file(self, path: str, source: str, stats: SyncStats) -> None:
        try:
            st = os.stat(source)
        except OSError:
            return  # vanished since the listing; the next sync removes the copy
        if not stat.S_ISREG(st.st_mode):
            return
        key = (source, st.st_mtime_ns, st.st_size)
        if self._unchanged(path, "disk", key):
            stats.unchanged += 1
            return
        if os.path.islink(source) and self._exclude(os.path.realpath(source)):
            if path in self._entries:  # a link to a secret file: never copied
                self._remove(path)
            return
        dest = self._dest(path)
        try:
            self._prepare(path, dest)
            self._copy(source, dest)
            os.chmod(dest, stat.S_IMODE(st.st_mode))
            os.utime(dest, ns=(st.st_atime_ns, st.st_mtime_ns))
            self._entries[path] = _Entry("disk", key, _stat_key(os.lstat(dest)))
        except OSError:
            self._entries.pop(path, None)  # unreadable source: retried next sync
            return
        stats.copied += 1

    def _sync_bytes(self, path: str, content: bytes, stats: SyncStats) -> None:
        digest = hashlib.blake2b(content, digest_size=16).digest()
        if self._unchanged(path, "overlay", digest):
            stats.unchanged += 1
            return
        dest = self._dest(path)
        self._prepare(path, dest)
        with open(dest, "xb") as handle:
            handle.write(content)
        self._entries[path] = _Entry("overlay", digest, _stat_key(os.lstat(dest)))
        stats.written += 1

    def _dest(self, path: str) -> str:
        dest = self.dest(path)
        assert dest is not None
        return dest

    def _unchanged(self, path: str, source: str, key: object) -> bool:
        entry = self._entries.get(path)
        if entry is None or entry.source != source or entry.key != key:
            return False
        try:
            return _stat_key(os.lstat(self._dest(path))) == entry.copy
        except OSError:
            return False

    def _prepare(self, path: str, dest: str) -> None:
        """A real folder for `dest`, nothing at `dest`, no bytecode of an older version."""
        folder = os.path.dirname(dest)
        if folder not in self._verified:
            self._real_folder(path, folder)
            self._verified.add(folder)
        try:
            os.unlink(dest)
        except FileNotFoundError:
            return
        except (IsADirectoryError, PermissionError):  # a folder a process made there
            shutil.rmtree(dest, ignore_errors=True)
            return
        if dest.endswith(_PY_SUFFIXES):
            self._drop_bytecode(dest)

    def _real_folder(self, path: str, folder: str) -> None:
        """Create `folder`, replacing symlinks or files a process put on the way."""
        root = next(target for src, target in self._pairs if _under(path, src))
        current = root
        for part in os.path.relpath(folder, root).split(os.sep):
            if part in ("", "."):
                continue
            current = os.path.join(current, part)
            try:
                st = os.lstat(current)
            except FileNotFoundError:
                break
            if not stat.S_ISDIR(st.st_mode):
                os.unlink(current)
                break
        os.makedirs(folder, exist_ok=True)

    def _drop_bytecode(self, dest: str) -> None:
        folder, name = os.path.split(dest)
        stem = glob.escape(os.path.splitext(name)[0])
        places = [os.path.join(folder, "__pycache__")]
        places += [os.path.join(d, folder.lstrip(os.sep)) for d in self._bytecode_dirs]
        for place in places:
            for stale in glob.glob(os.path.join(glob.escape(place), f"{stem}.*.pyc")):
                with contextlib.suppress(OSError):
                    os.unlink(stale)

    def _copy(self, source: str, dest: str) -> None:
        """A copy-on-write clone where the filesystem can, else a plain byte copy (which
        measured ~4x faster than `shutil.copyfile` for small files)."""
        with open(source, "rb") as src, open(dest, "xb") as dst:
            if self._reflink and self._clone(src.fileno(), dst.fileno()):
                return
            shutil.copyfileobj(src, dst, _COPY_CHUNK)

    def _clone(self, src: int, dst: int) -> bool:
        try:
            import fcntl

            fcntl.ioctl(dst, _FICLONE, src)
        except ImportError:
            self._reflink = False
        except OSError as exc:
            if exc.errno in (errno.EOPNOTSUPP, errno.ENOTTY, errno.EXDEV, errno.EINVAL):
                self._reflink = False  # this filesystem cannot clone: stop trying
        else:
            return True
        return False

    def _remove(self, path: str) -> None:
        self._entries.pop(path, None)
        dest = self._dest(path)
        root = next(target for src, target in self._pairs if _under(path, src))
        if not _under(os.path.realpath(os.path.dirname(dest)), os.path.realpath(root)):
            return  # a process swapped a folder for a symlink: never delete through it
        with contextlib.suppress(FileNotFoundError):
            os.unlink(dest)
        if dest.endswith(_PY_SUFFIXES):
            self._drop_bytecode(dest)
        folder = os.path.dirname(dest)
        while folder != root and _under(folder, root):
            cache = os.path.join(folder, "__pycache__")
            with contextlib.suppress(OSError):
                os.rmdir(cache)
            try:
                os.rmdir(folder)  # only when empty: a deleted package must vanish
            except OSError:
                break
            folder = os.path.dirname(folder)
