"""Installing a registry server from npm or PyPI into agentls's own cache.

Opt-in (`languageServers.autoInstall`) and asked first: the pool installs only after its
`confirm` callback said yes, and only the registry's pinned version of a server the
registry names (never a command from settings). Each server gets a folder of its own,
`<cache>/<name>-<version>`, marked `.complete` only when the install succeeded (a failed
one is removed), so a failed or interrupted install never counts as installed.
Discovery (`agentls.codeintel.discovery`) looks in these folders after PATH.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import platformdirs

from agentls.codeintel.registry import KnownServer

__all__ = ["InstallFailed", "cache_dir", "install", "installed"]

TIMEOUT_SECONDS = 600.0
_BIN = "Scripts" if os.name == "nt" else "bin"


class InstallFailed(Exception):
    """The package manager failed (its last output lines are in the message)."""


def cache_dir() -> Path:
    """Where auto-installed servers live (`AGENTLS_LANGSERVER_CACHE` overrides it): beside
    agentls's cache, not in it, because the sandbox hides agentls's own folders from every
    run, and the servers run in it."""
    configured = os.environ.get("AGENTLS_LANGSERVER_CACHE")
    if configured:
        return Path(configured)
    return Path(platformdirs.user_cache_dir("agentls-langservers"))


def _folder(server: KnownServer, cache: Path) -> Path:
    return cache / f"{server.name}-{server.install_spec.version}"


def _executable(server: KnownServer, folder: Path) -> Path:
    if server.install_spec.kind == "npm":
        return folder / "node_modules" / ".bin" / server.argv[0]
    return folder / _BIN / server.argv[0]


def installed(server: KnownServer, cache: Path | None = None) -> Path | None:
    """The server's executable when a complete install of its pinned version is cached."""
    folder = _folder(server, cache or cache_dir())
    executable = _executable(server, folder)
    if (folder / ".complete").is_file() and executable.exists():
        return executable
    return None


def install(server: KnownServer, cache: Path | None = None) -> Path:
    """Install the registry's pinned version; returns the executable (blocking: run it in a
    thread). `InstallFailed` when it cannot be installed this way or the install fails."""
    spec = server.install_spec
    if not spec.auto_installable:
        raise InstallFailed(f"{server.name} is not on npm or PyPI: {server.install}")
    cache = cache or cache_dir()
    done = installed(server, cache)
    if done is not None:
        return done
    cache.mkdir(parents=True, exist_ok=True)
    target = _folder(server, cache)  # in place: a virtualenv's scripts name their folder
    shutil.rmtree(target, ignore_errors=True)
    target.mkdir()
    try:
        for command in _commands(server, target):
            _run(command, target)
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    (target / ".complete").write_text(" ".join(spec.specs) + "\n", encoding="utf-8")
    found = installed(server, cache)
    if found is None:
        raise InstallFailed(f"{server.name}: installed, but `{server.argv[0]}` is missing")
    return found


def _commands(server: KnownServer, folder: Path) -> list[list[str]]:
    spec = server.install_spec
    if spec.kind == "npm":
        npm = shutil.which("npm")
        if npm is None:
            raise InstallFailed(f"npm is needed to install {server.name} (install Node.js)")
        return [[npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", *spec.specs]]
    python = folder / _BIN / "python"
    return [
        [sys.executable, "-m", "venv", str(folder)],
        [str(python), "-m", "pip", "install", "-q", "--disable-pip-version-check", *spec.specs],
    ]


def _run(command: list[str], cwd: Path) -> None:
    try:
        done = subprocess.run(
            command, cwd=cwd, capture_output=True, text=True, timeout=TIMEOUT_SECONDS, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise InstallFailed(f"`{command[0]}` failed: {exc}") from exc
    if done.returncode != 0:
        tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-5:])
        raise InstallFailed(f"`{' '.join(command[:3])} …` exited {done.returncode}: {tail}")
