"""The walk cache: after any change to the tree, a workspace that walked before lists exactly
what a new workspace lists (same files, same order).

Folders and files created by a test are seconds old at most, so the cache would distrust
every listing of them (racy timestamps) and re-list everything: the invalidation by key
would never be exercised. `Tree.settle()` therefore moves recent mtimes to a distinct old
instant, as if the test had paused; walks made right after a change (no settle) cover the
racy side.
"""

from __future__ import annotations

import os
import random
import shutil
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from agentls.workspace import Workspace
from tests.ws_support import Runner, lines_of, make_ctx, make_tree

_BASE_NS = (int(time.time()) - 7200) * 1_000_000_000
_RECENT_NS = 600 * 1_000_000_000


class Tree:
    """A test tree, and a clock that makes its recent changes look long settled."""

    def __init__(self, root: Path, files: dict[str, str] | None = None) -> None:
        self.root = make_tree(root, files or {})
        self._step = 0

    def settle(self) -> None:
        """Give every recently changed entry a new old mtime (a distinct one each call, so
        a changed folder never gets back the mtime of a listing cached earlier)."""
        self._step += 1
        stamp = _BASE_NS + self._step * 1_000_000_000
        recent = time.time_ns() - _RECENT_NS
        for path in [self.root, *_entries(self.root)]:
            if not path.is_symlink() and path.lstat().st_mtime_ns > recent:
                os.utime(path, ns=(stamp, stamp))


def _entries(root: Path) -> Iterator[Path]:
    for folder, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            yield Path(folder) / name


def walks(ws: Workspace, root: Path) -> dict[str, list[str]]:
    """The walks the tools make: whole tree (respecting ignores or not), and a sub-folder."""
    result = {
        "all": list(ws.file_strs()),
        "unignored": list(ws.file_strs(root, respect_ignore=False)),
    }
    for sub in sorted(p for p in root.iterdir() if p.is_dir() and not p.is_symlink()):
        result[sub.name] = list(ws.file_strs(sub))
    return result


def assert_fresh(ws: Workspace, root: Path) -> None:
    """The cached walks equal those of a new workspace (no cache)."""
    assert walks(ws, root) == walks(Workspace([root]), root)


def check(ws: Workspace, tree: Tree) -> None:
    """Compare right after a change (racy), then once the change has settled."""
    assert_fresh(ws, tree.root)
    tree.settle()
    assert_fresh(ws, tree.root)


SAME_SIZE_RULES = "*.md\n\n"
"""As long as BASE's .gitignore ("*.log\n"), so the edit does not change the size."""


def shown(ws: Workspace) -> list[str]:
    return [ws.display(p) for p in ws.file_strs()]


BASE = {
    ".gitignore": "*.log\n",
    "README.md": "",
    "app.log": "",
    "src/main.py": "",
    "src/util/helpers.py": "",
    "src/util/deep/more.py": "",
    "src/util/deep/trace.log": "",
    "docs/guide.md": "",
}


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    tree = Tree(tmp_path / "ws", BASE)
    tree.settle()
    return tree


@pytest.fixture
def ws(tree: Tree) -> Workspace:
    """A workspace whose cache holds every folder of `tree` (walked once, all settled)."""
    ws = Workspace([tree.root])
    walks(ws, tree.root)
    return ws


def test_warm_walk_stats_folders_instead_of_listing_them(
    tree: Tree, ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    listed: list[str] = []
    scandir = os.scandir

    def counting(path: str) -> Iterator[os.DirEntry[str]]:
        listed.append(path)
        return scandir(path)

    monkeypatch.setattr(os, "scandir", counting)
    before = shown(ws)
    assert listed == []
    assert before == shown(Workspace([tree.root]))
    assert len(listed) == 5  # the fresh workspace listed every folder
    (tree.root / "src" / "util" / "new.py").write_text("")
    listed.clear()
    assert shown(ws) == [*before[:4], "src/util/helpers.py", "src/util/new.py", before[-1]]
    assert listed == [str(tree.root / "src" / "util")]


def test_adding_and_deleting_files(tree: Tree, ws: Workspace) -> None:
    (tree.root / "src" / "util" / "deep" / "added.py").write_text("")
    (tree.root / "docs" / "added.log").write_text("")
    check(ws, tree)
    (tree.root / "src" / "main.py").unlink()
    (tree.root / "src" / "util" / "deep" / "added.py").unlink()
    check(ws, tree)
    assert "src/main.py" not in shown(ws)


def test_renaming_a_file_and_a_folder(tree: Tree, ws: Workspace) -> None:
    (tree.root / "src" / "main.py").rename(tree.root / "src" / "entry.py")
    check(ws, tree)
    (tree.root / "src" / "util").rename(tree.root / "src" / "tools")
    check(ws, tree)
    assert "src/tools/deep/more.py" in shown(ws)
    (tree.root / "src" / "tools").rename(tree.root / "docs" / "tools")
    check(ws, tree)
    assert "docs/tools/helpers.py" in shown(ws)


def test_creating_and_removing_nested_folders(tree: Tree, ws: Workspace) -> None:
    make_tree(tree.root, {"src/util/deep/er/est/leaf.py": "", "new/a/b/c.txt": ""})
    check(ws, tree)
    assert "src/util/deep/er/est/leaf.py" in shown(ws)
    shutil.rmtree(tree.root / "src" / "util" / "deep" / "er")
    (tree.root / "new" / "a" / "b" / "c.txt").unlink()
    check(ws, tree)
    shutil.rmtree(tree.root / "new")
    check(ws, tree)


@pytest.mark.parametrize("same_size", [True, False])
def test_gitignore_edited_in_place(tree: Tree, ws: Workspace, same_size: bool) -> None:
    """An in-place edit moves no folder's mtime; the deep folders' listings stay valid but
    their decisions were made with the old rules."""
    gitignore = tree.root / ".gitignore"
    inode = gitignore.stat().st_ino
    with open(gitignore, "r+") as fh:  # same inode: written in place, not replaced
        fh.truncate(0)
        fh.write(SAME_SIZE_RULES if same_size else "*.py\n!main.py\n")
    assert gitignore.stat().st_ino == inode
    assert (gitignore.stat().st_size == len(BASE[".gitignore"])) is same_size
    check(ws, tree)
    assert ("docs/guide.md" in shown(ws)) is not same_size
    assert "src/util/deep/trace.log" in shown(ws)
    with open(gitignore, "r+") as fh:
        fh.truncate(0)
        fh.write("*.log\n")
    check(ws, tree)
    assert "src/util/deep/trace.log" not in shown(ws)


def test_nested_gitignore_added_edited_removed(tree: Tree, ws: Workspace) -> None:
    nested = tree.root / "src" / "util" / ".gitignore"
    nested.write_text("deep/\n")
    check(ws, tree)
    assert not any("deep" in p for p in shown(ws))
    nested.write_text("!*.log\n")
    check(ws, tree)
    assert "src/util/deep/trace.log" in shown(ws)
    nested.unlink()
    check(ws, tree)
    assert "src/util/deep/trace.log" not in shown(ws)


def test_dot_ignore_and_git_exclude(tree: Tree, ws: Workspace) -> None:
    (tree.root / "src" / ".ignore").write_text("main.py\n")
    check(ws, tree)
    exclude = tree.root / ".git" / "info" / "exclude"
    exclude.parent.mkdir(parents=True)
    exclude.write_text("docs/\n")
    check(ws, tree)
    assert not any(p.startswith("docs/") for p in shown(ws))
    exclude.write_text("README.md\n")
    check(ws, tree)


def test_folder_replaced_by_a_file_and_back(tree: Tree, ws: Workspace) -> None:
    shutil.rmtree(tree.root / "src" / "util")
    (tree.root / "src" / "util").write_text("now a file\n")
    check(ws, tree)
    assert "src/util" in shown(ws)
    (tree.root / "src" / "util").unlink()
    make_tree(tree.root, {"src/util/deep/other.py": ""})
    check(ws, tree)


def test_folder_replaced_by_another_with_the_same_mtime(tree: Tree, ws: Workspace) -> None:
    """The inode in the key notices the swap even when the mtimes are equal."""
    util = tree.root / "src" / "util"
    mtime = util.stat().st_mtime_ns
    make_tree(tree.root, {"src/util2/swapped.py": ""})
    util.rename(tree.root / "src" / "old_util")
    (tree.root / "src" / "util2").rename(util)
    os.utime(util, ns=(mtime, mtime))
    tree.settle()
    assert_fresh(ws, tree.root)
    assert "src/util/swapped.py" in shown(ws)


def test_change_in_the_same_tick_as_the_listing(tree: Tree, ws: Workspace) -> None:
    """A folder listed within two seconds of its mtime is listed again next time, because a
    change in the same timestamp tick would leave the mtime as it was (forced here)."""
    util = tree.root / "src" / "util"
    now = time.time_ns()
    os.utime(util, ns=(now, now))
    assert_fresh(ws, tree.root)  # listed now: the mtime is recent, the listing racy
    (util / "same_tick.py").write_text("")
    os.utime(util, ns=(now, now))
    assert_fresh(ws, tree.root)
    assert "src/util/same_tick.py" in shown(ws)


def test_gitignore_edit_in_the_same_tick_as_it_was_read(tree: Tree, ws: Workspace) -> None:
    gitignore = tree.root / ".gitignore"
    now = time.time_ns()
    os.utime(gitignore, ns=(now, now))
    assert_fresh(ws, tree.root)  # read now: racy
    gitignore.write_text(SAME_SIZE_RULES)  # same size, same inode, mtime forced back
    os.utime(gitignore, ns=(now, now))
    assert_fresh(ws, tree.root)
    assert "docs/guide.md" not in shown(ws)


def test_quick_changes_without_settling(tree: Tree, ws: Workspace) -> None:
    """Changes made right after a walk (the usual racy case, nothing forced)."""
    for n in range(5):
        (tree.root / "src" / f"quick{n}.py").write_text("")
        assert_fresh(ws, tree.root)
        (tree.root / ".gitignore").write_text(f"quick{n}.py\n")
        assert_fresh(ws, tree.root)


def test_symlinks_are_still_not_followed(tree: Tree, ws: Workspace, tmp_path: Path) -> None:
    outside = make_tree(tmp_path / "outside", {"x.py": "", "sub/y.py": "", "rules": "*.md\n"})
    root = tree.root
    os.symlink(outside, root / "linked_dir")
    os.symlink(outside / "x.py", root / "linked.py")
    os.symlink(root / "src", root / "docs" / "src_again")
    os.symlink(root / "missing", root / "dangling")
    check(ws, tree)
    assert not any("linked" in p or "src_again" in p or "dangling" in p for p in shown(ws))
    (root / "src" / "main.py").unlink()
    os.symlink(outside / "x.py", root / "src" / "main.py")  # a file replaced by a link
    check(ws, tree)
    assert "src/main.py" not in shown(ws)
    os.symlink(outside / "rules", root / "src" / ".gitignore")  # rules read through a link
    check(ws, tree)
    (outside / "rules").write_text("*.py\n")  # the link's target edited: no folder moves
    check(ws, tree)
    assert not any(p.startswith("src/") for p in shown(ws))
    (root / "linked_dir").unlink()
    make_tree(root, {"linked_dir/real.py": ""})  # a link replaced by a real folder
    check(ws, tree)
    assert "linked_dir/real.py" in shown(ws)


def test_virtualenv_detected_inside_an_unchanged_parent(tree: Tree, ws: Workspace) -> None:
    """Whether `venv` is skipped depends on its content, not on its parent's listing."""
    make_tree(tree.root, {"lib/venv/__init__.py": ""})
    check(ws, tree)
    assert "lib/venv/__init__.py" in shown(ws)
    make_tree(tree.root, {"lib/venv/bin/activate": ""})
    check(ws, tree)
    assert "lib/venv/__init__.py" not in shown(ws)
    (tree.root / "lib" / "venv" / "bin" / "activate").unlink()
    check(ws, tree)
    assert "lib/venv/__init__.py" in shown(ws)


def test_folder_made_unreadable(tree: Tree, ws: Workspace) -> None:
    """chmod moves no mtime; the mode in the key notices it."""
    deep = tree.root / "src" / "util" / "deep"
    deep.chmod(0)
    try:
        if os.access(deep, os.R_OK):
            pytest.skip("this user reads folders whatever their mode (root)")
        assert_fresh(ws, tree.root)
        assert "src/util/deep/more.py" not in shown(ws)
    finally:
        deep.chmod(0o755)
    assert_fresh(ws, tree.root)


def test_vanished_folders_are_forgotten(tree: Tree, ws: Workspace) -> None:
    assert ws.ignore.cached_dirs == 5
    make_tree(tree.root, {f"gen/{n}/{m}/f.txt": "" for n in range(5) for m in range(4)})
    walks(ws, tree.root)
    assert ws.ignore.cached_dirs == 5 + 1 + 5 + 20
    shutil.rmtree(tree.root / "gen")
    walks(ws, tree.root)
    assert ws.ignore.cached_dirs == 5


def test_concurrent_walks_during_changes(tree: Tree, ws: Workspace) -> None:
    """Walks in several threads while the tree changes: each one finishes, and once the
    changes stop every walk lists what a new workspace lists."""
    failures: list[BaseException] = []
    stop = threading.Event()

    def walker() -> None:
        try:
            while not stop.is_set():
                walks(ws, tree.root)
        except BaseException as exc:  # reported by the main thread
            failures.append(exc)

    threads = [threading.Thread(target=walker) for _ in range(4)]
    for thread in threads:
        thread.start()
    try:
        for n in range(40):
            make_tree(tree.root, {f"src/util/deep/t{n % 7}/f{n}.py": ""})
            if n % 5 == 0:
                shutil.rmtree(tree.root / "src" / "util" / "deep" / f"t{(n + 3) % 7}", True)
            (tree.root / ".gitignore").write_text(f"*.log\nf{n % 3}*.py\n")
            time.sleep(0.002)
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    assert failures == []
    expected = walks(Workspace([tree.root]), tree.root)
    results: list[dict[str, list[str]]] = []
    readers = [
        threading.Thread(target=lambda: results.append(walks(ws, tree.root))) for _ in range(4)
    ]
    for reader in readers:
        reader.start()
    for reader in readers:
        reader.join()
    assert results == [expected] * 4


async def test_list_files_and_grep_see_changes(tree: Tree) -> None:
    run = Runner(make_ctx(tree.root))
    await run.ok("list_files")
    await run.ok("grep", pattern="needle")
    make_tree(tree.root, {"src/util/deep/found.py": "needle = 1\n"})
    (tree.root / ".gitignore").write_text("*.md\n")

    async def outputs(runner: Runner) -> tuple[list[str], list[str]]:
        listed = lines_of(await runner.ok("list_files"))
        return listed, lines_of(await runner.ok("grep", pattern="needle"))

    cached = await outputs(run)
    assert cached == await outputs(Runner(make_ctx(tree.root)))
    assert "src/util/deep/found.py" in cached[0]
    assert any("found.py" in line for line in cached[1])


Mutation = Callable[[random.Random, Path], None]


def _pick(rng: random.Random, root: Path, want: Callable[[Path], bool]) -> Path | None:
    found = sorted(p for p in _entries(root) if want(p))
    return rng.choice(found) if found else None


def _a_dir(rng: random.Random, root: Path) -> Path:
    dirs = [root, *(p for p in _entries(root) if p.is_dir() and not p.is_symlink())]
    return rng.choice(sorted(dirs))


_NAMES = ["a", "b", "c.py", "d.log", "e.md", "venv", "build", "keep.log", ".hidden"]
_RULES = ["*.log", "!keep.log", "b/", "/a", "c.py", "*.md", "venv", "# note", "a/**/c.py"]


def _add_file(rng: random.Random, root: Path) -> None:
    path = _a_dir(rng, root) / rng.choice(_NAMES)
    if not path.exists() and not path.is_symlink():
        path.write_text("x")


def _add_dir(rng: random.Random, root: Path) -> None:
    path = _a_dir(rng, root) / rng.choice(_NAMES) / rng.choice(_NAMES)
    if not os.path.lexists(path.parent):
        path.parent.mkdir()
        path.write_text("")
        if rng.random() < 0.3:
            (path.parent / "pyvenv.cfg").write_text("")


def _delete(rng: random.Random, root: Path) -> None:
    path = _pick(rng, root, lambda p: True)
    if path is None:
        return
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    else:
        path.unlink()


def _rename(rng: random.Random, root: Path) -> None:
    path = _pick(rng, root, lambda p: True)
    target = _a_dir(rng, root) / rng.choice(_NAMES)
    if path is None or os.path.lexists(target) or path in target.parents or path == target:
        return
    path.rename(target)


def _write_rules(rng: random.Random, root: Path) -> None:
    folder = _a_dir(rng, root)
    name = rng.choice([".gitignore", ".gitignore", ".ignore"])
    text = "".join(f"{rule}\n" for rule in rng.sample(_RULES, rng.randint(1, 3)))
    path = folder / name
    if path.is_file() and not path.is_symlink():
        with open(path, "r+") as fh:  # in place, like an editor that keeps the inode
            fh.truncate(0)
            fh.write(text)
    elif not os.path.lexists(path):
        path.write_text(text)


def _swap_kind(rng: random.Random, root: Path) -> None:
    path = _pick(rng, root, lambda p: not p.is_symlink())
    if path is None:
        return
    if path.is_dir():
        shutil.rmtree(path)
        path.write_text("was a folder")
    else:
        path.unlink()
        make_tree(path, {"inside.py": ""})


def _link(rng: random.Random, root: Path) -> None:
    target = _pick(rng, root, lambda p: True)
    path = _a_dir(rng, root) / f"link_{rng.choice(_NAMES)}"
    if target is not None and not os.path.lexists(path):
        os.symlink(target, path)


_MUTATIONS: list[Mutation] = [
    _add_file,
    _add_file,
    _add_dir,
    _delete,
    _rename,
    _write_rules,
    _write_rules,
    _swap_kind,
    _link,
]


@pytest.mark.parametrize("seed", range(6))
def test_random_changes(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    tree = Tree(tmp_path / "ws", {"a/b/c.py": "", "a/d.log": "", "e.md": "", ".gitignore": ""})
    tree.settle()
    ws = Workspace([tree.root])
    walks(ws, tree.root)
    for _ in range(60):
        for mutate in rng.choices(_MUTATIONS, k=rng.randint(1, 3)):
            mutate(rng, tree.root)
        if rng.random() < 0.7:  # otherwise the walk sees changes made "just now" (racy)
            tree.settle()
        assert_fresh(ws, tree.root)
