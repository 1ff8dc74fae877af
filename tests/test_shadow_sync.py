"""The shadow copy: placement, incremental sync, overlays, and isolation from the user's tree."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.errors import WorkspaceError
from agentls.workspace import ChangeSet, Workspace
from agentls.workspace.shadow import (
    ShadowRegistry,
    ShadowWorkspace,
    prune_stale,
    shadow_for,
    shadows_of,
)
from tests.shadow_support import stage


def _project(root: Path) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("VALUE = 1\n")
    (root / "pkg" / "util.py").write_text("def f():\n    return 1\n")
    (root / "README.md").write_text("hello\n")
    (root / ".venv").mkdir()
    (root / ".venv" / "junk.py").write_text("not copied\n")
    return root


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return _project(tmp_path / "proj")


@pytest.fixture
def shadow(project: Path, tmp_path: Path) -> Iterator[ShadowWorkspace]:
    sh = ShadowWorkspace(Workspace([project]), session_id="s1", base_dir=tmp_path / "shadows")
    yield sh
    sh.close()


def test_is_created_lazily_outside_the_workspace(project: Path, tmp_path: Path) -> None:
    base = tmp_path / "shadows"
    shadow = ShadowWorkspace(Workspace([project]), session_id="s/1", base_dir=base)
    assert not base.exists()
    shadow.sync_blocking()
    copy = shadow.shadow_root()
    assert copy.is_relative_to(base)
    assert not copy.is_relative_to(project)
    assert (copy / "pkg" / "util.py").read_text() == "def f():\n    return 1\n"
    assert not (copy / ".venv").exists()
    shadow.close()
    assert not shadow_dir_exists(base)


def shadow_dir_exists(base: Path) -> bool:
    return any(base.iterdir())


def test_refuses_a_place_inside_the_workspace(project: Path) -> None:
    shadow = ShadowWorkspace(Workspace([project]), base_dir=project / "tmp")
    with pytest.raises(WorkspaceError, match="outside the workspace"):
        shadow.sync_blocking()
    assert not (project / "tmp").exists()


def test_sync_copies_only_what_changed(project: Path, shadow: ShadowWorkspace) -> None:
    first = shadow.sync_blocking()
    assert (first.copied, first.removed) == (3, 0)

    again = shadow.sync_blocking()
    assert (again.copied, again.written, again.removed, again.unchanged) == (0, 0, 0, 3)

    util = project / "pkg" / "util.py"
    util.write_text("def f():\n    return 2\n")
    os.utime(util, ns=(0, util.stat().st_mtime_ns + 1_000_000))
    (project / "README.md").unlink()
    (project / "pkg" / "new.py").write_text("X = 1\n")
    third = shadow.sync_blocking()
    assert (third.copied, third.removed, third.unchanged) == (2, 1, 1)
    copy = shadow.shadow_root()
    assert (copy / "pkg" / "util.py").read_text().endswith("return 2\n")
    assert not (copy / "README.md").exists()
    assert shadow.totals.copied == 5


def test_overlays_win_in_order_staged_then_buffer_then_disk(project: Path, tmp_path: Path) -> None:
    ws, changes = Workspace([project]), ChangeSet()
    shadow = ShadowWorkspace(ws, base_dir=tmp_path / "shadows")
    init, util = project / "pkg" / "__init__.py", project / "pkg" / "util.py"
    ws.set_buffer(init, "VALUE = 'buffer'\n", 3)
    ws.set_buffer(util, "def f():\n    return 'buffer'\n", 4)
    stage(changes, util, "def f():\n    return 'staged'\n")
    stage(changes, project / "pkg" / "added.py", "NEW = True\n")
    changes.stage_delete(project / "README.md", "hello\n")
    stats = shadow.sync_blocking(changes)
    copy = shadow.shadow_root()
    assert (copy / "pkg" / "__init__.py").read_text() == "VALUE = 'buffer'\n"
    assert (copy / "pkg" / "util.py").read_text() == "def f():\n    return 'staged'\n"
    assert (copy / "pkg" / "added.py").read_text() == "NEW = True\n"
    assert not (copy / "README.md").exists()
    assert stats.written == 3
    assert project / "pkg" / "added.py" in shadow.files(project / "pkg")

    # Buffers closed, staged edits discarded: back to disk.
    ws.close_buffer(init)
    ws.close_buffer(util)
    changes.discard()
    stats = shadow.sync_blocking(changes)
    assert (copy / "pkg" / "util.py").read_text() == "def f():\n    return 1\n"
    assert (copy / "README.md").read_text() == "hello\n"
    assert not (copy / "pkg" / "added.py").exists()
    assert (stats.copied, stats.removed) == (3, 1)
    assert (project / "pkg" / "util.py").read_text() == "def f():\n    return 1\n"


def test_a_renamed_file_moves_in_the_copy_byte_for_byte(project: Path, tmp_path: Path) -> None:
    blob = bytes(range(256))  # not text: must be copied, not decoded
    (project / "data.bin").write_bytes(blob)
    ws, changes = Workspace([project]), ChangeSet()
    shadow = ShadowWorkspace(ws, base_dir=tmp_path / "shadows")
    changes.stage_rename(project / "data.bin", project / "pkg" / "moved.bin", None)
    shadow.sync_blocking(changes)
    copy = shadow.shadow_root()
    assert (copy / "pkg" / "moved.bin").read_bytes() == blob
    assert not (copy / "data.bin").exists()
    assert (project / "data.bin").read_bytes() == blob


def test_config_files_are_copied_even_when_ignored(project: Path, tmp_path: Path) -> None:
    (project / ".gitignore").write_text("ruff.toml\n")
    (project / "ruff.toml").write_text("line-length = 10\n")
    (project / "pkg" / "ruff.toml").write_text("line-length = 20\n")
    ws = Workspace([project])
    assert ws.is_ignored(project / "ruff.toml")
    shadow = ShadowWorkspace(ws, base_dir=tmp_path / "shadows")
    shadow.sync_blocking()
    assert (shadow.shadow_root() / "ruff.toml").is_file()
    assert (shadow.shadow_root() / "pkg" / "ruff.toml").is_file()


def test_a_process_tampering_with_the_copy_is_repaired_and_never_reaches_the_user(
    project: Path, shadow: ShadowWorkspace
) -> None:
    shadow.sync_blocking()
    copy = shadow.shadow_root() / "pkg" / "util.py"
    user_file = project / "pkg" / "util.py"
    copy.write_text("tampered\n")
    shadow.sync_blocking()
    assert copy.read_text() == "def f():\n    return 1\n"
    # A symlink planted into the user's tree must be replaced, not written through.
    copy.unlink()
    copy.symlink_to(user_file)
    changes = ChangeSet()
    stage(changes, user_file, "def f():\n    return 'staged'\n")
    shadow.sync_blocking(changes)
    assert not copy.is_symlink()
    assert copy.read_text() == "def f():\n    return 'staged'\n"
    assert user_file.read_text() == "def f():\n    return 1\n"


def test_copies_are_independent_files_not_links(project: Path, shadow: ShadowWorkspace) -> None:
    shadow.sync_blocking()
    copy = shadow.shadow_root() / "pkg" / "util.py"
    assert copy.stat().st_ino != (project / "pkg" / "util.py").stat().st_ino
    assert copy.stat().st_nlink == 1
    assert not copy.is_symlink()


def test_multi_root_paths_map_both_ways(tmp_path: Path) -> None:
    a = _project(tmp_path / "a" / "app")
    b = _project(tmp_path / "b" / "app")
    shadow = ShadowWorkspace(Workspace([a, b]), base_dir=tmp_path / "shadows")
    shadow.sync_blocking()
    copy_b = shadow.to_shadow(b / "pkg" / "util.py")
    assert copy_b.is_file()
    assert copy_b != shadow.to_shadow(a / "pkg" / "util.py")
    assert shadow.to_workspace(copy_b) == b / "pkg" / "util.py"
    assert shadow.to_workspace(tmp_path / "elsewhere") is None
    text = f"{copy_b}:3: boom"
    assert shadow.map_output(text, relative=False) == f"{b / 'pkg' / 'util.py'}:3: boom"
    shadow.close()


def test_one_shadow_per_session_until_closed(project: Path, tmp_path: Path) -> None:
    class Ctx:
        def __init__(self, session_id: str, workspace: Workspace) -> None:
            self.session_id, self.workspace = session_id, workspace

    registry = ShadowRegistry(base_dir=tmp_path / "shadows")
    ws = Workspace([project])
    first = shadow_for(Ctx("a", ws), registry)
    assert shadow_for(Ctx("a", ws), registry) is first
    other = shadow_for(Ctx("b", ws), registry)
    assert other is not first
    first.sync_blocking()
    directory = first.directory
    registry.close_session("a")
    assert not directory.exists()
    assert "a" not in registry
    assert "b" in registry
    registry.close()


def test_a_planted_folder_symlink_is_replaced_not_followed(
    project: Path, shadow: ShadowWorkspace, tmp_path: Path
) -> None:
    shadow.sync_blocking()
    copy_pkg = shadow.shadow_root() / "pkg"
    outside = tmp_path / "victim"
    outside.mkdir()
    for child in copy_pkg.iterdir():
        child.unlink()
    copy_pkg.rmdir()
    copy_pkg.symlink_to(outside, target_is_directory=True)
    changes = ChangeSet()
    stage(changes, project / "pkg" / "util.py", "def f():\n    return 'staged'\n")
    shadow.sync_blocking(changes)
    assert not copy_pkg.is_symlink()
    assert (copy_pkg / "util.py").read_text() == "def f():\n    return 'staged'\n"
    assert list(outside.iterdir()) == []


class _Session:
    def __init__(self, session_id: str, workspace: Workspace) -> None:
        self.session_id, self.workspace = session_id, workspace


def test_idle_shadows_are_closed_once_too_many_exist(project: Path, tmp_path: Path) -> None:
    ws = Workspace([project])
    registry = ShadowRegistry(base_dir=tmp_path / "shadows", max_live=2, idle_seconds=0)
    first = shadow_for(_Session("a", ws), registry)
    first.sync_blocking()
    kept = first.directory
    shadow_for(_Session("b", ws), registry).sync_blocking()
    assert "a" in registry
    assert kept.exists()  # two live: within the limit
    shadow_for(_Session("c", ws), registry).sync_blocking()
    # the third closed the longest-unused idle one ("a"); it comes back as a fresh copy
    assert "a" not in registry
    assert not kept.exists()
    assert "b" in registry
    assert "c" in registry
    again = shadow_for(_Session("a", ws), registry)
    again.sync_blocking()
    assert again.directory != kept
    assert any((again.directory / "trees").rglob("util.py"))
    recent = ShadowRegistry(base_dir=tmp_path / "recent", max_live=1, idle_seconds=3600)
    shadow_for(_Session("a", ws), recent)
    shadow_for(_Session("b", ws), recent)
    assert "a" in recent
    assert "b" in recent  # nothing idle long enough: none closed
    busy = ShadowRegistry(base_dir=tmp_path / "busy", max_live=1, idle_seconds=0)
    with shadow_for(_Session("a", ws), busy).in_use() as running:
        running.sync_blocking()
        shadow_for(_Session("b", ws), busy)
        assert "a" in busy
        assert running.directory.exists()  # a test runs in it: kept
    shadow_for(_Session("c", ws), busy)
    assert "a" not in busy
    assert "b" not in busy
    assert "c" in busy  # idle ones closed once free
    for reg in (registry, recent, busy):
        reg.close()


def test_shadows_of_dead_processes_are_pruned(project: Path, tmp_path: Path) -> None:
    base = tmp_path / "shadows"
    dead = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True
    )
    abandoned = base / "agentls-shadow-old-1234"
    (abandoned / "trees").mkdir(parents=True)
    (abandoned / "owner.pid").write_text(dead.stdout)
    alive = base / "agentls-shadow-live-5678"
    alive.mkdir()
    (alive / "owner.pid").write_text(f"{os.getppid()}\n")
    unrelated = base / "something-else"
    unrelated.mkdir()
    pycache = tmp_path / "pycache"
    mirrored = pycache / abandoned.relative_to(abandoned.anchor) / "trees"
    mirrored.mkdir(parents=True)

    prune_stale([base], pycache)
    assert not abandoned.exists()
    assert not mirrored.exists()
    assert alive.exists()
    assert unrelated.exists()


def test_closing_the_workspace_deletes_its_shadows(project: Path, tmp_path: Path) -> None:
    ws = Workspace([project])
    registry = shadows_of(ws)
    assert shadows_of(ws) is registry
    assert shadows_of(Workspace([project])) is not registry
    shadow = registry.get("a", ws)
    shadow.sync_blocking()
    directory = shadow.directory
    assert (directory / "owner.pid").read_text().strip() == str(os.getpid())
    ws.close()
    assert not directory.exists()
    assert shadows_of(ws) is not registry  # a new registry on next use
