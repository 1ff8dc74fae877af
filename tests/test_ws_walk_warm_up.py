"""The walk's warm-up (issue 33: the first grep in a new server walked the tree cold before
ripgrep started). A server walks its workspace in the background as soon as it exists; a
walk that starts meanwhile joins that one instead of reading every folder again, a walk
after it is served from the change feed, and the answers (secret files above all) are
those of a workspace that never warmed up."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from agentls.workspace import Workspace
from tests.cli_support import cli_env, write_tree
from tests.process_support import end_process
from tests.test_cli_lazy_imports import RawClient
from tests.test_ws_change_feed import FILES, folder_stats, record_rg_argv
from tests.test_ws_walk_cache import Tree, assert_fresh
from tests.ws_support import Runner, make_ctx

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="inotify")


@pytest.fixture
def tree(tmp_path: Path) -> Tree:
    tree = Tree(tmp_path / "ws", FILES)
    tree.settle()
    return tree


def test_the_first_walk_after_a_warm_up_reads_no_folder(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh = list(Workspace([tree.root]).file_strs())
    ws = Workspace([tree.root])
    ws.start_warm_up().join(30)
    seen = folder_stats(monkeypatch, tree.root)
    assert list(ws.file_strs()) == fresh
    assert seen == [str(tree.root)]  # served from the feed: the root's inode only


def test_a_walk_during_the_warm_up_joins_it(tree: Tree, monkeypatch: pytest.MonkeyPatch) -> None:
    """The warm-up is held inside a folder's listing; a walk started then waits for it
    and lists no folder itself."""
    held = str(tree.root / "src")
    entered, release = threading.Event(), threading.Event()
    listed: list[str] = []
    real = os.scandir

    def scandir(path: str) -> object:
        listed.append(os.fspath(path))
        if os.fspath(path) == held and not entered.is_set():
            entered.set()
            release.wait(30)
        return real(path)

    monkeypatch.setattr(os, "scandir", scandir)
    ws = Workspace([tree.root])
    warm = ws.start_warm_up()
    assert entered.wait(30)
    result: list[list[str]] = []
    walker = threading.Thread(target=lambda: result.append(list(ws.file_strs())))
    walker.start()
    time.sleep(0.3)  # the walk has started (and, joining, waits)
    release.set()
    warm.join(30)
    walker.join(30)
    monkeypatch.setattr(os, "scandir", real)
    assert listed.count(held) == 1, listed
    assert result == [list(Workspace([tree.root]).file_strs())]
    assert_fresh(ws, tree.root)


async def test_secrets_stay_out_of_rg_after_a_warm_up(
    tree: Tree, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Secrets written into the warmed, remembered tree, and a listed file swapped for a
    link to a secret outside, never reach ripgrep's arguments or the answer."""
    outside = tmp_path / "home"
    outside.mkdir()
    (outside / "credentials").write_text("needle = 'aws-secret'\n")
    ctx = make_ctx(tree.root)
    ctx.workspace.start_warm_up().join(30)
    given = record_rg_argv(monkeypatch)
    root = tree.root
    (root / ".env").write_text("needle = 'sk-live-123'\n")
    (root / "src" / "id_rsa").write_text("needle\n")
    (root / "a.py").unlink()
    os.symlink(outside / "credentials", root / "a.py")
    answer = await Runner(ctx).ok("grep", pattern="needle")
    assert "src/b.py" in answer
    for leaked in (".env", "id_rsa", "a.py", "aws-secret", "sk-live"):
        assert leaked not in answer
    assert not any(a.endswith((".env", "id_rsa")) for a in given)


def inotify_watches(pid: int) -> int:
    """How many inotify watches the process holds (its change feeds), from /proc."""
    count = 0
    for fd in Path(f"/proc/{pid}/fdinfo").iterdir():
        try:
            count += fd.read_text().count("inotify wd:")
        except OSError:
            continue
    return count


def test_a_new_server_walks_its_workspace_before_any_request(tmp_path: Path) -> None:
    """The index on demand (as `agentls tool` asks) and a client that watches files (no
    disk polling), so nothing else walks: after `initialized`, with no request, the
    server has watched every folder of the tree."""
    files = {f"pkg{i}/mod{j}.py": f"X{j} = {i}\n" for i in range(6) for j in range(3)}
    workspace = write_tree(tmp_path / "ws", files)
    folders = 1 + 6
    proc = subprocess.Popen(
        [sys.executable, "-m", "agentls", "serve", "--stdio"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        cwd=workspace,
        env=cli_env(None, tmp_path / "state"),
    )
    try:
        client = RawClient(proc)
        capabilities = {
            "experimental": {"agentls": {"indexOnDemand": True}},
            "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}},
        }
        uri = workspace.resolve().as_uri()
        client.request(
            "initialize", {"processId": os.getpid(), "rootUri": uri, "capabilities": capabilities}
        )
        client.send({"method": "initialized", "params": {}})
        deadline = time.monotonic() + 60
        while inotify_watches(proc.pid) < folders and time.monotonic() < deadline:
            time.sleep(0.1)
        assert inotify_watches(proc.pid) >= folders
        client.request("shutdown")
        client.send({"method": "exit"})
        assert proc.wait(60) == 0
    finally:
        end_process(proc)


async def test_the_secret_rules_are_asked_ahead_and_still_hold(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    """With `secrets`, the warm-up asks the secret rules about every file, so the first
    grep asks them nothing; a secret it saw stays hidden, and one written after it is
    asked about (and hidden) by the grep itself."""
    from agentls.workspace.secrets import SecretMatcher

    (tree.root / ".env").write_text("needle = 'sk-live-123'\n")
    ctx = make_ctx(tree.root)
    ctx.workspace.start_warm_up(secrets=True).join(30)
    asked: list[str] = []
    real = SecretMatcher.reading_blocked_by

    def counting(self: SecretMatcher, path: object, *, resolve: bool = True) -> str | None:
        asked.append(os.fspath(path))  # type: ignore[arg-type]
        return real(self, path, resolve=resolve)  # type: ignore[arg-type]

    monkeypatch.setattr(SecretMatcher, "reading_blocked_by", counting)
    runner = Runner(ctx)
    answer = await runner.ok("grep", pattern="needle")
    assert asked == []
    assert "a.py" in answer
    assert ".env" not in answer
    assert "sk-live" not in answer
    (tree.root / "src" / "id_rsa").write_text("needle\n")
    answer = await runner.ok("grep", pattern="needle")
    assert asked == [str(tree.root / "src" / "id_rsa")]
    assert "id_rsa" not in answer


def test_a_root_inside_another_is_warmed_by_the_outer_walk(
    tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    roots = [tree.root, tree.root / "src"]
    fresh = list(Workspace(roots).file_strs())
    ws = Workspace(roots)
    ws.start_warm_up().join(30)
    seen = folder_stats(monkeypatch, tree.root)
    assert list(ws.file_strs()) == fresh
    assert seen == [str(tree.root)]  # one walk, served from the feed
