"""Code intelligence headless: `agentls serve` over stdio runs real language servers.

basedpyright (and typescript-language-server) are started by agentls itself (source 2);
the tools are called through `agentls.tool`, the same path as the model's calls.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from lsprotocol import types

from tests.codeintel_support import (
    CART_TOTAL_REFERENCES,
    PYTHON_SHOP,
    TYPESCRIPT_APP,
    basedpyright_langserver,
    reference_lines,
    tool_input,
    typescript_bin,
    write_tree,
)
from tests.lsp_support import FakeEditor, command, editor_session, server_env

pytestmark = pytest.mark.asyncio(loop_scope="module")

PYRIGHT = "language server (basedpyright)"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shop(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[FakeEditor]:
    """A Python project analysed by basedpyright, discovered next to this interpreter."""
    basedpyright_langserver()
    root = tmp_path_factory.mktemp("shop")
    write_tree(root, PYTHON_SHOP)
    env = server_env(None, tmp_path_factory.mktemp("transcripts"))
    async with editor_session("visual-studio-code", root, env) as editor:
        yield editor


async def tool(editor: FakeEditor, name: str, input: dict[str, Any]) -> tuple[str, bool]:
    result = await command(editor, "agentls.tool", {"name": name, "input": input})
    return str(result["content"]), bool(result["is_error"])


async def test_references_resolve_a_method_called_from_three_files(shop: FakeEditor) -> None:
    content, is_error = await tool(
        shop, "find_references", tool_input("shop/checkout.py", 5, "total")
    )
    assert not is_error, content
    assert f"(source: {PYRIGHT})" in content
    assert reference_lines(content) == CART_TOTAL_REFERENCES  # alias import included
    assert "unrelated.py" not in content  # the function `total` of the same name is not
    assert "4 confirmed references to `total` at shop/checkout.py:5 in 4 files" in content
    assert "No other identifier of that name" in content  # nothing unconfirmed by name

    content, _ = await tool(
        shop,
        "find_references",
        tool_input("shop/checkout.py", 5, "total", include_declaration=False, max_results=2),
    )
    assert ("shop/models.py", 2) not in reference_lines(content)
    assert "[1 more references not shown" in content


async def test_definition_through_an_alias_import(shop: FakeEditor) -> None:
    content, is_error = await tool(
        shop, "go_to_definition", tool_input("shop/legacy.py", 6, "total")
    )
    assert not is_error, content
    assert content.startswith(f"Definition of `total` at shop/legacy.py:6 (source: {PYRIGHT})")
    assert "shop/models.py:2:9" in content
    assert "def total(self, tax: float) -> float:" in content  # context lines
    content, _ = await tool(shop, "go_to_definition", tool_input("shop/legacy.py", 1, "Basket"))
    assert "shop/models.py:1:7" in content


async def test_hover_shows_the_signature_and_docs(shop: FakeEditor) -> None:
    content, is_error = await tool(shop, "hover", tool_input("shop/report.py", 5, "total"))
    assert not is_error, content
    assert f"(source: {PYRIGHT})" in content
    assert "def total(tax: float) -> float" in content
    assert "Sum of the items, with tax." in content


async def test_bad_positions_get_clear_errors(shop: FakeEditor) -> None:
    content, is_error = await tool(shop, "hover", tool_input("shop/report.py", 99, "total"))
    assert is_error
    assert "Line 99 is past the end of shop/report.py, which has 5 lines" in content
    content, is_error = await tool(shop, "hover", tool_input("shop/report.py", 5, "price"))
    assert is_error
    assert "`price` is not on line 5 of shop/report.py" in content
    assert "`cart`" in content
    assert "`total`" in content  # what is on that line
    content, is_error = await tool(
        shop, "find_references", tool_input("shop/report.py", 5, "total", occurrence=2)
    )
    assert is_error
    assert "occurs 1 time(s)" in content
    content, is_error = await tool(
        shop, "go_to_definition", {"path": "shop/report.py", "line": 5, "character": 300}
    )
    assert is_error
    assert "Character 300 is outside line 5" in content


async def test_binary_and_outside_files_are_refused(shop: FakeEditor) -> None:
    (shop.root / "shop" / "blob.py").write_bytes(b"\x00\x01binary\x00")
    content, is_error = await tool(shop, "go_to_definition", tool_input("shop/blob.py", 1, "x"))
    assert is_error
    assert "binary" in content
    outside = shop.root.parent / "elsewhere.py"
    outside.write_text("x = 1\n")
    for path in ("../elsewhere.py", str(outside)):
        content, is_error = await tool(shop, "find_references", tool_input(path, 1, "x"))
        assert is_error, content
        assert "outside the workspace" in content, content
    content, is_error = await tool(shop, "diagnostics", {"paths": ["../elsewhere.py"]})
    assert is_error
    assert "outside the workspace" in content


async def test_a_file_type_without_a_server_falls_back_to_the_index(shop: FakeEditor) -> None:
    content, is_error = await tool(
        shop, "find_references", tool_input("scripts/tool.rb", 2, "total")
    )
    assert not is_error, content
    assert "(source: index (by name, unresolved))" in content
    assert reference_lines(content) == {("scripts/tool.rb", 2), ("scripts/tool.rb", 6)}
    content, is_error = await tool(
        shop, "rename_symbol", {**tool_input("scripts/tool.rb", 2, "total"), "new_name": "sum"}
    )
    assert is_error
    assert "No language server covers scripts/tool.rb" in content
    (shop.root / "notes.txt").write_text("total\n")
    content, is_error = await tool(shop, "hover", tool_input("notes.txt", 1, "total"))
    assert is_error
    assert "No editor, language server or grammar understands notes.txt" in content


async def test_status_lists_the_running_server(shop: FakeEditor) -> None:
    await tool(shop, "hover", tool_input("shop/report.py", 5, "total"))
    status = await command(shop, "agentls.status", {})
    entries = status["code_intel"]
    python = next(e for e in entries if e.get("language") == "python")
    assert python["state"] == "running"
    assert python["server"] == "basedpyright"
    assert isinstance(python["pid"], int)
    go = next(e for e in entries if e.get("language") == "go")
    assert go["state"] in ("unavailable", "idle")
    if go["state"] == "unavailable":
        assert "gopls" in go["reason"]


@pytest_asyncio.fixture(loop_scope="module")
async def fresh_shop(
    tmp_path_factory: pytest.TempPathFactory,
) -> AsyncIterator[FakeEditor]:
    root = tmp_path_factory.mktemp("shop")
    write_tree(root, PYTHON_SHOP)
    env = server_env(None, tmp_path_factory.mktemp("transcripts"))
    async with editor_session("visual-studio-code", root, env) as editor:
        yield editor


async def test_diagnostics_see_a_staged_type_error_without_touching_disk(
    fresh_shop: FakeEditor,
) -> None:
    editor = fresh_shop
    checkout = editor.root / "shop" / "checkout.py"
    on_disk = checkout.read_bytes()
    content, is_error = await tool(
        editor, "diagnostics", {"paths": ["shop/checkout.py"], "severity": "error"}
    )
    assert not is_error, content
    assert content.startswith("No problems in shop/checkout.py"), content
    content, is_error = await tool(
        editor,
        "edit_file",
        {
            "path": "shop/checkout.py",
            "old_string": "cart.total(0.2)",
            "new_string": 'cart.total("x")',
        },
    )
    assert not is_error, content
    # checks.afterEdit (issue 30): the edit's result names the problem it introduced
    assert "1 new problem: shop/checkout.py:5 error: Argument of type" in content, content
    content, is_error = await tool(editor, "diagnostics", {"severity": "error"})
    assert not is_error, content
    assert content.startswith(
        "1 error in shop/checkout.py (source: language server (basedpyright))"
    )
    assert "shop/checkout.py:5:23 error: Argument of type" in content
    assert "[reportArgumentType]" in content
    assert '5 |     return cart.total("x")' in content
    assert checkout.read_bytes() == on_disk  # the user's file is untouched
    await command(editor, "agentls.reject", {"session": "tool"})
    content, _ = await tool(editor, "diagnostics", {"paths": ["shop"], "severity": "error"})
    assert content.startswith("No problems in"), content  # back to what is on disk


async def test_rename_across_files_is_one_workspace_edit(fresh_shop: FakeEditor) -> None:
    editor = fresh_shop
    content, is_error = await tool(
        editor,
        "rename_symbol",
        {**tool_input("shop/legacy.py", 6, "total"), "new_name": "grand_total"},
    )
    assert not is_error, content
    assert "Renamed `total` at shop/legacy.py:6 to `grand_total`: 4 changes in 4 files" in content
    assert (editor.root / "shop" / "models.py").read_text().count("def total") == 2  # staged only
    result = await command(editor, "agentls.accept", {"session": "tool"})
    assert result["applied"] is True, result
    assert len(editor.edits) == 1  # one WorkspaceEdit for every file
    changed = {
        Path(op.text_document.uri).name
        for op in editor.edits[0].document_changes or []
        if isinstance(op, types.TextDocumentEdit)
    }
    assert changed == {"models.py", "checkout.py", "report.py", "legacy.py"}
    models = editor.text(editor.root / "shop" / "models.py")
    assert "def grand_total(self, tax: float)" in models
    assert "def total(values: list[int])" in models  # the unrelated function kept its name
    assert "b.grand_total(0.0)" in editor.text(editor.root / "shop" / "legacy.py")
    assert "# total is computed here" in editor.text(editor.root / "shop" / "legacy.py")


async def test_typescript_through_typescript_language_server(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    folder = typescript_bin()
    root = tmp_path_factory.mktemp("tsapp")
    write_tree(root, TYPESCRIPT_APP)
    path = f"{folder}{os.pathsep}{os.environ.get('PATH', '')}"
    env = server_env(None, tmp_path_factory.mktemp("transcripts"), PATH=path)
    async with editor_session("visual-studio-code", root, env) as editor:
        content, is_error = await tool(
            editor, "find_references", tool_input("src/greeter.ts", 1, "greet")
        )
        assert not is_error, content
        assert "(source: language server (typescript-language-server))" in content
        lines = reference_lines(content)
        assert {("src/greeter.ts", 1), ("src/a.ts", 1), ("src/a.ts", 3), ("src/b.ts", 1)} <= lines
        content, is_error = await tool(
            editor, "go_to_definition", tool_input("src/b.ts", 3, "hello")
        )
        assert (not is_error and "src/b.ts:1" in content) or "src/greeter.ts:1" in content, content
