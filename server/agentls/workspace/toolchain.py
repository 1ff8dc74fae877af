"""Finding the project's own tools: its virtualenv, its interpreter, its linters.

Why: lint and test results must match what the user gets on the command line, so the
project's pinned ruff/pytest/eslint win over whatever happens to be on the server's PATH.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from importlib.util import find_spec
from pathlib import Path

__all__ = [
    "VENV_NAMES",
    "find_executable",
    "has_module",
    "project_python",
    "project_venv",
    "venv_env",
    "venv_in",
    "venv_python",
]

VENV_NAMES: tuple[str, ...] = (".venv", "venv", ".env", "env")
_BIN = "Scripts" if os.name == "nt" else "bin"
_EXE = ".exe" if os.name == "nt" else ""


def project_venv(roots: Sequence[Path]) -> Path | None:
    """The first virtualenv found directly in a workspace root (`.venv`, `venv`, ...)."""
    for root in roots:
        found = venv_in(root)
        if found is not None:
            return found
    return None


def venv_in(folder: Path) -> Path | None:
    """The virtualenv directly in `folder` (`.venv`, `venv`, ...), if any."""
    for name in VENV_NAMES:
        candidate = folder / name
        if (candidate / "pyvenv.cfg").is_file() and (candidate / _BIN).is_dir():
            return candidate
    return None


def venv_python(venv: Path) -> str | None:
    """The interpreter of a virtualenv."""
    for name in ("python", "python3"):
        candidate = venv / _BIN / f"{name}{_EXE}"
        if candidate.exists():
            return str(candidate)
    return None


def has_module(venv: Path | None, module: str) -> bool:
    """Whether `module` is installed in the virtualenv (without starting its interpreter),
    or, with no virtualenv, importable by the interpreter running agentls."""
    if venv is None:
        return find_spec(module) is not None
    patterns = (f"{module}", f"{module}.py", f"{module}-*.dist-info")
    for site in [*venv.glob("lib/python*/site-packages"), venv / "Lib" / "site-packages"]:
        if any(any(site.glob(p)) for p in patterns):
            return True
    return False


def project_python(roots: Sequence[Path]) -> str:
    """The project's interpreter: its venv's python, else the one running the server."""
    venv = project_venv(roots)
    found = venv_python(venv) if venv is not None else None
    return found or sys.executable


def find_executable(name: str, roots: Sequence[Path]) -> str | None:
    """`name` from the project's venv, then `node_modules/.bin`, then PATH."""
    venv = project_venv(roots)
    places = [venv / _BIN] if venv is not None else []
    places += [root / "node_modules" / ".bin" for root in roots]
    for folder in places:
        found = shutil.which(name, path=str(folder))
        if found:
            return found
    return shutil.which(name)


def venv_env(roots: Sequence[Path]) -> dict[str, str]:
    """`VIRTUAL_ENV` and a `PATH` led by the venv's bin, as an activated shell would have."""
    venv = project_venv(roots)
    if venv is None:
        return {}
    return {
        "VIRTUAL_ENV": str(venv),
        "PATH": os.pathsep.join([str(venv / _BIN), os.environ.get("PATH", os.defpath)]),
    }
