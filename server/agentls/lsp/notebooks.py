"""Notebooks the editor syncs as notebooks (LSP 3.17 `notebookDocument/*`, VS Code).

Reading: the editor's notebook (its cells, unsaved text included) becomes the buffer of
the `.ipynb` file, as nbformat JSON built from the file on disk with the editor's cells in
it (outputs kept for cells that still match), so `read_file` and `notebook_edit` see what
the user sees.

Writing: a staged change of such a notebook is sent as cell operations instead of a text
edit of the JSON (the editor has no text document for it):
- to clients that declare `experimental.agentls.notebookEdits`, one
  `agentls/applyNotebookEdit` request `{uri, label, edits: [{index, delete, cells}]}`
  (the VS Code extension applies it as one undoable `vscode.NotebookEdit` batch);
- to other clients, cell source changes as `workspace/applyEdit` text edits of the cell
  documents; a change that inserts, deletes or retypes cells stays staged, with a reason.
"""

from __future__ import annotations

import difflib
import json
import logging
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat
from lsprotocol import types
from pygls.workspace import TextDocument

from agentls.lsp.uris import uri_to_path

if TYPE_CHECKING:
    from agentls.host import EditOutcome
    from agentls.lsp.contract import Connection
    from agentls.workspace.changes import Change, ChangeSet

log = logging.getLogger(__name__)

APPLY_NOTEBOOK_EDIT = "agentls/applyNotebookEdit"


def supports_notebook_edits(ls: Connection) -> bool:
    """`capabilities.experimental.agentls.notebookEdits`: the client applies
    `agentls/applyNotebookEdit` (the agentls VS Code extension does)."""
    experimental = ls.client_capabilities.experimental
    section = experimental.get("agentls") if isinstance(experimental, dict) else None
    return isinstance(section, dict) and section.get("notebookEdits") is True


def notebook_of(ls: Connection, path: Path) -> types.NotebookDocument | None:
    """The editor's notebook document for `path`, when it syncs it as a notebook."""
    notebook: types.NotebookDocument
    for notebook in ls.workspace.notebook_documents.values():
        found = uri_to_path(notebook.uri)
        if found is not None and os.path.realpath(found) == os.path.realpath(path):
            return notebook
    return None


# -- the editor's notebook as nbformat JSON ------------------------------------------------------


@dataclass(frozen=True)
class EditorCell:
    kind: str
    """"code" or "markdown" (LSP has no raw cells: VS Code shows them as code)."""
    source: str
    uri: str
    metadata: dict[str, Any]


def cell_document(ls: Connection, uri: str) -> TextDocument | None:
    """The synced text document of a notebook cell, or None (VS Code's cell URIs carry a
    percent-encoded fragment: `vscode-notebook-cell:/nb.ipynb#W3sZmlsZQ%3D%3D`)."""
    return ls.open_document(uri)


def editor_cells(ls: Connection, notebook: types.NotebookDocument) -> list[EditorCell]:
    cells = []
    for cell in notebook.cells:
        doc = cell_document(ls, cell.document)
        kind = "markdown" if cell.kind == types.NotebookCellKind.Markup else "code"
        source = doc.source if doc is not None else ""
        metadata: dict[str, Any] = cell.metadata if isinstance(cell.metadata, dict) else {}
        cells.append(EditorCell(kind, source, cell.document, dict(metadata)))
    return cells


def buffer_text(ls: Connection, notebook: types.NotebookDocument, path: Path) -> str:
    """The notebook as the editor has it, as nbformat JSON in the file's own layout."""
    from agentls.tools._notebook import dumps, new_cell, source_of

    try:
        disk_text = path.read_text(encoding="utf-8")
        base = nbformat.reads(disk_text, as_version=4)  # type: ignore[no-untyped-call]
    except (OSError, ValueError, nbformat.reader.NotJSONError):
        disk_text = ""
        base = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    old = list(base.cells)
    cells = []
    for index, cell in enumerate(editor_cells(ls, notebook)):
        match = _matching(old, cell, index)
        if match is not None and source_of(match) == cell.source:
            cells.append(match)  # unchanged: keep its outputs and metadata
            continue
        fresh = new_cell(base, match.cell_type if match is not None else cell.kind, cell.source)
        if match is not None:
            if "id" in match:
                fresh["id"] = match["id"]
            fresh["metadata"] = match.get("metadata", {})
        cells.append(fresh)
    base.cells = cells
    return dumps(base, disk_text)


def _matching(old: list[Any], cell: EditorCell, index: int) -> Any:
    """The file's cell for an editor cell: by id (VS Code keeps nbformat ids in the cell
    metadata), else the one at the same position."""
    wanted = cell.metadata.get("id") or (cell.metadata.get("metadata") or {}).get("id")
    if wanted:
        return next((c for c in old if c.get("id") == wanted), None)
    return old[index] if index < len(old) else None


def push_notebook(ls: Connection, uri: str) -> None:
    """Copy the editor's notebook into the workspace overlay (the `.ipynb` buffer)."""
    notebook = ls.workspace.get_notebook_document(notebook_uri=uri)
    path = uri_to_path(uri)
    if notebook is None or path is None or not ls.has_workspace:
        return
    try:
        ls.agent_workspace.set_buffer(path, buffer_text(ls, notebook, path), notebook.version)
    except Exception:
        log.debug("notebook %s not tracked", uri, exc_info=True)


def close_notebook(ls: Connection, uri: str) -> None:
    path = uri_to_path(uri)
    if path is not None and ls.has_workspace:
        ls.agent_workspace.close_buffer(path)


# -- staged changes → cell operations -----------------------------------------------------------


@dataclass(frozen=True)
class CellOp:
    """Replace `delete` cells at `index` with `cells` (nbformat cells as JSON)."""

    index: int
    delete: int
    cells: list[dict[str, Any]]


def cell_ops(before: str, after: str) -> list[CellOp]:
    """The cell operations turning one notebook into the other, last first (so the indices
    of earlier operations stay valid while a client applies them in order)."""
    old = nbformat.reads(before, as_version=4).cells  # type: ignore[no-untyped-call]
    new = nbformat.reads(after, as_version=4).cells  # type: ignore[no-untyped-call]
    key = [_signature(c) for c in old], [_signature(c) for c in new]
    matcher = difflib.SequenceMatcher(None, key[0], key[1], autojunk=False)
    ops = [
        CellOp(i1, i2 - i1, [_cell_json(c) for c in new[j1:j2]])
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]
    return list(reversed(ops))


def _cells(text: str) -> list[tuple[str, str]]:
    """What the user sees of a notebook: each cell's type and source (a save that only
    rewrites the file's metadata or outputs is not a change of the user's)."""
    from agentls.tools._notebook import source_of

    try:
        cells = nbformat.reads(text, as_version=4).cells  # type: ignore[no-untyped-call]
    except Exception:
        return [("invalid", text)]
    return [(str(c.get("cell_type")), source_of(c)) for c in cells]


def _signature(cell: Any) -> str:
    return json.dumps([cell.get("cell_type"), cell.get("source"), cell.get("id")], sort_keys=True)


def _cell_json(cell: Any) -> dict[str, Any]:
    from agentls.tools._notebook import source_of

    return {
        "kind": cell.get("cell_type", "code"),
        "source": source_of(cell),
        "metadata": dict(cell.get("metadata", {})),
        "id": cell.get("id"),
    }


async def deliver_notebook(
    ls: Connection, changes: ChangeSet, change: Change, label: str
) -> EditOutcome:
    """One staged notebook change to an editor that syncs the notebook as a notebook."""
    from agentls.host import EditOutcome

    notebook = notebook_of(ls, change.path)
    assert notebook is not None
    assert change.new_text is not None
    uri = notebook.uri
    current = buffer_text(ls, notebook, change.path)
    if change.original_text is not None and _cells(current) != _cells(change.original_text):
        reason = (
            "the notebook changed in the editor since the agent read it; the agent's version "
            "stays staged (nothing was overwritten)"
        )
        return EditOutcome([uri], False, reason, [uri], [(uri, reason)])
    ops = cell_ops(current, change.new_text)
    if supports_notebook_edits(ls):
        applied, reason = await _custom_request(ls, uri, label, ops)
    else:
        applied, reason = await _cell_text_edits(ls, notebook, ops, label)
    if applied:
        changes.discard([change.path])
        return EditOutcome([uri], True)
    return EditOutcome([uri], False, reason, left_out=[(uri, reason)])


async def _custom_request(
    ls: Connection, uri: str, label: str, ops: list[CellOp]
) -> tuple[bool, str]:
    params = {
        "uri": uri,
        "label": label,
        "edits": [{"index": op.index, "delete": op.delete, "cells": op.cells} for op in ops],
    }
    try:
        answer = await ls.protocol.send_request_async(APPLY_NOTEBOOK_EDIT, params)
    except Exception as exc:
        return False, f"the editor answered {APPLY_NOTEBOOK_EDIT} with an error: {exc}"

    def field(name: str) -> Any:  # pygls hands a custom answer over as an object or a dict
        return answer.get(name) if isinstance(answer, dict) else getattr(answer, name, None)

    applied = field("applied") is True
    reason = str(field("failureReason") or "the editor did not apply the notebook edit")
    return applied, "" if applied else reason


async def _cell_text_edits(
    ls: Connection, notebook: types.NotebookDocument, ops: list[CellOp], label: str
) -> tuple[bool, str]:
    """Source-only changes as text edits of the cell documents (standard LSP)."""
    from agentls.lsp.edits import text_edits

    cells = notebook.cells
    document_changes: list[Any] = []
    for op in ops:
        if op.delete != len(op.cells):
            return False, (
                "this editor syncs notebooks but cannot insert or delete cells through LSP; "
                "the change stays staged (accept it when the notebook is closed, or reject it)"
            )
        for offset, new in enumerate(op.cells):
            cell = cells[op.index + offset]
            kind = "markdown" if cell.kind == types.NotebookCellKind.Markup else "code"
            doc = cell_document(ls, cell.document)
            if doc is None:
                return False, f"cell {cell.document} is not synced; the change stays staged"
            if new["kind"] != kind and new["kind"] != "raw":
                return False, "a cell's type changed; the change stays staged"
            edits = text_edits(
                cell.document, doc.source, new["source"], ls.workspace.position_codec
            )
            document_changes.append(
                types.TextDocumentEdit(
                    text_document=types.OptionalVersionedTextDocumentIdentifier(
                        uri=cell.document, version=doc.version
                    ),
                    edits=list(edits),
                )
            )
    if not document_changes:
        return True, ""
    response = await ls.workspace_apply_edit_async(
        types.ApplyWorkspaceEditParams(
            edit=types.WorkspaceEdit(document_changes=document_changes), label=label
        )
    )
    return response.applied, response.failure_reason or "the editor did not apply the edit"
