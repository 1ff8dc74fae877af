"""Where a name occurs as an identifier (not in a comment or a string), by tree-sitter.

The by-name fallback for `find_references`: better than grep because `save` in a comment,
a docstring or `"save"` does not count, yet still unresolved (every `save` counts, whoever
defines it). Only files that contain the name's bytes are parsed, and in those only the
node at each textual match is looked at.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING

from agentls.codeintel.model import Pos, Span
from agentls.index import language_for
from agentls.index.languages import parser

if TYPE_CHECKING:
    import tree_sitter as ts

MAX_PARSE_BYTES = 2_000_000
"""Larger files are skipped (generated or minified code; the index skips them too)."""
_IDENTIFIER_TYPES = frozenset({"constant", "name", "word"})
"""Besides every `*identifier` node type: Ruby's constants, PHP's names."""


def is_identifier_node(node: ts.Node) -> bool:
    kind = node.type
    return kind.endswith("identifier") or kind in _IDENTIFIER_TYPES


def occurrences(path: Path | str, data: bytes, name: str) -> list[Span]:
    """Spans (0-based lines, code-point columns) of `name` used as an identifier."""
    spec = language_for(path)
    needle = name.encode("utf-8")
    if spec is None or not needle or needle not in data or len(data) > MAX_PARSE_BYTES:
        return []
    pattern = re.compile(rb"(?<![\w$])" + re.escape(needle) + rb"(?![\w$])")
    matches = [m.start() for m in pattern.finditer(data)]
    if not matches:
        return []
    root = parser(spec).parse(data).root_node
    spans: list[Span] = []
    for start in matches:
        end = start + len(needle)
        node = root.descendant_for_byte_range(start, end)
        if node is None or node.start_byte != start or node.end_byte != end:
            continue
        if not is_identifier_node(node):
            continue
        spans.append(_span(data, start, end))
    return spans


def _span(data: bytes, start: int, end: int) -> Span:
    line = data.count(b"\n", 0, start)
    line_start = data.rfind(b"\n", 0, start) + 1
    column = len(data[line_start:start].decode("utf-8", "replace"))
    width = len(data[start:end].decode("utf-8", "replace"))
    return Span(Pos(line, column), Pos(line, column + width))
