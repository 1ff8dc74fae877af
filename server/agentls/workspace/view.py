"""`LayeredView`: a frozen picture of disk + editor buffers + one session's staged edits.

Listing and searching walk thousands of files, so they run in a worker thread; the
buffers and the changeset, however, keep changing on the event loop. A view copies the
overlay (buffers and staged entries) once, on the loop, and then answers "which files
exist" and "where is this file's content" without touching live state. Internally it
works on path strings, because constructing a `Path` per file dominates a large walk.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Protocol

from agentls.workspace.buffers import Buffer
from agentls.workspace.changes import DELETED, MovedFrom, StagedText


class Files(Protocol):
    """What the layered view needs of the files on disk (`workspace.core.Workspace` is
    one; named here, not imported, so the two modules do not import each other)."""

    roots: list[Path]

    def contains(self, path: Path | str) -> bool: ...
    def display(self, path: Path | str) -> str: ...
    def contains_root(self, path: Path | str) -> bool: ...
    def is_ignored(self, path: Path, is_dir: bool | None = None) -> bool: ...
    def file_strs(
        self, under: Path | str | None = None, *, respect_ignore: bool | None = None
    ) -> Iterator[str]: ...


def is_under(path: Path | str, folder: Path | str) -> bool:
    text, base = os.fspath(path), os.fspath(folder)
    return text == base or text.startswith(base.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class OnDisk:
    """`LayeredView.source` result: the content is the disk file at `path` (may be gone)."""

    path: str


class LayeredView:
    """What the session sees: staged edits over buffers over disk, ignore rules applied."""

    def __init__(
        self, workspace: Files, staged: dict[Path, StagedText], buffers: dict[Path, Buffer]
    ) -> None:
        self.workspace = workspace
        self.staged = staged
        self.buffers = buffers
        self._staged = {str(p): v for p, v in staged.items()}
        self._buffers = {str(p): b for p, b in buffers.items()}

    @property
    def has_overlay(self) -> bool:
        """Whether any path has staged or buffer content (most searches: none)."""
        return bool(self._staged or self._buffers)

    def overlays(self, path: str) -> bool:
        """Whether the overlay (staged or buffer) has anything for this path string."""
        return path in self._staged or path in self._buffers

    def source(self, path: Path | str) -> str | OnDisk | None:
        """The file's text when the overlay has it, else where on disk it is.

        None when the session deleted it.
        """
        key = os.fspath(path)
        staged = self._staged.get(key)
        if isinstance(staged, str):
            return staged
        if staged is DELETED:
            return None
        if isinstance(staged, MovedFrom):
            key = str(staged.origin)
        buffer = self._buffers.get(key)
        return buffer.text if buffer is not None else OnDisk(key)

    def _overlay_files(self) -> Iterator[str]:
        """Paths that exist only or differently through the overlay."""
        for path, staged in self._staged.items():
            if staged is not DELETED:
                yield path
        for path in self._buffers:
            if path not in self._staged:
                yield path

    def is_file(self, path: Path | str) -> bool:
        key = os.fspath(path)
        staged = self._staged.get(key)
        if staged is DELETED:
            return False
        if staged is not None or key in self._buffers:
            return True
        return os.path.isfile(key)

    def is_dir(self, path: Path | str) -> bool:
        """A folder on disk, or a folder that exists only because staged files are in it."""
        key = os.fspath(path)
        if os.path.isdir(key):
            return True
        return any(p != key and is_under(p, key) for p in self._overlay_files())

    def exists(self, path: Path | str) -> bool:
        return self.is_file(path) or self.is_dir(path)

    def files(self, under: Path | None = None) -> list[Path]:
        """Every file under `under` (default: all roots), ignore rules applied, sorted."""
        return [Path(p) for p in self.file_strs(under)]

    def file_strs(
        self, under: Path | str | None = None, *, should_stop: Callable[[], bool] | None = None
    ) -> list[str]:
        """`files` as absolute path strings (the fast form for listing and search).

        Asking explicitly for an ignored folder lists it (only VCS folders stay hidden);
        asking for a file returns just that file.
        """
        ws = self.workspace
        top = os.fspath(under) if under is not None else None
        if top is not None and self.is_file(top):
            return [top]
        respect = top is None or ws.contains_root(top) or not ws.is_ignored(Path(top), True)
        walked, complete = _collect(ws.file_strs(top, respect_ignore=respect), should_stop)
        once = len(ws.roots) == 1  # one walk lists each file once (several roots may overlap)
        if not complete:
            return sorted(walked if once else set(walked))
        added: list[str] = []
        for path in self._overlay_files():
            inside = is_under(path, top) if top is not None else ws.contains(path)
            if inside and not (respect and ws.is_ignored(Path(path), is_dir=False)):
                added.append(path)
        deleted = [path for path, staged in self._staged.items() if staged is DELETED]
        if once and not added and not deleted:
            return sorted(walked)  # a list in walk order sorts faster than a set
        merged = set(walked)
        merged.update(added)
        merged.difference_update(deleted)
        return sorted(merged)


_CHUNK = 512
"""Files taken from the walk between two `should_stop` checks."""


def _collect(walk: Iterator[str], should_stop: Callable[[], bool] | None) -> tuple[list[str], bool]:
    """The walk's files in walk order, and whether the walk finished (False when
    `should_stop` said to stop; it is asked after every `_CHUNK` files)."""
    if should_stop is None:
        return list(walk), True
    found: list[str] = []
    while True:
        chunk = list(islice(walk, _CHUNK))
        found.extend(chunk)
        if len(chunk) < _CHUNK:
            return found, True
        if should_stop():
            return found, False
