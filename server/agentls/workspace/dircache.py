"""Per-folder listing cache for the workspace walk, re-validated with one `stat` per folder.

The agent lists and greps the same, mostly unchanged tree many times per session, and
listing it (a `scandir` per folder, a type check per entry, the ignore decisions) cost
about as much CPU as ripgrep's whole search. A folder's mtime changes whenever an entry is
added to, removed from or renamed in it, so a listing taken while the mtime had its
current value is still the folder's content: a repeated walk only `stat`s each folder and
re-lists the ones whose key changed. What is derived from a listing (the walk's ignore
decisions) is remembered beside it by the caller and kept as long as the listing is.

Correctness rules, each one a way a cached listing could be stale:

- The key is (inode, device, mtime_ns, ctime_ns, mode, uid, gid), so a folder replaced by
  another of the same name, made unreadable with chmod/chown/an ACL, or changed by a tool
  that then sets its mtime back (rsync -a, tar: the ctime cannot be set back) is noticed.
- Racy timestamps (git's "racy git" problem): a change made in the same timestamp tick as
  the listing leaves the mtime as it was (filesystems stamp at a granularity from ~4 ms on
  ext4 up to 2 s on FAT; a network filesystem stamps with its server's clock, which may lag
  ours a little: skew beyond the window is not covered). A listing is therefore trusted
  later only when the folder's mtime was more than `RACY_WINDOW_NS` older than the moment
  it was listed; otherwise (mtime recent, or in the future) the next walk lists the folder
  again. A folder being edited right now is thus re-listed until it has been quiet for two
  seconds.
- The key is taken before listing: a change between the two then shows up as a different
  key next time (re-listing once too often, never serving a stale listing).

Entries are replaced whole in a dict (only their `derived` slot is ever re-assigned, and
always to a new immutable value), so concurrent walks (tools run in parallel threads) read
them without a lock; writers take a lock to keep the dict and the pruning of vanished
folders consistent. Two threads re-listing one folder at once both store a correct entry
(each entry carries the key it was listed under).

Memory is bounded by the tree: the entries of a folder that disappears (with its
sub-folders') are dropped when its parent is re-listed.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from operator import attrgetter
from typing import Generic, NamedTuple, TypeVar

log = logging.getLogger(__name__)

RACY_WINDOW_NS = 2_000_000_000
"""A listing of a folder whose mtime is this close to (or after) the listing time is not
trusted by the next walk: a change in the same timestamp tick would not move the mtime."""

D = TypeVar("D")

_Key = tuple[int, int, int, int, int, int, int]


class Listing(NamedTuple):
    """What the walk needs of a folder's entries, in name order.

    Symbolic links are neither files nor folders here (the walk never follows them), and
    neither are sockets, FIFOs or devices.
    """

    files: tuple[str, ...]
    """Paths of the regular files."""
    dirs: tuple[tuple[str, str], ...]
    """(name, path) of the sub-folders."""
    present: frozenset[str]
    """Which of the watched names (the ignore files) exist here, as any kind of entry."""

    @classmethod
    def of(cls, entries: Iterable[os.DirEntry[str]], watch: frozenset[str]) -> Listing:
        files: list[str] = []
        dirs: list[tuple[str, str]] = []
        present: list[str] = []
        for entry in sorted(entries, key=_name):
            if entry.name in watch:
                present.append(entry.name)
            if entry.is_symlink():
                continue
            if entry.is_dir():
                dirs.append((entry.name, entry.path))
            elif entry.is_file():
                files.append(entry.path)
        return cls(tuple(files), tuple(dirs), frozenset(present))


_name = attrgetter("name")


class Entry(Generic[D]):
    """One folder's cached listing, and what the caller derived from it.

    Everything but `derived` is fixed. `derived` is one reference, replaced whole (never
    changed in place), so a reader sees either the old or the new value; the caller stores
    with it whatever it needs to check that it still applies.
    """

    __slots__ = ("derived", "key", "listing", "trusted")

    def __init__(self, key: _Key, trusted: bool, listing: Listing, derived: D | None) -> None:
        self.key = key
        self.trusted = trusted
        """False when the listing may have missed a change made in the same mtime tick."""
        self.listing = listing
        self.derived = derived


class DirCache(Generic[D]):
    """Folder listings keyed by path, each valid while the folder's stat key is unchanged.

    `forgotten` is called with each folder whose entry is dropped, so the owner can drop
    its own per-folder state (the compiled ignore rules) with it.
    """

    def __init__(
        self,
        watch: Iterable[str] = (),
        *,
        forgotten: Callable[[str], None] | None = None,
    ) -> None:
        self._watch = frozenset(watch)
        self._forgotten = forgotten
        self._entries: dict[str, Entry[D]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, folder: str) -> Entry[D] | None:
        """The folder's current listing: the cached one when its key still matches and it
        was trusted, else a new one. None when the folder cannot be read (it is skipped)."""
        try:
            st = os.stat(folder)
        except OSError:
            self._forget([folder])
            return None
        # ctime too: tools that restore a folder's mtime after changing it (rsync -a, tar)
        # cannot restore its ctime, and chmod/chown/ACL changes move it as well.
        key = (
            st.st_ino,
            st.st_dev,
            st.st_mtime_ns,
            st.st_ctime_ns,
            st.st_mode,
            st.st_uid,
            st.st_gid,
        )
        old = self._entries.get(folder)
        if old is not None and old.trusted and old.key == key:
            return old
        return self._relist(folder, key, st.st_mtime_ns, old)

    def _relist(
        self, folder: str, key: _Key, mtime_ns: int, old: Entry[D] | None
    ) -> Entry[D] | None:
        listed_at = time.time_ns()
        try:
            with os.scandir(folder) as it:
                listing = Listing.of(it, self._watch)
        except OSError as exc:
            log.debug("cannot list %s: %s", folder, exc)
            self._forget([folder])
            return None
        trusted = mtime_ns < listed_at - RACY_WINDOW_NS
        if old is not None and old.listing == listing:
            entry = Entry(key, trusted, old.listing, old.derived)
        else:
            entry = Entry(key, trusted, listing, None)
        with self._lock:
            self._entries[folder] = entry
        if old is not None and old.listing is not entry.listing:
            kept = {path for _, path in listing.dirs}
            self._forget([path for _, path in old.listing.dirs if path not in kept])
        return entry

    def _forget(self, folders: list[str]) -> None:
        """Drop the entries of `folders` and of every sub-folder they had."""
        stack = list(folders)
        while stack:
            folder = stack.pop()
            with self._lock:
                entry = self._entries.pop(folder, None)
            if self._forgotten is not None:
                self._forgotten(folder)
            if entry is not None:
                stack.extend(path for _, path in entry.listing.dirs)
