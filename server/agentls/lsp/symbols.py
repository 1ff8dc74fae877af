"""`workspace/symbol` and `textDocument/documentSymbol` from the agent's symbol index.

The index (`agentls.index`) is the same one behind the `search_symbols` tool; it
keeps code-point columns, converted here to the negotiated encoding. An open document's
outline is extracted from the exact text the editor has (the index's own extractor), so
its positions match the client's version even while the index catches up.
"""

from __future__ import annotations

import asyncio
import logging
import os
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.workspace import ServerTextPosition

from agentls.lsp.server import AgentLanguageServer
from agentls.lsp.sync import uri_to_path

if TYPE_CHECKING:
    from agentls.index import Symbol, SymbolIndex

log = logging.getLogger(__name__)

WORKSPACE_SYMBOL_LIMIT = 100
PROGRESS_EVERY_S = 0.25
OUTLINE_CACHE = 32


def index_of(ls: AgentLanguageServer) -> SymbolIndex:
    from agentls.index import index_for

    return index_for(ls.agent_workspace)


def start_index(ls: AgentLanguageServer) -> None:
    """Make the agent's workspace and start its symbol index, before the agent host exists:
    symbol requests and document sync need nothing else. Its cache writes are held until
    `allow_index_persistence` (after the user's secret rules are loaded)."""
    from agentls.index import index_for
    from agentls.lsp.sync import push_buffer
    from agentls.workspace import Workspace

    ls.agent_workspace = Workspace(ls.roots())
    for uri in list(ls.workspace.text_documents):  # opened before we got here: index first
        push_buffer(ls, uri)
    try:
        index = index_for(ls.agent_workspace, hold_persistence=True)
    except Exception:  # symbol requests then answer empty; the agent still works
        log.exception("the symbol index could not start")
        return
    if ls.features.work_done_progress and not index.is_ready:
        asyncio.get_running_loop().create_task(_report_progress(ls, index))


async def index_serving(ls: AgentLanguageServer, seconds: float) -> None:
    """Wait (off the loop) until the index answers usefully, at most `seconds`: the host's
    imports that follow would otherwise compete with the index's start for the GIL."""
    try:
        index = index_of(ls)
    except Exception:
        return
    await asyncio.to_thread(index.wait_serving, seconds)


def allow_index_persistence(ls: AgentLanguageServer) -> None:
    index_of(ls).allow_persistence()


async def _report_progress(ls: AgentLanguageServer, index: SymbolIndex) -> None:
    """Indexing as `$/progress` (work done, with a percentage) until the index is ready."""
    token = f"agentls-index-{uuid.uuid4()}"
    progress = ls.work_done_progress
    try:
        await asyncio.wait_for(progress.create_async(token), timeout=5)
        progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title="agentls: indexing symbols", percentage=0, cancellable=False
            ),
        )
        while not index.is_ready:
            await asyncio.sleep(PROGRESS_EVERY_S)
            state = index.state
            if state.total_files and not state.ready:
                done = min(state.indexed_files, state.total_files)
                progress.report(
                    token,
                    types.WorkDoneProgressReport(
                        message=f"{done} of {state.total_files} files",
                        percentage=int(100 * done / state.total_files),
                    ),
                )
        state = index.state
        progress.end(
            token,
            types.WorkDoneProgressEnd(message=f"{state.files} files, {state.symbols} definitions"),
        )
    except Exception:  # progress is best-effort: the index works without it
        log.debug("index progress reporting failed", exc_info=True)


def index_state(ls: AgentLanguageServer) -> dict[str, Any]:
    """A JSON-ready summary of the index for `agentls.status`."""
    try:
        state = index_of(ls).state
    except Exception as exc:
        return {"state": "unavailable", "error": str(exc)}
    return {
        "state": "ready" if state.ready else ("building" if state.building else "idle"),
        "files": state.files,
        "symbols": state.symbols,
    }


class _Lines:
    """Document lines by path, loaded once per request (open buffer, else disk)."""

    def __init__(self, ls: AgentLanguageServer) -> None:
        self.ls = ls
        self.cache: dict[Path, list[str]] = {}

    def uri(self, path: Path) -> str:
        return self.ls.open_uris.get(path) or path.as_uri()

    def lines(self, path: Path) -> list[str]:
        if path not in self.cache:
            doc = self.ls.workspace.text_documents.get(self.uri(path))
            try:
                text = doc.source if doc is not None else path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = ""
            self.cache[path] = text.splitlines(keepends=True)
        return self.cache[path]

    def position(self, path: Path, line: int, character: int, ascii_line: bool) -> types.Position:
        if ascii_line or character == 0:
            return types.Position(line, character)
        lines = self.lines(path)
        if line < len(lines) and lines[line].isascii():  # most lines: units are characters
            return types.Position(line, character)
        codec = self.ls.workspace.position_codec
        return codec.position_to_client_units(lines, ServerTextPosition(line, character))

    def range(self, symbol: Symbol, which: Any, ascii_line: bool) -> types.Range:
        """`ascii_line`: the definition's line is ASCII, so a range on that one line (a
        name) needs no conversion, and no file is read for it."""
        one_line = ascii_line and which.start.line == which.end.line
        return types.Range(
            self.position(symbol.path, which.start.line, which.start.character, ascii_line),
            self.position(symbol.path, which.end.line, which.end.character, one_line),
        )


def _symbol_kind(symbol: Symbol) -> types.SymbolKind:
    return types.SymbolKind(symbol.kind.lsp)


def workspace_symbols(ls: AgentLanguageServer, query: str) -> list[types.WorkspaceSymbol]:
    try:
        result = index_of(ls).search(
            query, limit=WORKSPACE_SYMBOL_LIMIT, open_paths=ls.agent_workspace.open_paths()
        )
    except Exception:  # a broken index must not break the editor's symbol search
        log.exception("symbol search failed for %r", query)
        return []
    lines = _Lines(ls)
    found = []
    for symbol in result.symbols:
        rng = lines.range(symbol, symbol.selection_range, symbol.line_text.isascii())
        found.append(
            types.WorkspaceSymbol(
                name=symbol.name,
                kind=_symbol_kind(symbol),
                location=types.Location(uri=lines.uri(symbol.path), range=rng),
                container_name=symbol.container or None,
            )
        )
    return found


def document_symbols(ls: AgentLanguageServer, uri: str) -> list[types.DocumentSymbol]:
    """The outline of an open document comes from the index's incremental trees (its
    record when current, else a re-parse of the edit); of a closed file, from the index
    when it holds the file's current version, else a one-off parse."""
    from agentls.index import outline

    raw = uri_to_path(uri)
    if raw is None:
        return []
    path = Path(os.path.realpath(raw))
    if _is_secret(ls, path):
        return []
    doc = ls.workspace.text_documents.get(uri)
    lines = _Lines(ls)
    symbols: Iterable[Symbol] | None
    if doc is not None:
        text = doc.source  # one read: the loop may apply the next change meanwhile
        symbols = index_of(ls).buffer_outline(path, text)
        lines.cache[path] = text.splitlines(keepends=True)
    else:
        try:
            st = path.stat()
            symbols = index_of(ls).disk_outline(path, st.st_mtime_ns, st.st_size)
            if symbols is None:
                symbols = outline(path, path.read_bytes())
        except OSError:
            symbols = None
    return [_document_symbol(lines, s) for s in symbols or []]


def _is_secret(ls: AgentLanguageServer, path: Path) -> bool:
    """Secret files (and read-deny rules) stay out of every symbol answer, as out of grep."""
    from agentls.workspace.secrets import secrets_for

    return secrets_for(ls.agent_workspace).blocks_reading(path)


def _document_symbol(lines: _Lines, symbol: Symbol) -> types.DocumentSymbol:
    return types.DocumentSymbol(
        name=symbol.name,
        kind=_symbol_kind(symbol),
        range=lines.range(symbol, symbol.range, False),
        selection_range=lines.range(symbol, symbol.selection_range, False),
        detail=symbol.line_text or None,
        children=[_document_symbol(lines, c) for c in symbol.children] or None,
    )


def setup(server: AgentLanguageServer) -> None:
    @server.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbol(
        ls: AgentLanguageServer, params: types.WorkspaceSymbolParams
    ) -> list[types.WorkspaceSymbol]:
        await ls.wait_workspace()
        return await asyncio.to_thread(workspace_symbols, ls, params.query)

    outlines: dict[str, tuple[int, list[types.DocumentSymbol]]] = {}
    """Per open document, the outline of its latest version: editors ask again and again
    (breadcrumbs, outline view, sticky scroll) between edits."""

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def document_symbol(
        ls: AgentLanguageServer, params: types.DocumentSymbolParams
    ) -> list[types.DocumentSymbol]:
        await ls.wait_workspace()
        uri = params.text_document.uri
        version = _open_version(ls, uri)
        cached = outlines.get(uri)
        fresh = version is not None and cached is not None and cached[0] == version
        if fresh and cached is not None and not _is_secret_uri(ls, uri):
            return cached[1]
        result = await asyncio.to_thread(document_symbols, ls, uri)
        if version is not None and _open_version(ls, uri) == version:
            if len(outlines) >= OUTLINE_CACHE and uri not in outlines:
                outlines.pop(next(iter(outlines)))
            outlines[uri] = (version, result)
        return result


def _is_secret_uri(ls: AgentLanguageServer, uri: str) -> bool:
    path = uri_to_path(uri)
    return path is not None and _is_secret(ls, Path(os.path.realpath(path)))


def _open_version(ls: AgentLanguageServer, uri: str) -> int | None:
    doc = ls.workspace.text_documents.get(uri)
    return doc.version if doc is not None else None
