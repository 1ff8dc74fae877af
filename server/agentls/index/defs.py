"""A definition found in a syntax tree, before nesting and kind rules are applied.

Shared by the two ways definitions are found (`extract.collect_by_query` for most
languages, `python_walk.collect_python` for Python); `extract.rows_from_tree` turns them
into rows.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import tree_sitter as ts

from agentls.index.model import SymbolKind

MAX_NAME_CHARS = 200
DEF_CAPTURE = re.compile(r"@def\.(\w+)")
"""A query pattern's definition capture, `@def.<kind>` (see queries/*.scm)."""


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


def add_plain(
    found: dict[int, Def],
    pattern: int,
    kind: SymbolKind,
    node: ts.Node,
    name_node: ts.Node,
    span: ts.Node | None = None,
) -> None:
    """Record a definition named by a plain identifier, keyed by its name's position,
    unless an earlier pattern found that name. `span` is what its full range covers
    (default: `node`)."""
    key = name_node.start_byte
    prev = found.get(key)
    if prev is not None and prev.pattern <= pattern:
        return
    name = node_text(name_node)[:MAX_NAME_CHARS]
    if name:
        span = span if span is not None else node
        start, end = span.start_byte, span.end_byte
        found[key] = Def(pattern, kind, node, span, name_node, name, "", name, start, end)
