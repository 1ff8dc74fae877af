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


def index_of(ls: AgentLanguageServer) -> SymbolIndex:
    from agentls.index import index_for

    return index_for(ls.agent_workspace)


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
        codec = self.ls.workspace.position_codec
        return codec.position_to_client_units(self.lines(path), ServerTextPosition(line, character))

    def range(self, symbol: Symbol, which: Any, ascii_line: bool) -> types.Range:
        return types.Range(
            self.position(symbol.path, which.start.line, which.start.character, ascii_line),
            self.position(symbol.path, which.end.line, which.end.character, False),
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
        symbols = outline(path, doc.source)
        lines.cache[path] = list(doc.lines)
    else:
        symbols = index_of(ls).document_symbols(path) or None
        if symbols is None:
            try:
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
        await ls.wait_ready()
        return await asyncio.to_thread(workspace_symbols, ls, params.query)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def document_symbol(
        ls: AgentLanguageServer, params: types.DocumentSymbolParams
    ) -> list[types.DocumentSymbol]:
        await ls.wait_ready()
        return document_symbols(ls, params.text_document.uri)
