"""`search_symbols` and `document_symbols`: definitions from the tree-sitter symbol index.

Both see the session's view: `search_symbols` searches the workspace index with the files
staged in this session swapped in, and `document_symbols` parses the file as the session
sees it (staged > editor buffer > disk), so line numbers agree with `read_file`.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import Field

from agentls import index as _index  # its parsing half loads on first use (issue 33)
from agentls.agent.framework.context import ToolContext
from agentls.agent.framework.tool import Tool, ToolInput
from agentls.errors import ToolError
from agentls.index import SearchResult, Symbol, SymbolKind, language_for
from agentls.tools._files import path_problem
from agentls.workspace.changes import DELETED
from agentls.workspace.core import TextSnapshot

if TYPE_CHECKING:
    from agentls.index import SymbolIndex

DEFAULT_LIMIT = 30
MAX_LIMIT = 200
BUILD_WAIT_S = 2.0
"""How long a search waits for the first index build before answering with partial results
(exact and prefix matches are complete even then: the index parses the files holding the
name first)."""
LINE_CHARS = 160

KindName = Literal[
    "module",
    "namespace",
    "class",
    "struct",
    "interface",
    "trait",
    "enum",
    "enum_member",
    "type",
    "function",
    "method",
    "constructor",
    "field",
    "property",
    "event",
    "constant",
    "variable",
    "macro",
]


class SearchSymbolsInput(ToolInput):
    query: str = Field(
        default="",
        description="Name to look for: exact name, prefix ('parse_'), words ('user serv', "
        "'UserServ' → UserService, user_service) or letters in order ('hrc' → "
        "HttpResponseCode). 'Class.method' restricts to members of Class. May be empty only "
        "with kind or path.",
    )
    kind: KindName | None = Field(
        default=None, description="Only definitions of this kind, e.g. 'class' or 'function'."
    )
    path: str | None = Field(
        default=None,
        description="Only definitions in this folder or file, relative to the workspace root.",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        le=MAX_LIMIT,
        description=f"Maximum results (default {DEFAULT_LIMIT}).",
    )


class SearchSymbols(Tool[SearchSymbolsInput]):
    name = "search_symbols"
    input_model = SearchSymbolsInput
    search_hint = "find definition symbol class function method where defined go to definition"
    usage = """
Find where classes, functions, methods, types, constants and other definitions are declared,
by name, across the whole workspace. Returns ranked definitions, best first, one per line:
`path:line: kind Container.name | first source line`.

- Ranking: exact name, then prefix, then word matches ('user serv' or 'UserServ' find
  UserService and user_service), then fuzzy (letters in order: only when no name starts
  with the query and few words match). 'Outer.name' finds `name` only inside Outer.
- Prefer this over grep to locate a definition: it skips comments, strings and call sites,
  and shows the kind and enclosing class. Use grep for usages/references, text, or
  languages without a grammar here (Python, JS, TS/TSX, Go, Rust, Java, C, C++, C#, Ruby,
  PHP are indexed).
- Filter with `kind` and `path`; an empty query with a filter lists definitions (e.g. all
  classes under a folder).
- Sees files you staged in this session. Files over 2 MB or minified/generated are not
  indexed. Right after start-up the index may still be building: the output then says the
  results may be incomplete.
- Then read the definition with read_file (offset = the line), or outline the file with
  document_symbols.

Example: {"query": "<name>", "kind": "class"} or {"query": "<Class>.<method>", "path": "<folder>"}
"""

    def is_read_only(self, input: SearchSymbolsInput | None = None) -> bool:
        return True

    def is_concurrency_safe(self, input: SearchSymbolsInput) -> bool:
        return True

    def summary(self, input: SearchSymbolsInput) -> str:
        what = input.query or (input.kind or "definitions")
        where = f" in {input.path}" if input.path else ""
        return f"Searching symbols for {what}{where}"

    async def validate_input(self, input: SearchSymbolsInput, ctx: ToolContext) -> str | None:
        if not input.query.strip() and input.kind is None and input.path is None:
            return "Give a query (a name or part of one), or a kind or path to list definitions."
        return path_problem(ctx, input.path) if input.path else None

    async def call(self, input: SearchSymbolsInput, ctx: ToolContext) -> str:
        ws = ctx.workspace
        prefix: str | None = None
        if input.path:
            folder = ws.resolve(input.path)
            view = ws.view(ctx.changes)
            if not view.exists(folder):
                raise ws.missing_error(folder, ctx.changes)
            if not ws.contains_root(folder):
                prefix = str(folder) + (os.sep if view.is_dir(folder) else "")
        index = _index.index_for(ws)
        await _wait_for_build(index, ctx)
        overlay = _session_overlay(ctx)
        limit = input.limit or DEFAULT_LIMIT
        result: SearchResult = await asyncio.to_thread(
            index.search,
            input.query,
            kind=input.kind,
            path_prefix=prefix,
            limit=limit,
            open_paths=ws.open_paths(),
            overlay=overlay,
        )
        return _format_results(ctx, input, result, limit, index)


async def _wait_for_build(index: SymbolIndex, ctx: ToolContext) -> None:
    """Give the first build a few seconds: complete answers beat fast partial ones."""
    if index.state.building and not ctx.cancelled.is_set():
        await asyncio.to_thread(index.wait_built, BUILD_WAIT_S)


def _session_overlay(ctx: ToolContext) -> dict[Path, str | None]:
    """Files this session staged, as the index should see them for this query."""
    overlay: dict[Path, str | None] = {}
    for path, staged in ctx.changes.overlay().items():
        if language_for(path) is None:
            continue
        if staged is DELETED:
            overlay[path] = None
        elif isinstance(staged, str):
            overlay[path] = staged
        else:  # moved without edits: the origin's current text
            try:
                overlay[path] = ctx.workspace.read_text(path, ctx.changes)
            except ToolError:
                overlay[path] = None
    return overlay


def _format_results(
    ctx: ToolContext,
    input: SearchSymbolsInput,
    result: SearchResult,
    limit: int,
    index: SymbolIndex,
) -> str:
    ws = ctx.workspace
    what = f'"{input.query}"' if input.query.strip() else "the filters"
    filters = []
    if input.kind:
        filters.append(f"kind={input.kind}")
    if input.path:
        filters.append(f"path={input.path}")
    scope = f" ({', '.join(filters)})" if filters else ""
    notes = []
    if result.partial:
        notes.append(f"[{partial_note(index)}]")
    if not result.symbols:
        hint = (
            " Try a shorter query or fewer filters; for text, usages or unindexed languages "
            "use grep."
        )
        return "\n".join([f"No definitions match {what}{scope}.{hint}", *notes])
    lines = [_result_line(ws.display(s.path), s) for s in result.symbols]
    more = len(result.symbols) >= limit
    head = f"{len(lines)} definition{'s' if len(lines) != 1 else ''} for {what}{scope}"
    head += (
        ", best first"
        + (" (limit reached: narrow with kind/path or raise limit)" if more else "")
        + ":"
    )
    return "\n".join([head, *lines, *notes])


def partial_note(index: SymbolIndex) -> str:
    """What a result says while the first build runs: "partial: N of M files indexed"."""
    state = index.state
    if state.total_files:
        done = f"{min(state.indexed_files, state.total_files)} of {state.total_files}"
    else:
        done = f"{state.files} of ? (still listing)"
    return (
        f"partial: {done} files indexed; files containing the query's name were indexed "
        "first, other matches may be missing: retry shortly or use grep"
    )


def _result_line(display: str, sym: Symbol) -> str:
    qualified = f"{sym.container}.{sym.name}" if sym.container else sym.name
    text = sym.line_text
    if len(text) > LINE_CHARS:
        text = text[:LINE_CHARS] + "…"
    return f"{display}:{sym.selection_range.start.line + 1}: {sym.kind.value} {qualified} | {text}"


class DocumentSymbolsInput(ToolInput):
    path: str = Field(
        description="File to outline, relative to the workspace root (e.g. '<folder>/<file>')."
    )


class DocumentSymbols(Tool[DocumentSymbolsInput]):
    name = "document_symbols"
    input_model = DocumentSymbolsInput
    search_hint = "outline structure classes functions methods of a file"
    usage = """
Outline one source file: its classes, functions, methods, fields, constants and other
definitions as an indented tree, each with its kind, name and 1-based line range
(`kind name  Lstart-end`).

- Use it to get the shape of a large file before reading it, then read only the part you
  need with read_file (offset = the start line, limit = the range length). Much cheaper
  than reading a whole file to find one function.
- Sees the file as the session does (your staged edits, unsaved editor changes), so line
  numbers match read_file.
- Supported: Python, JavaScript, TypeScript/TSX, Go, Rust, Java, C, C++, C#, Ruby, PHP.
  Files over 2 MB or minified/generated ones are not outlined.

Example: {"path": "<path>"}
"""

    def is_read_only(self, input: DocumentSymbolsInput | None = None) -> bool:
        return True

    def is_concurrency_safe(self, input: DocumentSymbolsInput) -> bool:
        return True

    def summary(self, input: DocumentSymbolsInput) -> str:
        return f"Outlining {input.path}"

    async def validate_input(self, input: DocumentSymbolsInput, ctx: ToolContext) -> str | None:
        return path_problem(ctx, input.path)

    async def call(self, input: DocumentSymbolsInput, ctx: ToolContext) -> str:
        ws = ctx.workspace
        path = ws.resolve(input.path)
        display = ws.display(path)
        blocked = ctx.services.secrets.reading_blocked_by(path)
        if blocked is not None:
            raise ToolError(
                f"No outline for {display}: reading it is denied by the {blocked} (secret "
                "files such as keys, credentials and .env are never shown; the user can change "
                "the `secrets` setting). Do not try to read it another way."
            )
        if language_for(path) is None:
            raise ToolError(
                f"No outline for {display}: not a supported language (Python, JavaScript, "
                "TypeScript/TSX, Go, Rust, Java, C, C++, C#, Ruby, PHP). Use read_file or grep."
            )
        snapshot = ws.load(path, ctx.changes)
        text = snapshot.text
        symbols = await asyncio.to_thread(_outline_of, ctx, snapshot)
        if symbols is None:
            raise ToolError(
                f"No outline for {display}: it is too large or looks generated/minified. "
                "Use grep to find what you need in it."
            )
        if not symbols:
            return f"{display}: no definitions found ({len(text.splitlines())} lines)."
        out: list[str] = []
        _outline_lines(symbols, 0, out)
        count = len(out)
        head = f"{display}: {count} definition{'s' if count != 1 else ''}"
        return "\n".join([head, *out])


def _outline_of(ctx: ToolContext, snapshot: TextSnapshot) -> list[Symbol] | None:
    """The outline of the file as the session sees it, from the index's trees when they
    hold this text: an open buffer re-parses incrementally, an unchanged disk file is
    read from its record; staged text (this session's own) is parsed apart."""
    path = snapshot.path
    if snapshot.source == "buffer":
        return _index.index_for(ctx.workspace).buffer_outline(path, snapshot.text)
    if snapshot.source == "disk":
        try:
            st = path.stat()
        except OSError:
            st = None
        if st is not None:
            found = _index.index_for(ctx.workspace).disk_outline(path, st.st_mtime_ns, st.st_size)
            if found is not None:
                return found
    return _index.outline(path, snapshot.text)


def _outline_lines(symbols: tuple[Symbol, ...] | list[Symbol], depth: int, out: list[str]) -> None:
    for sym in symbols:
        first, last = sym.range.start.line + 1, sym.range.end.line + 1
        if sym.range.end.character == 0 and last > first:
            last -= 1
        lines = f"L{first}" if first == last else f"L{first}-{last}"
        out.append(f"{'  ' * depth}{sym.kind.value} {sym.name}  {lines}")
        _outline_lines(sym.children, depth + 1, out)


__all__ = ["DocumentSymbols", "SearchSymbols", "SymbolKind"]
