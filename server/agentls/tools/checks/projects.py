"""Project folders in a workspace and reading their configuration files.

A workspace often holds several projects (`web/package.json` beside `api/go.mod`); each file
is checked by the tools of the nearest project of its ecosystem. Detection reads the files
through a `ProjectDir`, which maps the workspace folder to the place to read it from: the
session's shadow copy in the tools (so unsaved and staged configuration counts), the folder
itself in `agentls doctor`.
"""

from __future__ import annotations

import json
import os
import tomllib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Final

__all__ = ["MARKERS", "ProjectDir", "ProjectIndex"]

MARKERS: Final[dict[str, tuple[str, ...]]] = {
    "node": ("package.json",),
    "python": ("pyproject.toml", "setup.py", "setup.cfg"),
    "go": ("go.mod",),
    "rust": ("Cargo.toml",),
    "ruby": ("Gemfile", ".rubocop.yml", ".rspec"),
}
"""The files that make a folder a project of an ecosystem."""

_ROOT_DEFAULTS: Final = frozenset({"python"})
"""Ecosystems whose defaults (ruff, pytest) apply at a root without a project file."""


@dataclass(frozen=True)
class ProjectDir:
    """A project folder: `path` in the workspace, `base` where its files are read."""

    path: Path
    base: Path
    root: Path
    root_base: Path

    @property
    def relative(self) -> str:
        """The folder relative to its root, `.` for the root (for messages)."""
        rel = self.path.relative_to(self.root).as_posix()
        return rel if rel != "." else "."

    def where(self) -> str:
        return "the workspace root" if self.relative == "." else f"{self.relative}/"

    def has(self, *names: str) -> str | None:
        """The first of `names` that exists in the folder."""
        return next((n for n in names if (self.base / n).exists()), None)

    def find_up(self, *names: str) -> tuple[str, Path] | None:
        """The first of `names` in the folder or a parent up to the root, with the workspace
        folder it was found in (a monorepo keeps its lock file and config at the top)."""
        for base, path in self.upwards():
            found = next((n for n in names if (base / n).exists()), None)
            if found:
                return found, path
        return None

    def upwards(self) -> Iterator[tuple[Path, Path]]:
        """(read folder, workspace folder) from this project up to its root."""
        base, path = self.base, self.path
        while True:
            yield base, path
            if path == self.root or base == self.root_base:
                return
            base, path = base.parent, path.parent

    def read_json_up(self, name: str) -> dict[str, object]:
        """`read_json` of the first `name` in the folder or a parent up to the root."""
        for base, _ in self.upwards():
            if (base / name).is_file():
                return ProjectDir(base, base, base, base).read_json(name)
        return {}

    def read_text(self, name: str) -> str | None:
        try:
            return (self.base / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None

    def read_json(self, name: str) -> dict[str, object]:
        text = self.read_text(name)
        try:
            data = json.loads(text) if text else {}
        except json.JSONDecodeError:
            return {}
        return data if isinstance(data, dict) else {}

    def read_toml(self, name: str) -> dict[str, object]:
        text = self.read_text(name)
        try:
            return tomllib.loads(text) if text else {}
        except tomllib.TOMLDecodeError:
            return {}

    def display(self, name: str) -> str:
        """A file of this project as the user sees it (`web/package.json`)."""
        return name if self.relative == "." else f"{self.relative}/{name}"


class ProjectIndex:
    """The project folders of each ecosystem, found by their marker files in a file list."""

    def __init__(
        self,
        roots: Sequence[Path],
        files: Iterable[str | Path],
        base_of: Callable[[Path], Path] | None = None,
    ) -> None:
        self.roots = sorted(roots, key=lambda r: len(r.parts), reverse=True)
        self._base_of = base_of or (lambda p: p)
        by_name = {name: eco for eco, names in MARKERS.items() for name in names}
        found: dict[str, set[str]] = {eco: set() for eco in MARKERS}
        suffixes: dict[str, set[str]] = {}
        for name in files:
            folder, base = os.path.split(os.fspath(name))
            eco = by_name.get(base)
            if eco is not None:
                found[eco].add(folder)
            suffixes.setdefault(folder, set()).add(os.path.splitext(base)[1])
        self.projects = {eco: {Path(f) for f in folders} for eco, folders in found.items()}
        self._suffixes = {Path(folder): exts for folder, exts in suffixes.items()}

    def has_language(self, root: Path, language: str) -> bool:
        """Whether any file of `language` lies under `root`."""
        from agentls.config.languages import language_of

        return any(
            language_of(f"x{suffix}") == language
            for folder, suffixes in self._suffixes.items()
            if folder.is_relative_to(root)
            for suffix in suffixes
        )

    def root_of(self, path: Path) -> Path:
        for root in self.roots:
            if path == root or path.is_relative_to(root):
                return root
        raise ValueError(f"{path} is outside the workspace")

    def project(self, folder: Path) -> ProjectDir:
        root = self.root_of(folder)
        return ProjectDir(folder, self._base_of(folder), root, self._base_of(root))

    def nearest(self, ecosystem: str, path: Path) -> ProjectDir | None:
        """The closest project of `ecosystem` holding `path` (a root for Python without one)."""
        root = self.root_of(path)
        known = self.projects.get(ecosystem, set())
        folder = path if path.is_dir() and path in known else path.parent
        while True:
            if folder in known:
                return self.project(folder)
            if folder == root or folder.parent == folder:
                break
            folder = folder.parent
        return self.project(root) if ecosystem in _ROOT_DEFAULTS else None

    def top_level(self, ecosystem: str, under: Path | None = None) -> list[ProjectDir]:
        """Projects of `ecosystem` (inside `under`) that are not inside another one: the
        workspace's separate projects, outermost first."""
        known = sorted(
            (
                p
                for p in self.projects.get(ecosystem, set())
                if under is None or p.is_relative_to(under)
            ),
            key=lambda p: (len(p.parts), p),
        )
        tops: list[Path] = []
        for folder in known:
            if not any(folder.is_relative_to(top) for top in tops):
                tops.append(folder)
        return [self.project(folder) for folder in tops]
