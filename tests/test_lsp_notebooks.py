"""Notebooks synced as notebooks, the way VS Code does it (`notebookDocument/*`): the agent
reads the editor's cells, and its notebook edits come back as cell edits the editor can
apply and undo — one `agentls/applyNotebookEdit` for clients that declare it, else cell
text edits through `workspace/applyEdit`."""

from __future__ import annotations

import asyncio
import copy
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
import pytest_asyncio
from lsprotocol import types
from pytest_lsp import client_capabilities

from tests.lsp_support import Doc, FakeEditor, command, editor_session, plain, server_env

NOTEBOOK = Path(__file__).parent / "fixtures" / "notebooks" / "sales.ipynb"


def caps(notebook_edits: bool) -> types.ClientCapabilities:
    found = copy.deepcopy(client_capabilities("visual-studio-code"))
    found.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities()
    )
    found.experimental = {"agentls": {"notebookEdits": notebook_edits}}
    return found


def open_notebook(editor: FakeEditor, path: Path, edited_source: str) -> list[str]:
    """didOpen of the notebook with its cells, the third cell's text changed (unsaved)."""
    notebook = nbformat.read(path, as_version=4)
    uri = path.as_uri()
    cells, docs = [], []
    for index, cell in enumerate(notebook.cells):
        # VS Code's cell URIs: the fragment is percent-encoded (pygls keys it unquoted)
        cell_uri = f"vscode-notebook-cell:{path}#W{index}sZmlsZQ%3D%3D"
        kind = (
            types.NotebookCellKind.Markup
            if cell.cell_type == "markdown"
            else types.NotebookCellKind.Code
        )
        text = edited_source if index == 2 else cell.source
        cells.append(types.NotebookCell(kind=kind, document=cell_uri, metadata={"id": cell.id}))
        language = "markdown" if cell.cell_type == "markdown" else "python"
        docs.append(
            types.TextDocumentItem(uri=cell_uri, language_id=language, version=1, text=text)
        )
        editor.docs[cell_uri] = Doc(text, 1)
    editor.client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=uri, notebook_type="jupyter-notebook", version=1, cells=cells
            ),
            cell_text_documents=docs,
        )
    )
    return [c.document for c in cells]


@pytest_asyncio.fixture
async def session(tmp_path: Path, request: pytest.FixtureRequest) -> AsyncIterator[FakeEditor]:
    root = tmp_path / "ws"
    root.mkdir()
    shutil.copy(NOTEBOOK, root / "sales.ipynb")
    env = server_env(None, tmp_path / "transcripts")
    async with editor_session("visual-studio-code", root, env, caps=caps(request.param)) as editor:
        yield editor


@pytest.mark.parametrize("session", [True], indirect=True)
async def test_cell_edits_reach_an_editor_that_declares_them(session: FakeEditor) -> None:
    editor = session
    assert editor.server_capabilities is not None
    assert editor.server_capabilities.notebook_document_sync is not None
    received: list[Any] = []

    @editor.client.feature("agentls/applyNotebookEdit")
    def apply_notebook_edit(params: Any) -> dict[str, Any]:
        received.append(plain(params))
        return {"applied": True}

    path = editor.root / "sales.ipynb"
    open_notebook(editor, path, "values  # edited in the editor, unsaved")
    read = await command(
        editor, "agentls.tool", {"name": "read_file", "input": {"path": "sales.ipynb"}}
    )
    assert "values  # edited in the editor, unsaved" in read["content"]  # the editor's cells
    out = await command(
        editor,
        "agentls.tool",
        {
            "name": "notebook_edit",
            "input": {"path": "sales.ipynb", "cell_id": "boom", "new_source": "1 / 2"},
        },
    )
    assert not out["is_error"], out["content"]
    out = await command(
        editor,
        "agentls.tool",
        {
            "name": "notebook_edit",
            "input": {
                "path": "sales.ipynb",
                "cell_id": "intro",
                "new_source": "## Setup",
                "cell_type": "markdown",
                "edit_mode": "insert",
            },
        },
    )
    assert not out["is_error"], out["content"]
    accepted = await command(editor, "agentls.accept", {"session": "tool"})
    assert accepted["applied"] is True, accepted
    [request] = received
    assert request["uri"] == path.as_uri()
    edits = request["edits"]
    # last first: the replaced cell (now at 4), then the inserted one after "intro"
    assert [(e["index"], e["delete"]) for e in edits] == [(3, 1), (1, 0)]
    assert edits[0]["cells"][0]["source"] == "1 / 2"
    assert edits[0]["cells"][0]["kind"] == "code"
    assert edits[1]["cells"][0]["source"] == "## Setup"
    assert nbformat.read(path, as_version=4).cells[3].source == "1 / 0"  # disk untouched


@pytest.mark.parametrize("session", [False], indirect=True)
async def test_other_clients_get_cell_text_edits_and_structure_stays_staged(
    session: FakeEditor,
) -> None:
    editor = session
    path = editor.root / "sales.ipynb"
    cell_uris = open_notebook(editor, path, "values")
    out = await command(
        editor,
        "agentls.tool",
        {
            "name": "notebook_edit",
            "input": {"path": "sales.ipynb", "cell_id": "load", "new_source": "values = [7]"},
        },
    )
    assert not out["is_error"], out["content"]
    accepted = await command(editor, "agentls.accept", {"session": "tool"})
    assert accepted["applied"] is True, accepted
    assert editor.docs[cell_uris[1]].text == "values = [7]"  # the cell's own document
    out = await command(
        editor,
        "agentls.tool",
        {
            "name": "notebook_edit",
            "input": {"path": "sales.ipynb", "cell_id": "boom", "edit_mode": "delete"},
        },
    )
    assert not out["is_error"], out["content"]
    accepted = await command(editor, "agentls.accept", {"session": "tool"})
    assert accepted["applied"] is False
    assert "cannot insert or delete cells" in accepted["reason"]
    staged = await command(editor, "agentls.staged", {"session": "tool"})
    assert [f["uri"] for f in staged["files"]] == [path.as_uri()]


@pytest.mark.parametrize("session", [True], indirect=True)
async def test_a_cell_the_user_changed_since_is_a_conflict_not_overwritten(
    session: FakeEditor,
) -> None:
    editor = session
    received: list[Any] = []

    @editor.client.feature("agentls/applyNotebookEdit")
    def apply_notebook_edit(params: Any) -> dict[str, Any]:
        received.append(params)
        return {"applied": True}

    path = editor.root / "sales.ipynb"
    cell_uris = open_notebook(editor, path, "values")
    out = await command(
        editor,
        "agentls.tool",
        {
            "name": "notebook_edit",
            "input": {"path": "sales.ipynb", "cell_id": "show", "new_source": "values * 2"},
        },
    )
    assert not out["is_error"], out["content"]
    editor.type(cell_uris[2], (0, 0), (0, 0), "# mine\n")  # the user types in the cell
    await asyncio.sleep(0.3)
    accepted = await command(editor, "agentls.accept", {"session": "tool"})
    assert accepted["applied"] is False
    assert received == []
    assert "changed in the editor since the agent read it" in accepted["reason"]
    assert editor.docs[cell_uris[2]].text == "# mine\nvalues"


def test_every_save_the_server_asks_for_has_a_handler() -> None:
    """`save: true` in the sync options makes editors send didSave; without a handler pygls
    drops it with an 'unknown method' warning and the saved file's caches stay stale."""
    from agentls.lsp.connection import NOTEBOOK_SYNC
    from agentls.lsp.server import create_server

    handled = create_server().protocol.fm.features
    assert NOTEBOOK_SYNC.save
    assert types.NOTEBOOK_DOCUMENT_DID_SAVE in handled
    assert types.TEXT_DOCUMENT_DID_SAVE in handled
