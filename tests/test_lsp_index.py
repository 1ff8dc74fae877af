"""The symbol index through the server, over real stdio: indexing progress, edits that are
queryable at once, and document outlines from the index's incremental trees."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types

from agentls.testing import ScriptedMessagesServer
from tests.lsp_support import FakeEditor, command, editor_session, server_env


@pytest.fixture
def api() -> Iterator[ScriptedMessagesServer]:
    with ScriptedMessagesServer([]) as server:
        yield server


def make_project(root: Path, count: int) -> None:
    for i in range(count):
        path = root / "pkg" / f"mod{i:03d}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = "".join(f"def helper_{i}_{j}(x):\n    return x + {j}\n\n" for j in range(30))
        path.write_text(f"class Model{i}:\n    pass\n\n{body}")


async def wait_ready(editor: FakeEditor) -> None:
    for _ in range(400):
        status = await command(editor, "agentls.status")
        if status["index"]["state"] == "ready":
            return
        await asyncio.sleep(0.05)
    raise AssertionError("the index never became ready")


async def symbols(editor: FakeEditor, query: str) -> list[str]:
    found = await editor.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    return [s.name for s in found or []]


async def test_indexing_is_reported_as_work_done_progress_with_a_percentage(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    make_project(root, 80)
    env = server_env(api.base_url, tmp_path / "transcripts")
    async with editor_session("visual-studio-code", root, env) as editor:
        await wait_ready(editor)
        await asyncio.sleep(0.5)  # the end notification follows the ready state
        reports = editor.client.progress_reports
        tokens = [t for t in reports if str(t).startswith("agentls-index-")]
        assert len(tokens) == 1, reports.keys()
        sent = reports[tokens[0]]
        begin, end = sent[0], sent[-1]
        assert isinstance(begin, types.WorkDoneProgressBegin)
        assert "indexing" in begin.title
        assert begin.percentage == 0
        assert isinstance(end, types.WorkDoneProgressEnd)
        assert end.message is not None
        assert "80 files" in end.message
        for report in sent[1:-1]:
            assert isinstance(report, types.WorkDoneProgressReport)
            assert report.percentage is not None
            assert 0 <= report.percentage <= 100
            assert report.message is not None
            assert "of 80 files" in report.message


async def test_an_edit_is_queryable_by_the_next_request(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    make_project(root, 5)
    env = server_env(api.base_url, tmp_path / "transcripts")
    async with editor_session("visual-studio-code", root, env) as editor:
        await wait_ready(editor)
        uri = editor.open(root / "pkg" / "mod001.py")
        await symbols(editor, "Model1")
        for n in range(20):  # no sleeping: each query must see the edit just sent
            editor.type(uri, (0, 0), (0, 0), f"def typed_now_{n}():\n    pass\n")
            assert f"typed_now_{n}" in await symbols(editor, f"typed_now_{n}"), n
        editor.type(uri, (0, 0), (2 * 20, 0), "")
        assert await symbols(editor, "typed_now_") == []


async def test_open_document_outline_follows_every_edit(
    api: ScriptedMessagesServer, tmp_path: Path
) -> None:
    root = tmp_path / "ws"
    make_project(root, 3)
    env = server_env(api.base_url, tmp_path / "transcripts")
    async with editor_session("visual-studio-code", root, env) as editor:
        await wait_ready(editor)
        uri = editor.open(root / "pkg" / "mod002.py")
        params = types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
        first = await editor.client.text_document_document_symbol_async(params)
        assert first is not None
        assert first[0].name == "Model2"
        assert len(first) == 31
        editor.type(uri, (0, 6), (0, 12), "Renamed")
        renamed = await editor.client.text_document_document_symbol_async(params)
        assert renamed is not None
        assert renamed[0].name == "Renamed"
        again = await editor.client.text_document_document_symbol_async(params)
        assert again == renamed
