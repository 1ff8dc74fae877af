"""A definition found in a syntax tree, before nesting and kind rules are applied.

Shared by the two ways definitions are found (`extract.collect_by_query` for most
languages, `python_walk.collect_python` for Python); `extract.rows_from_tree` turns them
into rows.
"""

from __future__ import annotations

from dataclasses import dataclass

import tree_sitter as ts

from agentls.workspace.index.model import SymbolKind

MAX_NAME_CHARS = 200


@dataclass(slots=True)
class Def:
    """`pattern`: the query pattern (or its equivalent) that found it; a lower one wins
    when two find the same name. `node` is the definition, `range_node` what its full range
    covers (a decorator or `export` wrapper included), `start`/`end` that range's bytes."""

    pattern: int
    kind: SymbolKind
    node: ts.Node
    range_node: ts.Node
    name_node: ts.Node
    name: str
    scope: str
    scope_name: str
    start: int
    end: int
    qualified: str = ""
    row: int = -1


def node_text(node: ts.Node) -> str:
    """The node's source text with whitespace runs collapsed to one space."""
    text = (node.text or b"").decode("utf-8", "replace")
    if text.isidentifier():  # most names: nothing to collapse
        return text
    return " ".join(text.split())
