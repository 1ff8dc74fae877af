"""Path safety: turning what the model typed into a real path inside the workspace roots.

Every tool path goes through `PathResolver.resolve`, which resolves symlinks before the
containment check, so `..`, absolute paths elsewhere and symlinks pointing out are all
refused the same way. Tool output uses `display`, the workspace-relative posix form the
model can type back in.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from agentls.errors import WorkspaceError


class PathResolver:
    """Maps model paths to absolute, symlink-free paths under one of the roots.

    Relative paths are taken from the first root. With several roots, `name/...` where
    `name` is another root's folder name addresses that root (unless the first root has an
    entry of that name), and `display` writes paths of later roots the same way.
    """

    def __init__(self, roots: Sequence[Path]) -> None:
        if not roots:
            raise ValueError("a workspace needs at least one root folder")
        self.roots: list[Path] = [Path(os.path.realpath(r)) for r in roots]
        self._root_strs = [str(r) for r in self.roots]

    def _root_index(self, text: str) -> int | None:
        for index, root_str in enumerate(self._root_strs):
            if text == root_str or text.startswith(root_str.rstrip(os.sep) + os.sep):
                return index
        return None

    def root_of(self, path: Path | str) -> Path | None:
        """The root containing `path` (already resolved), preferring the first listed."""
        index = self._root_index(os.fspath(path))
        return None if index is None else self.roots[index]

    def contains(self, path: Path | str) -> bool:
        return self._root_index(os.fspath(path)) is not None

    def resolve(self, path: str | Path) -> Path:
        """An absolute, symlink-resolved path inside the roots, or a `WorkspaceError`."""
        raw = str(path).strip() or "."
        candidate = Path(raw)
        if not candidate.is_absolute():
            candidate = self._under_root(candidate)
        real = Path(os.path.realpath(candidate))
        if self.contains(real):
            return real
        lexical = Path(os.path.normpath(candidate))
        roots = ", ".join(self._root_strs)
        if self.contains(lexical):
            raise WorkspaceError(
                f"Path '{raw}' goes through a symbolic link that points to {real}, outside "
                f"the workspace (roots: {roots}). Only files inside the workspace can be used."
            )
        raise WorkspaceError(
            f"Path '{raw}' resolves to {real}, which is outside the workspace (roots: {roots}). "
            "Use a path inside the workspace, relative to the root (e.g. 'src/main.py')."
        )

    def _under_root(self, relative: Path) -> Path:
        first = self.roots[0]
        parts = relative.parts
        if len(self.roots) > 1 and parts and parts[0] not in (".", ".."):
            for root in self.roots[1:]:
                if parts[0] == root.name and not os.path.lexists(first / parts[0]):
                    return root.joinpath(*parts[1:])
        return first / relative

    def display(self, path: Path | str) -> str:
        """Workspace-relative posix path for tool output ("." for a root itself).

        String based (no `Path` objects), since listing and search call it per file.
        """
        text = os.fspath(path)
        index = self._root_index(text)
        if index is None:
            return text.replace(os.sep, "/")
        rel = text[len(self._root_strs[index]) :].lstrip(os.sep).replace(os.sep, "/") or "."
        if index == 0:
            return rel
        name = self.roots[index].name
        return name if rel == "." else f"{name}/{rel}"
