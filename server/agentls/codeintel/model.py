"""Value types of code intelligence, shared by the core and every source.

Positions are 0-based lines and code-point columns, like the symbol index's: each source
converts at its own edge (UTF-16 for most language servers, the negotiated encoding for the
editor), so nothing here depends on lsprotocol and the tools never see an encoding.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Generic, Literal, NamedTuple, TypeVar

Severity = Literal["error", "warning", "information", "hint"]
SEVERITY_RANK: dict[Severity, int] = {"error": 1, "warning": 2, "information": 3, "hint": 4}


class Pos(NamedTuple):
    """0-based line and code-point column."""

    line: int
    character: int


class Span(NamedTuple):
    start: Pos
    end: Pos


@dataclass(frozen=True)
class Location:
    """A place in a file; `path` is absolute (it may lie outside the workspace)."""

    path: Path
    span: Span


@dataclass(frozen=True)
class Diagnostic:
    path: Path
    span: Span
    severity: Severity
    message: str
    code: str = ""
    source: str = ""
    """Who reported it (e.g. "basedpyright", "ts"), as the server says."""


@dataclass(frozen=True)
class TextChange:
    span: Span
    new_text: str


@dataclass(frozen=True)
class FileEdit:
    """A rename's text changes to one file, positions against the text the source saw."""

    path: Path
    changes: tuple[TextChange, ...]


@dataclass(frozen=True)
class RenameResult:
    edits: tuple[FileEdit, ...]
    skipped: tuple[str, ...] = ()
    """Parts of the server's edit that cannot be staged (file creations, deletions)."""


@dataclass(frozen=True)
class SymbolRange:
    """A definition in one file (`textDocument/documentSymbol`, or the index's outline):
    `span` is the whole definition, `selection` its name; what the symbol-level edits
    replace, insert around or delete."""

    name: str
    kind: str
    span: Span
    selection: Span
    children: tuple[SymbolRange, ...] = ()


@dataclass(frozen=True)
class CallItem:
    """A function or method in a call hierarchy, at its name."""

    name: str
    kind: str
    detail: str
    location: Location


@dataclass(frozen=True)
class Call:
    """One edge of a call hierarchy: `item` calls the queried function (incoming) or is
    called by it (outgoing), at `sites`; `calls` is the next level when `depth` > 1."""

    item: CallItem
    sites: tuple[Location, ...]
    calls: tuple[Call, ...] = ()


@dataclass(frozen=True)
class CallHierarchy:
    root: CallItem
    calls: tuple[Call, ...]


@dataclass(frozen=True)
class CodeAction:
    """A quick fix or refactoring a server offers for a range.

    `edit` is the change it makes, once known: an action whose server sends it only on
    `codeAction/resolve`, or through a command's `workspace/applyEdit`, has it only in the
    answer to an `apply`. `unsupported` says why an applied action has no edit."""

    title: str
    kind: str = ""
    preferred: bool = False
    diagnostics: tuple[str, ...] = ()
    disabled: str = ""
    command: str = ""
    edit: RenameResult | None = None
    unsupported: str = ""


@dataclass(frozen=True)
class Document:
    """The file a query is about, exactly as the agent sees it (staged > buffer > disk)."""

    path: Path
    text: str
    language: str | None
    """Our language id (`python`, `typescript`, ...), None when unknown."""


@dataclass(frozen=True)
class Overlay:
    """Every file whose text the agent sees differently from disk (editor buffers and the
    session's staged writes): a language server must be shown these, not read disk."""

    texts: dict[Path, str] = field(default_factory=dict)
    staged: frozenset[Path] = frozenset()
    """The paths whose text comes from this session's staged edits."""
    deleted: frozenset[Path] = frozenset()
    """Files this session deleted (or renamed away): they exist on disk, not for the agent."""


T = TypeVar("T")


@dataclass(frozen=True)
class Answer(Generic[T]):
    """What one source answered, and who it was (shown to the model with every result)."""

    value: T
    source: str
    """e.g. "editor (basedpyright)", "language server (typescript-language-server)"."""
    notes: tuple[str, ...] = ()
    """Caveats worth telling the model (e.g. "references in node_modules omitted")."""


class SourceFailed(Exception):
    """A source could not answer this query (crashed, timed out, refused): the next source
    is tried, and the message is shown with the final answer so nothing fails silently."""

    def __init__(self, message: str, *, final: bool = False) -> None:
        super().__init__(message)
        self.final = final
        """True: do not try other sources, report this as the result (e.g. a crash that
        the user should hear about, or a rename a by-name source must not guess)."""
