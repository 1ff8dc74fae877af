"""The shadow workspace: a private, incrementally synced copy for lint and test runs.

Why: lint and test processes write (caches, bytecode, reports, whatever a test does with
its fixtures) and must see what the agent sees — unsaved editor buffers and the session's
staged edits — not what is on disk. So each session gets a copy of the workspace outside
it, with those overlays written in, and processes run there.

Sync is incremental (see `mirror.TreeMirror`): a file is copied only when its disk
(mtime, size) changed since the last sync, or when a process in the shadow changed the
copy. Files are always copied (or reflinked where the filesystem can), never hard-linked,
so nothing a process does in the shadow can reach the user's tree. The exception is the
heavy dependency folders (`node_modules`, virtualenvs), which are linked in: see
`shadow_links`.

Secret files (everything the workspace's secret rules deny: `.env*`, keys, cloud
credentials, paths of the user's deny rules for reading) are never copied, neither from
disk nor as staged edits: what runs in the shadow must not be able to read them.

The sandbox (`agentls.sandbox`) makes the copy's folders the only writable project tree;
`sandbox_paths()` names them, with the session's private HOME and bytecode cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Protocol

from agentls.errors import WorkspaceError
from agentls.workspace.changes import ChangeSet
from agentls.workspace.core import Attachment, Workspace
from agentls.workspace.mirror import CopyFrom, Overlay, SyncStats, TreeMirror
from agentls.workspace.shadow_git import GitBinds, ShadowGit, find_repo
from agentls.workspace.shadow_links import DependencyLinks
from agentls.workspace.view import LayeredView, OnDisk

__all__ = [
    "CONFIG_FILES",
    "SandboxPaths",
    "SessionView",
    "ShadowRegistry",
    "ShadowWorkspace",
    "SyncStats",
    "prune_stale",
    "shadow_for",
    "shadows_of",
]

log = logging.getLogger(__name__)

SHADOW_PREFIX = "agentls-shadow-"
OWNER_FILE = "owner.pid"
"""In each shadow: the pid of the agentls process that made it (see `prune_stale`)."""
MAX_LIVE_SHADOWS = 3
SHADOW_IDLE_SECONDS = 900.0
PYCACHE_MAX_BYTES = 1 << 30
"""The shared bytecode cache is cleared beyond this size (checked once per process)."""

CONFIG_FILES: tuple[str, ...] = (
    "pyproject.toml",
    "setup.cfg",
    "setup.py",
    "ruff.toml",
    ".ruff.toml",
    "pytest.ini",
    "tox.ini",
    "conftest.py",
    "mypy.ini",
    ".flake8",
    "package.json",
    "tsconfig.json",
)
"""Copied next to any synced file even when ignore rules hide them: tools need their config."""


class SessionView(Protocol):
    """The part of `ToolContext` that identifies a session's shadow (no agent import here)."""

    @property
    def session_id(self) -> str: ...

    @property
    def workspace(self) -> Workspace: ...


def _encode(text: str) -> bytes:
    """UTF-8 bytes; undecodable bytes read with `surrogateescape` go back as they were."""
    try:
        return text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", "replace")


@dataclass(frozen=True)
class SandboxPaths:
    """The folders of one shadow a sandboxed run may write, and its private HOME."""

    writable: tuple[Path, ...]
    home: Path
    readable: tuple[Path, ...] = ()
    """The user's dependency folders the copy links to (node_modules, virtualenvs): shown
    read-only inside the sandbox, which hides the rest of the user's tree."""


class ShadowWorkspace:
    """One session's private copy of the workspace; created on first `sync()`."""

    def __init__(
        self,
        workspace: Workspace,
        *,
        session_id: str = "",
        base_dir: Path | None = None,
        pycache_dir: Path | None = None,
        config_files: Iterable[str] = CONFIG_FILES,
    ) -> None:
        self.workspace = workspace
        self.session_id = session_id
        self.config_files = tuple(config_files)
        self.totals = SyncStats()
        self._base_dir = base_dir
        self._pycache_dir = pycache_dir
        self._dir: Path | None = None
        self._roots: dict[Path, Path] = {}
        self._mirror: TreeMirror | None = None
        self._links: DependencyLinks | None = None
        self._lock = asyncio.Lock()
        self._git: ShadowGit | None = None
        self._git_looked = False
        self._deleted: tuple[str, ...] = ()
        """Workspace paths the session's staged edits delete (as of the last sync)."""
        self._users = 0
        self._users_lock = threading.Lock()

    @contextlib.contextmanager
    def in_use(self) -> Iterator[ShadowWorkspace]:
        """Mark the shadow busy while a lint, test or command runs in it: a registry never
        closes a busy shadow to make room."""
        with self._users_lock:
            self._users += 1
        try:
            yield self
        finally:
            with self._users_lock:
                self._users -= 1

    @property
    def busy(self) -> bool:
        return self._users > 0

    # -- layout ---------------------------------------------------------------------------

    @property
    def directory(self) -> Path:
        """The shadow's own directory (outside every root); created on first use."""
        if self._dir is None:
            self._dir = self._create()
        return self._dir

    @property
    def pycache_dir(self) -> Path:
        """`PYTHONPYCACHEPREFIX` for runs, so no bytecode lands in the user's tree (a `.venv`
        inside it included). Shared by all sessions and kept across restarts: with a prefix
        Python ignores the venv's own `__pycache__`, and recompiling a large dependency
        stack on every run would cost seconds.
        """
        if self._pycache_dir is not None:
            return self._pycache_dir
        if self._base_dir is not None:
            return self._base_dir / "pycache"
        import platformdirs

        return Path(platformdirs.user_cache_dir("agentls")) / "pycache"

    @property
    def cache_root(self) -> Path:
        """Caches shared by every session and run (bytecode, Cargo's builds)."""
        return self.pycache_dir.parent

    @property
    def reports_dir(self) -> Path:
        """Scratch space for result files (JUnit XML, ...)."""
        path = self.directory / "reports"
        path.mkdir(exist_ok=True)
        return path

    def sandbox_paths(self) -> SandboxPaths:
        """What a sandboxed run in this shadow may write: the copied trees, the report
        folder and the session's private HOME.

        No shared bytecode cache: a sandboxed run could poison it for later unsandboxed
        runs. Sandboxed Python writes bytecode next to the copied sources (`__pycache__`
        in the shadow; the mirror drops it with a rewritten source) and reads the
        precompiled bytecode of installed packages where pip put it.
        """
        directory = self.directory
        home = directory / "home"
        home.mkdir(exist_ok=True)
        trees = directory / "trees"
        trees.mkdir(exist_ok=True)
        git = directory / "git"  # the private index and objects (`shadow_git`)
        git.mkdir(exist_ok=True)
        linked = self._links.sources() if self._links is not None else []
        return SandboxPaths((trees, self.reports_dir, home, git), home, tuple(map(Path, linked)))

    def _create(self) -> Path:
        roots = [Path(r).resolve() for r in self.workspace.roots]
        if not roots:
            raise WorkspaceError("The workspace has no root folder; nothing to copy for lint/test.")
        slug = re.sub(r"[^A-Za-z0-9_.-]", "_", self.session_id)[:32] or "session"
        for base in self.candidate_bases():
            base = base.resolve()
            if any(base == r or base.is_relative_to(r) for r in roots):
                continue
            base.mkdir(parents=True, exist_ok=True)
            directory = Path(tempfile.mkdtemp(prefix=f"{SHADOW_PREFIX}{slug}-", dir=base))
            (directory / OWNER_FILE).write_text(f"{os.getpid()}\n")
            break
        else:
            raise WorkspaceError(
                "Cannot place the shadow copy for lint/test outside the workspace: the temp and "
                "cache directories are inside a workspace root. Open a narrower folder."
            )
        names: set[str] = set()
        for root in roots:
            name = root.name or "root"
            while name in names:
                name += "_"
            names.add(name)
            self._roots[root] = directory / "trees" / name
            self._roots[root].mkdir(parents=True, exist_ok=True)  # even for an empty root
        self._mirror = TreeMirror(
            {str(root): str(copy) for root, copy in self._roots.items()},
            bytecode_dirs=[str(self.pycache_dir)],
            exclude=self._is_secret,
        )
        self._links = DependencyLinks({str(root): str(c) for root, c in self._roots.items()})
        return directory

    def _is_secret(self, path: str) -> bool:
        """Files the secret rules deny never enter the copy (see the module docstring)."""
        return self.workspace.services.secrets.blocks_reading(path, resolve=False)

    def candidate_bases(self) -> list[Path]:
        """Where shadow copies are made, first choice first."""
        if self._base_dir is not None:
            return [self._base_dir]
        import platformdirs

        cache = Path(platformdirs.user_cache_dir("agentls")) / "shadow"
        return [Path(tempfile.gettempdir()), cache]

    def root_for(self, path: Path) -> Path:
        """The workspace root holding `path` (absolute); `WorkspaceError` if none does."""
        self.directory  # noqa: B018 - ensures the root table exists
        resolved = Path(os.path.abspath(path))
        for root in sorted(self._roots, key=lambda r: len(r.parts), reverse=True):
            if resolved == root or resolved.is_relative_to(root):
                return root
        raise WorkspaceError(f"{path} is outside the workspace roots.")

    def shadow_root(self, root: Path | None = None) -> Path:
        """The copy of `root` (default: the first workspace root)."""
        self.directory  # noqa: B018
        if root is None:
            return next(iter(self._roots.values()))
        return self._roots[self.root_for(root)]

    def to_shadow(self, path: Path) -> Path:
        root = self.root_for(path)
        return self._roots[root] / Path(os.path.abspath(path)).relative_to(root)

    def to_workspace(self, path: Path | str) -> Path | None:
        """The workspace path a shadow path mirrors; `None` for paths outside the shadow."""
        candidate = Path(os.path.abspath(path))
        for root, shadow in self._roots.items():
            if candidate == shadow or candidate.is_relative_to(shadow):
                return root / candidate.relative_to(shadow)
        return None

    def map_output(self, text: str, *, relative: bool = True) -> str:
        """Rewrite shadow paths in tool output to workspace paths (relative to the root)."""
        for root, shadow in sorted(self._roots.items(), key=lambda rs: -len(str(rs[1]))):
            inside, bare = ("", ".") if relative else (f"{root}{os.sep}", str(root))
            text = text.replace(f"{shadow}{os.sep}", inside)
            # A bare root path, but not the prefix of a sibling ("trees/app" in "trees/app_").
            text = re.compile(re.escape(str(shadow)) + r"(?![\w.-])").sub(_constant(bare), text)
        return text

    def python_env(self, root: Path | None = None) -> dict[str, str]:
        """Variables that make Python import the shadow's sources, not the user's.

        An editable install (or a `.pth`) in the project's venv points at the user's tree;
        `PYTHONPATH` entries precede site-packages, so the shadow root and its `src/` win.
        Inherited `PYTHONPATH` entries inside the workspace are redirected into the shadow.
        """
        shadow = self.shadow_root(root)
        entries = [str(p) for p in (shadow / "src", shadow) if p.is_dir()]
        for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep):
            if not entry:
                continue
            try:
                entries.append(str(self.to_shadow(Path(entry))))
            except WorkspaceError:
                entries.append(entry)
        env = {"PYTHONPATH": os.pathsep.join(entries)}
        if os.environ.get("PYTHONDONTWRITEBYTECODE"):
            # Nothing is written anyway, and without a prefix the venv's bytecode is used.
            return env
        if self._inside_roots(self.pycache_dir.resolve()):
            env["PYTHONDONTWRITEBYTECODE"] = "1"  # the cache folder is in the user's tree
        else:
            env["PYTHONPYCACHEPREFIX"] = str(self.pycache_dir)
        return env

    # -- git (see `agentls.workspace.shadow_git`) ----------------------------------------

    def git(self) -> ShadowGit | None:
        """Git for this copy, when the first workspace root is a repository's top level."""
        if not self._git_looked:
            self._git_looked = True
            self.directory  # noqa: B018 - the root table
            root = next(iter(self._roots))
            repo = find_repo(root)
            if repo is not None:
                self._git = ShadowGit(repo, self.directory / "git", self._roots[root])
        return self._git

    def prepare_git(self) -> ShadowGit | None:
        """Bring the copy's git state up to date after a sync (blocking: run it in a
        thread); None when the workspace is not a repository's top level."""
        git = self.git()
        if git is not None:
            try:
                git.prepare(self.file_strs(), self._deleted)
            except OSError as exc:
                log.warning("git for the shadow copy could not be prepared: %s", exc)
                return None
        return git

    def git_env(self, *, writable: bool = False) -> dict[str, str]:
        """`GIT_DIR`, `GIT_WORK_TREE`, … for commands in the copy ({} without a repo)."""
        git = self._git
        return git.env(writable=writable) if git is not None else {}

    def git_binds(self, *, writable: bool = False) -> GitBinds:
        """What a sandboxed run mounts for git (nothing without a repository)."""
        git = self._git
        return git.binds(writable=writable) if git is not None else GitBinds()

    def files(self, under: Path | None = None) -> list[Path]:
        """Workspace paths of the files in the copy as of the last sync (disk files, config
        files and overlay files, including files that exist only as staged edits), sorted.
        """
        mirror = self._mirror
        if mirror is None:
            return []
        names = mirror.paths()
        if under is not None:
            folder = os.path.abspath(under)
            prefix = folder.rstrip(os.sep) + os.sep
            names = [n for n in names if n == folder or n.startswith(prefix)]
        return sorted(Path(n) for n in names)

    def file_strs(self) -> list[str]:
        """`files()` as unsorted path strings: for callers that scan them all (a large
        workspace's `Path` objects and sort would cost more than the scan)."""
        return self._mirror.paths() if self._mirror is not None else []

    # -- sync -----------------------------------------------------------------------------

    async def sync(self, changes: ChangeSet | None = None) -> SyncStats:
        """Bring the shadow up to date with disk < buffers < staged edits; return what changed.

        The layered view is snapshotted here, on the event loop (buffers and the changeset
        change there); the file work runs in a thread.
        """
        view = self.workspace.view(changes)
        async with self._lock:
            return await asyncio.to_thread(self._apply, view)

    def sync_blocking(self, changes: ChangeSet | None = None) -> SyncStats:
        """`sync` for callers without an event loop (CLI, tests)."""
        return self._apply(self.workspace.view(changes))

    def _apply(self, view: LayeredView) -> SyncStats:
        self.directory  # noqa: B018 - creates the copy and its mirror on first use
        assert self._mirror is not None
        overlay = _overlay(view)
        self._deleted = tuple(path for path, content in overlay.items() if content is None)
        stats = self._mirror.apply(self._disk_files(), overlay)
        if self._links is not None:  # node_modules and virtualenvs: linked, never copied
            self._links.sync(self._mirror.paths())
        self.totals.add(stats)
        return stats

    def _inside_roots(self, path: Path) -> bool:
        return any(path.is_relative_to(root) for root in self._roots)

    def _disk_files(self) -> Iterator[str]:
        """The workspace's files (ignore rules applied), plus config files in the same
        folders even when ignored: linters and test runners need their configuration."""
        folders = {str(root) for root in self._roots}
        for name in self.workspace.file_strs():
            folders.add(os.path.dirname(name))
            yield name
        for folder in folders:
            for config in self.config_files:
                candidate = os.path.join(folder, config)
                if os.path.isfile(candidate):
                    yield candidate

    # -- lifetime -------------------------------------------------------------------------

    def close(self) -> None:
        """Delete the copy; a later `sync()` starts a fresh one."""
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            mirrored = self.pycache_dir / self._dir.relative_to(self._dir.anchor)
            shutil.rmtree(mirrored, ignore_errors=True)
        self._dir = None
        self._roots.clear()
        self._mirror = None
        self._links = None
        self._git = None
        self._git_looked = False


def _overlay(view: LayeredView) -> dict[str, Overlay]:
    """Staged edits and buffers as mirror content (staged wins: `source` layers them)."""
    overlay: dict[str, Overlay] = {}
    for path in [*view.staged, *view.buffers]:
        source = view.source(path)
        if isinstance(source, str):
            overlay[str(path)] = _encode(source)
        elif isinstance(source, OnDisk):
            overlay[str(path)] = CopyFrom(source.path)
        else:
            overlay[str(path)] = None
    return overlay


def _constant(value: str) -> Callable[[re.Match[str]], str]:
    """A `re.sub` replacement that is taken literally (no backslash processing)."""
    return lambda _match: value


class ShadowRegistry:
    """One shadow per session, so sessions never see each other's staged edits.

    A shadow is a full copy of the workspace, so they are not kept forever: once more than
    `max_live` exist, a new one closes those unused for `idle_seconds` (a closed shadow is
    made again, by a full copy, if its session comes back). A shadow `in_use` (a lint, test
    or command running in it) is never closed to make room. The first shadow also starts a
    clean-up of copies left behind by agentls processes that died without closing theirs
    (see `prune_stale`).
    """

    def __init__(
        self,
        base_dir: Path | None = None,
        pycache_dir: Path | None = None,
        *,
        max_live: int = MAX_LIVE_SHADOWS,
        idle_seconds: float = SHADOW_IDLE_SECONDS,
    ) -> None:
        self.base_dir = base_dir
        self.pycache_dir = pycache_dir
        self.max_live = max_live
        self.idle_seconds = idle_seconds
        self._shadows: dict[str, ShadowWorkspace] = {}
        self._last_used: dict[str, float] = {}
        self._lock = threading.Lock()
        self._pruned = False

    def get(self, session_id: str, workspace: Workspace) -> ShadowWorkspace:
        with self._lock:
            shadow = self._shadows.get(session_id)
            stale = shadow is not None and shadow.workspace is not workspace
            if shadow is None or stale:
                if shadow is not None:
                    shadow.close()
                shadow = ShadowWorkspace(
                    workspace,
                    session_id=session_id,
                    base_dir=self.base_dir,
                    pycache_dir=self.pycache_dir,
                )
                self._shadows[session_id] = shadow
                self._evict_idle(keep=session_id)
                self._start_pruning(shadow)
            self._last_used[session_id] = time.monotonic()
            return shadow

    def _evict_idle(self, keep: str) -> None:
        """Close the longest-unused shadows idle past the limit while there are too many."""
        if len(self._shadows) <= self.max_live:
            return
        now = time.monotonic()
        idle = sorted(
            (used, sid)
            for sid, used in self._last_used.items()
            if sid != keep and now - used >= self.idle_seconds and not self._shadows[sid].busy
        )
        for _, sid in idle[: len(self._shadows) - self.max_live]:
            self._close(sid)

    def _start_pruning(self, shadow: ShadowWorkspace) -> None:
        if self._pruned:
            return
        self._pruned = True
        bases = [self.base_dir] if self.base_dir is not None else shadow.candidate_bases()
        threading.Thread(
            target=prune_stale,
            args=(bases, shadow.pycache_dir),
            name="shadow-prune",
            daemon=True,
        ).start()

    def close_session(self, session_id: str) -> None:
        """Delete the session's shadow (it is made again if the session comes back)."""
        with self._lock:
            self._close(session_id)

    def _close(self, session_id: str) -> None:
        self._last_used.pop(session_id, None)
        shadow = self._shadows.pop(session_id, None)
        if shadow is not None:
            shadow.close()

    def close(self) -> None:
        """Delete every shadow (server shutdown, via `Workspace.close`)."""
        with self._lock:
            for session_id in list(self._shadows):
                self._close(session_id)

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._shadows


_SHADOWS: Final = Attachment[ShadowRegistry]("shadow copies")


def shadows_of(workspace: Workspace) -> ShadowRegistry:
    """The workspace's shadow registry (made on first use, closed with the workspace)."""
    return workspace.attached(_SHADOWS, ShadowRegistry)


def shadow_for(session: SessionView, registry: ShadowRegistry | None = None) -> ShadowWorkspace:
    """The shadow of the calling session (e.g. `shadow_for(ctx)` in a tool)."""
    return (registry or shadows_of(session.workspace)).get(session.session_id, session.workspace)


def prune_stale(bases: Iterable[Path], pycache_dir: Path) -> None:
    """Delete shadow copies whose agentls process is gone (it crashed or was killed before
    it could close them), with their bytecode, and the shared bytecode cache when it has
    grown past `PYCACHE_MAX_BYTES` (it is only a cache). Runs on a background thread."""
    for base in bases:
        try:
            entries = list(os.scandir(base))
        except OSError:
            continue
        for entry in entries:
            is_shadow = entry.name.startswith(SHADOW_PREFIX) and entry.is_dir(follow_symlinks=False)
            if is_shadow and _abandoned(Path(entry.path)):
                _remove_shadow_dir(Path(entry.path), pycache_dir)
    if _tree_size(pycache_dir, PYCACHE_MAX_BYTES) > PYCACHE_MAX_BYTES:
        log.info("bytecode cache %s is over its size limit: clearing it", pycache_dir)
        shutil.rmtree(pycache_dir, ignore_errors=True)


def _abandoned(directory: Path) -> bool:
    """The shadow's owner process no longer runs (no owner file: older than a day)."""
    try:
        pid = int((directory / OWNER_FILE).read_text().strip())
    except (OSError, ValueError):
        try:
            return time.time() - directory.stat().st_mtime > 86_400
        except OSError:
            return False
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:  # exists, owned by someone else
        return False
    return False


def _remove_shadow_dir(directory: Path, pycache_dir: Path) -> None:
    log.info("removing the abandoned shadow copy %s", directory)
    shutil.rmtree(directory, ignore_errors=True)
    shutil.rmtree(pycache_dir / directory.relative_to(directory.anchor), ignore_errors=True)


def _tree_size(top: Path, stop_at: int) -> int:
    """Bytes of files under `top`, counting stops once past `stop_at`."""
    total = 0
    stack = [top]
    while stack and total <= stop_at:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))
                elif entry.is_file(follow_symlinks=False):
                    total += entry.stat(follow_symlinks=False).st_size
            except OSError:
                continue
    return total
