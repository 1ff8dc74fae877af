"""Helpers shared by the symbol-index tests."""

from __future__ import annotations

from agentls.index.defs import Def


def definitions(found: dict[int, Def]) -> set[tuple[object, ...]]:
    """Definitions in a comparable form: kind, name, full range, definition and name
    positions, and the pattern that found them."""
    return {
        (d.kind, d.name, d.start, d.end, d.node.start_byte, d.name_node.start_byte, d.pattern)
        for d in found.values()
    }
