"""The disk poll (clients that report no disk changes): its first pass lists the files
without a `stat` each, yet every change made after the server started is reported."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from agentls.workspace import Workspace
from agentls.workspace.disk_poll import changed_since, poll_disk
from tests.ws_support import make_tree


def test_changed_since_a_listing_reports_created_deleted_and_recent_files() -> None:
    listed = frozenset({"/w/old.py", "/w/edited.py", "/w/gone.py"})
    latest = {"/w/old.py": 100, "/w/edited.py": 500, "/w/new.py": 50}
    assert sorted(changed_since(listed, latest, since_ns=400)) == [
        "/w/edited.py",
        "/w/gone.py",
        "/w/new.py",
    ]


async def test_the_first_pass_stats_no_file_and_changes_still_arrive(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_tree(tmp_path / "ws", {f"pkg/m{n}.py": f"x = {n}\n" for n in range(30)})
    root = root.resolve()
    workspace = Workspace([root])
    reported: list[str] = []
    monkeypatch.setattr(workspace, "notify_disk_change", lambda p: reported.append(p.name))
    file_stats: list[str] = []
    real_stat = os.stat

    def counting(path: object, *args: object, **kw: object) -> os.stat_result:
        if str(path).endswith(".py"):
            file_stats.append(str(path))
        return real_stat(path, *args, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "stat", counting)
    poll = asyncio.create_task(poll_disk(workspace, 0.3))
    try:
        await asyncio.sleep(0.15)  # the first pass is done, the first comparison not yet
        assert file_stats == [], "a new server's first pass stats no file"
        (root / "pkg" / "m1.py").write_text("x = 'edited'\n")
        (root / "pkg" / "m2.py").unlink()
        (root / "pkg" / "added.py").write_text("y = 1\n")
        for _ in range(100):
            if {"m1.py", "m2.py", "added.py"} <= set(reported):
                break
            await asyncio.sleep(0.05)
    finally:
        poll.cancel()
    assert {"m1.py", "m2.py", "added.py"} <= set(reported)
