"""`ChangeSet`: a session's staged edits, layered over disk and editor buffers.

Tools never write to disk: they stage here, reads see the staged view, and the LSP layer
later turns `entries()` into one `WorkspaceEdit` (review mode) or applies each change as it
is announced to `on_change` listeners (auto mode). Each touched original file remembers the
text and buffer version it was based on, so the delivered edit can be versioned and a
buffer the user changed meanwhile is detected rather than overwritten.

The state is kept condensed, per file, not as a log: writing a file twice is one change,
renaming a file back is no change, and deleting a file created in the session leaves
nothing. Paths are absolute and symlink-free (as `Workspace.resolve` returns them).
"""

from __future__ import annotations

import enum
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal

log = logging.getLogger(__name__)

__all__ = [
    "DELETED",
    "Change",
    "ChangeEvent",
    "ChangeKind",
    "ChangeSet",
    "Deleted",
    "MovedFrom",
    "StagedText",
]


class _Marker(enum.Enum):
    DELETED = "deleted"


DELETED: Final = _Marker.DELETED
"""`ChangeSet.text` result for a path the session deleted (or renamed away)."""
Deleted = Literal[_Marker.DELETED]


@dataclass(frozen=True)
class MovedFrom:
    """`ChangeSet.text` result for a renamed file whose content the session did not change:
    read it from `origin` (editor buffer or disk) as it is now."""

    origin: Path


StagedText = str | Deleted | MovedFrom
"""What the session has staged at one path."""

ChangeKind = Literal["create", "modify", "delete", "rename"]


@dataclass(frozen=True)
class Change:
    """One file's net staged change, as the LSP layer needs it for a `WorkspaceEdit`.

    - create: `path`, `new_text`.
    - modify: `path`, `original_text` → `new_text`, `base_version`.
    - delete: `path`, `original_text` (None when it was not text), `base_version`.
    - rename: `old_path` → `path`; `original_text`/`base_version` of `old_path`;
      `new_text` is None when the content moves unchanged, else the new content.
    """

    kind: ChangeKind
    path: Path
    old_path: Path | None = None
    original_text: str | None = None
    new_text: str | None = None
    base_version: int | None = None


@dataclass(frozen=True)
class ChangeEvent:
    """Told to listeners after each staging operation (auto mode applies it right away)."""

    kind: Literal["write", "delete", "rename", "discard"]
    path: Path
    new_path: Path | None = None


ChangeListener = Callable[[ChangeEvent], None]


@dataclass
class _Base:
    """A file that existed before the session touched it."""

    original_text: str | None
    version: int | None
    seq: int


@dataclass
class _Live:
    """What exists at a path in the session's view.

    `origin` is the original file whose content this continues (None: created in the
    session); `text` None means "the origin's content, unchanged" (a plain rename).
    """

    origin: Path | None
    text: str | None
    seq: int


class ChangeSet:
    """Edits one session has staged but not yet delivered to the editor."""

    def __init__(self, on_change: ChangeListener | None = None) -> None:
        self.on_change = on_change
        """Optional hook called after every staging operation (besides `add_listener`)."""
        self._bases: dict[Path, _Base] = {}
        self._live: dict[Path, _Live] = {}
        self._listeners: list[ChangeListener] = []
        self._seq = 0
        self.applied: list[Change] = []
        """Changes delivered to the editor or disk, in order (`record_applied`): what a
        rewind reverses."""

    def __repr__(self) -> str:
        return f"ChangeSet({len(self)} changes)"

    # -- staging ------------------------------------------------------------------------

    def stage_write(
        self,
        path: Path,
        new_text: str,
        base_text: str | None,
        base_version: int | None = None,
        *,
        existed: bool | None = None,
    ) -> None:
        """Create or overwrite `path` with `new_text`.

        `base_text`/`base_version` describe the file as the tool found it (buffer or disk);
        they are recorded only the first time the session touches the path. `existed`
        defaults to `base_text is not None`; pass True for an existing file whose content
        is not text.
        """
        existed = base_text is not None if existed is None else existed
        seq = self._next()
        entry = self._live.get(path)
        if entry is not None:
            entry.text = new_text
        else:
            if existed and path not in self._bases:
                self._bases[path] = _Base(base_text, base_version, seq)
            continues = path in self._bases and path not in self._origins()
            self._live[path] = _Live(path if continues else None, new_text, seq)
        self._settle(ChangeEvent("write", path))

    def stage_delete(
        self, path: Path, base_text: str | None = None, base_version: int | None = None
    ) -> None:
        """Delete `path` (an existing file, or one created or renamed in the session)."""
        seq = self._next()
        entry = self._live.pop(path, None)
        if entry is None:
            if path in self._bases:
                raise ValueError(f"{path} is already deleted in this session")
            self._bases[path] = _Base(base_text, base_version, seq)
        else:
            if entry.origin is not None and entry.origin != path:
                self._bases[entry.origin].seq = seq
            if path in self._bases:
                self._bases[path].seq = seq
        self._settle(ChangeEvent("delete", path))

    def stage_rename(
        self,
        old: Path,
        new: Path,
        base_text: str | None = None,
        base_version: int | None = None,
    ) -> None:
        """Move `old` to `new`; the caller has checked that `new` does not exist."""
        if new in self._live:
            raise ValueError(f"{new} already exists in this session")
        seq = self._next()
        entry = self._live.pop(old, None)
        if entry is None:
            if old in self._bases:
                raise ValueError(f"{old} was deleted in this session")
            self._bases[old] = _Base(base_text, base_version, seq)
            entry = _Live(old, None, seq)
        entry.seq = seq
        self._live[new] = entry
        self._settle(ChangeEvent("rename", old, new))

    def discard(self, paths: Iterable[Path] | None = None) -> list[Path]:
        """Drop staged changes (all, or those touching `paths`); returns the paths restored.

        Changes are dropped whole: discarding the target of a rename restores its source.
        """
        items = self._items()
        if paths is None:
            dropped = items
        else:
            wanted = set(paths)
            dropped = []
            grew = True
            while grew:
                grew = False
                for item in items:
                    touched = _touched(item[1])
                    if item not in dropped and touched & wanted:
                        dropped.append(item)
                        wanted |= touched
                        grew = True
        kept = [item for item in items if item not in dropped]
        self._rebuild(kept)
        restored = [p for _, change in dropped for p in _ordered_touched(change)]
        for path in restored:
            self._emit(ChangeEvent("discard", path))
        return restored

    def record_applied(self, entries: Iterable[Change]) -> None:
        """Note changes the host delivered (call before dropping them with `discard`)."""
        self.applied.extend(entries)

    def rebase(self, path: Path, original_text: str) -> None:
        """Record that `path` now holds `original_text` outside the session (some of the
        change's hunks were applied): the rest stays staged on top of it; a change with
        nothing left drops out. Only for a staged modification of an existing file."""
        entry = self._live.get(path)
        base = self._bases.get(path)
        if entry is None or base is None or entry.origin != path:
            raise ValueError(f"{path} has no staged modification to rebase")
        base.original_text = original_text
        base.version = None
        self._settle(ChangeEvent("write", path))

    # -- reading ------------------------------------------------------------------------

    def text(self, path: Path) -> StagedText | None:
        """Staged text, `DELETED`, `MovedFrom(origin)`, or None when not staged."""
        entry = self._live.get(path)
        if entry is not None:
            if entry.text is not None:
                return entry.text
            assert entry.origin is not None
            return MovedFrom(entry.origin)
        if path in self._bases:
            return DELETED
        return None

    def overlay(self) -> dict[Path, StagedText]:
        """Every path that reads differently in this session (a snapshot for search)."""
        result: dict[Path, StagedText] = {path: DELETED for path in self._bases}
        for path in self._live:
            staged = self.text(path)
            assert staged is not None
            result[path] = staged
        return result

    def changed_paths(self) -> list[Path]:
        """Paths whose content or existence differs, in staging order (both ends of renames)."""
        seen: dict[Path, None] = {}
        for _, change in self._items():
            for path in _ordered_touched(change):
                seen.setdefault(path, None)
        return list(seen)

    def entries(self) -> list[Change]:
        """Net change per file, in the order staged (a valid order for documentChanges)."""
        return [change for _, change in self._items()]

    def is_empty(self) -> bool:
        return not self._live and not self._bases

    def copy(self) -> ChangeSet:
        """The same staged changes in a new changeset without listeners nor applied log:
        a "what if" view (the checks lint a file as it was before the session changed it
        by staging its old text in a copy)."""
        other = ChangeSet()
        other._rebuild(self._items())
        other._seq = self._seq
        return other

    def __len__(self) -> int:
        return len(self._items())

    def add_listener(self, callback: ChangeListener) -> Callable[[], None]:
        """Subscribe to staging events; returns a function that unsubscribes."""
        self._listeners.append(callback)

        def remove() -> None:
            if callback in self._listeners:
                self._listeners.remove(callback)

        return remove

    # -- internals ----------------------------------------------------------------------

    def _next(self) -> int:
        self._seq += 1
        return self._seq

    def _origins(self) -> set[Path]:
        return {e.origin for e in self._live.values() if e.origin is not None}

    def _settle(self, event: ChangeEvent) -> None:
        """Drop changes that cancelled out (e.g. renamed back, or edited back to original)."""
        for path, entry in list(self._live.items()):
            if entry.origin != path:
                continue
            base = self._bases[path]
            if entry.text is None or entry.text == base.original_text:
                del self._live[path]
                del self._bases[path]
        self._emit(event)

    def _emit(self, event: ChangeEvent) -> None:
        listeners = [self.on_change] if self.on_change is not None else []
        for callback in [*listeners, *self._listeners]:
            try:
                callback(event)
            except Exception:
                log.exception("change listener failed for %s", event)

    def _items(self) -> list[tuple[int, Change]]:
        items: list[tuple[int, Change]] = []
        origins = self._origins()
        for path, base in self._bases.items():
            here = self._live.get(path)
            if (here is not None and here.origin == path) or path in origins:
                continue
            items.append(
                (base.seq, Change("delete", path, None, base.original_text, None, base.version))
            )
        for path, entry in self._live.items():
            if entry.origin is None:
                items.append((entry.seq, Change("create", path, new_text=entry.text)))
                continue
            base = self._bases[entry.origin]
            if entry.origin == path:
                change = Change("modify", path, None, base.original_text, entry.text, base.version)
            else:
                change = Change(
                    "rename", path, entry.origin, base.original_text, entry.text, base.version
                )
            items.append((entry.seq, change))
        items.sort(key=lambda item: item[0])
        return items

    def _rebuild(self, items: list[tuple[int, Change]]) -> None:
        self._bases.clear()
        self._live.clear()
        for seq, change in items:
            if change.kind in ("modify", "delete"):
                self._bases[change.path] = _Base(change.original_text, change.base_version, seq)
            if change.kind == "create":
                self._live[change.path] = _Live(None, change.new_text, seq)
            elif change.kind == "modify":
                self._live[change.path] = _Live(change.path, change.new_text, seq)
            elif change.kind == "rename":
                assert change.old_path is not None
                self._bases[change.old_path] = _Base(change.original_text, change.base_version, seq)
                self._live[change.path] = _Live(change.old_path, change.new_text, seq)


def _ordered_touched(change: Change) -> list[Path]:
    return [change.old_path, change.path] if change.old_path is not None else [change.path]


def _touched(change: Change) -> set[Path]:
    return set(_ordered_touched(change))
