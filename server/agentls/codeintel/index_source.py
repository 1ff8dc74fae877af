"""Source 3: the symbol index, by name — for files no language server covers.

Definitions are the index's definitions with the exact name (in files of the same language
group); references are the name's identifier occurrences (tree-sitter, so comments and
strings do not count); hover shows the candidate definitions' first lines; diagnostics are
syntax errors only. Every answer is labelled unresolved: the index cannot tell which `save`
a call means. A rename is refused: by name it could change unrelated symbols.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from agentls.codeintel.identifiers import occurrences
from agentls.codeintel.languages import language_of
from agentls.codeintel.model import (
    Answer,
    CallHierarchy,
    CodeAction,
    Diagnostic,
    Document,
    Location,
    Overlay,
    Pos,
    RenameResult,
    SourceFailed,
    Span,
    SymbolRange,
)
from agentls.codeintel.positions import identifier_at
from agentls.codeintel.sources import Direction, Method
from agentls.index import Symbol, language_for
from agentls.workspace.core import Workspace
from agentls.workspace.textio import split_lines

LABEL = "index (by name, unresolved)"
SYNTAX_LABEL = "index (syntax errors only)"
OUTLINE_LABEL = "index (tree-sitter outline)"
BUILD_WAIT_S = 5.0
MAX_READ_BYTES = 2_000_000


class IndexSource:
    """Answers from the tree-sitter index and a by-name identifier scan."""

    kind = "index"
    sees_staged = True

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace

    def covers(self, path: Path, method: Method) -> bool:
        return language_for(path) is not None

    async def definition(
        self, doc: Document, pos: Pos, overlay: Overlay
    ) -> Answer[list[Location]] | None:
        name = _name_at(doc.text, pos)
        symbols = await self._definitions(doc.path, name, overlay)
        locations = [Location(s.path, _span_of(s)) for s in symbols]
        return Answer(locations, LABEL, _unresolved_note(name, len(locations)))

    async def references(
        self, doc: Document, pos: Pos, overlay: Overlay, include_declaration: bool
    ) -> Answer[list[Location]] | None:
        name = _name_at(doc.text, pos)
        found = await asyncio.to_thread(self._scan, doc.path, name, overlay)
        note = (
            f"Every identifier `{name}` in files of this language counts (comments and strings "
            "excluded); the index cannot tell which definition each one means."
        )
        return Answer(found, LABEL, (note,))

    async def hover(self, doc: Document, pos: Pos, overlay: Overlay) -> Answer[str] | None:
        name = _name_at(doc.text, pos)
        symbols = await self._definitions(doc.path, name, overlay)
        if not symbols:
            return Answer("", LABEL)
        lines = [
            f"{s.kind.value} {s.container + '.' if s.container else ''}{s.name}: "
            f"{s.line_text}  ({self.workspace.display(s.path)}:{s.selection_range.start.line + 1})"
            for s in symbols[:10]
        ]
        more = f"\n… and {len(symbols) - 10} more definitions" if len(symbols) > 10 else ""
        text = f"Definitions named `{name}`:\n" + "\n".join(lines) + more
        return Answer(text, LABEL, _unresolved_note(name, len(symbols)))

    async def locations(
        self, method: Method, doc: Document, pos: Pos, overlay: Overlay
    ) -> Answer[list[Location]] | None:
        """By name the index cannot tell implementations or types apart: no answer."""
        return None

    async def call_hierarchy(
        self, doc: Document, pos: Pos, overlay: Overlay, direction: Direction, depth: int
    ) -> Answer[CallHierarchy] | None:
        """By name the index cannot tell which function a call means: no answer."""
        raise SourceFailed(
            "A call hierarchy comes from a language server, and none answered for "
            f"{self.workspace.display(doc.path)}; by name the index cannot tell which "
            "function a call means. Use find_references (by name) for the callers, or "
            "configure a server in the `languageServers` setting."
        )

    async def code_actions(
        self,
        doc: Document,
        span: Span,
        overlay: Overlay,
        only: str | None,
        apply: str | None,
    ) -> Answer[list[CodeAction]] | None:
        raise SourceFailed(
            "Code actions come from a language server, and none answered for "
            f"{self.workspace.display(doc.path)}; the index by name has none. Edit with "
            "edit_file, or configure a server in the `languageServers` setting."
        )

    async def document_symbols(
        self, doc: Document, overlay: Overlay
    ) -> Answer[list[SymbolRange]] | None:
        """The tree-sitter outline of the text the agent sees (exact for one file: no
        resolution is involved)."""
        from agentls.index import outline

        symbols = await asyncio.to_thread(outline, doc.path, doc.text)
        return Answer([_range_of(s) for s in symbols or []], OUTLINE_LABEL)

    async def diagnostics(
        self, docs: Sequence[Document], overlay: Overlay
    ) -> Answer[list[Diagnostic]] | None:
        found: list[Diagnostic] = []
        for doc in docs:
            from agentls.index import syntax_errors  # tree-sitter, on first need

            for problem in await asyncio.to_thread(syntax_errors, doc.path, doc.text):
                at = Pos(problem.line, problem.col)
                found.append(
                    Diagnostic(doc.path, Span(at, at), "error", problem.message, "", "tree-sitter")
                )
        note = (
            "No language server covers these files: only syntax errors are checked, not types "
            "or names."
        )
        return Answer(found, SYNTAX_LABEL, (note,))

    async def rename(
        self, doc: Document, pos: Pos, overlay: Overlay, new_name: str
    ) -> Answer[RenameResult] | None:
        raise SourceFailed(
            f"No language server covers {self.workspace.display(doc.path)}, and a rename by "
            "name could change unrelated symbols that share the name. Use find_references "
            "(by name) to review the uses, then edit_file each one; or configure a server "
            "in the `languageServers` setting.",
            final=True,
        )

    def status(self) -> list[dict[str, object]]:
        return []

    async def aclose(self) -> None:
        return None

    # -- helpers --------------------------------------------------------------------------

    async def _definitions(self, path: Path, name: str, overlay: Overlay) -> list[Symbol]:
        from agentls.index import index_for

        index = index_for(self.workspace)
        if index.state.building:
            await asyncio.to_thread(index.wait_built, BUILD_WAIT_S)
        staged: dict[Path, str | bytes | None] = {
            p: overlay.texts[p] for p in overlay.staged if p in overlay.texts
        }
        staged.update({p: None for p in overlay.deleted})
        result = await asyncio.to_thread(
            index.search, name, limit=200, overlay={p: t for p, t in staged.items()}
        )
        group = _group(path)
        return [s for s in result.symbols if s.name == name and _group(s.path) == group]

    def scan(self, origin: Path, name: str, overlay: Overlay) -> list[Location]:
        """Identifier occurrences of `name` (for `unconfirmed.py` too)."""
        return self._scan(origin, name, overlay)

    def content(self, path: Path, overlay: Overlay) -> bytes | None:
        """A file's bytes as the agent sees it (None: unreadable or too large)."""
        return self._content(path, overlay)

    def _scan(self, origin: Path, name: str, overlay: Overlay) -> list[Location]:
        """Identifier occurrences of `name` in every file of `origin`'s language group."""
        group = _group(origin)
        found: list[Location] = []
        for path in self._files(group, overlay):
            data = self._content(path, overlay)
            if data is None:
                continue
            found.extend(Location(path, span) for span in occurrences(path, data, name))
        return found

    def _files(self, group: str | None, overlay: Overlay) -> Iterable[Path]:
        ws = self.workspace
        secrets = ws.services.secrets
        seen: set[str] = set()
        candidates = [*ws.file_strs(), *(str(p) for p in overlay.texts)]
        for text in candidates:
            if text in seen:
                continue
            seen.add(text)
            path = Path(text)
            if path in overlay.deleted or _group(path) != group:
                continue
            if language_for(path) is None or not ws.contains(path):
                continue
            if secrets.blocks_reading(text, resolve=False):
                continue
            yield path

    @staticmethod
    def _content(path: Path, overlay: Overlay) -> bytes | None:
        text = overlay.texts.get(path)
        if text is not None:
            return text.encode("utf-8", "surrogateescape")
        try:
            if os.path.getsize(path) > MAX_READ_BYTES:
                return None
            with open(path, "rb") as handle:
                return handle.read()
        except OSError:
            return None


def _group(path: Path) -> str | None:
    language = language_of(path)
    return language.group if language is not None else None


def name_at(text: str, pos: Pos) -> str:
    """The identifier at `pos` (a `SourceFailed` when there is none)."""
    return _name_at(text, pos)


def _name_at(text: str, pos: Pos) -> str:
    lines = split_lines(text)
    name = identifier_at(lines[pos.line], pos.character) if pos.line < len(lines) else ""
    if not name:
        raise SourceFailed("There is no identifier at that position; give `symbol` instead.")
    return name


def _range_of(symbol: Symbol) -> SymbolRange:
    whole = symbol.range
    return SymbolRange(
        symbol.name,
        symbol.kind.value,
        Span(Pos(*whole.start), Pos(*whole.end)),
        _span_of(symbol),
        tuple(_range_of(c) for c in symbol.children),
    )


def _span_of(symbol: Symbol) -> Span:
    sel = symbol.selection_range
    return Span(Pos(sel.start.line, sel.start.character), Pos(sel.end.line, sel.end.character))


def _unresolved_note(name: str, count: int) -> tuple[str, ...]:
    if count <= 1:
        return ()
    return (
        f"{count} definitions are named `{name}`; the index matches by name only, so check "
        "which one the code at that position means.",
    )
