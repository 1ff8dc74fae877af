"""`CodeIntel`: asks the sources in order and says who answered.

One per workspace, in its `ToolServices` (`ctx.services.code_intel`). The host gives the
sources it can offer (the editor bridge, the language-server pool); the index by
name is always appended, so every host — a test host too — can answer for every language
the index parses.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from agentls.codeintel.index_source import IndexSource
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
from agentls.codeintel.sources import (
    CALL_HIERARCHY,
    CODE_ACTION,
    DEFINITION,
    DIAGNOSTICS,
    DOCUMENT_SYMBOL,
    HOVER,
    REFERENCES,
    RENAME,
    CodeSource,
    Direction,
    Method,
    ServesLanguages,
)
from agentls.errors import ToolError
from agentls.workspace.core import Workspace

log = logging.getLogger(__name__)

T = TypeVar("T")

UNCOVERED_HINT = (
    "Use grep and read_file for it instead, or configure a server for this kind of file in "
    "the `languageServers` setting (with `extensions`)."
)


class NoSource(ToolError):
    """No source covers the file (an unknown file type with no server configured)."""


@dataclass(frozen=True)
class Checked:
    """Diagnostics of some files, all answered by one source."""

    docs: list[Document]
    answer: Answer[list[Diagnostic]]


class CodeIntel:
    """The sources of one workspace, asked in order."""

    def __init__(self, workspace: Workspace, sources: Sequence[CodeSource] = ()) -> None:
        self.workspace = workspace
        self.sources: list[CodeSource] = [*sources, IndexSource(workspace)]

    # -- queries --------------------------------------------------------------------------

    async def definition(self, doc: Document, pos: Pos, overlay: Overlay) -> Answer[list[Location]]:
        return await self._ask(
            doc, overlay, DEFINITION, lambda s: s.definition(doc, pos, overlay), _empty_list
        )

    async def references(
        self, doc: Document, pos: Pos, overlay: Overlay, include_declaration: bool
    ) -> Answer[list[Location]]:
        """References; without the declaration, the answering source's own definitions are
        taken out (servers differ on `includeDeclaration`: pyright also drops the queried
        occurrence itself)."""

        async def ask(source: CodeSource) -> Answer[list[Location]] | None:
            found = await source.references(doc, pos, overlay, True)
            if found is None or include_declaration or not found.value:
                return found
            try:
                definitions = await source.definition(doc, pos, overlay)
            except SourceFailed:
                return found
            declared = {(d.path, d.span.start) for d in (definitions.value if definitions else [])}
            kept = [loc for loc in found.value if (loc.path, loc.span.start) not in declared]
            return Answer(kept, found.source, found.notes)

        return await self._ask(doc, overlay, REFERENCES, ask, _empty_list)

    async def locations(
        self, method: Method, doc: Document, pos: Pos, overlay: Overlay
    ) -> Answer[list[Location]]:
        """Implementations or the type's definition (`LOCATION_METHODS`)."""
        return await self._ask(
            doc, overlay, method, lambda s: s.locations(method, doc, pos, overlay), _empty_list
        )

    async def hover(self, doc: Document, pos: Pos, overlay: Overlay) -> Answer[str]:
        return await self._ask(
            doc, overlay, HOVER, lambda s: s.hover(doc, pos, overlay), lambda v: not v.strip()
        )

    async def rename(
        self, doc: Document, pos: Pos, overlay: Overlay, new_name: str
    ) -> Answer[RenameResult]:
        return await self._ask(
            doc,
            overlay,
            RENAME,
            lambda s: s.rename(doc, pos, overlay, new_name),
            lambda v: not v.edits,
        )

    async def call_hierarchy(
        self, doc: Document, pos: Pos, overlay: Overlay, direction: Direction, depth: int
    ) -> Answer[CallHierarchy]:
        return await self._ask(
            doc,
            overlay,
            CALL_HIERARCHY,
            lambda s: s.call_hierarchy(doc, pos, overlay, direction, depth),
            lambda v: False,
        )

    async def code_actions(
        self,
        doc: Document,
        span: Span,
        overlay: Overlay,
        only: str | None,
        apply: str | None,
    ) -> Answer[list[CodeAction]]:
        return await self._ask(
            doc,
            overlay,
            CODE_ACTION,
            lambda s: s.code_actions(doc, span, overlay, only, apply),
            _empty_list,
        )

    async def document_symbols(self, doc: Document, overlay: Overlay) -> Answer[list[SymbolRange]]:
        return await self._ask(
            doc,
            overlay,
            DOCUMENT_SYMBOL,
            lambda s: s.document_symbols(doc, overlay),
            _empty_list,
        )

    async def diagnostics(self, docs: Sequence[Document], overlay: Overlay) -> list[Checked]:
        """Diagnostics per group of files answered by the same source (first that covers)."""
        groups: dict[int, list[Document]] = {}
        notes: list[str] = []
        uncovered: list[str] = []
        for doc in docs:
            index = self._first_for(doc.path, DIAGNOSTICS, overlay, staged_paths={doc.path})
            if index is None:
                uncovered.append(self.workspace.display(doc.path))
            else:
                groups.setdefault(index, []).append(doc)
        checked: list[Checked] = []
        for index, group in sorted(groups.items()):
            checked.append(Checked(group, await self._diagnose(index, group, overlay, notes)))
        if uncovered:
            notes.append(f"No source checks {', '.join(uncovered)}. {UNCOVERED_HINT}")
        if notes and checked:
            first = checked[0].answer
            checked[0] = Checked(
                checked[0].docs, Answer(first.value, first.source, (*first.notes, *notes))
            )
        elif notes:
            raise NoSource(" ".join(notes))
        return checked

    async def _diagnose(
        self, index: int, docs: list[Document], overlay: Overlay, notes: list[str]
    ) -> Answer[list[Diagnostic]]:
        """Ask the group's source, falling through to later ones on failure."""
        editor_serves = False
        for source in self.sources[index:]:
            if not all(source.covers(d.path, DIAGNOSTICS) for d in docs):
                continue
            if not source.sees_staged and any(d.path in overlay.staged for d in docs):
                continue
            if editor_serves and source.kind == POOL_KIND:
                notes.append(_NOT_DUPLICATED.format(language=docs[0].language))
                continue
            editor_serves = editor_serves or await _serves(source, docs[0])
            try:
                answer = await source.diagnostics(docs, overlay)
            except SourceFailed as exc:
                notes.append(str(exc))
                continue
            if answer is not None:
                return answer
        raise NoSource(" ".join(notes) or "No source could check these files.")

    # -- machinery ------------------------------------------------------------------------

    def _first_for(
        self, path: Path, method: Method, overlay: Overlay, staged_paths: set[Path] | None = None
    ) -> int | None:
        for index, source in enumerate(self.sources):
            if not source.covers(path, method):
                continue
            blocking = overlay.staged if staged_paths is None else overlay.staged & staged_paths
            if blocking and not source.sees_staged:
                continue
            return index
        return None

    async def _ask(
        self,
        doc: Document,
        overlay: Overlay,
        method: Method,
        call: Callable[[CodeSource], Awaitable[Answer[T] | None]],
        is_empty: Callable[[T], bool],
    ) -> Answer[T]:
        notes: list[str] = []
        last_empty: Answer[T] | None = None
        asked = 0
        editor_serves = False
        for source in self.sources:
            if not source.covers(doc.path, method):
                continue
            skipped = _skipped(source, bool(overlay.staged), editor_serves, doc.language)
            if skipped:
                notes.append(skipped)
                continue
            editor_serves = editor_serves or await _serves(source, doc)
            asked += 1
            try:
                answer = await call(source)
            except SourceFailed as exc:
                if exc.final:
                    raise ToolError(" ".join([*notes, str(exc)])) from None
                log.info("%s failed: %s", source.kind, exc)
                notes.append(str(exc))
                continue
            if answer is None:
                continue
            if is_empty(answer.value):
                if last_empty is None:
                    last_empty = answer  # the answer unless a later source finds something
                else:
                    notes.append(f"The {answer.source} found nothing here either.")
                continue
            if last_empty is not None:
                notes.insert(0, f"The {last_empty.source} found nothing here.")
            return Answer(answer.value, answer.source, (*notes, *answer.notes))
        if last_empty is not None:
            return Answer(last_empty.value, last_empty.source, (*notes, *last_empty.notes))
        if asked == 0 and not notes:
            raise NoSource(
                f"No editor, language server or grammar understands "
                f"{self.workspace.display(doc.path)}. {UNCOVERED_HINT}"
            )
        raise ToolError(" ".join(notes) or "No source could answer.")

    # -- lifecycle ------------------------------------------------------------------------

    def status(self) -> list[dict[str, object]]:
        entries: list[dict[str, object]] = []
        for source in self.sources:
            try:
                entries.extend(source.status())
            except Exception:
                log.exception("status of %s failed", source.kind)
        return entries

    async def aclose(self) -> None:
        for source in self.sources:
            try:
                await source.aclose()
            except Exception:
                log.exception("closing the %s source failed", source.kind)

    def close(self) -> None:
        """Synchronous last resort (workspace close): stop processes without a handshake."""
        for source in self.sources:
            closer = getattr(source, "close", None)
            if callable(closer):
                try:
                    closer()
                except Exception:
                    log.exception("closing the %s source failed", source.kind)


POOL_KIND = "language server"
"""`LanguageServerPool.kind`: the source that starts agentls's own (headless) servers."""
_NOT_DUPLICATED = (
    "agentls's own language server was not started: the editor runs one for {language} "
    "(no duplicate server)."
)


def _skipped(source: CodeSource, staged: bool, editor_serves: bool, language: str | None) -> str:
    """Why `source` is not asked (a note), or "" to ask it."""
    if staged and not source.sees_staged:
        return f"The {source.kind} was not asked: it does not see this session's staged edits."
    if editor_serves and source.kind == POOL_KIND:
        return _NOT_DUPLICATED.format(language=language)
    return ""


async def _serves(source: CodeSource, doc: Document) -> bool:
    """Whether `source` (the editor) runs a language server for `doc`'s language. Asked
    only of a source that is itself asked, so never while staged edits hide the editor:
    then agentls's own server on the shadow is the only one that sees the agent's text."""
    if not isinstance(source, ServesLanguages):
        return False
    try:
        return await source.serves_language(doc)
    except Exception:
        log.exception("asking the %s for its languages failed", source.kind)
        return False


def _empty_list(value: list[Any]) -> bool:
    return not value
