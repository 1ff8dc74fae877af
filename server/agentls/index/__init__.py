"""The symbol index: definitions of every file in the workspace, from tree-sitter.

One index per workspace answers the agent's `search_symbols`/`document_symbols` tools and,
later, the editor's `workspace/symbol` and `textDocument/documentSymbol`. See
`symbol_index.py` for the structure and `queries/*.scm` for what counts as a definition.

What parses (the index, `outline`, `syntax_errors`) is imported on first use, so a caller
that only asks which files are indexable does not import tree-sitter (issue 33).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from agentls.index.languages import language_for, supported_extensions
from agentls.index.model import (
    IndexState,
    Position,
    Range,
    SearchResult,
    Symbol,
    SymbolKind,
    SyntaxProblem,
)

if TYPE_CHECKING:
    from agentls.index.oneshot import outline, syntax_errors
    from agentls.index.registry import index_for
    from agentls.index.store import default_cache_path
    from agentls.index.symbol_index import SymbolIndex

_PARSING = {
    "outline": "agentls.index.oneshot",
    "syntax_errors": "agentls.index.oneshot",
    "index_for": "agentls.index.registry",
    "default_cache_path": "agentls.index.store",
    "SymbolIndex": "agentls.index.symbol_index",
}


def __getattr__(name: str) -> Any:
    module = _PARSING.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


__all__ = [
    "IndexState",
    "Position",
    "Range",
    "SearchResult",
    "Symbol",
    "SymbolIndex",
    "SymbolKind",
    "SyntaxProblem",
    "default_cache_path",
    "index_for",
    "language_for",
    "outline",
    "supported_extensions",
    "syntax_errors",
]
