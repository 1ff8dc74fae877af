"""`workspace/symbol` and `textDocument/documentSymbol` from the agent's symbol index.

The index (`agentls.index`) is the same one behind the `search_symbols` tool; it
keeps code-point columns, converted here to the negotiated encoding. An open document's
outline is extracted from the exact text the editor has (the index's own extractor), so
its positions match the client's version even while the index catches up.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import uuid
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.workspace import ServerTextPosition

from agentls.lsp.contract import Connection
from agentls.lsp.protocol import JsonList
from agentls.lsp.uris import uri_to_path

if TYPE_CHECKING:
    from agentls.index import Range, Symbol, SymbolIndex

log = logging.getLogger(__name__)

WORKSPACE_SYMBOL_LIMIT = 100
PROGRESS_EVERY_S = 0.25
OUTLINE_CACHE = 32


def index_of(ls: Connection) -> SymbolIndex:
    from agentls.index import index_for

    return index_for(ls.agent_workspace)


def start_index(ls: Connection) -> None:
    """Make the agent's workspace and start its symbol index, before the agent host exists:
    symbol requests and document sync need nothing else. Its cache writes are held until
    `allow_index_persistence` (after the user's secret rules are loaded)."""
    from agentls.lsp.sync import push_buffer
    from agentls.workspace import Workspace

    ls.agent_workspace = Workspace(ls.roots())
    # the tree's walk starts now, so a first grep or listing (and the index's own walk)
    # joins it or finds it done instead of walking cold (issue 33)
    ls.agent_workspace.start_warm_up()
    # opened before we got here: index first (by the editor's URI; pygls keys them unquoted)
    for document in list(ls.workspace.text_documents.values()):
        push_buffer(ls, document.uri)
    if ls.features.index_on_demand:
        return  # made by the first request that needs it (`index_for`)
    from agentls.index import index_for

    try:
        index = index_for(ls.agent_workspace, hold_persistence=True)
    except Exception:  # symbol requests then answer empty; the agent still works
        log.exception("the symbol index could not start")
        return
    if ls.features.work_done_progress and not index.is_ready:
        asyncio.get_running_loop().create_task(_report_progress(ls, index))
    if not index.is_ready:  # its records live as long as the server: out of full collections
        from agentls.lsp.gc_freeze import freeze_after

        freeze_after(index.wait_built)


async def index_serving(ls: Connection, seconds: float) -> None:
    """Wait (off the loop) until the index answers usefully, at most `seconds`: the host's
    imports that follow would otherwise compete with the index's start for the GIL."""
    if ls.features.index_on_demand:
        return
    try:
        index = index_of(ls)
    except Exception:
        return
    await asyncio.to_thread(index.wait_serving, seconds)


def allow_index_persistence(ls: Connection) -> None:
    if not ls.features.index_on_demand:  # else made later, with persistence allowed
        index_of(ls).allow_persistence()


async def _report_progress(ls: Connection, index: SymbolIndex) -> None:
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


def index_state(ls: Connection) -> dict[str, object]:
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


Json = dict[str, object]

INLINE_OUTLINE_CHARS = 256_000
"""An open document up to this size gets its outline on the event loop when the index is
otherwise idle: re-parsing it from its last tree takes a few milliseconds, less than the
two thread hand-overs (and their scheduling delays on a busy machine) it would cost."""


@functools.lru_cache(maxsize=8192)
def _file_uri(path: Path) -> str:
    return path.as_uri()


class _Lines:
    """Document lines by path, loaded once per request (open buffer, else disk), and the
    conversion of the index's code-point positions to the client's units as JSON."""

    def __init__(self, ls: Connection) -> None:
        self.ls = ls
        self.cache: dict[Path, list[str]] = {}

    def uri(self, path: Path) -> str:
        return self.ls.open_uris.get(path) or _file_uri(path)

    def lines(self, path: Path) -> list[str]:
        if path not in self.cache:
            doc = self.ls.open_document(self.uri(path))
            try:
                text = doc.source if doc is not None else path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                text = ""
            self.cache[path] = text.splitlines(keepends=True)
        return self.cache[path]

    def position(self, path: Path, line: int, character: int, ascii_line: bool) -> Json:
        if ascii_line or character == 0:
            return {"line": line, "character": character}
        lines = self.lines(path)
        if line < len(lines) and lines[line].isascii():  # most lines: units are characters
            return {"line": line, "character": character}
        codec = self.ls.workspace.position_codec
        client = codec.position_to_client_units(lines, ServerTextPosition(line, character))
        return {"line": client.line, "character": client.character}

    def range(self, path: Path, which: Range, ascii_line: bool) -> Json:
        """`ascii_line`: the positions' lines are ASCII (a name on an ASCII definition
        line, or any range in an ASCII document), so no conversion and no file read."""
        (sl, sc), (el, ec) = which
        if ascii_line:
            return {
                "start": {"line": sl, "character": sc},
                "end": {"line": el, "character": ec},
            }
        return {
            "start": self.position(path, sl, sc, False),
            "end": self.position(path, el, ec, False),
        }


def workspace_symbols(ls: Connection, query: str) -> JsonList:
    """The best `WORKSPACE_SYMBOL_LIMIT` definitions as `WorkspaceSymbol` JSON."""
    try:
        result = index_of(ls).search(
            query, limit=WORKSPACE_SYMBOL_LIMIT, open_paths=ls.agent_workspace.open_paths()
        )
    except Exception:  # a broken index must not break the editor's symbol search
        log.exception("symbol search failed for %r", query)
        return JsonList()
    lines = _Lines(ls)
    found = JsonList()
    for symbol in result.symbols:
        path = symbol.path
        which = symbol.selection_range
        ascii_name = which.start.line == which.end.line and symbol.line_text.isascii()
        item: Json = {
            "name": symbol.name,
            "kind": symbol.kind.lsp,
            "location": {"uri": lines.uri(path), "range": lines.range(path, which, ascii_name)},
        }
        if symbol.container:
            item["containerName"] = symbol.container
        found.append(item)
    return found


def document_symbols(ls: Connection, uri: str) -> JsonList:
    """The outline of an open document comes from the index's incremental trees (its
    record when current, else a re-parse of the edit); of a closed file, from the index
    when it holds the file's current version, else a one-off parse. `DocumentSymbol` JSON."""
    from agentls.index import outline

    path = _real_path(uri)
    if path is None or _is_secret(ls, path):
        return JsonList()
    doc = ls.open_document(uri)
    lines = _Lines(ls)
    symbols: Iterable[Symbol] | None
    ascii_text = False
    if doc is not None:
        text = doc.source  # one read: the loop may apply the next change meanwhile
        symbols = index_of(ls).buffer_outline(path, text)
        lines.cache[path] = text.splitlines(keepends=True)
        ascii_text = text.isascii()
    else:
        try:
            st = path.stat()
            symbols = index_of(ls).disk_outline(path, st.st_mtime_ns, st.st_size)
            if symbols is None:
                symbols = outline(path, path.read_bytes())
        except OSError:
            symbols = None
    return JsonList(_document_symbol(lines, s, ascii_text) for s in symbols or [])


def _real_path(uri: str) -> Path | None:
    raw = uri_to_path(uri)
    return None if raw is None else Path(os.path.realpath(raw))


def _is_secret(ls: Connection, path: Path) -> bool:
    """Secret files (and read-deny rules) stay out of every symbol answer, as out of grep."""

    return ls.agent_workspace.services.secrets.blocks_reading(path)


def _document_symbol(lines: _Lines, symbol: Symbol, ascii_text: bool) -> Json:
    path = symbol.path
    item: Json = {
        "name": symbol.name,
        "kind": symbol.kind.lsp,
        "range": lines.range(path, symbol.range, ascii_text),
        "selectionRange": lines.range(path, symbol.selection_range, ascii_text),
    }
    if symbol.line_text:
        item["detail"] = symbol.line_text
    if symbol.children:
        item["children"] = [_document_symbol(lines, c, ascii_text) for c in symbol.children]
    return item


def _answers_now(ls: Connection, path: Path | None = None) -> bool:
    """Whether the index answers at once (see `SymbolIndex.answers_now`)."""
    try:
        return index_of(ls).answers_now(path)
    except Exception:
        return False


def setup(server: Connection) -> None:
    @server.feature(types.WORKSPACE_SYMBOL)
    async def workspace_symbol(ls: Connection, params: types.WorkspaceSymbolParams) -> JsonList:
        await ls.wait_workspace()
        if _answers_now(ls):
            return workspace_symbols(ls, params.query)
        return await asyncio.to_thread(workspace_symbols, ls, params.query)

    outlines: dict[str, tuple[int, JsonList]] = {}
    """Per open document, the outline of its latest version: editors ask again and again
    (breadcrumbs, outline view, sticky scroll) between edits."""

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    async def document_symbol(ls: Connection, params: types.DocumentSymbolParams) -> JsonList:
        await ls.wait_workspace()
        uri = params.text_document.uri
        version = _open_version(ls, uri)
        cached = outlines.get(uri)
        fresh = version is not None and cached is not None and cached[0] == version
        if fresh and cached is not None and not _is_secret_uri(ls, uri):
            return cached[1]
        if _outline_inline(ls, uri):
            result = document_symbols(ls, uri)
        else:
            result = await asyncio.to_thread(document_symbols, ls, uri)
        if version is not None and _open_version(ls, uri) == version:
            if len(outlines) >= OUTLINE_CACHE and uri not in outlines:
                outlines.pop(next(iter(outlines)))
            outlines[uri] = (version, result)
        return result


def _is_secret_uri(ls: Connection, uri: str) -> bool:
    path = _real_path(uri)
    return path is not None and _is_secret(ls, path)


def _outline_inline(ls: Connection, uri: str) -> bool:
    """An open, not too large document whose outline the idle index gives at once."""
    doc = ls.open_document(uri)
    if doc is None or len(doc.source) > INLINE_OUTLINE_CHARS:
        return False
    path = _real_path(uri)
    return path is not None and _answers_now(ls, path)


def _open_version(ls: Connection, uri: str) -> int | None:
    doc = ls.open_document(uri)
    return doc.version if doc is not None else None
