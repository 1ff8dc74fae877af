"""Private files and folders: another local user can neither read them nor redirect them."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from agentls.privatefiles import (
    PrivatePathError,
    open_private,
    private_dir,
    user_temp_dir,
    write_private,
)


def mode(path: Path) -> int:
    return stat.S_IMODE(os.lstat(path).st_mode)


def test_a_new_folder_is_0700_and_a_loose_one_is_tightened(tmp_path: Path) -> None:
    assert mode(private_dir(tmp_path / "new")) == 0o700
    loose = tmp_path / "loose"
    loose.mkdir(mode=0o777)
    os.chmod(loose, 0o777)
    assert mode(private_dir(loose)) == 0o700


def test_a_symlink_planted_at_the_folder_name_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "attacker"
    target.mkdir()
    (tmp_path / "shared").symlink_to(target)
    with pytest.raises(PrivatePathError, match="symlink"):
        private_dir(tmp_path / "shared")


def test_a_file_planted_at_the_folder_name_is_refused(tmp_path: Path) -> None:
    (tmp_path / "shared").write_text("x")
    with pytest.raises(PrivatePathError):
        private_dir(tmp_path / "shared")


def test_files_are_0600_and_never_written_through_a_symlink(tmp_path: Path) -> None:
    folder = private_dir(tmp_path / "f")
    with open_private(folder / "log.jsonl") as handle:
        handle.write("one\n")
    assert mode(folder / "log.jsonl") == 0o600
    victim = tmp_path / "victim"
    victim.write_text("keep")
    (folder / "trap.jsonl").symlink_to(victim)
    with pytest.raises(PrivatePathError, match="is a symlink; refusing to write through it"):
        open_private(folder / "trap.jsonl")
    assert victim.read_text() == "keep"


def test_an_old_world_readable_file_is_tightened_when_reopened(tmp_path: Path) -> None:
    old = tmp_path / "old.jsonl"
    old.write_text("a\n")
    os.chmod(old, 0o644)
    with open_private(old) as handle:
        handle.write("b\n")
    assert mode(old) == 0o600
    assert old.read_text() == "a\nb\n"


def test_atomic_writes_are_0600(tmp_path: Path) -> None:
    path = write_private(tmp_path / "answer.md", "hello\n")
    assert path.read_text() == "hello\n"
    assert mode(path) == 0o600


def test_the_user_temp_dir_is_per_user_and_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    folder = user_temp_dir("answers")
    assert folder == tmp_path / f"agentls-{os.getuid()}" / "answers"
    assert mode(folder) == 0o700
    assert mode(folder.parent) == 0o700
