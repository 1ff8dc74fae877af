"""An idle server does not keep the source text of attrs' and cattrs' generated methods
(issue 33: idle RSS ≤ 70 MB; lsprotocol's ~580 classes held 1.6–1.7 MB of it in
`linecache`), and dropping it changes nothing else: the methods still run, real files'
cached lines stay."""

from __future__ import annotations

import linecache

from lsprotocol import types
from lsprotocol.converters import get_converter

from agentls.lsp.gc_freeze import GENERATED_SOURCES, drop_generated_sources


def generated() -> list[str]:
    return [k for k in linecache.cache if k.startswith(GENERATED_SOURCES)]


def test_the_generated_sources_are_dropped_and_the_methods_still_work() -> None:
    converter = get_converter()
    converter.structure({"line": 1, "character": 2}, types.Position)  # cattrs generates one
    linecache.getline(__file__, 1)  # a real file's lines, cached
    assert len(generated()) > 100  # lsprotocol's classes, at import

    drop_generated_sources()

    assert generated() == []
    assert __file__ in linecache.cache
    position = converter.structure({"line": 3, "character": 4}, types.Position)
    assert position == types.Position(line=3, character=4)
    assert converter.unstructure(position) == {"line": 3, "character": 4}
    params = {"textDocument": {"uri": "file:///a.py"}, "position": {"line": 0, "character": 0}}
    hover = converter.structure(params, types.HoverParams)  # generated after the drop
    assert hover.text_document.uri == "file:///a.py"
