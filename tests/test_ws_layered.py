"""Layered reads (staged > buffer > disk), buffers, listeners and read errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.errors import WorkspaceError
from agentls.workspace import ChangeSet, Workspace
from tests.ws_support import make_tree


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    make_tree(
        tmp_path,
        {
            "app.py": "disk\n",
            "crlf.txt": "one\r\ntwo\r\n",
            "image.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
            "utf16.txt": "hi".encode("utf-16"),
            "latin1.txt": "caf\xe9\n".encode("latin-1"),
            "pkg/models.py": "",
        },
    )
    return Workspace([tmp_path])


def test_precedence_staged_over_buffer_over_disk(ws: Workspace) -> None:
    path = ws.resolve("app.py")
    changes = ChangeSet()
    assert ws.read_text(path, changes) == "disk\n"
    ws.set_buffer(path, "buffer\n", 4)
    assert ws.read_text(path, changes) == "buffer\n"
    assert ws.version_of(path) == 4
    snap = ws.load(path, changes)
    assert (snap.source, snap.version) == ("buffer", 4)
    changes.stage_write(path, "staged\n", "buffer\n", 4)
    assert ws.read_text(path, changes) == "staged\n"
    assert ws.read_text(path) == "buffer\n"
    ws.close_buffer(path)
    assert ws.read_text(path) == "disk\n"
    assert ws.version_of(path) is None


def test_buffer_only_file_exists(ws: Workspace, tmp_path: Path) -> None:
    path = tmp_path / "unsaved.py"
    assert not ws.exists(path)
    ws.set_buffer(path, "new\n", 1)
    assert ws.exists(path)
    assert ws.is_file(path)
    assert ws.read_text(path) == "new\n"
    assert ws.open_paths() == [path.resolve()]


def test_staged_delete_and_rename_are_seen(ws: Workspace) -> None:
    app, moved = ws.resolve("app.py"), ws.resolve("lib/app.py")
    changes = ChangeSet()
    changes.stage_rename(app, moved, "disk\n")
    assert not ws.exists(app, changes)
    assert ws.read_text(moved, changes) == "disk\n"
    assert ws.is_dir(ws.resolve("lib"), changes)
    with pytest.raises(WorkspaceError, match=r"renamed to lib/app\.py"):
        ws.read_text(app, changes)
    changes.stage_delete(moved)
    with pytest.raises(WorkspaceError, match="deleted earlier in this session"):
        ws.read_text(app, changes)


def test_listeners_hear_buffer_and_disk_changes(ws: Workspace) -> None:
    heard: list[Path] = []
    remove = ws.add_listener(heard.append)
    path = ws.resolve("app.py")
    ws.set_buffer(path, "x", 1)
    ws.close_buffer(path)
    ws.notify_disk_change(path)
    remove()
    ws.set_buffer(path, "y", 2)
    assert heard == [path, path, path]


def test_missing_file_suggests_close_names(ws: Workspace) -> None:
    with pytest.raises(WorkspaceError) as info:
        ws.read_text(ws.resolve("ap.py"))
    assert "File not found: ap.py" in str(info.value)
    assert "app.py" in str(info.value)
    with pytest.raises(WorkspaceError, match=r"pkg/models\.py"):
        ws.read_text(ws.resolve("src/models.py"))


def test_directory_binary_and_encoding_errors(ws: Workspace) -> None:
    with pytest.raises(WorkspaceError, match="is a directory"):
        ws.read_text(ws.resolve("pkg"))
    with pytest.raises(WorkspaceError, match="binary"):
        ws.read_text(ws.resolve("image.png"))
    with pytest.raises(WorkspaceError, match="UTF-16"):
        ws.read_text(ws.resolve("utf16.txt"))
    with pytest.raises(WorkspaceError, match=r"not valid UTF-8.*0xe9"):
        ws.read_text(ws.resolve("latin1.txt"))
    lossy = ws.load(ws.resolve("latin1.txt"), lossy=True)
    assert lossy.lossy
    assert lossy.text == "caf\ufffd\n"


def test_large_files_are_refused_for_whole_reads(tmp_path: Path) -> None:
    make_tree(tmp_path, {"big.txt": "x" * 2000})
    ws = Workspace([tmp_path], max_file_bytes=1000)
    with pytest.raises(WorkspaceError, match="larger than the 1000 bytes limit"):
        ws.read_text(ws.resolve("big.txt"))


def test_line_endings_are_preserved(ws: Workspace) -> None:
    assert ws.read_text(ws.resolve("crlf.txt")) == "one\r\ntwo\r\n"
