"""A change feed for the workspace walk: Linux inotify on every folder the walk entered.

The walk re-validates its cached folder listings with one `stat` per folder (`dircache`),
which on a large tree cost grep about a tenth of ripgrep's own time on every search. The
kernel queues an inotify event inside the very system call that changes a watched folder
(an entry created, deleted, renamed, its attributes or a file in it written), so reading
the queue, non-blocking, tells for certain whether anything changed in those folders
since the last read: a walk whose folders were all watched, and after which no event
arrived, is still exact. `IgnoreRules.walk` then serves it again without a `stat`.

What the feed cannot see, and how each is covered:

- a change made before a folder was watched: a watch is added before the folder is
  stat'ed and listed, so such a change is in that listing;
- a folder that could not be watched (the per-user watch limit, a filesystem without
  inotify): the walk is not remembered (`watch` returns False);
- a lost event (the kernel queue overflowed): any event, overflow included, counts as a
  change, and an overflow drops every watch (they are added again by the next walk);
- a watched folder deleted or moved away: its watch is dropped, so the next walk watches
  what now has that path;
- the workspace root replaced, or an ancestor of it renamed, and a filesystem mounted
  over a folder (no inotify event for either): the caller compares the root's inode and
  the process's mount table (`Stamp`) before reusing a walk;
- changes made on another machine to a network filesystem: inotify reports only local
  changes, so folders on NFS/SMB/FUSE-like filesystems are not watched (`watch` refuses
  them by the filesystem type of the root, read from the mount table).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import logging
import os
import struct
import sys
import threading
from collections.abc import Callable
from typing import NamedTuple

log = logging.getLogger(__name__)

_IN_MODIFY = 0x2
_IN_ATTRIB = 0x4
_IN_CLOSE_WRITE = 0x8
_IN_MOVED_FROM = 0x40
_IN_MOVED_TO = 0x80
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_DELETE_SELF = 0x400
_IN_MOVE_SELF = 0x800
_IN_Q_OVERFLOW = 0x4000
_IN_IGNORED = 0x8000
_IN_ONLYDIR = 0x1000000
_IN_DONT_FOLLOW = 0x2000000
_MASK = (
    _IN_MODIFY
    | _IN_ATTRIB
    | _IN_CLOSE_WRITE
    | _IN_MOVED_FROM
    | _IN_MOVED_TO
    | _IN_CREATE
    | _IN_DELETE
    | _IN_DELETE_SELF
    | _IN_MOVE_SELF
    | _IN_ONLYDIR
    | _IN_DONT_FOLLOW
)
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = 0o2000000
_EVENT = struct.Struct("iIII")

MAX_WATCHES = 50_000
"""Folders one feed watches at most (the kernel's per-user limit is shared with editors)."""

_LOCAL_ONLY = frozenset(
    {"nfs", "nfs4", "cifs", "smb3", "smbfs", "9p", "fuse", "sshfs", "afs", "ceph", "glusterfs"}
)
"""Filesystem types whose changes may come from another machine (no inotify event)."""


class Stamp(NamedTuple):
    """What must be unchanged, besides the events, for a remembered walk to still hold."""

    root: tuple[int, int]
    mounts: bytes


def stamp(root: str) -> Stamp | None:
    """The root's (inode, device) and the mount table; None when either cannot be read."""
    try:
        st = os.stat(root)
        with open("/proc/self/mountinfo", "rb") as fh:
            mounts = fh.read()
    except OSError:
        return None
    return Stamp((st.st_ino, st.st_dev), mounts)


def _remote(root: str, mounts: bytes) -> bool:
    """Whether `root` lies on a filesystem type that may change without local events."""
    best, kind = "", ""
    for line in mounts.decode("utf-8", "replace").splitlines():
        left, _, right = line.partition(" - ")
        fields = left.split()
        if len(fields) < 5 or not right:
            continue
        point = fields[4].replace("\\040", " ")
        fstype = right.split()[0].split(".")[0]
        if point.startswith(root.rstrip("/") + "/") and fstype in _LOCAL_ONLY:
            return True  # a remote filesystem mounted inside the workspace
        if (root == point or root.startswith(point.rstrip("/") + "/")) and len(point) > len(best):
            best, kind = point, fstype
    return kind in _LOCAL_ONLY


class ChangeFeed:
    """One inotify instance: `watch` folders, then `generation` counts the changes seen."""

    def __init__(self, fd: int, add_watch: Callable[[int, bytes, int], int]) -> None:
        self._fd = fd
        self._add_watch = add_watch
        self._paths: dict[str, int] = {}
        self._wds: dict[int, set[str]] = {}
        self._generation = 0
        self._lock = threading.Lock()

    @classmethod
    def open(cls, root: str) -> ChangeFeed | None:
        """A feed for folders under `root`, or None where inotify cannot be trusted."""
        if not sys.platform.startswith("linux"):
            return None
        current = stamp(root)
        if current is None or _remote(root, current.mounts):
            return None
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
            fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        except (OSError, AttributeError):
            return None
        if fd < 0:
            log.debug("no inotify: %s", os.strerror(ctypes.get_errno()))
            return None
        add_watch = libc.inotify_add_watch
        add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        add_watch.restype = ctypes.c_int
        return cls(fd, add_watch)

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    def watch(self, folder: str, *, optional: bool = False) -> bool:
        """Watch `folder` (before it is stat'ed and listed). False when it cannot be
        watched; with `optional`, a folder that does not exist counts as watched (its
        parent's watch reports its creation)."""
        if folder in self._paths:
            return True
        with self._lock:
            if self._fd < 0 or len(self._paths) >= MAX_WATCHES:
                return False
            wd = self._add_watch(self._fd, os.fsencode(folder), _MASK)
            if wd < 0:
                code = ctypes.get_errno()
                return optional and code in (errno.ENOENT, errno.ENOTDIR)
            self._paths[folder] = wd
            self._wds.setdefault(wd, set()).add(folder)
            return True

    def generation(self) -> int:
        """How many batches of changes were seen so far: read what the kernel queued."""
        with self._lock:
            if self._fd < 0:
                self._generation += 1
                return self._generation
            changed = False
            while True:
                try:
                    data = os.read(self._fd, 1 << 16)
                except BlockingIOError:
                    break
                except OSError:
                    self._reset()
                    changed = True
                    break
                changed = True
                self._events(data)
            if changed:
                self._generation += 1
            return self._generation

    def _events(self, data: bytes) -> None:
        """Drop the watches the events say no longer watch their path."""
        at = 0
        while at + _EVENT.size <= len(data):
            wd, mask, _cookie, length = _EVENT.unpack_from(data, at)
            at += _EVENT.size + length
            if mask & _IN_Q_OVERFLOW:
                self._reset()
            elif mask & (_IN_IGNORED | _IN_MOVE_SELF | _IN_DELETE_SELF):
                for path in self._wds.pop(wd, set()):
                    self._paths.pop(path, None)

    def _reset(self) -> None:
        """Events were lost: forget every watch (the kernel keeps them; re-adding one
        returns the same descriptor), so the next walk watches everything again."""
        self._paths.clear()
        self._wds.clear()
