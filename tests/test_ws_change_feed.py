"""The walk's change feed (inotify, `workspace/changefeed.py`): an unchanged tree is walked
again without a `stat` per folder, and every change is seen at once, with no settling time:
a file created after the remembered walk, secret files above all, is listed (or refused)
by the very next search exactly as a new workspace would."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from agentls.workspace import Workspace, ripgrep
from tests.test_ws_walk_cache import Tree, assert_fresh
from tests.ws_support import Runner, make_ctx

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")

FILES = {
    "a.py": "needle = 1\n",
    "src/b.py": "needle = 2\n",
    "src/deep/c.py": "x = 3\n",
    "docs/guide.md": "needle\n",
    ".gitignore": "*.log\n",
}


def record_rg_argv(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every argument ripgrep is started with from now on (a secret must never be one)."""
    given: list[str] = []
    real_start = ripgrep._start

    def recording(argv: list[str | bytes]) -> object:
        given.extend(os.fsdecode(a) for a in argv)
        return real_start(argv)

    monkeypatch.setattr(ripgrep, "_start", recording)
    return given


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    tree = Tree(tmp_path / "ws", FILES)
    tree.settle()
    return tree


def folder_stats(monkeypatch: pytest.MonkeyPatch, root: Path) -> list[str]:
    """Record every `os.stat` of a folder under `root` from now on."""
    seen: list[str] = []
    real = os.stat

    def counting(path: object, *args: object, **kw: object) -> os.stat_result:
        result = real(path, *args, **kw)  # type: ignore[arg-type]
        text = os.fsdecode(path) if isinstance(path, (str, bytes)) else ""
        if text.startswith(str(root)) and stat.S_ISDIR(result.st_mode):
            seen.append(text)
        return result

    monkeypatch.setattr(os, "stat", counting)
    return seen


def test_an_unchanged_tree_is_walked_again_without_folder_stats(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = Workspace([tree.root])
    first = list(ws.file_strs())
    assert list(ws.file_strs()) == first  # remembered once a walk saw no event
    seen = folder_stats(monkeypatch, tree.root)
    assert list(ws.file_strs()) == first
    assert seen == [str(tree.root)]  # the root's inode only (`changefeed.stamp`)


def test_changes_are_seen_at_once_without_settling(tree: Tree) -> None:
    """No `settle()`: each change lands in the same second as the walk before it."""
    ws = Workspace([tree.root])
    list(ws.file_strs())
    list(ws.file_strs())
    root = tree.root
    (root / "src" / "deep" / "new.py").write_text("")
    assert_fresh(ws, root)
    (root / ".gitignore").write_text("*.py\n")  # an ignore file edited in place
    assert_fresh(ws, root)
    (root / "src" / "deep").rename(root / "moved")
    assert_fresh(ws, root)
    (root / "moved" / "again.py").write_text("")  # inside a folder that was moved
    assert_fresh(ws, root)
    os.makedirs(root / ".git" / "info")
    (root / ".git" / "info" / "exclude").write_text("*.md\n")
    assert_fresh(ws, root)
    (root / ".git" / "info" / "exclude").write_text("")
    assert_fresh(ws, root)


async def test_a_secret_created_after_the_remembered_walk_is_never_searched(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The attacker writes secrets into an unchanged, remembered tree, then asks to grep:
    rg is never given them (not only: their lines are not shown), while an ordinary file
    created at the same moment is searched."""
    runner = Runner(make_ctx(tree.root))
    await runner.ok("grep", pattern="needle", output="files")
    await runner.ok("grep", pattern="needle", output="files")
    given = record_rg_argv(monkeypatch)
    root = tree.root
    (root / ".env").write_text("needle = 'sk-live-123'\n")
    (root / "src" / "deep" / "id_rsa").write_text("needle\n")
    (root / "src" / "deep" / "fresh.py").write_text("needle = 4\n")
    answer = await runner.ok("grep", pattern="needle", output="files")
    assert "fresh.py" in answer
    assert ".env" not in answer
    assert "id_rsa" not in answer
    assert not any(a.endswith((".env", "id_rsa")) for a in given)


async def test_a_listed_file_swapped_for_a_link_to_a_secret_is_not_searched(
    tree: Tree, tmp_path: Path
) -> None:
    outside = tmp_path / "home"
    outside.mkdir()
    (outside / "credentials").write_text("needle = 'aws-secret'\n")
    runner = Runner(make_ctx(tree.root))
    await runner.ok("grep", pattern="needle")
    await runner.ok("grep", pattern="needle")
    (tree.root / "a.py").unlink()
    os.symlink(outside / "credentials", tree.root / "a.py")
    answer = await runner.ok("grep", pattern="needle")
    assert "aws-secret" not in answer
    assert "a.py" not in answer


def test_a_hard_linked_ignore_file_is_not_trusted_to_the_feed(tree: Tree, tmp_path: Path) -> None:
    """An edit through another hard link sends no event to the folder's watch."""
    other = tmp_path / "rules"
    (tree.root / ".gitignore").unlink()
    (tree.root / ".gitignore").write_text("*.log\n")
    os.link(tree.root / ".gitignore", other)
    tree.settle()
    ws = Workspace([tree.root])
    list(ws.file_strs())
    list(ws.file_strs())
    other.write_text("*.py\n")
    assert_fresh(ws, tree.root)
