"""`CodeSource`: the port every answerer of code questions implements.

Three kinds exist, tried in this order: the editor's own language servers (the LSP host
implements it with `agentls/editorQuery`, in `agentls.lsp.editor_queries`), language
servers agentls runs itself (`agentls.langservers`, an LSP client), and the symbol index by
name (`agentls.codeintel.index_source`, always last). The core only knows this protocol, so
it never imports an LSP library; the host decides which sources exist.

A method returns None when the source has nothing to say for that file (the next source is
asked), raises `SourceFailed` when it tried and failed, and otherwise an `Answer` naming
itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

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
    Span,
    SymbolRange,
)

Method = Literal[
    "textDocument/definition",
    "textDocument/references",
    "textDocument/hover",
    "textDocument/rename",
    "textDocument/implementation",
    "textDocument/typeDefinition",
    "textDocument/prepareCallHierarchy",
    "textDocument/codeAction",
    "textDocument/documentSymbol",
    "agentls/diagnostics",
]
DEFINITION: Method = "textDocument/definition"
REFERENCES: Method = "textDocument/references"
HOVER: Method = "textDocument/hover"
RENAME: Method = "textDocument/rename"
DIAGNOSTICS: Method = "agentls/diagnostics"
IMPLEMENTATION: Method = "textDocument/implementation"
TYPE_DEFINITION: Method = "textDocument/typeDefinition"
CALL_HIERARCHY: Method = "textDocument/prepareCallHierarchy"
CODE_ACTION: Method = "textDocument/codeAction"
DOCUMENT_SYMBOL: Method = "textDocument/documentSymbol"
LANGUAGES = "agentls/languages"
"""Editor query: the languages the editor runs a language server for (`{}` → `["python"]`,
LSP language ids). While the editor serves a language, the pool starts no server of its own
for it (see docs/code-intelligence.md, "No duplicate server")."""
Direction = Literal["incoming", "outgoing"]
LOCATION_METHODS: frozenset[Method] = frozenset({IMPLEMENTATION, TYPE_DEFINITION})
"""Position queries answered with locations through `CodeSource.locations`."""

EDITOR_METHODS: frozenset[str] = frozenset(
    {
        DEFINITION,
        REFERENCES,
        HOVER,
        RENAME,
        DIAGNOSTICS,
        IMPLEMENTATION,
        TYPE_DEFINITION,
        CALL_HIERARCHY,
        "callHierarchy/incomingCalls",
        "callHierarchy/outgoingCalls",
        CODE_ACTION,
        "codeAction/resolve",
        DOCUMENT_SYMBOL,
        "workspace/symbol",
        LANGUAGES,
    }
)
"""What a client may announce in `editorQueries` (the methods of `agentls/editorQuery`)."""


@runtime_checkable
class ServesLanguages(Protocol):
    """A source that runs language servers of its own (the editor): while it serves a
    document's language and is asked, the pool starts no duplicate server for it."""

    async def serves_language(self, doc: Document) -> bool: ...


class CodeSource(Protocol):
    """One way to answer code questions about files of the workspace."""

    kind: str
    """"editor", "language server" or "index" (status and notes)."""
    sees_staged: bool
    """Whether it sees the session's staged edits. One that does not (the editor) is not
    asked while the session has staged edits: its lines would not match the agent's."""

    def covers(self, path: Path, method: Method) -> bool:
        """Cheap: whether it may answer `method` for this file at all."""
        ...

    async def definition(
        self, doc: Document, pos: Pos, overlay: Overlay
    ) -> Answer[list[Location]] | None: ...

    async def references(
        self, doc: Document, pos: Pos, overlay: Overlay, include_declaration: bool
    ) -> Answer[list[Location]] | None: ...

    async def hover(self, doc: Document, pos: Pos, overlay: Overlay) -> Answer[str] | None: ...

    async def locations(
        self, method: Method, doc: Document, pos: Pos, overlay: Overlay
    ) -> Answer[list[Location]] | None:
        """`textDocument/implementation` or `textDocument/typeDefinition` (LOCATION_METHODS)."""
        ...

    async def diagnostics(
        self, docs: Sequence[Document], overlay: Overlay
    ) -> Answer[list[Diagnostic]] | None: ...

    async def call_hierarchy(
        self, doc: Document, pos: Pos, overlay: Overlay, direction: Direction, depth: int
    ) -> Answer[CallHierarchy] | None:
        """prepareCallHierarchy, then incoming or outgoing calls `depth` levels deep."""
        ...

    async def code_actions(
        self,
        doc: Document,
        span: Span,
        overlay: Overlay,
        only: str | None,
        apply: str | None,
    ) -> Answer[list[CodeAction]] | None:
        """The actions for `span` (with the diagnostics there); with `apply` (a title), that
        action's edit filled in: resolved, or captured from its command's applyEdit."""
        ...

    async def document_symbols(
        self, doc: Document, overlay: Overlay
    ) -> Answer[list[SymbolRange]] | None:
        """The definitions of one file, nested."""
        ...

    async def rename(
        self, doc: Document, pos: Pos, overlay: Overlay, new_name: str
    ) -> Answer[RenameResult] | None: ...

    def status(self) -> list[dict[str, object]]:
        """JSON-ready entries for `agentls.status` (one per server)."""
        ...

    async def aclose(self) -> None:
        """Stop what the source started (language-server processes)."""
        ...
