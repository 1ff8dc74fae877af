"""`Workspace`: the roots the agent may act on, shared by every session.

It combines the pieces tools need in one object handed over in `ToolContext`: path safety
(`resolve`/`display`), ignore rules (`is_ignored`/`iter_files`), the editor buffer overlay
the LSP layer keeps current (`set_buffer`/`close_buffer`), and the layered read — session
staged edits > editor buffer > disk — that every tool reads through.
"""

from __future__ import annotations

import difflib
import logging
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import islice
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar, cast

from agentls.errors import WorkspaceError
from agentls.workspace.buffers import Buffer, BufferStore, Listener
from agentls.workspace.changes import DELETED, ChangeSet, MovedFrom
from agentls.workspace.ignore import DEFAULT_SKIP_DIRS, IgnoreRules
from agentls.workspace.paths import PathResolver
from agentls.workspace.services import WorkspaceServices
from agentls.workspace.textio import DEFAULT_MAX_FILE_BYTES, read_disk_text
from agentls.workspace.view import LayeredView, is_under

log = logging.getLogger(__name__)

TextSource = Literal["staged", "buffer", "disk"]
T = TypeVar("T")

_SUGGEST_SCAN_LIMIT = 20_000


@dataclass(frozen=True)
class TextSnapshot:
    """A file's text as one layer provided it."""

    path: Path
    text: str
    source: TextSource
    version: int | None
    """The editor buffer version the text came from (None unless read from a buffer)."""
    lossy: bool = False
    """Undecodable bytes were replaced with U+FFFD (only when read with `lossy=True`)."""


class Attachment(Generic[T]):
    """The key of a per-workspace cache (the symbol index, the shadow copies, the web cache);
    its type parameter is the type of what it holds. Modules that build on the workspace
    keep the state they build up on it through these keys, not in module-level registries,
    so two workspaces (or two tests) never share it and closing the workspace ends it.
    Services (what settings or a host give) are typed fields instead: `Workspace.services`
    and the runtime's `ToolServices` (tests/test_tool_services.py allows only caches)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"Attachment({self.name!r})"


SECRETS_JOIN_S = 10.0
"""How long a search waits for the secret rules' warm-up before asking them itself."""


class Workspace:
    """The user's workspace: one or more root folders, shared by all sessions."""

    def __init__(
        self,
        roots: Sequence[Path],
        *,
        ignore_patterns: Iterable[str] = (),
        skip_dirs: Iterable[str] = DEFAULT_SKIP_DIRS,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    ) -> None:
        self._paths = PathResolver(roots)
        self.roots: list[Path] = self._paths.roots
        self._root_strs = frozenset(str(r) for r in self.roots)
        self.ignore = IgnoreRules(self.roots, extra_patterns=ignore_patterns, skip_dirs=skip_dirs)
        self.max_file_bytes = max_file_bytes
        self._buffers = BufferStore()
        self.services = WorkspaceServices.defaults(self.roots)
        """The settings-made services (secrets, read roots, environment, the host's editor
        files and terminal), set by the runtime: `agentls.workspace.services`."""
        self._attachments: dict[Attachment[Any], Any] = {}
        self._attach_lock = threading.Lock()
        self._secrets_warm = threading.Event()
        self._secrets_warm.set()  # no warm-up of the secret rules under way

    # -- attached services ----------------------------------------------------------------

    def attached(self, key: Attachment[T], create: Callable[[], T]) -> T:
        """The service under `key`, made by `create` on first use (once, even when several
        threads ask at the same time)."""
        with self._attach_lock:
            if key not in self._attachments:
                self._attachments[key] = create()
            return cast(T, self._attachments[key])

    def attach(self, key: Attachment[T], value: T) -> None:
        """Set (or replace) the service under `key`."""
        with self._attach_lock:
            self._attachments[key] = value

    def detach(self, key: Attachment[T]) -> T | None:
        """Remove and return the service under `key` (None when there is none)."""
        with self._attach_lock:
            return cast("T | None", self._attachments.pop(key, None))

    def close(self) -> None:
        """Close every attached service that has a `close()` (server shutdown): the index
        persists pending changes, shadow copies are deleted. The workspace stays usable;
        services are made again on next use."""
        with self._attach_lock:
            services = list(self._attachments.values())
            self._attachments.clear()
        for service in services:
            closer = getattr(service, "close", None)
            if callable(closer):
                try:
                    closer()
                except Exception:
                    log.exception("closing %r failed", service)

    # -- paths --------------------------------------------------------------------------

    def resolve(self, path: str | Path) -> Path:
        """Absolute, symlink-resolved path inside the roots; `WorkspaceError` otherwise."""
        return self._paths.resolve(path)

    def display(self, path: Path | str) -> str:
        """The workspace-relative posix path used in tool output."""
        return self._paths.display(path)

    def contains(self, path: Path | str) -> bool:
        return self._paths.contains(path)

    # -- ignore rules -------------------------------------------------------------------

    def is_ignored(self, path: Path, is_dir: bool | None = None) -> bool:
        return self.ignore.is_ignored(path, is_dir)

    def iter_files(
        self, under: Path | None = None, *, respect_ignore: bool | None = None
    ) -> Iterator[Path]:
        """Files on disk (not the layered view), pruning ignored folders, no symlinks.

        `respect_ignore` defaults to True, except when `under` is itself ignored: asking for
        `node_modules/pkg` explicitly lists it.
        """
        for path in self.file_strs(under, respect_ignore=respect_ignore):
            yield Path(path)

    def file_strs(
        self, under: Path | str | None = None, *, respect_ignore: bool | None = None
    ) -> Iterator[str]:
        """`iter_files` as path strings, for walks where `Path` objects cost too much."""
        if under is None:
            for root in self.roots:
                if not any(o != root and is_under(root, o) for o in self.roots):
                    yield from self.ignore.walk(root, respect=respect_ignore is not False)
            return
        top = os.fspath(under)
        if os.path.isfile(top):
            yield top
            return
        if respect_ignore is None:
            respect_ignore = self.contains_root(top) or not self.is_ignored(Path(top), True)
        yield from self.ignore.walk(top, respect=respect_ignore)

    def start_warm_up(self, *, secrets: bool = False) -> threading.Thread:
        """Walk the roots once in a background thread (`IgnoreRules.warm_up`): a server
        starts it as soon as the workspace exists, so its first search or listing finds
        the walk done, or joins it, instead of reading every folder cold first.

        With `secrets`, also ask the secret rules about every file walked (start it once
        they are loaded): grep asks them per file on every search, and their answers are
        remembered per rule set, so a first search would otherwise pay for all of them
        (56 ms of CPU for 8.5k files) before ripgrep starts. The answers are the same.
        It also finds grep's ripgrep (a `--version` run and a look through the installed
        packages: 16 ms that the first search paid)."""
        target = self._warm_secrets if secrets else self.ignore.warm_up
        if secrets:
            self._secrets_warm.clear()
        thread = threading.Thread(target=target, name="agentls-walk", daemon=True)
        thread.start()
        return thread

    def _warm_secrets(self) -> None:
        from agentls.workspace.ripgrep import find_ripgrep

        try:
            find_ripgrep()
            self.services.secrets.readable(self.file_strs())
        finally:
            self._secrets_warm.set()

    def join_secrets_warm_up(self, timeout: float = SECRETS_JOIN_S) -> None:
        """Wait for a warm-up of the secret rules under way (`start_warm_up`): a first
        search that asked them about the same files meanwhile would repeat its work beside
        it, both slowed by sharing the interpreter."""
        self._secrets_warm.wait(timeout)

    def contains_root(self, path: Path | str) -> bool:
        """Whether `path` is one of the roots."""
        return os.fspath(path) in self._root_strs

    # -- editor buffers -----------------------------------------------------------------

    @staticmethod
    def _key(path: Path) -> Path:
        return Path(os.path.realpath(path))

    def set_buffer(self, path: Path, text: str, version: int | None) -> Buffer:
        """Record an open editor document's full text (didOpen/didChange)."""
        return self._buffers.set(self._key(path), text, version)

    def close_buffer(self, path: Path) -> None:
        """The editor closed the document (didClose): reads fall back to disk."""
        self._buffers.close(self._key(path))

    def buffer(self, path: Path) -> Buffer | None:
        return self._buffers.get(self._key(path))

    def open_paths(self) -> list[Path]:
        return self._buffers.paths()

    def version_of(self, path: Path) -> int | None:
        """The editor version of `path`'s buffer (None when not open or unversioned)."""
        buffer = self.buffer(path)
        return buffer.version if buffer is not None else None

    def add_listener(self, callback: Listener) -> Callable[[], None]:
        """Call `callback(path)` on every buffer change and reported disk change.

        Returns a function that unsubscribes. Listener errors are logged, not raised.
        """
        return self._buffers.add_listener(callback)

    def notify_disk_change(self, path: Path) -> None:
        """The host saw `path` change on disk (didChangeWatchedFiles, didSave)."""
        self._buffers.notify(self._key(path))

    # -- layered reads ------------------------------------------------------------------

    def load(
        self, path: Path, changes: ChangeSet | None = None, *, lossy: bool = False
    ) -> TextSnapshot:
        """The file's text from the top layer that has it: staged > buffer > disk.

        Raises `WorkspaceError` for a missing file (suggesting close names), a directory,
        a binary or non-UTF-8 file (unless `lossy`), or one over `max_file_bytes`.
        """
        if changes is not None:
            staged = changes.text(path)
            if isinstance(staged, str):
                return TextSnapshot(path, staged, "staged", None)
            if staged is DELETED:
                raise self.missing_error(path, changes)
            if isinstance(staged, MovedFrom):
                inner = self.load(staged.origin, None, lossy=lossy)
                return TextSnapshot(path, inner.text, "staged", inner.version, inner.lossy)
        buffer = self._buffers.get(path)
        if buffer is not None:
            return TextSnapshot(path, buffer.text, "buffer", buffer.version)
        if not os.path.lexists(path):
            if self.view(changes).is_dir(path):
                raise WorkspaceError(
                    f"{self.display(path)} is a directory, not a file; use list_files to see "
                    "what it contains"
                )
            raise self.missing_error(path, changes)
        disk = read_disk_text(path, self.display(path), max_bytes=self.max_file_bytes, lossy=lossy)
        return TextSnapshot(path, disk.text, "disk", None, disk.lossy)

    def read_text(self, path: Path, changes: ChangeSet | None = None) -> str:
        """Layered text (staged > buffer > disk); see `load` for the errors."""
        return self.load(path, changes).text

    def view(self, changes: ChangeSet | None = None) -> LayeredView:
        """A snapshot of the layered view, safe to use from a worker thread."""
        staged = changes.overlay() if changes is not None else {}
        return LayeredView(self, staged, self._buffers.snapshot())

    def exists(self, path: Path, changes: ChangeSet | None = None) -> bool:
        """Whether `path` exists as a file or folder in the layered view."""
        return self.view(changes).exists(path)

    def is_file(self, path: Path, changes: ChangeSet | None = None) -> bool:
        return self.view(changes).is_file(path)

    def is_dir(self, path: Path, changes: ChangeSet | None = None) -> bool:
        return self.view(changes).is_dir(path)

    # -- errors -------------------------------------------------------------------------

    def missing_error(self, path: Path, changes: ChangeSet | None = None) -> WorkspaceError:
        """ "File not found", saying if the session deleted/renamed it, with close names."""
        display = self.display(path)
        if changes is not None and changes.text(path) is DELETED:
            for change in changes.entries():
                if change.kind == "rename" and change.old_path == path:
                    return WorkspaceError(
                        f"File not found: {display} was renamed to "
                        f"{self.display(change.path)} earlier in this session."
                    )
            return WorkspaceError(
                f"File not found: {display} was deleted earlier in this session (staged)."
            )
        suggestions = self.suggest(path, changes)
        hint = (
            f" Did you mean: {', '.join(suggestions)}?"
            if suggestions
            else " Use list_files to see which files exist."
        )
        return WorkspaceError(f"File not found: {display}.{hint}")

    def suggest(self, path: Path, changes: ChangeSet | None = None, limit: int = 3) -> list[str]:
        """Existing files whose names are close to `path`'s (same folder first)."""
        view = self.view(changes)
        parent = path.parent
        siblings: dict[str, Path] = {}
        if parent.is_dir():
            try:
                for name in os.listdir(parent):
                    siblings[name] = parent / name
            except OSError:
                pass
        for other in [*view.staged, *view.buffers]:
            if other.parent == parent:
                siblings[other.name] = other
        close = difflib.get_close_matches(path.name, list(siblings), n=limit, cutoff=0.6)
        found = [siblings[name] for name in close if view.exists(siblings[name])]
        if not found:
            wanted = path.name.lower()
            disk = (Path(p) for p in islice(self.file_strs(), _SUGGEST_SCAN_LIMIT))
            candidates = [*disk, *view.staged, *view.buffers]
            found = [p for p in dict.fromkeys(candidates) if p.name.lower() == wanted]
            found = [p for p in found if self.contains(p) and view.is_file(p)][:limit]
        return [self.display(p) for p in found]
