"""Value types of the symbol index: what a definition is and what a query returns.

They mirror LSP's `DocumentSymbol` closely (0-based lines, code-point columns, a full range
and a name range) so the LSP layer converts them without thinking, but they carry no
lsprotocol types: `workspace/` must stay editor-agnostic.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path
from typing import NamedTuple


class SymbolKind(StrEnum):
    """What a definition is. Values are the words the model sees; `lsp` maps to LSP numbers."""

    MODULE = "module"
    NAMESPACE = "namespace"
    CLASS = "class"
    STRUCT = "struct"
    INTERFACE = "interface"
    TRAIT = "trait"
    IMPL = "impl"
    ENUM = "enum"
    ENUM_MEMBER = "enum_member"
    TYPE = "type"
    FUNCTION = "function"
    METHOD = "method"
    CONSTRUCTOR = "constructor"
    FIELD = "field"
    PROPERTY = "property"
    EVENT = "event"
    CONSTANT = "constant"
    VARIABLE = "variable"
    MACRO = "macro"

    @property
    def lsp(self) -> int:
        """The LSP `SymbolKind` number (LSP has no trait/impl/type alias/macro: nearest kin)."""
        return _LSP_KIND[self]

    @property
    def code(self) -> int:
        """Compact storage code (position in declaration order; bump the store schema on change)."""
        return _KIND_CODE[self]

    @classmethod
    def from_code(cls, code: int) -> SymbolKind:
        return KINDS_BY_CODE[code]


KINDS_BY_CODE: tuple[SymbolKind, ...] = tuple(SymbolKind)
"""Kinds by storage code (see `SymbolKind.code`)."""
_KIND_CODE: dict[SymbolKind, int] = {k: i for i, k in enumerate(KINDS_BY_CODE)}
_LSP_KIND: dict[SymbolKind, int] = {
    SymbolKind.MODULE: 2,
    SymbolKind.NAMESPACE: 3,
    SymbolKind.CLASS: 5,
    SymbolKind.STRUCT: 23,
    SymbolKind.INTERFACE: 11,
    SymbolKind.TRAIT: 11,
    SymbolKind.IMPL: 19,
    SymbolKind.ENUM: 10,
    SymbolKind.ENUM_MEMBER: 22,
    SymbolKind.TYPE: 26,
    SymbolKind.FUNCTION: 12,
    SymbolKind.METHOD: 6,
    SymbolKind.CONSTRUCTOR: 9,
    SymbolKind.FIELD: 8,
    SymbolKind.PROPERTY: 7,
    SymbolKind.EVENT: 24,
    SymbolKind.CONSTANT: 14,
    SymbolKind.VARIABLE: 13,
    SymbolKind.MACRO: 12,
}


class Position(NamedTuple):
    """0-based line and column in code points (convert to UTF-16 at the LSP edge)."""

    line: int
    character: int


class Range(NamedTuple):
    start: Position
    end: Position


class Symbol(NamedTuple):
    """One definition (a named tuple: search results make tens per query, and a tuple is
    several times cheaper to build than a frozen dataclass).

    `container` is the dotted chain of enclosing definitions ("Outer.Inner"), also for
    definitions written outside their type (Go receivers, C++ `A::f`). `line_text` is the
    definition's first source line, stripped, so a caller can show it without reading the
    file. `children` is filled by `document_symbols` (the outline) and empty in search results.
    """

    name: str
    kind: SymbolKind
    path: Path
    container: str
    range: Range
    selection_range: Range
    line_text: str
    children: tuple[Symbol, ...] = ()


@dataclass(frozen=True, slots=True)
class SearchResult:
    """Ranked definitions; `partial` while the first build is still running."""

    symbols: list[Symbol]
    partial: bool


@dataclass(frozen=True, slots=True)
class IndexState:
    """A snapshot of the index for status lines, tests and benchmarks.

    `parsed_files` and `cached_files` count how files entered the index since it was
    created (parsed by tree-sitter vs. loaded unchanged from the persistent cache).
    """

    files: int
    symbols: int
    parsed_files: int
    cached_files: int
    skipped_files: int
    building: bool
    ready: bool
    total_files: int = 0
    """Files the last build had to index (0 while it is still listing them)."""
    indexed_files: int = 0
    """Of those, how many are indexed (parsed, loaded from the cache, or skipped)."""
    shared_files: int = 0
    """Dependency files taken from the cache shared across workspaces (not parsed)."""


class SyntaxProblem(NamedTuple):
    """A parse error: 0-based line, code-point column, and a short message."""

    line: int
    col: int
    message: str
