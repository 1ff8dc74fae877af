"""Files only the user can read: transcripts, session state, answers shown in the editor.

They hold the user's code, prompts and the model's answers, so they are created 0600 in
folders that are 0700. Folders in shared places (`/tmp`) are made safely: a folder that
already exists must be a real directory owned by this user — a symlink or another user's
folder planted there in advance is refused, never followed — and files are opened with
`O_NOFOLLOW`, so a pre-created symlink at a file's name is not written through.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from pathlib import Path
from typing import TextIO

FILE_MODE = 0o600
DIR_MODE = 0o700


class PrivatePathError(OSError):
    """A private file or folder cannot be made safely (the message says why)."""


def private_dir(path: Path) -> Path:
    """`path` as a folder only this user can enter (created, or checked and tightened)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(FileExistsError):
        os.mkdir(path, DIR_MODE)
    info = os.lstat(path)
    if stat.S_ISLNK(info.st_mode) or not stat.S_ISDIR(info.st_mode):
        raise PrivatePathError(f"{path} is not a directory (a symlink or a file is in its place)")
    if info.st_uid != os.getuid():
        raise PrivatePathError(f"{path} belongs to another user (uid {info.st_uid})")
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, DIR_MODE)
    return path


def user_temp_dir(name: str) -> Path:
    """A private per-user folder for short-lived files (`$XDG_RUNTIME_DIR` when set)."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    base = Path(runtime) if runtime and os.path.isdir(runtime) else Path(tempfile.gettempdir())
    return private_dir(private_dir(base / f"agentls-{os.getuid()}") / name)


def open_private(path: Path, *, append: bool = True) -> TextIO:
    """Open a file for writing, 0600, never through a symlink (`append=False` truncates)."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC
    flags |= os.O_APPEND if append else os.O_TRUNC
    try:
        fd = os.open(path, flags, FILE_MODE)
    except OSError as exc:
        if os.path.islink(path):
            raise PrivatePathError(f"{path} is a symlink; refusing to write through it") from exc
        raise
    try:
        os.fchmod(fd, FILE_MODE)  # an older file may have been created with a looser mode
        return os.fdopen(fd, "a" if append else "w", encoding="utf-8")
    except BaseException:
        os.close(fd)
        raise


def write_private(path: Path, text: str) -> Path:
    """Replace a file's content atomically; the new file is 0600."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path
