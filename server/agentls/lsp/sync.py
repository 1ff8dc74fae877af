"""Document sync (incremental): the editor's buffers become the agent's buffer overlay.

pygls applies didOpen/didChange to its own document before these handlers run, so each
handler copies the resulting text and version into the shared `Workspace`. Tools then read
unsaved work, and staged edits remember which buffer version they were computed against.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from lsprotocol import types

from agentls.lsp.contract import Connection
from agentls.lsp.uris import uri_to_path

log = logging.getLogger(__name__)


def setup(server: Connection) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: Connection, params: types.DidOpenTextDocumentParams) -> None:
        push_buffer(ls, params.text_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: Connection, params: types.DidChangeTextDocumentParams) -> None:
        push_buffer(ls, params.text_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_open(ls: Connection, params: types.DidOpenNotebookDocumentParams) -> None:
        from agentls.lsp.notebooks import push_notebook

        push_notebook(ls, params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_change(ls: Connection, params: types.DidChangeNotebookDocumentParams) -> None:
        from agentls.lsp.notebooks import push_notebook

        push_notebook(ls, params.notebook_document.uri)

    @server.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_close(ls: Connection, params: types.DidCloseNotebookDocumentParams) -> None:
        from agentls.lsp.notebooks import close_notebook

        close_notebook(ls, params.notebook_document.uri)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: Connection, params: types.DidCloseTextDocumentParams) -> None:
        path = uri_to_path(params.text_document.uri)
        if path is None or not ls.has_workspace:
            return
        ls.open_uris.pop(Path(os.path.realpath(path)), None)
        try:
            ls.agent_workspace.close_buffer(path)
        except Exception:
            log.exception("cannot close buffer %s", path)


def push_buffer(ls: Connection, uri: str) -> None:
    """Copy pygls's current text and version of `uri` into the workspace overlay.

    `uri` is the editor's (percent-encoded) URI, never pygls's unquoted table key: decoding
    a key again would turn a literal `%41` in a file name into `A`.
    """
    doc = ls.open_document(uri)
    path = uri_to_path(uri)
    if path is None and ls.has_workspace:
        notebook = ls.workspace.get_notebook_document(cell_uri=uri)
        if notebook is not None:  # a notebook cell's text: the notebook's buffer changed
            from agentls.lsp.notebooks import push_notebook

            push_notebook(ls, notebook.uri)
        return
    if doc is None or path is None or not ls.has_workspace:
        return
    ls.open_uris[Path(os.path.realpath(path))] = uri
    try:
        ls.agent_workspace.set_buffer(path, doc.source, doc.version)
    except Exception:
        # e.g. a file outside the roots: the agent cannot use it, the editor keeps working
        log.debug("buffer %s not tracked", path, exc_info=True)
