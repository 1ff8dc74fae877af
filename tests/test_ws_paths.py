"""Path safety: resolve/display keep every tool inside the workspace roots."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentls.errors import WorkspaceError
from agentls.workspace import Workspace
from tests.ws_support import make_tree


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return make_tree(tmp_path / "proj", {"src/app.py": "x = 1\n", "README.md": "hi\n"})


def test_relative_and_absolute_paths_resolve_inside(root: Path) -> None:
    ws = Workspace([root])
    assert ws.resolve("src/app.py") == root.resolve() / "src" / "app.py"
    assert ws.resolve(str(root / "src" / "app.py")) == root.resolve() / "src" / "app.py"
    assert ws.resolve("./src/../README.md") == root.resolve() / "README.md"
    assert ws.resolve("") == root.resolve()
    assert ws.resolve("src/not_yet.py") == root.resolve() / "src" / "not_yet.py"


def test_display_is_workspace_relative_posix(root: Path) -> None:
    ws = Workspace([root])
    assert ws.display(ws.resolve("src/app.py")) == "src/app.py"
    assert ws.display(ws.resolve(".")) == "."


@pytest.mark.parametrize("escape", ["../outside.txt", "src/../../outside.txt", "/etc/passwd"])
def test_paths_outside_roots_are_refused_naming_the_roots(root: Path, escape: str) -> None:
    ws = Workspace([root])
    with pytest.raises(WorkspaceError) as info:
        ws.resolve(escape)
    message = str(info.value)
    assert "outside the workspace" in message
    assert str(root.resolve()) in message


def test_symlink_pointing_out_is_refused(root: Path, tmp_path: Path) -> None:
    secret = make_tree(tmp_path / "secret", {"key.txt": "hunter2\n"})
    os.symlink(secret / "key.txt", root / "link.txt")
    os.symlink(secret, root / "linkdir")
    ws = Workspace([root])
    for path in ("link.txt", "linkdir/key.txt", "linkdir/new.txt"):
        with pytest.raises(WorkspaceError, match="symbolic link"):
            ws.resolve(path)


def test_symlink_inside_workspace_resolves_to_target(root: Path) -> None:
    os.symlink(root / "src" / "app.py", root / "alias.py")
    ws = Workspace([root])
    assert ws.resolve("alias.py") == root.resolve() / "src" / "app.py"


def test_prefix_sibling_is_not_inside(tmp_path: Path) -> None:
    root = make_tree(tmp_path / "proj", {"a.txt": "a"})
    make_tree(tmp_path / "proj2", {"b.txt": "b"})
    ws = Workspace([root])
    with pytest.raises(WorkspaceError):
        ws.resolve("../proj2/b.txt")


def test_multiple_roots_by_name(tmp_path: Path) -> None:
    first = make_tree(tmp_path / "app", {"main.py": ""})
    second = make_tree(tmp_path / "lib", {"util.py": ""})
    ws = Workspace([first, second])
    util = ws.resolve("lib/util.py")
    assert util == second.resolve() / "util.py"
    assert ws.display(util) == "lib/util.py"
    assert ws.display(ws.resolve("main.py")) == "main.py"
    assert ws.resolve(str(second / "util.py")) == util


def test_workspace_needs_a_root() -> None:
    with pytest.raises(ValueError, match="at least one root folder"):
        Workspace([])
