"""Finding a check's program the way the project would: its `node_modules/.bin` (and those
of parent folders, for monorepos), its virtualenv, PATH, or `python -m <module>`.

Shared by the runner (which looks in the shadow copy, where `node_modules` is linked in) and
`agentls doctor` (which looks in the workspace itself), through `local`: the folder to look
in for a workspace folder.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from agentls.tools.checks.commands import CheckCommand
from agentls.workspace.toolchain import has_module, venv_in, venv_python

__all__ = ["Missing", "Programs", "workspace_programs"]

_BIN = "Scripts" if os.name == "nt" else "bin"


class Missing(Exception):
    """The program (or a program it needs) is not installed where the project has it."""

    def __init__(self, message: str, install: str | None) -> None:
        super().__init__(message)
        self.message = message
        self.install = install


class Programs:
    """Resolves programs for commands; `local` maps a workspace folder to the folder to look
    in, `root_of` gives a path's workspace root."""

    def __init__(self, local: Callable[[Path], Path], root_of: Callable[[Path], Path]) -> None:
        self.local = local
        self.root_of = root_of

    def venv(self, project: Path) -> Path | None:
        """The project's virtualenv: in its folder or a parent, up to its root."""
        root = self.root_of(project)
        folder = project
        while True:
            found = venv_in(folder)
            if found is not None:
                return found
            if folder == root or folder.parent == folder:
                return None
            folder = folder.parent

    def python(self, project: Path) -> str:
        venv = self.venv(project)
        return (venv_python(venv) if venv is not None else None) or sys.executable

    def program(self, command: CheckCommand, *, check_module: bool = True) -> list[str]:
        """The argv prefix that starts the program; `Missing` when it is not installed.
        `check_module=False` leaves the check of a `{python} -m module` command to the
        caller (a venv may see packages outside its site-packages: `.pth` files, system
        site-packages)."""
        for needed in command.requires:
            if shutil.which(needed) is None:
                raise Missing(f"{needed} is not installed (not on PATH)", f"install {needed}")
        name = command.program
        if name == "{python}":
            if check_module:
                return [self._python_with_module(command)]
            return [self.python(command.project)]
        if os.path.isabs(name):
            if os.access(name, os.X_OK):
                return [name]
            raise Missing(f"{name} does not exist or is not executable", command.install)
        found = self._look_up(command, name)
        if found is not None:
            return [found]
        venv = self.venv(command.project)
        if command.module and has_module(venv, command.module):
            return [self.python(command.project), "-m", command.module]
        if command.module and has_module(None, command.module):
            return [sys.executable, "-m", command.module]
        raise Missing(self._missing_message(command, name), command.install)

    def _python_with_module(self, command: CheckCommand) -> str:
        python = self.python(command.project)
        if command.module and not has_module(self.venv(command.project), command.module):
            raise Missing(f"{command.module} is not installed for {python}", command.install)
        return python

    def _look_up(self, command: CheckCommand, name: str) -> str | None:
        cwd = self.local(command.project)
        for place in command.lookup:
            if place == "project" and ("/" in name or name.startswith(".")):
                candidate = cwd / name
                if os.access(candidate, os.X_OK) and candidate.is_file():
                    return str(candidate)
            elif place == "node":
                for folder in self._node_bins(command.project):
                    found = shutil.which(name, path=str(folder))
                    if found:
                        return found
            elif place == "venv":
                venv = self.venv(command.project)
                found = shutil.which(name, path=str(venv / _BIN)) if venv else None
                if found:
                    return found
            elif place == "path" and "/" not in name:
                found = shutil.which(name)
                if found:
                    return found
        return None

    def _node_bins(self, project: Path) -> list[Path]:
        """`node_modules/.bin` of the project and its parents, in the shadow (linked in)."""
        root = self.root_of(project)
        folders, folder = [], project
        while True:
            folders.append(self.local(folder) / "node_modules" / ".bin")
            if folder == root or folder.parent == folder:
                return folders
            folder = folder.parent

    def _missing_message(self, command: CheckCommand, name: str) -> str:
        places = {
            "node": "node_modules/.bin",
            "venv": "the project's virtualenv",
            "path": "PATH",
            "project": "the project folder",
        }
        looked = ", ".join(places[p] for p in command.lookup)
        return f"{name} is not installed (looked in {looked})"


def workspace_programs(commands: Iterable[CheckCommand], roots: Sequence[Path]) -> list[str]:
    """The programs these commands would start, found in the user's workspace itself (not
    the shadow): for the permission step, which must know when a run executes a program the
    repository ships (its `node_modules/.bin`, a virtualenv inside it)."""
    ordered = sorted(roots, key=lambda r: len(r.parts), reverse=True)

    def root_of(path: Path) -> Path:
        return next((r for r in ordered if path == r or path.is_relative_to(r)), path)

    programs = Programs(lambda path: path, root_of)
    found: list[str] = []
    for command in commands:
        try:
            argv = programs.program(command, check_module=False)
        except Missing:
            continue
        found.append(argv[0])
    return found
