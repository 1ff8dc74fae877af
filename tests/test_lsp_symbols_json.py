"""`documentSymbol` and `workspace/symbol` answers, built as JSON by the server, are exactly
the index's definitions in the client's position units: checked over real stdio against an
independent conversion (code points → UTF-16 or UTF-8 units, done here), for open and
closed files, ASCII and non-ASCII text, nested and multi-line definitions, and right after
edits."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from agentls.index import Symbol, outline
from tests.lsp_support import HELIX_LIKE, FakeEditor, editor_session, server_env

SOURCE = '''"""Módulo de prueba: naïve café."""
import os


class Ünïcode:
    """Doc 😀."""

    attr = "é"

    def méthode(self, x="😀😀"):  # 😀
        return x

    @property
    def plain(self):
        return 1

    class Inner:
        def deep(self, s="ß"): pass


def multi_line_signature(
    a="é",
    b="😀",
):
    return a


CONSTANT = "ascii only"
'''

ASCII_SOURCE = """class Plain:
    def method(self):
        return 1


def function():
    pass
"""


def units(text: str, encoding: str) -> int:
    """Length of `text` in the client's position units (independent of the server)."""
    if encoding == "utf-8":
        return len(text.encode("utf-8"))
    if encoding == "utf-32":
        return len(text)
    return len(text.encode("utf-16-le")) // 2


def position(lines: list[str], line: int, column: int, encoding: str) -> dict[str, int]:
    text = lines[line] if line < len(lines) else ""
    return {"line": line, "character": units(text[:column], encoding)}


def rng(lines: list[str], which: Any, encoding: str) -> dict[str, Any]:
    return {
        "start": position(lines, which.start.line, which.start.character, encoding),
        "end": position(lines, which.end.line, which.end.character, encoding),
    }


def expected_outline(symbols: list[Symbol], lines: list[str], encoding: str) -> list[Any]:
    out = []
    for s in symbols:
        out.append(
            {
                "name": s.name,
                "kind": s.kind.lsp,
                "range": rng(lines, s.range, encoding),
                "selectionRange": rng(lines, s.selection_range, encoding),
                "detail": s.line_text or None,
                "children": expected_outline(list(s.children), lines, encoding) or None,
            }
        )
    return out


def plain_position(p: types.Position) -> dict[str, int]:
    return {"line": p.line, "character": p.character}


def plain_range(r: types.Range) -> dict[str, Any]:
    return {"start": plain_position(r.start), "end": plain_position(r.end)}


def received_outline(found: Any) -> list[Any]:
    out = []
    for s in found or []:
        assert isinstance(s, types.DocumentSymbol)
        out.append(
            {
                "name": s.name,
                "kind": int(s.kind),
                "range": plain_range(s.range),
                "selectionRange": plain_range(s.selection_range),
                "detail": s.detail,
                "children": received_outline(s.children) or None,
            }
        )
    return out


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "mixed.py").write_text(SOURCE, encoding="utf-8")
    (root / "closed.py").write_text(SOURCE.replace("Ünïcode", "Fermé"), encoding="utf-8")
    (root / "plain.py").write_text(ASCII_SOURCE, encoding="utf-8")
    return root


async def outline_of(editor: FakeEditor, uri: str) -> list[Any]:
    params = types.DocumentSymbolParams(text_document=types.TextDocumentIdentifier(uri=uri))
    return received_outline(await editor.client.text_document_document_symbol_async(params))


def expected_for(path: Path, text: str, encoding: str) -> list[Any]:
    return expected_outline(outline(path, text.encode("utf-8")), text.splitlines(), encoding)


@pytest.mark.parametrize("preset", ["visual-studio-code", HELIX_LIKE])
async def test_outlines_are_the_index_in_client_units(
    preset: str, project: Path, tmp_path: Path
) -> None:
    env = server_env(None, tmp_path / "transcripts")
    async with editor_session(preset, project, env) as editor:
        encoding = editor.encoding
        assert encoding == ("utf-16" if preset != HELIX_LIKE else "utf-8")
        mixed = project / "mixed.py"
        uri = editor.open(mixed)
        assert await outline_of(editor, uri) == expected_for(mixed, SOURCE, encoding)
        assert await outline_of(editor, uri) == expected_for(mixed, SOURCE, encoding)  # cached

        plain = project / "plain.py"
        plain_uri = editor.open(plain)
        assert await outline_of(editor, plain_uri) == expected_for(plain, ASCII_SOURCE, encoding)

        closed = project / "closed.py"  # never opened: from the index or a one-off parse
        closed_text = closed.read_text(encoding="utf-8")
        assert await outline_of(editor, closed.as_uri()) == expected_for(
            closed, closed_text, encoding
        )

        # edits: a non-ASCII line above everything shifts every range; the outline follows
        for n in range(3):
            editor.type(uri, (0, 0), (0, 0), f"ÿ_{n} = '😀'\n")
            text = editor.docs[uri].text
            assert await outline_of(editor, uri) == expected_for(mixed, text, encoding), n
        editor.type(uri, (0, 0), (0, 0), "é")  # a syntax error at the top
        text = editor.docs[uri].text
        assert await outline_of(editor, uri) == expected_for(mixed, text, encoding)


def plain_workspace_symbol(s: Any) -> dict[str, Any]:
    # the client's union structuring reads our WorkspaceSymbol as SymbolInformation (the
    # same fields but `deprecated`)
    assert isinstance(s, types.WorkspaceSymbol | types.SymbolInformation)
    location = s.location
    assert isinstance(location, types.Location)
    return {
        "name": s.name,
        "kind": int(s.kind),
        "uri": location.uri,
        "range": plain_range(location.range),
        "container": s.container_name,
    }


async def workspace_symbols(editor: FakeEditor, query: str) -> list[dict[str, Any]]:
    for _ in range(200):  # the background index may still be building
        status = await editor.client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="agentls.status", arguments=[])
        )
        if status["index"]["state"] == "ready":
            break
        await asyncio.sleep(0.05)
    found = await editor.client.workspace_symbol_async(types.WorkspaceSymbolParams(query=query))
    return [plain_workspace_symbol(s) for s in found or []]


@pytest.mark.parametrize("preset", ["visual-studio-code", HELIX_LIKE])
async def test_workspace_symbols_are_the_index_in_client_units(
    preset: str, project: Path, tmp_path: Path
) -> None:
    env = server_env(None, tmp_path / "transcripts")
    async with editor_session(preset, project, env) as editor:
        encoding = editor.encoding
        for query, path, name, container in (
            ("méthode", project / "mixed.py", "méthode", "Ünïcode"),
            ("deep", project / "closed.py", "deep", "Fermé.Inner"),
            ("deep", project / "mixed.py", "deep", "Ünïcode.Inner"),
            ("multi_line", project / "mixed.py", "multi_line_signature", None),
            ("CONSTANT", project / "plain.py", None, None),
        ):
            found = [s for s in await workspace_symbols(editor, query) if s["uri"] == path.as_uri()]
            if name is None:
                assert found == [], query
                continue
            text = path.read_text(encoding="utf-8")
            symbol = next(s for s in _flat(outline(path, text.encode())) if s.name == name)
            assert found == [
                {
                    "name": name,
                    "kind": symbol.kind.lsp,
                    "uri": path.as_uri(),
                    "range": rng(text.splitlines(), symbol.selection_range, encoding),
                    "container": container,
                }
            ], query


def _flat(symbols: list[Symbol]) -> list[Symbol]:
    out: list[Symbol] = []
    for s in symbols:
        out.append(s)
        out.extend(_flat(list(s.children)))
    return out
