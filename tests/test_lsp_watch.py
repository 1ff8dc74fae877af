"""Files changed on disk behind the editor's back reach the symbol index: through the
client's file watcher where it has one, through polling where it does not."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp_support import HELIX_LIKE, FakeEditor, command, editor_session, server_env

CREATED, DELETED = types.FileChangeType.Created, types.FileChangeType.Deleted


async def _symbols(editor: FakeEditor, query: str) -> list[str]:
    found = await editor.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    return [s.name for s in found or []]


async def _eventually(editor: FakeEditor, query: str, expected: list[str]) -> list[str]:
    names: list[str] = []
    for _ in range(100):
        names = await _symbols(editor, query)
        if names == expected:
            break
        await asyncio.sleep(0.05)
    return names


async def _index_ready(editor: FakeEditor) -> None:
    for _ in range(200):
        if (await command(editor, "agentls.status"))["index"]["state"] == "ready":
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the index never became ready")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    (folder / "old.py").write_text("def vanishing_helper():\n    pass\n")
    return folder


async def test_watched_file_changes_update_the_index(root: Path, tmp_path: Path) -> None:
    env = server_env(None, tmp_path / "t")
    async with editor_session("visual-studio-code", root, env) as editor:
        await _index_ready(editor)
        (root / "new.py").write_text("def freshly_written():\n    pass\n")
        (root / "old.py").unlink()
        editor.client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                changes=[
                    types.FileEvent(
                        uri=(root / "new.py").as_uri(), type=types.FileChangeType.Created
                    ),
                    types.FileEvent(
                        uri=(root / "old.py").as_uri(), type=types.FileChangeType.Deleted
                    ),
                ]
            )
        )
        assert await _eventually(editor, "freshly", ["freshly_written"]) == ["freshly_written"]
        assert await _eventually(editor, "vanishing", []) == []


async def test_clients_that_cannot_watch_get_polling(root: Path, tmp_path: Path) -> None:
    env = server_env(None, tmp_path / "t", AGENTLS_DISK_POLL_SECONDS="0.1")
    async with editor_session(HELIX_LIKE, root, env) as editor:
        await _index_ready(editor)
        (root / "new.py").write_text("def found_by_polling():\n    pass\n")
        (root / "old.py").unlink()
        assert await _eventually(editor, "found_by", ["found_by_polling"]) == ["found_by_polling"]
        assert await _eventually(editor, "vanishing", []) == []
