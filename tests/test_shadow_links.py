"""Dependency folders in the shadow copy: linked, not copied, and no way for a process in
the shadow to reach the user's tree through them (written as an attacker would try)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentls.workspace import Workspace
from agentls.workspace.shadow import ShadowRegistry, ShadowWorkspace
from tests.shadow_support import tree_state


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src").mkdir(parents=True)
    (root / "package.json").write_text("{}")
    (root / "src" / "a.js").write_text("export const a = 1;\n")
    for package in ("eslint", "@types/node", ".bin"):
        (root / "node_modules" / package).mkdir(parents=True)
        (root / "node_modules" / package / "index.js").write_text(f"// {package}\n")
    (root / "node_modules" / ".cache").mkdir()  # a tool's cache: never linked
    venv = root / ".venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return root


@pytest.fixture
def shadow(project: Path, tmp_path: Path) -> Iterator[ShadowWorkspace]:
    registry = ShadowRegistry(base_dir=tmp_path / "shadows")
    yield registry.get("s", Workspace([project]))
    registry.close()


def test_node_modules_is_a_folder_of_links_and_the_venv_a_link(
    project: Path, shadow: ShadowWorkspace
) -> None:
    shadow.sync_blocking()
    farm = shadow.shadow_root() / "node_modules"
    assert farm.is_dir()
    assert not farm.is_symlink()
    assert sorted(os.listdir(farm)) == [".bin", "@types", "eslint"]
    assert os.readlink(farm / "eslint") == str(project / "node_modules" / "eslint")
    assert (farm / "@types" / "node" / "index.js").read_text() == "// @types/node\n"
    assert os.readlink(shadow.shadow_root() / ".venv") == str(project / ".venv")


def test_caches_written_in_the_shadow_stay_there(project: Path, shadow: ShadowWorkspace) -> None:
    before = tree_state(project)
    shadow.sync_blocking()
    farm = shadow.shadow_root() / "node_modules"
    (farm / ".vite" / "vitest").mkdir(parents=True)  # what vitest does
    (farm / ".vite" / "vitest" / "results.json").write_text("{}")
    (farm / ".cache").mkdir()
    (farm / ".cache" / "babel.json").write_text("{}")
    shadow.sync_blocking()
    assert (farm / ".vite" / "vitest" / "results.json").exists()  # kept across syncs
    assert tree_state(project) == before


def test_packages_added_and_removed_by_the_user_follow(
    project: Path, shadow: ShadowWorkspace
) -> None:
    shadow.sync_blocking()
    (project / "node_modules" / "vitest").mkdir()
    (project / "node_modules" / "eslint" / "index.js").unlink()
    (project / "node_modules" / "eslint").rmdir()
    shadow.sync_blocking()
    assert sorted(os.listdir(shadow.shadow_root() / "node_modules")) == [".bin", "@types", "vitest"]
    import shutil

    shutil.rmtree(project / "node_modules")
    shutil.rmtree(project / ".venv")
    shadow.sync_blocking()
    assert not (shadow.shadow_root() / "node_modules").exists()
    assert not os.path.lexists(shadow.shadow_root() / ".venv")


def test_a_planted_symlink_to_the_users_node_modules_is_replaced_not_written_through(
    project: Path, shadow: ShadowWorkspace
) -> None:
    """A process in the shadow swaps the farm for a link to the user's folder: the next sync
    must not link (or delete) anything inside the user's node_modules."""
    before = tree_state(project)
    shadow.sync_blocking()
    farm = shadow.shadow_root() / "node_modules"
    import shutil

    shutil.rmtree(farm)
    farm.symlink_to(project / "node_modules", target_is_directory=True)
    (project / "node_modules" / "newpkg").mkdir()  # so the sync has something to link
    shadow.sync_blocking()
    assert farm.is_dir()
    assert not farm.is_symlink()
    assert (project / "node_modules" / "eslint" / "index.js").exists()
    assert not any(p.is_symlink() for p in (project / "node_modules").iterdir())
    (project / "node_modules" / "newpkg").rmdir()
    assert tree_state(project) == before


def test_closing_the_shadow_removes_only_the_links(project: Path, shadow: ShadowWorkspace) -> None:
    before = tree_state(project)
    shadow.sync_blocking()
    copy = shadow.shadow_root()
    shadow.close()
    assert not copy.exists()
    assert tree_state(project) == before
    assert (project / "node_modules" / "eslint" / "index.js").exists()
    assert (project / ".venv" / "pyvenv.cfg").exists()


def test_nested_projects_get_their_own_node_modules(tmp_path: Path) -> None:
    root = tmp_path / "mono"
    (root / "packages" / "web" / "node_modules" / "react").mkdir(parents=True)
    (root / "packages" / "web" / "package.json").write_text("{}")
    (root / "packages" / "web" / "index.js").write_text("")
    registry = ShadowRegistry(base_dir=tmp_path / "shadows")
    try:
        shadow = registry.get("s", Workspace([root]))
        shadow.sync_blocking()
        link = shadow.shadow_root() / "packages" / "web" / "node_modules" / "react"
        assert os.readlink(link) == str(root / "packages" / "web" / "node_modules" / "react")
    finally:
        registry.close()
