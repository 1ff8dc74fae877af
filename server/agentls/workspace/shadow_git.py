"""Git in the shadow copy: the real repository's history with the copy's working tree.

The shadow holds the workspace without `.git`, so `git status` there would say "not a
git repository". Commands in the shadow get instead:

- `GIT_DIR` = the real repository's git folder and `GIT_WORK_TREE` = the copy, so
  `git status`, `git diff` and `git log` show the real history against what the agent sees
  (its staged edits and the editor's unsaved buffers included);
- `GIT_INDEX_FILE` = a private copy of the repository's index (refreshed when the real one
  changes), so `git status` can cache file stats and `git add` works without touching
  the real index; tracked files that exist on disk but are not in the copy (secret files,
  files the walker skips) are marked skip-worktree there, so they do not show as deleted;
- `GIT_OBJECT_DIRECTORY` = a private object folder, with the real one as an alternate:
  objects written by `git add` stay in the copy;
- configuration overrides (`GIT_CONFIG_COUNT`): `core.fsmonitor=false` and
  `core.hooksPath=/dev/null`, so a query never starts a monitor or a hook.

In the sandbox the real workspace is hidden; its git folder is shown again **read-only**
(with `config` and `FETCH_HEAD` replaced by copies without credentials in remote URLs or
`http.*.extraheader`), so refs, branches, tags, the real index, hooks and configuration
cannot be changed: `git commit`, `git update-ref`, `git config`, `git push` and writing
`.git/hooks/*` fail with "Read-only file system". A command that `writes_refs` (a `git
commit`, `git tag`, …) and was allowed — by a rule or the user — gets the git folder
writable for that run, except `config`, `hooks` and `info`, which stay read-only (a hook
or a configured program would run outside the sandbox later); objects the copy wrote are
moved into the real store first (each checked against its hash), so a commit of
`git add`ed files is complete.

Only a workspace whose first root is the repository's top level gets this (a root deeper
in a repository would make every file outside it look deleted).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
import subprocess
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["GitBinds", "GitRepo", "ShadowGit", "find_repo", "sanitize_config", "writes_refs"]

log = logging.getLogger(__name__)

GIT_TIMEOUT = 20.0
QUIET_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
)
"""Overrides for every command in the copy that may not write refs."""
ALWAYS_READ_ONLY = ("config", "hooks", "info")
"""Parts of the git folder that stay read-only even for an allowed `git commit`."""

_REV_PARSE = ("--show-toplevel", "--absolute-git-dir", "--git-common-dir")
_SAFE_ENV = {"GIT_OPTIONAL_LOCKS": "0", "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"}
_OBJECT_NAME = re.compile(r"^[0-9a-f]{2}$")
_OBJECT_REST = re.compile(r"^[0-9a-f]{38}([0-9a-f]{24})?$")
_URL_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/@\s]+@")
_SECRET_KEY = re.compile(r"^\s*(extraheader|password|token|helper)\s*=", re.IGNORECASE)

WRITING_SUBCOMMANDS = frozenset(
    {
        "commit",
        "merge",
        "rebase",
        "cherry-pick",
        "revert",
        "reset",
        "tag",
        "branch",
        "checkout",
        "switch",
        "restore",
        "stash",
        "pull",
        "fetch",
        "push",
        "am",
        "notes",
        "update-ref",
        "symbolic-ref",
        "update-index",
        "gc",
        "prune",
        "repack",
        "pack-refs",
        "remote",
        "worktree",
        "replace",
        "filter-branch",
        "mv",
        "rm",
        "clean",
        "bisect",
        "reflog",
    }
)
"""Subcommands that may change refs, HEAD or the repository (reading variants included:
`git branch` lists, but that is decided by the read-only set, not here)."""


@dataclass(frozen=True)
class GitRepo:
    """The repository a workspace root is the top level of."""

    top: Path
    git_dir: Path
    common_dir: Path
    """Where objects, refs and config live (differs from `git_dir` in a worktree)."""


def find_repo(root: Path) -> GitRepo | None:
    """The repository whose top level is `root`, or None (no git, no repository, or `root`
    lies deeper inside one)."""
    git = shutil.which("git")
    if git is None:
        return None
    try:
        found = subprocess.run(
            [git, "-c", "core.fsmonitor=false", "rev-parse", *_REV_PARSE],
            cwd=root,
            env={**_base_env(), **_SAFE_ENV},
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    lines = found.stdout.splitlines()
    if found.returncode != 0 or len(lines) < 3:
        return None
    top, git_dir = Path(lines[0]).resolve(), Path(lines[1]).resolve()
    common = Path(lines[2])
    common = (common if common.is_absolute() else root / common).resolve()
    if top != Path(root).resolve():
        return None
    return GitRepo(top, git_dir, common)


def writes_refs(parts: Iterable[Sequence[str]]) -> str | None:
    """The first simple command (its words, wrappers already stripped) that runs a git
    subcommand able to change the repository, as text; None when none does."""
    for words in parts:
        plain = [w.strip("'\"") for w in words]
        if not plain or plain[0].rsplit("/", 1)[-1] != "git":
            continue
        index = 1
        while index < len(plain) and plain[index].startswith("-"):
            index += 2 if plain[index] in ("-c", "-C", "--git-dir", "--work-tree") else 1
        if index < len(plain) and plain[index] in WRITING_SUBCOMMANDS:
            return " ".join(plain)
    return None


def sanitize_config(text: str) -> str:
    """A git config without credentials: user:password in URLs removed, `[credential]`
    sections and `extraheader`/`password`/`token` keys dropped."""
    kept: list[str] = []
    skipping = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("["):
            skipping = stripped.lower().startswith("[credential")
        if skipping or _SECRET_KEY.match(line):
            continue
        kept.append(_URL_USERINFO.sub(r"\g<scheme>", line))
    return "\n".join(kept) + "\n"


@dataclass(frozen=True)
class GitBinds:
    """What the sandbox mounts for git in one run (source → target)."""

    read_only: tuple[tuple[Path, Path], ...] = ()
    writable: tuple[tuple[Path, Path], ...] = ()
    read_only_after: tuple[tuple[Path, Path], ...] = ()
    """Mounted last, over parts of a writable git folder (config, hooks, info)."""


@dataclass
class ShadowGit:
    """Git for one shadow copy (see the module docstring)."""

    repo: GitRepo
    folder: Path
    """The copy's own git folder: private index and objects, sanitized config."""
    tree: Path
    """The copy of the repository's top level (the work tree)."""
    _index_key: tuple[int, int] | None = field(default=None, init=False)
    _skip_key: tuple[object, ...] | None = field(default=None, init=False)

    @property
    def index(self) -> Path:
        return self.folder / "index"

    @property
    def objects(self) -> Path:
        return self.folder / "objects"

    def prepare(self, present: Sequence[str], deleted: Sequence[str]) -> None:
        """Before a run: the private index up to date with the real one, tracked files
        missing from the copy (but not deleted by the session) marked skip-worktree, the
        sanitized config current. `present`/`deleted`: workspace paths in the copy and
        staged deletions."""
        self.folder.mkdir(parents=True, exist_ok=True)
        self.objects.mkdir(exist_ok=True)
        self._copy_index()
        self._sanitized("config", self.repo.common_dir / "config")
        self._sanitized("FETCH_HEAD", self.repo.git_dir / "FETCH_HEAD")
        key = (self._index_key, len(present), hash(tuple(sorted(deleted))))
        if key != self._skip_key:
            self._mark_missing(set(present), set(deleted))
            self._skip_key = key

    def _copy_index(self) -> None:
        real = self.repo.git_dir / "index"
        try:
            info = real.stat()
        except OSError:
            self.index.unlink(missing_ok=True)  # a repository without commits
            self._index_key = None
            return
        key = (info.st_mtime_ns, info.st_size)
        if key != self._index_key or not self.index.exists():
            shutil.copyfile(real, self.index)
            self._index_key = key

    def _sanitized(self, name: str, source: Path) -> None:
        target = self.folder / name
        try:
            text = source.read_text(encoding="utf-8", errors="surrogateescape")
        except OSError:
            target.unlink(missing_ok=True)
            return
        target.write_text(sanitize_config(text), encoding="utf-8", errors="surrogateescape")

    def _mark_missing(self, present: set[str], deleted: set[str]) -> None:
        if not self.index.exists():
            return
        listed = self._git(["ls-files", "-z"])
        if listed is None:
            return
        top = str(self.repo.top)
        missing: list[str] = []
        for name in filter(None, listed.split("\0")):
            path = os.path.join(top, name)
            if path not in present and path not in deleted and os.path.lexists(path):
                missing.append(name)
        if missing:
            self._git(["update-index", "--skip-worktree", "-z", "--stdin"], "\0".join(missing))

    def _git(self, args: list[str], stdin: str | None = None) -> str | None:
        git = shutil.which("git")
        if git is None:
            return None
        try:
            done = subprocess.run(
                [git, *args],
                cwd=self.tree,
                env={**_base_env(), **self.env(writable=False), **_SAFE_ENV},
                input=stdin,
                capture_output=True,
                text=True,
                timeout=GIT_TIMEOUT,
                check=False,
            )
        except (OSError, subprocess.SubprocessError) as exc:
            log.debug("git %s failed: %s", args[0], exc)
            return None
        if done.returncode != 0:
            log.debug("git %s failed: %s", args[0], done.stderr.strip())
            return None
        return done.stdout

    def env(self, *, writable: bool) -> dict[str, str]:
        """The variables a command in the copy runs with."""
        env = {
            "GIT_DIR": str(self.repo.git_dir),
            "GIT_WORK_TREE": str(self.tree),
            "GIT_INDEX_FILE": str(self.index),
        }
        real_objects = str(self.repo.common_dir / "objects")
        if writable:
            env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = str(self.objects)
            overrides: tuple[tuple[str, str], ...] = (("core.fsmonitor", "false"),)
        else:
            env["GIT_OBJECT_DIRECTORY"] = str(self.objects)
            env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = real_objects
            overrides = QUIET_CONFIG
        env["GIT_CONFIG_COUNT"] = str(len(overrides))
        for number, (key, value) in enumerate(overrides):
            env[f"GIT_CONFIG_KEY_{number}"] = key
            env[f"GIT_CONFIG_VALUE_{number}"] = value
        return env

    def binds(self, *, writable: bool) -> GitBinds:
        """The sandbox's mounts: the git folders (read-only, or writable but for config,
        hooks and info), with the sanitized config and FETCH_HEAD over the real ones."""
        folders = list(dict.fromkeys([self.repo.git_dir, self.repo.common_dir]))
        pairs = tuple((f, f) for f in folders)
        covers = self._sanitized_covers()
        if not writable:
            return GitBinds(read_only=(*pairs, *covers))
        protected = tuple(
            (p, p)
            for f in folders
            for name in ALWAYS_READ_ONLY
            if (p := f / name).exists() and p != self.repo.common_dir / "config"
        )
        return GitBinds(writable=pairs, read_only_after=(*protected, *covers))

    def _sanitized_covers(self) -> tuple[tuple[Path, Path], ...]:
        found = []
        for name, real in (
            ("config", self.repo.common_dir / "config"),
            ("FETCH_HEAD", self.repo.git_dir / "FETCH_HEAD"),
        ):
            if (self.folder / name).exists() and real.exists():
                found.append((self.folder / name, real))
        return tuple(found)

    def migrate_objects(self) -> int:
        """Move the loose objects the copy wrote into the real store (before a run that
        may commit), each checked against its name; returns how many were copied."""
        target = self.repo.common_dir / "objects"
        moved = 0
        for folder in sorted(self.objects.iterdir()) if self.objects.is_dir() else []:
            if not _OBJECT_NAME.match(folder.name) or not folder.is_dir():
                continue
            for item in folder.iterdir():
                destination = target / folder.name / item.name
                if not _OBJECT_REST.match(item.name) or destination.exists():
                    continue
                if not _verified(item, folder.name + item.name):
                    log.warning("object %s in the shadow copy does not match its name", item)
                    continue
                destination.parent.mkdir(exist_ok=True)
                shutil.copyfile(item, destination)
                moved += 1
        return moved


def _verified(path: Path, name: str) -> bool:
    try:
        data = zlib.decompress(path.read_bytes())
    except (OSError, zlib.error):
        return False
    algorithm = hashlib.sha1 if len(name) == 40 else hashlib.sha256
    return algorithm(data).hexdigest() == name


def _base_env() -> dict[str, str]:
    """The environment without git's own variables (the user's may point elsewhere)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
