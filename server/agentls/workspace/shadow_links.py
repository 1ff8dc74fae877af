"""Heavy dependency folders in the shadow copy: linked to the user's, never copied.

A project's `node_modules` (often hundreds of MB) and its virtualenv are what its linters
and tests run with, but the workspace walk skips them, so the shadow copy lacks them. They
are linked in, which costs a directory listing per sync instead of a copy:

- `node_modules` becomes a real folder of symlinks, one per entry of the user's (packages,
  `@scopes`, `.bin`, pnpm's `.pnpm`, ...). Tools write their caches into it
  (`node_modules/.vite`, `.cache`, ...): those land in the shadow's real folder, not in the
  user's tree; the cache folders named in `NODE_CACHE_DIRS` are never linked.
- a virtualenv (`.venv`, `venv`, ... holding `pyvenv.cfg`) becomes one symlink. Runs write no
  bytecode into it (`PYTHONPYCACHEPREFIX`).

What a process writes *inside* a linked package or the venv reaches the user's copy: lint
and test runs do not, an install in `run_command` would (the sandbox can mount them
read-only). Deleting the shadow removes only the links (`shutil.rmtree` does not follow
symlinks). Cargo's `target` is not linked: builds go to a per-workspace cache through
`CARGO_TARGET_DIR` (see the lint/test runner).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final

from agentls.workspace.toolchain import VENV_NAMES

__all__ = ["NODE_CACHE_DIRS", "DependencyLinks", "LinkStats"]

NODE_CACHE_DIRS: Final = frozenset(
    {".cache", ".vite", ".vitest", ".vite-temp", ".tmp", ".temp", ".eslintcache", ".nx", ".turbo"}
)
"""Cache folders tools create inside node_modules: left out, so caches stay in the shadow."""

_PROJECT_FILES: Final = ("package.json", "pyproject.toml", "setup.py", "setup.cfg")


@dataclass
class LinkStats:
    linked: int = 0
    unlinked: int = 0


class DependencyLinks:
    """Keeps the dependency links of a shadow copy in step with the user's tree.

    `pairs` maps each workspace root to its copy. Candidate folders are the roots and every
    folder holding a project file (package.json, pyproject.toml, ...).
    """

    def __init__(self, pairs: Mapping[str, str]) -> None:
        self._pairs = dict(pairs)
        self._farms: set[str] = set()
        self._venvs: set[str] = set()
        self._sources: set[str] = set()

    def sync(self, synced_paths: Iterable[str]) -> LinkStats:
        stats = LinkStats()
        folders = set(self._pairs)
        for path in synced_paths:
            if os.path.basename(path) in _PROJECT_FILES:
                folders.add(os.path.dirname(path))
        farms: set[str] = set()
        venvs: set[str] = set()
        sources: set[str] = set()
        for folder in folders:
            copy = self._copy_of(folder)
            if copy is None:
                continue
            if os.path.isdir(os.path.join(folder, "node_modules")):
                farm = os.path.join(copy, "node_modules")
                self._sync_farm(os.path.join(folder, "node_modules"), farm, stats)
                farms.add(farm)
                sources.add(os.path.join(folder, "node_modules"))
            for name in VENV_NAMES:
                venv = os.path.join(folder, name)
                if os.path.isfile(os.path.join(venv, "pyvenv.cfg")):
                    link = os.path.join(copy, name)
                    self._link(venv, link, stats)
                    venvs.add(link)
                    sources.add(venv)
        for farm in self._farms - farms:
            _remove(farm)
            stats.unlinked += 1
        for link in self._venvs - venvs:
            _remove(link)
            stats.unlinked += 1
        self._farms, self._venvs, self._sources = farms, venvs, sources
        return stats

    def sources(self) -> list[str]:
        """The user's folders the copy links to (what a sandboxed run must be able to read,
        read-only, though the rest of the user's tree is hidden from it)."""
        return sorted(self._sources)

    def _copy_of(self, folder: str) -> str | None:
        for root, copy in sorted(self._pairs.items(), key=lambda p: -len(p[0])):
            if folder == root or folder.startswith(root.rstrip(os.sep) + os.sep):
                return copy + folder[len(root) :]
        return None

    def _sync_farm(self, source: str, farm: str, stats: LinkStats) -> None:
        """`farm` holds a symlink per entry of `source` (minus cache folders), nothing else
        of the user's."""
        try:
            wanted = {e for e in os.listdir(source) if e not in NODE_CACHE_DIRS}
        except OSError:
            return
        _real_folder(farm)
        present = set(os.listdir(farm))
        for name in wanted:
            self._link(os.path.join(source, name), os.path.join(farm, name), stats)
        for name in present - wanted:
            path = os.path.join(farm, name)
            if os.path.islink(path):  # a package the user removed; caches stay
                os.unlink(path)
                stats.unlinked += 1

    @staticmethod
    def _link(target: str, link: str, stats: LinkStats) -> None:
        try:
            if os.readlink(link) == target:
                return
        except OSError:
            pass
        os.makedirs(os.path.dirname(link), exist_ok=True)
        _remove(link)
        os.symlink(target, link)
        stats.linked += 1


def _real_folder(path: str) -> None:
    """A real folder at `path` (a symlink or file a process put there is replaced)."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        os.makedirs(path, exist_ok=True)
        return
    if not stat.S_ISDIR(st.st_mode):
        os.unlink(path)
        os.makedirs(path, exist_ok=True)


def _remove(path: str) -> None:
    """Delete a link, file or shadow-owned folder without following symlinks."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISDIR(st.st_mode):
        shutil.rmtree(path, ignore_errors=True)  # never follows symlinks inside
    else:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
