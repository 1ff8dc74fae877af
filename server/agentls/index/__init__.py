"""The symbol index: definitions of every file in the workspace, from tree-sitter.

One index per workspace answers the agent's `search_symbols`/`document_symbols` tools and,
later, the editor's `workspace/symbol` and `textDocument/documentSymbol`. See
`symbol_index.py` for the structure and `queries/*.scm` for what counts as a definition.
"""

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
from agentls.index.oneshot import outline, syntax_errors
from agentls.index.registry import index_for
from agentls.index.store import default_cache_path
from agentls.index.symbol_index import SymbolIndex

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
