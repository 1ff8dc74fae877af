"""What a sandboxed run sees of the filesystem: the one place that decides it.

The rules (issue: "what the sandbox enforces"):

- the whole system is visible read-only;
- the shadow copy (its trees, its report folder, its private bytecode cache) is the only
  writable project tree; a private HOME (per session) and a private `/tmp` (per run) are
  writable; the tool caches named in `sandbox.caches` are writable, at their own path and
  at the same place under the private HOME, where the tools look for them;
- not visible at all (an empty folder or an empty file in their place): the user's real
  workspace roots, `~/.ssh`, `~/.aws`, `~/.config/gh`, Claude Code's and agentls's own
  folders (settings, transcripts, caches, credentials), `/run` (daemon sockets such as
  Docker's), every file in the home folder that the secret rules deny, and every folder a
  deny rule for reading names outside the workspace;
- a virtualenv or `node_modules` inside a workspace root is shown again read-only, so the
  project's own interpreter and tools still run (they cannot be changed from inside);
- the repository's git folder is shown again read-only, its config replaced by a copy
  without credentials, so `git log`/`status`/`diff` work on the copy while refs, hooks and
  configuration cannot be changed (`agentls.workspace.shadow_git`); a run allowed to write
  refs gets it writable, except config, hooks and info.

Secret files inside the workspace never reach the shadow copy in the first place (the
mirror skips them), so hiding the real roots is enough for them.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import platformdirs

from agentls.workspace.secrets import SecretMatcher
from agentls.workspace.shadow_git import GitBinds
from agentls.workspace.toolchain import VENV_NAMES

__all__ = ["ALWAYS_HIDDEN", "Layout", "build_layout", "home_secrets"]

ALWAYS_HIDDEN: tuple[str, ...] = (
    "~/.ssh",
    "~/.aws",
    "~/.config/gh",
    "~/.gnupg",
    "~/.azure",
    "~/.config/gcloud",
    "~/.docker",
    "~/.kube",
    "~/.claude",
    "~/.claude.json",
    "~/.cargo/credentials",
    "~/.cargo/credentials.toml",
    "~/.netrc",
    "~/.git-credentials",
    "~/.config/git/credentials",
    "~/.npmrc",
    "~/.pypirc",
    "~/.pgpass",
    "~/.terraform.d",
)
"""Hidden in every run, whatever the secret rules say (when they exist)."""

_PRIVATE = ("/tmp", "/var/tmp", "/run")
"""Empty per-run folders inside the sandbox (their real contents are not visible)."""
_SCAN_DEPTH = 2
_SCAN_SKIP = frozenset(
    {".cache", ".local", ".pyenv", ".rustup", ".cargo", ".npm", ".nvm", "go", "node_modules"}
)
_SCAN_LIMIT = 5000
"""Entries looked at in the home folder; the scan is a net under the fixed list above."""


@dataclass(frozen=True)
class Layout:
    """Paths, already resolved, by how a run sees them."""

    writable: tuple[Path, ...] = ()
    """Bound read-write at their own path."""
    cache_binds: tuple[tuple[Path, Path], ...] = ()
    """(cache, place under the private HOME): bound read-write there too."""
    hidden_dirs: tuple[Path, ...] = ()
    hidden_files: tuple[Path, ...] = ()
    reexposed: tuple[Path, ...] = ()
    """Read-only again inside a hidden folder (a venv or node_modules in a workspace root)."""
    read_only_binds: tuple[tuple[Path, Path], ...] = ()
    """(source, target) bound read-only: the repository's git folder, shown again inside
    the hidden workspace, and sanitized copies of its config (`shadow_git`)."""
    writable_binds: tuple[tuple[Path, Path], ...] = ()
    """(source, target) bound writable: the git folder for a run allowed to write refs."""
    read_only_after: tuple[tuple[Path, Path], ...] = ()
    """Bound read-only last, over parts of a writable bind (the git config and hooks)."""
    home: Path = Path("/nonexistent")
    private: tuple[str, ...] = _PRIVATE
    """Empty, writable, per-run folders (tmpfs)."""
    cwd: Path = Path("/")
    env: dict[str, str] = field(default_factory=dict)


def build_layout(
    *,
    roots: Sequence[Path],
    writable: Sequence[Path],
    home: Path,
    cwd: Path,
    caches: dict[str, str],
    secrets: SecretMatcher | None,
    hidden: Iterable[Path] = (),
    real_home: Path | None = None,
    readable: Iterable[Path] = (),
    git: GitBinds | None = None,
) -> Layout:
    """The layout for one run: `writable` are the shadow folders, `home` the private HOME,
    `hidden` extra paths to hide (from deny rules), `readable` folders shown read-only even
    inside a hidden or private folder (the dependency folders the shadow links to)."""
    user_home = real_home or Path.home()
    dirs: list[Path] = []
    files: list[Path] = []
    candidates = [_expand(p, user_home) for p in ALWAYS_HIDDEN]
    candidates += _agentls_dirs()
    candidates += [Path(r) for r in roots]
    candidates += list(hidden)
    if secrets is not None:
        candidates += home_secrets(user_home, secrets)
    for path in candidates:
        _classify(path, dirs, files)
    kept_writable = [p.resolve() for p in writable]
    interpreter = Path(sys.base_prefix).resolve()
    # Hiding a folder that holds the interpreter (a workspace opened at ~) would break
    # every run; such a folder stays visible, read-only.
    dirs = [d for d in _unique(dirs) if not _is_under(interpreter, d)]
    # What a private folder (/tmp, ...) or a hidden folder already covers needs no mount
    # of its own (bubblewrap cannot remount a tmpfs nested in another one read-only).
    covers = [*dirs, *(Path(p) for p in _PRIVATE)]
    dirs = [d for d in dirs if not any(c != d and _is_under(d, c) for c in covers)]
    files = [f for f in files if not any(_is_under(f, c) for c in covers)]
    cache_binds: list[tuple[Path, Path]] = []
    for raw in caches.values():
        cache = _expand(raw, user_home)
        if not cache.is_dir() or any(_is_under(cache, d) for d in dirs):
            continue
        cache = cache.resolve()
        kept_writable.append(cache)
        if _is_under(cache, user_home):
            cache_binds.append((cache, home / cache.relative_to(user_home.resolve())))
    return Layout(
        writable=tuple(_unique(kept_writable)),
        cache_binds=tuple(cache_binds),
        hidden_dirs=tuple(dirs),
        hidden_files=tuple(_unique(files)),
        reexposed=tuple(_unique([*_toolchains(roots), *_readable(readable, [*dirs, *covers])])),
        read_only_binds=git.read_only if git is not None else (),
        writable_binds=git.writable if git is not None else (),
        read_only_after=git.read_only_after if git is not None else (),
        home=home,
        cwd=cwd,
        env=_toolchain_homes(user_home, dirs),
    )


def _toolchain_homes(user_home: Path, hidden: Sequence[Path]) -> dict[str, str]:
    """Toolchains that find their installation through HOME and would not find it under
    the private one: rustup's `cargo`/`rustc` proxies need `~/.rustup` (read-only is
    enough). Where the environment names it already, that stays."""
    found: dict[str, str] = {}
    rustup = user_home / ".rustup"
    visible = rustup.is_dir() and not any(_is_under(rustup.resolve(), d) for d in hidden)
    if "RUSTUP_HOME" not in os.environ and visible:
        found["RUSTUP_HOME"] = str(rustup.resolve())
    return found


def home_secrets(home: Path, secrets: SecretMatcher) -> list[Path]:
    """Files and folders near the top of the home folder that the secret rules deny."""
    found: list[Path] = []
    seen = 0
    stack: list[tuple[Path, int]] = [(home, 0), (home / ".config", 1)]
    while stack and seen < _SCAN_LIMIT:
        folder, depth = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            path = Path(entry.path)
            if secrets.is_secret(path, resolve=False):
                found.append(path)
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir and depth + 1 < _SCAN_DEPTH and entry.name not in _SCAN_SKIP:
                stack.append((path, depth + 1))
    return found


def _expand(text: str, home: Path) -> Path:
    if text == "~" or text.startswith("~/"):
        return home / text[2:]
    return Path(text)


def _agentls_dirs() -> list[Path]:
    """agentls's own settings, caches (transcripts, index, shared bytecode) and data."""
    found = [
        Path(platformdirs.user_cache_dir("agentls")),
        Path(platformdirs.user_config_dir("agentls")),
        Path(platformdirs.user_data_dir("agentls")),
    ]
    configured = os.environ.get("AGENTLS_TRANSCRIPT_DIR")
    if configured:
        found.append(Path(configured))
    return found


def _readable(extra: Iterable[Path], covered: Sequence[Path]) -> list[Path]:
    """Folders a run must read even where a hidden or private folder covers them: what the
    shadow links to, and the interpreter agentls runs with and its environment (its ruff,
    pytest, mypy run the default checks), e.g. a checkout and its venv under /tmp."""
    runtime = {Path(sys.prefix), Path(sys.base_prefix), Path(sys.executable).parent}
    found = []
    for path in [*extra, *runtime]:
        real = path.resolve()
        if real.is_dir() and any(_is_under(real, c) for c in covered):
            found.append(real)
    return found


def _toolchains(roots: Sequence[Path]) -> list[Path]:
    """Virtualenvs and node_modules directly in a root: shown read-only again."""
    found: list[Path] = []
    for root in roots:
        for name in (*VENV_NAMES, "node_modules"):
            candidate = Path(root) / name
            if candidate.is_dir() and not candidate.is_symlink():
                found.append(candidate.resolve())
    return found


def _classify(path: Path, dirs: list[Path], files: list[Path]) -> None:
    """Sort an existing path into folders and files to hide (its real location)."""
    try:
        real = path.resolve()
    except (OSError, RuntimeError):
        return
    if real == Path("/"):
        return
    if real.is_dir():
        dirs.append(real)
    elif real.exists():
        files.append(real)


def _is_under(path: Path, folder: Path) -> bool:
    return path == folder or path.is_relative_to(folder)


def _unique(paths: Iterable[Path]) -> list[Path]:
    return list(dict.fromkeys(paths))
